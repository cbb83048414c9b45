//! Tests of VolumeBinding with bound, pre-provisioned and dynamically provisioned claims.

use super::*;
use crate::scheduler::plugins::helper::fixtures::*;
use serde_json::{json, Value};

fn obj<T: serde::de::DeserializeOwned>(v: Value) -> Arc<T> {
    Arc::new(serde_json::from_value(v).unwrap())
}

fn sc(name: &str, provisioner: &str, mode: &str) -> Arc<StorageClass> {
    obj(json!({"metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode}))
}

fn pvc(name: &str, class: &str, volume: &str) -> Arc<PersistentVolumeClaim> {
    obj(
        json!({"metadata": {"name": name, "namespace": "default"}, "spec": {
        "storageClassName": class, "volumeName": volume, "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}}}}),
    )
}

fn local_pv(name: &str, class: &str, host: &str, size: &str) -> Arc<PersistentVolume> {
    obj(
        json!({"metadata": {"name": name}, "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": size}, "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}]}}}}),
    )
}

fn run(snap: &Snapshot, claim: &str) -> (Status, Vec<String>) {
    let p = info(pod(
        "p",
        json!({"spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]}}),
    ));
    let mut st = CycleState::default();
    let (_, s) = VolumeBinding.pre_filter(&mut st, &p, snap);
    if !s.is_success() {
        return (s, vec![]);
    }
    let r = snap
        .nodes()
        .iter()
        .map(|n| {
            let s = VolumeBinding.filter(&st, &p, n);
            if s.is_success() {
                "ok".to_string()
            } else {
                s.message()
            }
        })
        .collect();
    (s, r)
}

fn snap() -> Snapshot {
    let mut s = Snapshot::new(&[node("n1", json!({})), node("n2", json!({}))], &[]);
    s.set_storage_class(sc(
        "standard",
        "rancher.io/local-path",
        "WaitForFirstConsumer",
    ));
    s.set_storage_class(sc(
        "local",
        "kubernetes.io/no-provisioner",
        "WaitForFirstConsumer",
    ));
    s.set_storage_class(sc("fast", "example.com/csi", "Immediate"));
    s
}

#[test]
fn claims_are_checked_against_nodes() {
    let mut s = snap();
    s.set_pvc(pvc("dyn", "standard", ""));
    s.set_pvc(pvc("local", "local", ""));
    s.set_pvc(pvc("imm", "fast", ""));
    s.set_pvc(pvc("bound", "local", "pv-n2"));
    s.set_pvc(pvc("lost", "local", "nope"));
    s.set_pv(local_pv("pv-n2", "local", "n2", "5Gi"));
    s.set_pv(local_pv("pv-n1", "local", "n1", "2Gi"));
    // Dynamic provisioning with WaitForFirstConsumer fits everywhere.
    assert_eq!(run(&s, "dyn").1, ["ok", "ok"]);
    // A no-provisioner class needs a matching local PV on the node: pv-n1 on n1, and
    // pv-n2 on n2 (both available, 1Gi requested).
    assert_eq!(run(&s, "local").1, ["ok", "ok"]);
    // Bound to pv-n2: only n2 is reachable.
    assert_eq!(run(&s, "bound").1, [ERR_REASON_NODE_CONFLICT, "ok"]);
    assert_eq!(
        run(&s, "lost").1,
        [ERR_REASON_PV_NOT_EXIST, ERR_REASON_PV_NOT_EXIST]
    );
    let (st, _) = run(&s, "imm");
    assert_eq!(
        st.message(),
        "pod has unbound immediate PersistentVolumeClaims"
    );
    let (st, _) = run(&s, "missing");
    assert_eq!(st.message(), "persistentvolumeclaim \"missing\" not found");
    assert_eq!(st.code, Code::UnschedulableAndUnresolvable);
}

#[test]
fn no_matching_local_volume_is_a_bind_conflict_and_decisions_are_exposed() {
    let mut s = snap();
    s.set_pvc(pvc("local", "local", ""));
    s.set_pv(local_pv("small", "local", "n1", "500Mi"));
    s.set_pv(local_pv("pv-a", "local", "n2", "10Gi"));
    s.set_pv(local_pv("pv-b", "local", "n2", "2Gi"));
    // n1's only PV is too small; n2 picks the smallest that fits (pv-b).
    assert_eq!(run(&s, "local").1, [ERR_REASON_BIND_CONFLICT, "ok"]);
    let p = info(pod(
        "p",
        json!({"spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "local"}}]}}),
    ));
    let mut st = CycleState::default();
    VolumeBinding.pre_filter(&mut st, &p, &s);
    let v = pod_volumes(&st, s.get("n2").unwrap()).unwrap();
    assert_eq!(
        v.static_bindings,
        [("default/local".to_string(), "pv-b".to_string())]
    );
}
