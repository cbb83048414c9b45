//! The seven stages of the pod creation flow, each with the newest virtual time it
//! happened, from the apiserver's audit log and the nodes' proxy syncs.

use crate::api::Verb;
use crate::message::Actor;
use crate::world::World;

use super::Stage;

pub(super) const STAGES: [(&str, &str); 7] = [
    ("kubectl → kube-apiserver", "kubectl喊"),
    ("kube-apiserver writes etcd", "apiserver写"),
    ("Deployment controller → ReplicaSet", "Deployment催"),
    ("ReplicaSet controller → Pods", "ReplicaSet补"),
    ("kube-scheduler binds", "Scheduler选"),
    ("kubelet starts containers", "Kubelet建"),
    ("kube-proxy writes rules", "Proxy通"),
];

/// Requests about the cluster's own namespaces (the add-ons booting, leases) are not the
/// user's workload and light no stage.
pub(super) fn is_system_path(path: &str) -> bool {
    // One search for the segment rather than one per namespace: the views run this over
    // the whole audit log at every redraw.
    path.match_indices("/namespaces/").any(|(i, m)| {
        let rest = &path[i + m.len()..];
        rest.split_once('/')
            .is_some_and(|(ns, _)| super::is_system_namespace(ns))
    })
}

/// The latest time each of the seven stages happened, from the apiserver's audit log and
/// the nodes' proxy syncs.
pub fn stages(world: &World) -> Vec<Stage> {
    let mut out: Vec<Stage> = STAGES
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
    if let Some(api) = &world.observe().apiserver() {
        for e in api.audit().filter(|e| !is_system_path(&e.path)) {
            let path = &e.path;
            let write = e.verb.is_write() && e.code < 300;
            let stage = match (e.client, e.verb) {
                (Actor::Terminal(_), v) if v.is_write() => Some(0),
                (Actor::ControllerManager, Verb::Create) if path.contains("/replicasets") => {
                    Some(2)
                }
                // The Deployment controller scaling its ReplicaSet (not the ReplicaSet
                // controller's status writes).
                (Actor::ControllerManager, Verb::Update | Verb::Patch)
                    if path.contains("/replicasets/")
                        && !path.ends_with("/status")
                        && e.code < 300 =>
                {
                    Some(2)
                }
                (Actor::ControllerManager, Verb::Create) if path.ends_with("/pods") => Some(3),
                (Actor::Scheduler, Verb::Create) if path.ends_with("/binding") => Some(4),
                (Actor::Kubelet(_), Verb::Patch)
                    if path.ends_with("/status") && path.contains("/pods/") =>
                {
                    Some(5)
                }
                _ => None,
            };
            if let Some(i) = stage {
                out[i].at = Some(e.received);
                out[i].detail = format!("{} {} {}", e.verb.http_method(), path, e.code);
                if i == 0 && write {
                    let etcd_end = e
                        .spans
                        .iter()
                        .find(|s| s.stage == "etcd")
                        .map_or(e.received, |s| s.end);
                    out[1].at = Some(etcd_end);
                    out[1].detail = format!("etcd write for {path}");
                }
            }
        }
    }
    // "Proxy通": the EndpointSlice controller published new endpoints and kube-proxy has
    // written its rules since (it syncs at most 1s after a change). Its periodic resyncs
    // are not the stage: they happen every 30s whatever changed.
    let slice_write = world.observe().apiserver().and_then(|api| {
        api.audit()
            .filter(|e| {
                e.client == Actor::ControllerManager
                    && !is_system_path(&e.path)
                    && e.verb.is_write()
                    && e.code < 300
                    && e.path.contains("/endpointslices")
            })
            .map(|e| (e.received, e.path.clone()))
            .last()
    });
    if let Some((t, path)) = slice_write {
        let synced = world
            .observe()
            .nodes()
            .iter()
            .filter_map(|h| h.rules.as_ref())
            .filter(|r| r.synced_at >= t)
            .count();
        if synced > 0 {
            out[6].at = Some(t);
            out[6].detail = format!("{path} → rules on {synced} node(s)");
        }
    }
    out
}

/// Keeps the newest time known for each stage: `fresh` (from the bounded audit log, which
/// also dies with the apiserver) where it knows one, else what `seen` remembered.
pub fn latch_stages(seen: &mut Vec<Stage>, fresh: Vec<Stage>) {
    if seen.len() != fresh.len() {
        *seen = fresh;
        return;
    }
    for (old, new) in seen.iter_mut().zip(fresh) {
        if new.at.is_some() && new.at >= old.at {
            *old = new;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_system_path;

    #[test]
    fn should_tell_system_namespaces_paths_by_their_segment() {
        assert!(is_system_path(
            "/api/v1/namespaces/kube-system/pods/coredns-1"
        ));
        assert!(is_system_path(
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1"
        ));
        assert!(!is_system_path("/api/v1/namespaces/default/pods/web-1"));
        assert!(
            !is_system_path("/api/v1/namespaces/kube-system"),
            "the namespace itself is not inside it"
        );
        // The reserved `kube-` prefix, as the diagram and the flow read it.
        assert!(is_system_path("/api/v1/namespaces/kube-demo/pods/a"));
        assert!(!is_system_path("/api/v1/namespaces/mykube-system/pods/a"));
        assert!(!is_system_path("/api/v1/nodes/node-1"));
    }
}
