//! Benchmark workloads for kube-apiserver and etcd: the engine builds and drives them,
//! the caller (the CLI natively, a small wasm host in the browser engine) times them.
//! Nothing here reads a clock.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::json;

use crate::api::{ApiRequest, ApiResult, Body, Verb};
use crate::cluster::ClusterConfig;
use crate::message::Actor;
use crate::object::{Kind, Object};
use crate::process::Process;
use crate::world::World;

/// A cluster with only the control plane's storage path running: etcd and
/// kube-apiserver (no nodes, no controllers, no scheduler), so a benchmark measures the
/// request pipeline, the watch cache and etcd alone.
pub fn bare_control_plane() -> World {
    let mut w = World::new(ClusterConfig {
        nodes: Vec::new(),
        ..ClusterConfig::default()
    });
    w.stop(Actor::ControllerManager);
    w.stop(Actor::Scheduler);
    w.run_for(1_000);
    w
}

/// Starts `n` clients watching ConfigMaps in every namespace; returns the counter of
/// events they received.
pub fn start_watchers(w: &mut World, n: usize) -> Rc<Cell<u64>> {
    let seen = Rc::new(Cell::new(0u64));
    for _ in 0..n {
        let (io, sys) = Process::sys("kubernetes-admin", &["system:masters"], None, Rc::default());
        let seen = seen.clone();
        let task = async move {
            let req = ApiRequest::new(Verb::Watch, Kind::ConfigMap, "", "");
            let Ok(id) = sys.watch(req).await else {
                return 1;
            };
            while sys.next_event(id).await.is_some() {
                seen.set(seen.get() + 1);
            }
            0
        };
        let now = w.now();
        w.spawn(Process::new("watch configmaps", io, Box::pin(task), now));
    }
    w.run_for(100);
    seen
}

/// What a write run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteReport {
    /// Writes the apiserver acknowledged.
    pub acknowledged: u64,
    /// Writes it refused.
    pub failed: u64,
}

/// `total` ConfigMap creates, each a JSON body decoded strictly by the apiserver as
/// kubectl's are, from `clients` clients writing one object at a time. `offset` keeps
/// names unique across runs. Runs the world until every client is done.
pub fn run_writes(w: &mut World, total: usize, clients: usize, offset: usize) -> WriteReport {
    let acked = Rc::new(Cell::new(0u64));
    let failed = Rc::new(Cell::new(0u64));
    let clients = clients.max(1);
    let mut ids = Vec::new();
    for c in 0..clients {
        let (io, sys) = Process::sys("kubernetes-admin", &["system:masters"], None, Rc::default());
        let (acked, failed) = (acked.clone(), failed.clone());
        let mine: Vec<usize> = (c..total).step_by(clients).collect();
        let task = async move {
            for i in mine {
                let body = json!({
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{}", i + offset), "labels": {"bench": "writes"}},
                    "data": {"key": "value", "index": i.to_string()},
                });
                let req = ApiRequest::new(Verb::Create, Kind::ConfigMap, "default", "")
                    .with_body(Body::Raw(body));
                match sys.api(req).await {
                    Ok(_) => acked.set(acked.get() + 1),
                    Err(_) => failed.set(failed.get() + 1),
                }
            }
            0
        };
        let now = w.now();
        ids.push(w.spawn(Process::new("write configmaps", io, Box::pin(task), now)));
    }
    while ids.iter().any(|id| {
        w.observe()
            .processes()
            .get(id)
            .is_some_and(|p| !p.is_finished())
    }) {
        if !w.step() {
            break;
        }
    }
    for id in ids {
        w.take_process(id);
    }
    WriteReport {
        acknowledged: acked.get(),
        failed: failed.get(),
    }
}

