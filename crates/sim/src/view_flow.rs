//! The pod creation flow of one followed pod: each of the seven stages at the moment it
//! happened for that pod (from the apiserver's audit log and the pod itself), whether it
//! is Ready ("Pod活"), the Service that selects it and the Deployment that owns it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;

use crate::api::Verb;
use crate::apiserver::AuditEntry;
use crate::message::Actor;
use crate::object::{Kind, Object};
use crate::time::{from_k8s_time, Time, SECOND};
use crate::world::World;

use super::stages::{is_system_path, STAGES};
use super::Stage;

/// The flow of one pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodFlow {
    /// `namespace/name`.
    pub pod: String,
    /// The seven stages, each with when it happened for this pod.
    pub stages: Vec<Stage>,
    /// When the pod became Ready (its Ready condition), while it is.
    pub ready_at: Option<Time>,
    /// The Deployment that owns the pod (through its ReplicaSet), if any.
    pub deployment: Option<String>,
    /// A Service whose selector matches the pod, if any.
    pub service: Option<String>,
}

fn condition_time(p: &Pod, type_: &str) -> Option<Time> {
    p.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_ && c.status == "True")
        .map(|c| c.last_transition_time.as_ref().map_or(0, from_k8s_time))
}

fn owner(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<(String, String)> {
    crate::controllers::util::controller_of(meta).map(|o| (o.kind.clone(), o.name.clone()))
}

fn find(world: &World, kind: Kind, ns: &str, name: &str) -> Option<std::sync::Arc<Object>> {
    let key = format!("/registry/{}/{ns}/{name}", kind.info().etcd_prefix);
    world
        .observe()
        .etcd()
        .store
        .get(&key)
        .map(|kv| kv.value.clone())
}

/// A Service in `ns` whose selector picks pods with `labels`.
fn selecting_service(world: &World, ns: &str, labels: &BTreeMap<String, String>) -> Option<String> {
    super::stored(world, Kind::Service)
        .iter()
        .filter(|o| o.namespace() == ns)
        .find_map(|o| match &**o {
            Object::Service(s) => {
                let sel = s.spec.as_ref()?.selector.as_ref()?;
                (!sel.is_empty() && sel.iter().all(|(k, v)| labels.get(k) == Some(v)))
                    .then(|| o.name().to_string())
            }
            _ => None,
        })
}

fn set(stage: &mut Stage, e: &AuditEntry) {
    stage.at = Some(e.received);
    stage.detail = format!("{} {} {}", e.verb.http_method(), e.path, e.code);
}

/// The flow of the pod `ns/name`, or `None` when there is no such pod.
pub fn pod_flow(world: &World, ns: &str, name: &str) -> Option<PodFlow> {
    let obj = find(world, Kind::Pod, ns, name)?;
    let Object::Pod(p) = &*obj else { return None };
    let mut stages: Vec<Stage> = STAGES
        .iter()
        .enumerate()
        .map(|(i, (t, m))| Stage {
            number: i as u8 + 1,
            title: t,
            mnemonic: m,
            at: None,
            detail: String::new(),
        })
        .collect();
    let created = p
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(0, from_k8s_time);
    let rs = owner(&p.metadata)
        .filter(|(k, _)| k == "ReplicaSet")
        .map(|(_, n)| n);
    let deployment = rs.as_deref().and_then(|rs| {
        let o = find(world, Kind::ReplicaSet, ns, rs)?;
        owner(o.meta())
            .filter(|(k, _)| k == "Deployment")
            .map(|(_, n)| n)
    });
    let audit: Vec<&AuditEntry> = world
        .observe()
        .apiserver()
        .as_ref()
        .map(|a| a.audit().filter(|e| !is_system_path(&e.path)).collect())
        .unwrap_or_default();
    let pod_path = format!("/namespaces/{ns}/pods/{name}");
    let binding_path = format!("/api/v1{pod_path}/binding");
    let pods_path = format!("/namespaces/{ns}/pods");
    let ok = |e: &&&AuditEntry| e.code < 300;
    // 5: the scheduler's binding of this pod.
    let bind = audit
        .iter()
        .filter(ok)
        .rfind(|e| e.client == Actor::Scheduler && e.path == binding_path);
    match bind {
        Some(e) => set(&mut stages[4], e),
        None => {
            if let Some(t) = condition_time(p, "PodScheduled") {
                stages[4].at = Some(t);
                stages[4].detail = format!("PodScheduled {name}");
            }
        }
    }
    // 4: the ReplicaSet controller's create of the batch this pod came in (creations carry
    // no name in the path: the last one of its second before it was bound).
    let until = stages[4].at.unwrap_or(Time::MAX);
    let create = audit.iter().filter(ok).rfind(|e| {
        e.client == Actor::ControllerManager
            && e.verb == Verb::Create
            && e.path.ends_with(&pods_path)
            && e.received >= created
            && e.received < created + SECOND
            && e.received <= until
    });
    match create {
        Some(e) => set(&mut stages[3], e),
        None => {
            stages[3].at = Some(created);
            stages[3].detail = format!("pod {name} created");
        }
    }
    let pod_created = stages[3].at.unwrap_or(created);
    // 3: the Deployment controller writing the pod's ReplicaSet, last before the pod.
    if let (Some(rs), Some(_)) = (&rs, &deployment) {
        let rs_path = format!("/namespaces/{ns}/replicasets");
        let this_rs_path = format!("{rs_path}/{rs}");
        if let Some(e) = audit.iter().filter(ok).rfind(|e| {
            e.client == Actor::ControllerManager
                && e.received <= pod_created
                && ((e.verb == Verb::Create && e.path.ends_with(&rs_path))
                    || (matches!(e.verb, Verb::Update | Verb::Patch)
                        && e.path.ends_with(&this_rs_path)))
        }) {
            set(&mut stages[2], e);
        }
    }
    // 1 and 2: the last kubectl write before, and its etcd write.
    let before = stages[2].at.unwrap_or(pod_created);
    if let Some(e) = audit.iter().filter(ok).rfind(|e| {
        matches!(e.client, Actor::Terminal(_)) && e.verb.is_write() && e.received <= before
    }) {
        set(&mut stages[0], e);
        stages[1].at = Some(
            e.spans
                .iter()
                .find(|s| s.stage == "etcd")
                .map_or(e.received, |s| s.end),
        );
        stages[1].detail = format!("etcd write for {}", e.path);
    }
    // 6: the kubelet's first status report with the containers started.
    let started = p
        .status
        .as_ref()
        .and_then(|s| s.start_time.as_ref())
        .map(from_k8s_time);
    let status_path = format!("/api/v1{pod_path}/status");
    let kubelet_reports: Vec<&&AuditEntry> = audit
        .iter()
        .filter(ok)
        .filter(|e| matches!(e.client, Actor::Kubelet(_)) && e.path == status_path)
        .collect();
    let running = p
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.state.as_ref().is_some_and(|s| s.running.is_some()))
        });
    if running {
        let from = condition_time(p, "ContainersReady")
            .or(started)
            .unwrap_or(0);
        match kubelet_reports
            .iter()
            .find(|e| e.received >= from)
            .or(kubelet_reports.last())
        {
            Some(e) => set(&mut stages[5], e),
            None => {
                stages[5].at = started;
                stages[5].detail = format!("containers of {name} started");
            }
        }
    }
    // Pod活: Ready, at the kubelet report that said so.
    let ready_at = condition_time(p, "Ready")
        .filter(|_| crate::controllers::util::is_pod_ready(p))
        .map(|t| {
            kubelet_reports
                .iter()
                .find(|e| e.received >= t)
                .map_or(t, |e| e.received)
        });
    // 7: a Service selects the pod; the endpoints written after it was Ready and
    // kube-proxy's rules since.
    let labels = p.metadata.labels.clone().unwrap_or_default();
    let service = selecting_service(world, ns, &labels);
    if let (Some(_), Some(ready)) = (&service, ready_at) {
        let slice_path = format!("/namespaces/{ns}/endpointslices");
        let synced_after = |t: Time| {
            world
                .observe()
                .nodes()
                .iter()
                .filter_map(|h| h.rules.as_ref())
                .filter(|r| r.synced_at >= t)
                .count()
        };
        // The newest endpoints write since the pod was Ready that kube-proxy has synced.
        if let Some((e, synced)) = audit
            .iter()
            .filter(ok)
            .filter(|e| {
                e.client == Actor::ControllerManager
                    && e.verb.is_write()
                    && e.path.contains(&slice_path)
                    && e.received >= ready
            })
            .map(|e| (e, synced_after(e.received)))
            .rfind(|(_, synced)| *synced > 0)
        {
            stages[6].at = Some(e.received);
            stages[6].detail = format!("{} → rules on {synced} node(s)", e.path);
        }
    }
    Some(PodFlow {
        pod: format!("{ns}/{name}"),
        stages,
        ready_at,
        deployment,
        service,
    })
}

