//! NodePorts: a pod asking for host ports fits only nodes where those ports are free.

use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::{NodeInfo, Snapshot};
use crate::scheduler::podinfo::PodInfo;

/// The plugin name.
pub const NAME: &str = "NodePorts";
/// `ErrReason`.
pub const ERR_REASON: &str = "node(s) didn't have free ports for the requested pod ports";

/// The NodePorts plugin.
pub struct NodePorts;

/// Constructor for the registry.
pub fn new(_: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    Ok(Box::new(NodePorts))
}

impl Plugin for NodePorts {
    fn name(&self) -> &'static str {
        NAME
    }
    /// `isSchedulableAfterPodDeleted`: only a deleted pod holding a conflicting host port
    /// frees one.
    fn queueing_hint(&self, pod: &PodInfo, event: &EventObjects<'_>) -> QueueingHint {
        match event {
            EventObjects::DeletedPod(gone) => {
                let conflict = gone
                    .host_ports
                    .iter()
                    .any(|u| pod.host_ports.iter().any(|want| u.conflicts(want)));
                if conflict {
                    QueueingHint::Queue
                } else {
                    QueueingHint::QueueSkip
                }
            }
            _ => QueueingHint::Queue,
        }
    }
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        Some(self)
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

impl PreFilterPlugin for NodePorts {
    fn pre_filter(
        &self,
        _: &mut CycleState,
        pod: &PodInfo,
        _: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        if pod.host_ports.is_empty() {
            return (None, Status::code_only(Code::Skip));
        }
        (None, Status::success())
    }
}

impl FilterPlugin for NodePorts {
    fn filter(&self, _: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status {
        let conflict = pod
            .host_ports
            .iter()
            .any(|want| node.used_ports.iter().any(|u| u.conflicts(want)));
        if conflict {
            Status::new(Code::Unschedulable, ERR_REASON)
        } else {
            Status::success()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::plugins::helper::fixtures::*;
    use serde_json::json;

    fn port_pod(
        name: &str,
        node: &str,
        ip: &str,
        proto: &str,
        port: i32,
    ) -> crate::scheduler::SharedPod {
        pod(
            name,
            json!({"spec": {"nodeName": node, "containers": [{"name": "c", "ports": [
            {"containerPort": 80, "hostPort": port, "hostIP": ip, "protocol": proto}]}]}}),
        )
    }

    #[test]
    fn host_port_conflicts_follow_ip_and_protocol() {
        // Cases from node_ports_test.go: same port/protocol conflicts unless both IPs are
        // specific and different; 0.0.0.0 conflicts with any IP.
        let cases = [
            (
                ("127.0.0.1", "UDP", 8080),
                ("127.0.0.1", "UDP", 8080),
                false,
            ),
            (("127.0.0.1", "UDP", 8080), ("127.0.0.1", "TCP", 8080), true),
            (("127.0.0.1", "UDP", 8080), ("127.0.0.2", "UDP", 8080), true),
            (("0.0.0.0", "TCP", 8001), ("127.0.0.1", "TCP", 8001), false),
            (("127.0.0.1", "TCP", 8001), ("0.0.0.0", "TCP", 8001), false),
            (("127.0.0.1", "TCP", 8001), ("127.0.0.1", "TCP", 8002), true),
        ];
        for ((ip, pr, po), (eip, epr, epo), fits) in cases {
            let snap = Snapshot::new(
                &[node("n", json!({}))],
                &[port_pod("e", "n", eip, epr, epo)],
            );
            let p = info(port_pod("p", "", ip, pr, po));
            let mut st = CycleState::default();
            assert!(NodePorts.pre_filter(&mut st, &p, &snap).1.is_success());
            let s = NodePorts.filter(&st, &p, snap.get("n").unwrap());
            assert_eq!(s.is_success(), fits, "{ip} {pr} {po} vs {eip} {epr} {epo}");
            if !fits {
                assert_eq!(s.message(), ERR_REASON);
            }
        }
        let snap = Snapshot::new(&[node("n", json!({}))], &[]);
        let s = NodePorts
            .pre_filter(
                &mut CycleState::default(),
                &info(pod("p", json!({}))),
                &snap,
            )
            .1;
        assert_eq!(s.code, Code::Skip);
    }
}
