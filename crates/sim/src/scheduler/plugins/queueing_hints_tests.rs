//! QueueingHints of the plugins that have them, event by event, for a pod each plugin
//! rejected: Queue only when the event can make the pod schedulable.

use serde_json::{json, Value};

use super::helper::fixtures::*;
use super::*;
use crate::scheduler::framework::{EventObjects, Plugin, QueueingHint};
use crate::scheduler::nodeinfo::NodeInfo;
use crate::scheduler::podinfo::PodInfo;

use QueueingHint::{Queue, QueueSkip};

fn ni(name: &str, extra: Value) -> NodeInfo {
    NodeInfo::new(node(name, extra))
}

/// The hint for a node added (`old` None) or changed from `old` to `new`.
fn node_hint(p: &dyn Plugin, pod: &PodInfo, old: Option<Value>, new: Value) -> QueueingHint {
    let old = old.map(|o| ni("n1", o));
    let new = ni("n1", new);
    p.queueing_hint(
        pod,
        &EventObjects::Node {
            old: old.as_ref(),
            new: &new,
        },
    )
}

fn cpu(n: &str) -> Value {
    json!({"status": {"allocatable": {"cpu": n}}})
}

#[test]
fn node_resources_fit() {
    let fit = noderesources_fit::new(None).unwrap();
    let p = info(req_pod("big", "", "6", ""));
    // Added: only a node the pod fits on is worth a try.
    assert_eq!(node_hint(&*fit, &p, None, cpu("8")), Queue);
    assert_eq!(node_hint(&*fit, &p, None, cpu("4")), QueueSkip);
    // Updated: it must fit and have more of what the pod asks for.
    assert_eq!(node_hint(&*fit, &p, Some(cpu("4")), cpu("8")), Queue);
    assert_eq!(node_hint(&*fit, &p, Some(cpu("4")), cpu("5")), QueueSkip);
    let labelled =
        json!({"metadata": {"labels": {"disk": "ssd"}}, "status": {"allocatable": {"cpu": "8"}}});
    assert_eq!(node_hint(&*fit, &p, Some(cpu("8")), labelled), QueueSkip);
    // A deleted pod frees room if it was scheduled (or nominated).
    let on_node = info(req_pod("a", "n1", "1", ""));
    let pending = info(req_pod("b", "", "1", ""));
    assert_eq!(
        fit.queueing_hint(&p, &EventObjects::DeletedPod(&on_node)),
        Queue
    );
    assert_eq!(
        fit.queueing_hint(&p, &EventObjects::DeletedPod(&pending)),
        QueueSkip
    );
    // An assigned pod frees room only when its requests go down.
    let smaller = info(req_pod("a", "n1", "500m", ""));
    let update = |old: &PodInfo, new: &PodInfo| {
        fit.queueing_hint(&p, &EventObjects::UpdatedPod { old, new })
    };
    assert_eq!(update(&on_node, &smaller), Queue);
    assert_eq!(update(&on_node, &on_node), QueueSkip);
    assert_eq!(update(&smaller, &on_node), QueueSkip);
}

#[test]
fn node_only_filters_queue_when_the_node_starts_to_pass() {
    let p = info(pod("p", json!({"spec": {"nodeSelector": {"disk": "ssd"}}})));
    let aff = nodeaffinity::new(None).unwrap();
    let ssd = json!({"metadata": {"labels": {"disk": "ssd"}}});
    let hdd = json!({"metadata": {"labels": {"disk": "hdd"}}});
    assert_eq!(node_hint(&*aff, &p, Some(hdd.clone()), ssd.clone()), Queue);
    assert_eq!(node_hint(&*aff, &p, None, ssd.clone()), Queue);
    assert_eq!(node_hint(&*aff, &p, Some(ssd.clone()), ssd), QueueSkip);
    assert_eq!(node_hint(&*aff, &p, None, hdd), QueueSkip);

    let tt = tainttoleration::new(None).unwrap();
    let tainted = json!({"spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}});
    assert_eq!(node_hint(&*tt, &p, Some(tainted.clone()), json!({})), Queue);
    assert_eq!(
        node_hint(&*tt, &p, Some(json!({})), tainted.clone()),
        QueueSkip
    );
    assert_eq!(
        node_hint(&*tt, &p, Some(tainted.clone()), tainted),
        QueueSkip
    );

    let nu = nodeunschedulable::new(None).unwrap();
    let cordoned = json!({"spec": {"unschedulable": true}});
    assert_eq!(
        node_hint(&*nu, &p, Some(cordoned.clone()), json!({})),
        Queue
    );
    assert_eq!(node_hint(&*nu, &p, Some(json!({})), cordoned), QueueSkip);
    // Events without a node queue the pod, as for plugins without a hint.
    assert_eq!(nu.queueing_hint(&p, &EventObjects::Other), Queue);
}

#[test]
fn node_ports_queue_when_a_pod_holding_the_port_goes() {
    let port = |n: i32| {
        json!({"spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx",
            "ports": [{"containerPort": 80, "hostPort": n}]}]}})
    };
    let want = info(pod("want", port(8080)));
    let holder = info(pod("holder", port(8080)));
    let other = info(pod("other", port(9090)));
    let np = nodeports::new(None).unwrap();
    assert_eq!(
        np.queueing_hint(&want, &EventObjects::DeletedPod(&holder)),
        Queue
    );
    assert_eq!(
        np.queueing_hint(&want, &EventObjects::DeletedPod(&other)),
        QueueSkip
    );
}