/// The pod the flow follows when none is selected: the newest pod outside the cluster's
/// own namespaces (by etcd creation revision) that a Service selects, else the newest one.
/// A client pod started to `curl` the Service is newer than the Service's pods, but the
/// flow's last stage is about the Service's endpoints: it keeps following those.
pub fn newest_user_pod(world: &World) -> Option<String> {
    let selectors: Vec<(String, BTreeMap<String, String>)> = super::stored(world, Kind::Service)
        .iter()
        .filter_map(|o| match &**o {
            Object::Service(s) => {
                let sel = s.spec.as_ref()?.selector.clone()?;
                (!sel.is_empty()).then(|| (o.namespace().to_string(), sel))
            }
            _ => None,
        })
        .collect();
    let prefix = format!("/registry/{}/", Kind::Pod.info().etcd_prefix);
    // (create revision, pod): the name is formatted once, for the winner only.
    let mut newest: Option<(u64, &Object)> = None;
    let mut newest_selected: Option<(u64, &Object)> = None;
    let beats = |n: &Option<(u64, &Object)>, rev: u64| n.is_none_or(|n| rev > n.0);
    for kv in user_pods(&world.observe().etcd().store, &prefix) {
        let ns = kv.value.namespace();
        let rev = kv.create_revision;
        if beats(&newest_selected, rev) {
            let labels = kv.value.meta().labels.as_ref();
            let selected = selectors.iter().any(|(sns, sel)| {
                sns == ns
                    && sel
                        .iter()
                        .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
            });
            if selected {
                newest_selected = Some((rev, &kv.value));
            }
        }
        if beats(&newest, rev) {
            newest = Some((rev, &kv.value));
        }
    }
    newest_selected
        .or(newest)
        .map(|(_, o)| format!("{}/{}", o.namespace(), o.name()))
}

