//! Tests of VolumeBinding with bound, pre-provisioned and dynamically provisioned claims.

use super::*;
use crate::scheduler::plugins::helper::fixtures::*;
use serde_json::{json, Value};

const VB: VolumeBinding = VolumeBinding {
    bind_timeout: 600 * SECOND,
};

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
    let (_, s) = VB.pre_filter(&mut st, &p, snap);
    if !s.is_success() {
        return (s, vec![]);
    }
    let r = snap
        .nodes()
        .iter()
        .map(|n| {
            let s = VB.filter(&st, &p, n);
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

fn claim_pod(name: &str, claim: &str) -> PodInfo {
    info(pod(
        name,
        json!({"spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]}}),
    ))
}

#[test]
fn no_matching_local_volume_is_a_bind_conflict() {
    let mut s = snap();
    s.set_pvc(pvc("local", "local", ""));
    s.set_pv(local_pv("small", "local", "n1", "500Mi"));
    s.set_pv(local_pv("pv-a", "local", "n2", "10Gi"));
    // n1's only PV is too small.
    assert_eq!(run(&s, "local").1, [ERR_REASON_BIND_CONFLICT, "ok"]);
}

fn claim_of(s: &Snapshot, pv: &str) -> Option<String> {
    s.pvs[pv]
        .spec
        .as_ref()
        .and_then(|sp| sp.claim_ref.as_ref())
        .and_then(|r| r.name.clone())
}

#[test]
fn reserve_assumes_the_smallest_fitting_pv_so_the_next_pod_cannot_take_it() {
    let mut s = snap();
    s.set_pvc(pvc("a", "local", ""));
    s.set_pvc(pvc("b", "local", ""));
    s.set_pv(local_pv("pv-big", "local", "n2", "10Gi"));
    s.set_pv(local_pv("pv-small", "local", "n2", "2Gi"));
    let p = claim_pod("p", "a");
    let mut st = CycleState::default();
    VB.pre_filter(&mut st, &p, &s);
    assert!(VB.reserve(&mut st, &p, "n2", &mut s).is_success());
    assert_eq!(claim_of(&s, "pv-small").as_deref(), Some("a"));
    assert_eq!(claim_of(&s, "pv-big"), None);

    // The next pod's claim only finds pv-big now.
    let q = claim_pod("q", "b");
    let mut st2 = CycleState::default();
    VB.pre_filter(&mut st2, &q, &s);
    assert!(VB.reserve(&mut st2, &q, "n2", &mut s).is_success());
    assert_eq!(claim_of(&s, "pv-big").as_deref(), Some("b"));

    // PreBind writes the claimRef and waits for the claim to be bound.
    let mut w = BindingWrites::default();
    assert_eq!(
        VB.pre_bind(&mut st, &p, "n2", 0, &mut w).code,
        Code::Pending
    );
    assert_eq!(w.requests.len(), 1);
    assert_eq!(w.requests[0].2.name, "pv-small");
    assert_eq!(
        VB.pre_bind_poll(&st, &p, "n2", &s, SECOND).code,
        Code::Pending
    );
    let mut bound = (*s.pvcs["default/a"]).clone();
    bound.spec.as_mut().unwrap().volume_name = Some("pv-small".into());
    bound.status = Some(serde_json::from_value(json!({"phase": "Bound"})).unwrap());
    s.set_pvc(Arc::new(bound));
    assert!(VB.pre_bind_poll(&st, &p, "n2", &s, 2 * SECOND).is_success());

    // Unreserve of the second pod gives pv-big back.
    VB.unreserve(&mut st2, &q, "n2", &mut s);
    assert_eq!(claim_of(&s, "pv-big"), None);
    assert_eq!(claim_of(&s, "pv-small").as_deref(), Some("a"));
}

#[test]
fn pre_bind_gives_up_after_bind_timeout_seconds() {
    let mut s = snap();
    s.set_pvc(pvc("data", "standard", ""));
    let p = claim_pod("p", "data");
    let mut st = CycleState::default();
    VB.pre_filter(&mut st, &p, &s);
    assert!(VB.reserve(&mut st, &p, "n1", &mut s).is_success());
    let ann = s.pvcs["default/data"].metadata.annotations.clone().unwrap();
    assert_eq!(ann[ANN_SELECTED_NODE], "n1");
    let mut w = BindingWrites::default();
    assert_eq!(
        VB.pre_bind(&mut st, &p, "n1", 0, &mut w).code,
        Code::Pending
    );
    assert_eq!(w.requests[0].2.kind, Kind::PersistentVolumeClaim);
    assert_eq!(
        VB.pre_bind_poll(&st, &p, "n1", &s, 599 * SECOND).code,
        Code::Pending
    );
    let st600 = VB.pre_bind_poll(&st, &p, "n1", &s, 600 * SECOND);
    assert_eq!(st600.code, Code::Error);
    assert_eq!(
        st600.message(),
        "binding volumes: context deadline exceeded"
    );
}
