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

fn labelled(name: &str, node: &str, app: &str) -> PodInfo {
    let mut spec = json!({"containers": [{"name": "c", "image": "nginx"}]});
    if !node.is_empty() {
        spec["nodeName"] = node.into();
    }
    info(pod(
        name,
        json!({"metadata": {"labels": {"app": app}}, "spec": spec}),
    ))
}

#[test]
fn inter_pod_affinity() {
    let term = json!([{"labelSelector": {"matchLabels": {"app": "db"}},
                       "topologyKey": "kubernetes.io/hostname"}]);
    let with_affinity = info(pod(
        "web",
        json!({"spec": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": term}}}}),
    ));
    let with_anti = info(pod(
        "web",
        json!({"spec": {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": term}}}}),
    ));
    let ipa = interpodaffinity::new(None).unwrap();
    let h = |p: &PodInfo, e: EventObjects<'_>| ipa.queueing_hint(p, &e);
    let db = labelled("db", "n1", "db");
    let cache = labelled("cache", "n1", "cache");
    let pending_db = labelled("db2", "", "db");
    // Affinity: a scheduled pod it wants appears, or turns into one.
    assert_eq!(h(&with_affinity, EventObjects::AddedPod(&db)), Queue);
    assert_eq!(h(&with_affinity, EventObjects::AddedPod(&cache)), QueueSkip);
    assert_eq!(
        h(&with_affinity, EventObjects::AddedPod(&pending_db)),
        QueueSkip
    );
    let relabelled = labelled("cache", "n1", "db");
    let upd = |old, new| EventObjects::UpdatedPod { old, new };
    assert_eq!(h(&with_affinity, upd(&cache, &relabelled)), Queue);
    assert_eq!(h(&with_affinity, upd(&relabelled, &cache)), QueueSkip);
    // Anti-affinity: a pod it avoids goes away, or stops matching.
    assert_eq!(h(&with_anti, EventObjects::DeletedPod(&db)), Queue);
    assert_eq!(h(&with_anti, EventObjects::DeletedPod(&cache)), QueueSkip);
    assert_eq!(h(&with_anti, upd(&relabelled, &cache)), Queue);
    // Nodes: only those carrying a term's topology key.
    let n = ni("n9", json!({}));
    let bare = NodeInfo::new(std::sync::Arc::new(
        serde_json::from_value(json!({"metadata": {"name": "x"}})).unwrap(),
    ));
    assert_eq!(
        h(&with_affinity, EventObjects::Node { old: None, new: &n }),
        Queue
    );
    assert_eq!(
        h(
            &with_affinity,
            EventObjects::Node {
                old: None,
                new: &bare
            }
        ),
        QueueSkip
    );
}

#[test]
fn pod_topology_spread() {
    let spread = info(pod(
        "web",
        json!({"metadata": {"labels": {"app": "web"}}, "spec": {"topologySpreadConstraints": [{
            "maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}}]}}),
    ));
    let pts = podtopologyspread::new(None).unwrap();
    let h = |e: EventObjects<'_>| pts.queueing_hint(&spread, &e);
    let peer = labelled("web-1", "n1", "web");
    let other = labelled("db", "n1", "db");
    assert_eq!(h(EventObjects::DeletedPod(&peer)), Queue);
    assert_eq!(h(EventObjects::AddedPod(&peer)), Queue);
    assert_eq!(h(EventObjects::DeletedPod(&other)), QueueSkip);
    let upd = |old, new| EventObjects::UpdatedPod { old, new };
    let joined = labelled("db", "n1", "web");
    assert_eq!(h(upd(&other, &joined)), Queue);
    assert_eq!(h(upd(&other, &other)), QueueSkip);
    // Nodes: in a zone now, moved to another zone, or tainted differently.
    let zone = |z: &str| json!({"metadata": {"labels": {"zone": z}}});
    assert_eq!(node_hint(&*pts, &spread, None, zone("a")), Queue);
    assert_eq!(node_hint(&*pts, &spread, None, json!({})), QueueSkip);
    assert_eq!(node_hint(&*pts, &spread, Some(json!({})), zone("a")), Queue);
    assert_eq!(node_hint(&*pts, &spread, Some(zone("a")), zone("b")), Queue);
    assert_eq!(
        node_hint(&*pts, &spread, Some(zone("a")), zone("a")),
        QueueSkip
    );
    // A pod spread only by the cluster defaults queues (its selector is the cluster's).
    let plain = labelled("p", "", "web");
    assert_eq!(
        pts.queueing_hint(&plain, &EventObjects::DeletedPod(&other)),
        Queue
    );
}

#[test]
fn volume_plugins_queue_only_for_the_pods_own_claims() {
    let p = info(pod(
        "db",
        json!({"spec": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}}),
    ));
    for plugin in [
        volumebinding::new(None).unwrap(),
        volumerestrictions::new(None).unwrap(),
        volumezone::new(None).unwrap(),
    ] {
        let h = |key| plugin.queueing_hint(&p, &EventObjects::Claim(key));
        assert_eq!(h("default/data"), Queue, "{}", plugin.name());
        assert_eq!(h("default/logs"), QueueSkip, "{}", plugin.name());
        assert_eq!(h("other/data"), QueueSkip, "{}", plugin.name());
    }
}