/// The pods outside the system namespaces ([`super::is_system_namespace`]), in key order:
/// a system namespace is skipped with one seek past its keys, so a frame does not walk a
/// DaemonSet's pod on every node.
fn user_pods<'a>(
    store: &'a crate::etcd::Store,
    prefix: &'a str,
) -> impl Iterator<Item = &'a crate::etcd::KeyValue> + 'a {
    let under = move |kv: &&crate::etcd::KeyValue| kv.key.starts_with(prefix);
    let mut keys: Box<dyn Iterator<Item = &'a crate::etcd::KeyValue> + 'a> =
        Box::new(store.range_prefix(prefix));
    std::iter::from_fn(move || loop {
        let kv = keys.next()?;
        let ns = kv.key[prefix.len()..].split('/').next().unwrap_or("");
        if !super::is_system_namespace(ns) {
            return Some(kv);
        }
        // Past every key of the namespace: `/` is followed by `0` in byte order.
        let past = format!("{prefix}{ns}0");
        keys = Box::new(store.range_from(&past).take_while(under));
    })
}

/// The Deployment a `kubectl expose` hint should name: the followed pod's, else the first
/// Deployment in the cluster outside the system namespaces.
pub fn deployment_to_expose(world: &World, flow: Option<&PodFlow>) -> Option<String> {
    flow.and_then(|f| f.deployment.clone()).or_else(|| {
        super::stored(world, Kind::Deployment)
            .iter()
            .find(|o| !super::is_system_namespace(o.namespace()))
            .map(|o| o.name().to_string())
    })
}