/// A pod as a Deployment's ReplicaSet creates it and the kubelet reports it Running.
pub fn sample_pod(i: usize) -> Object {
    let node = format!("node-{}", i % 1000 + 1);
    let name = format!("web-7c5ddbdf54-{i:06}");
    let v = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": "web-7c5ddbdf54-",
            "namespace": format!("ns-{}", i % 50),
            "uid": format!("00000000-0000-4000-8000-{i:012}"),
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"app": "web", "pod-template-hash": "7c5ddbdf54"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7c5ddbdf54",
                "uid": "00000000-0000-4000-8000-000000000001", "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "containers": [{"name": "nginx", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
            "nodeName": node,
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30, "securityContext": {},
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ]
        },
        "status": {
            "phase": "Running", "qosClass": "Burstable",
            "hostIP": "172.18.0.3", "podIP": format!("10.244.{}.{}", i / 250 % 250, i % 250 + 2),
            "startTime": "2026-01-01T00:00:01Z",
            "conditions": [
                {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": "2026-01-01T00:00:02Z"},
                {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-01-01T00:00:01Z"},
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:03Z"},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-01-01T00:00:03Z"},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
            ],
            "containerStatuses": [{"name": "nginx", "ready": true, "started": true, "restartCount": 0,
                "image": "docker.io/library/nginx:1.27", "imageID": "docker.io/library/nginx@sha256:0000",
                "containerID": format!("containerd://{i:064x}"),
                "state": {"running": {"startedAt": "2026-01-01T00:00:02Z"}}}]
        }
    });
    let mut unknown = Vec::new();
    Object::from_value(Kind::Pod, &v, &mut unknown)
        .unwrap_or_else(|_| Object::Pod(Default::default()))
}

/// Writes `n` pods straight into etcd (as a restored snapshot would), then restarts
/// kube-apiserver so its watch cache loads them.
pub fn load_pods(w: &mut World, n: usize) {
    w.stop(Actor::ApiServer);
    for i in 0..n {
        let o = sample_pod(i);
        let key = o.key().etcd_key();
        w.bootstrap_put(&key, o);
    }
    w.start(Actor::ApiServer);
    while !w.observe().apiserver().is_some_and(|a| a.is_ready()) {
        if !w.step() {
            break;
        }
    }
}

/// One cluster-wide `LIST pods` through the whole pipeline (authn, authz, a consistent
/// read: etcd's revision, then the watch cache); returns how many items came back.
pub fn list_pods(w: &mut World) -> usize {
    let count = Rc::new(Cell::new(0usize));
    let (io, sys) = Process::sys("kubernetes-admin", &["system:masters"], None, Rc::default());
    let c = count.clone();
    let task = async move {
        match sys
            .api(ApiRequest::new(Verb::List, Kind::Pod, "", ""))
            .await
        {
            Ok(ApiResult::List { items, .. }) => {
                c.set(items.len());
                0
            }
            _ => 1,
        }
    };
    let now = w.now();
    let id = w.spawn(Process::new("list pods", io, Box::pin(task), now));
    while w
        .observe()
        .processes()
        .get(&id)
        .is_some_and(|p| !p.is_finished())
    {
        if !w.step() {
            break;
        }
    }
    w.take_process(id);
    count.get()
}

/// Objects held per kind by etcd and by the apiserver's watch cache (for a memory row).
pub fn stored(w: &World) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    m.insert("etcd keys", w.observe().etcd().store.len());
    if let Some(a) = &w.observe().apiserver() {
        m.insert("cached pods", a.cache().iter(Kind::Pod).count());
    }
    m
}

/// The Arc the watch cache holds for a pod is the one etcd stores (no second copy).
pub fn cache_shares_etcd_objects(w: &World) -> bool {
    let Some(api) = &w.observe().apiserver() else {
        return false;
    };
    api.cache().iter(Kind::Pod).take(10).all(|o| {
        w.observe()
            .etcd()
            .store
            .get(&o.key().etcd_key())
            .is_some_and(|kv| Arc::ptr_eq(&kv.value, o))
    })
}
