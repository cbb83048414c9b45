//! kube-scheduler's binding cycle as a user sees it through kubectl: VolumeBinding's
//! Reserve keeps two pods off one PV, its PreBind gives up after bindTimeoutSeconds,
//! events come from the profile that scheduled the pod, and preemption victims learn why.

use std::collections::BTreeMap;

mod common;

use kubeloop_sim::cluster::{ClusterConfig, NodeConfig};
use kubeloop_sim::cmd;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;
use serde_json::{json, Value};

struct T {
    w: World,
    files: BTreeMap<String, String>,
}

impl T {
    fn new(config: ClusterConfig) -> T {
        T {
            w: World::new(config),
            files: BTreeMap::new(),
        }
    }

    fn apply(&mut self, manifest: &str) {
        self.files.insert("m.yaml".into(), manifest.into());
        let o = self.run("kubectl apply -f m.yaml");
        assert_eq!(o.0, 0, "apply: {}", o.2);
    }

    fn run(&mut self, line: &str) -> (i32, String, String) {
        let o = cmd::run(&mut self.w, line, &self.files, 60 * SECOND);
        (o.exit_code, o.stdout, o.stderr)
    }

    fn json(&mut self, line: &str) -> Value {
        serde_json::from_str(&self.run(line).1).expect("json")
    }

    fn settle(&mut self, secs: u64) {
        self.w.run_for(secs * SECOND);
    }
}

/// An nginx pod asking for `cpu` (if any) and mounting the claim (if any) at /data.
fn app_pod(name: &str, cpu: Option<&str>, claim: Option<&str>) -> String {
    let mut m = format!(
        "apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: nginx:1.27
"
    );
    if let Some(cpu) = cpu {
        m.push_str(&format!(
            "    resources: {{requests: {{cpu: \"{cpu}\"}}}}\n"
        ));
    }
    if let Some(c) = claim {
        m.push_str(&format!(
            "    volumeMounts: [{{name: data, mountPath: /data}}]
  volumes:
  - name: data
    persistentVolumeClaim: {{claimName: {c}}}
"
        ));
    }
    m
}

fn pod_with_claim(name: &str, claim: &str) -> String {
    app_pod(name, None, Some(claim))
}

fn claim(name: &str, class: &str) -> String {
    format!(
        "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: {name}
spec:
  storageClassName: {class}
  accessModes: [ReadWriteOnce]
  resources:
    requests: {{storage: 1Gi}}
"
    )
}

fn local_pv(name: &str, node: &str) -> String {
    format!(
        "apiVersion: v1
kind: PersistentVolume
metadata:
  name: {name}
spec:
  capacity: {{storage: 5Gi}}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {{path: /mnt/disks/{name}}}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {{key: kubernetes.io/hostname, operator: In, values: [{node}]}}
"
    )
}

const LOCAL_CLASS: &str = "apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
";

/// A class whose provisioner never answers: its claims stay Pending.
const REMOTE_CLASS: &str = "apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: remote
provisioner: ebs.csi.example.com
volumeBindingMode: WaitForFirstConsumer
";

/// A KubeSchedulerConfiguration whose VolumeBinding waits 30 s for volumes.
fn bind_timeout_30s() -> Value {
    json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
            {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 30}}]}]
    })
}

#[test]
fn pods_created_together_never_share_one_local_pv() {
    let mut t = T::new(ClusterConfig::default());
    let mut m = vec![
        LOCAL_CLASS.to_string(),
        local_pv("pv-1", "node-1"),
        local_pv("pv-2", "node-1"),
    ];
    for i in 1..=2 {
        m.push(claim(&format!("data-{i}"), "local"));
        m.push(pod_with_claim(&format!("app-{i}"), &format!("data-{i}")));
    }
    // With the scheduler stopped, both pods wait; started, it schedules them back to back,
    // before the first pod's PV write comes back through its informer.
    assert_eq!(t.run("sim stop kube-scheduler").0, 0);
    t.apply(&m.join("---\n"));
    t.settle(5);
    assert_eq!(t.run("sim start kube-scheduler").0, 0);
    t.settle(60);
    let pvcs = t.json("kubectl get pvc -o json");
    let mut volumes: Vec<String> = pvcs["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["status"]["phase"], "Bound", "{c}");
            c["spec"]["volumeName"].as_str().unwrap().to_string()
        })
        .collect();
    volumes.sort();
    assert_eq!(volumes, ["pv-1", "pv-2"]);
    let pods = t.run("kubectl get pods -o wide").1;
    for i in 1..=2 {
        let line = pods
            .lines()
            .find(|l| l.starts_with(&format!("app-{i} ")))
            .unwrap();
        assert!(
            line.contains("Running") && line.contains("node-1"),
            "{pods}"
        );
    }
}

#[test]
fn volumes_that_never_bind_fail_pre_bind_after_bind_timeout_seconds() {
    let mut config = ClusterConfig::default();
    config.scheduler_config = Some(bind_timeout_30s());
    let mut t = T::new(config);
    t.apply(
        &[
            REMOTE_CLASS.to_string(),
            claim("data", "remote"),
            pod_with_claim("app", "data"),
        ]
        .join("---\n"),
    );
    t.settle(10);
    // PreBind asked for provisioning on the chosen node, and waits.
    let pvc = t.json("kubectl get pvc data -o json");
    let selected = pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
        .as_str()
        .expect("selected-node")
        .to_string();
    assert!(selected.starts_with("node-"), "{selected}");
    let pod = t.json("kubectl get pod app -o json");
    assert!(
        pod["spec"]["nodeName"].is_null(),
        "not bound while PreBind waits"
    );

    t.settle(25);
    let pod = t.json("kubectl get pod app -o json");
    assert!(pod["spec"]["nodeName"].is_null());
    let cond = &pod["status"]["conditions"][0];
    assert_eq!(cond["type"], "PodScheduled");
    assert_eq!(cond["reason"], "SchedulerError");
    let msg =
        "running PreBind plugin \"VolumeBinding\": binding volumes: context deadline exceeded";
    assert_eq!(cond["message"], msg);
    let events = t
        .run("kubectl get events --field-selector involvedObject.name=app")
        .1;
    assert!(
        events.contains("FailedScheduling") && events.contains(msg),
        "{events}"
    );
}

#[test]
fn events_come_from_the_profile_that_scheduled_the_pod() {
    let mut config = ClusterConfig::default();
    config.scheduler_config = Some(json!({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler"}, {"schedulerName": "batch-scheduler"}]
    }));
    let mut t = T::new(config);
    t.apply(
        "apiVersion: v1
kind: Pod
metadata:
  name: job
spec:
  schedulerName: batch-scheduler
  containers:
  - name: app
    image: nginx:1.27
",
    );
    t.settle(5);
    let describe = t.run("kubectl describe pod job").1;
    let scheduled = describe
        .lines()
        .find(|l| l.contains("Scheduled") && l.contains("Successfully assigned"))
        .unwrap_or_else(|| panic!("{describe}"));
    assert!(scheduled.contains("batch-scheduler"), "{scheduled}");
    assert!(!scheduled.contains("default-scheduler"), "{scheduled}");
}

#[test]
fn a_preemption_victim_gets_the_disruption_target_condition() {
    let mut config = ClusterConfig::default();
    config.nodes = vec![NodeConfig::standard("node-1")];
    let mut t = T::new(config);
    t.apply(&common::slow_victim("low"));
    t.settle(10);
    t.apply(&common::preemptor("high"));
    t.settle(5);
    let low = t.json("kubectl get pod low -o json");
    assert!(low["metadata"]["deletionTimestamp"].is_string(), "{low}");
    let cond = low["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "DisruptionTarget")
        .cloned()
        .unwrap_or_else(|| panic!("no DisruptionTarget: {low}"));
    assert_eq!(cond["status"], "True");
    assert_eq!(cond["reason"], "PreemptionByScheduler");
    assert_eq!(
        cond["message"],
        "default-scheduler: preempting to accommodate a higher priority pod"
    );
}

#[test]
fn a_pod_deleted_while_its_volumes_bind_gives_its_room_back() {
    let mut config = ClusterConfig::default();
    config.nodes = vec![NodeConfig::standard("node-1")];
    config.scheduler_config = Some(bind_timeout_30s());
    let mut t = T::new(config);
    let big = |name: &str, claim: Option<&str>| app_pod(name, Some("3"), claim);
    t.apply(
        &[
            REMOTE_CLASS.to_string(),
            claim("data", "remote"),
            big("app", Some("data")),
        ]
        .join("---\n"),
    );
    t.settle(5);
    // `app` holds 3 of node-1's 4 CPUs in the scheduler's cache while PreBind waits.
    assert_eq!(t.run("kubectl delete pod app").0, 0);
    t.apply(&big("next", None));
    t.settle(5);
    let node = t.run("kubectl get pod next -o jsonpath={.spec.nodeName}").1;
    assert_eq!(node, "node-1");
    // Its binding cycle ended with it: no late failure for a pod that is gone.
    t.settle(40);
    let events = t
        .run("kubectl get events --field-selector involvedObject.name=app")
        .1;
    assert!(!events.contains("FailedScheduling"), "{events}");
}
