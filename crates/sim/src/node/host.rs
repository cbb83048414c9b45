//! One simulated machine: a worker node with its kubelet, containerd, kube-proxy, the
//! Service rules in its kernel and its operating system.

use crate::cluster::NodeConfig;
use crate::node::{KubeProxy, Kubelet, Runtime};

/// One simulated machine: a worker node with its kubelet, containerd and kube-proxy.
#[derive(Debug)]
pub struct NodeHost {
    /// Configuration (name, capacity, labels, taints, pre-pulled images).
    pub config: NodeConfig,
    /// InternalIP.
    pub ip: String,
    /// The node's pod CIDR (`10.244.N.0/24`).
    pub pod_cidr: String,
    /// Whether the machine is on.
    pub powered: bool,
    /// Whether the machine is cut off from the control plane.
    pub partitioned: bool,
    /// The kubelet, when running.
    pub kubelet: Option<Kubelet>,
    /// containerd state (containers survive kubelet restarts).
    pub runtime: Runtime,
    /// Whether containerd is running.
    pub runtime_running: bool,
    /// kube-proxy, when running.
    pub proxy: Option<KubeProxy>,
    /// The Service rules in the kernel (written by kube-proxy; gone on reboot).
    pub rules: Option<crate::node::kube_proxy::RulesState>,
    /// The operating system: journald, host processes, mounts.
    pub os: crate::node::journal::NodeOs,
}

impl NodeHost {
    /// The machine at index `i` with its addresses, freshly booted.
    pub fn new(i: usize, config: NodeConfig) -> NodeHost {
        NodeHost {
            ip: crate::cluster::node_ip(i),
            pod_cidr: crate::cluster::pod_cidr(i),
            powered: true,
            partitioned: false,
            kubelet: None,
            runtime: Runtime::new(i as u32, &config),
            runtime_running: true,
            proxy: None,
            rules: None,
            os: crate::node::journal::NodeOs::new(&config.name),
            config,
        }
    }

    /// Takes what the kubelet wrote for the machine: journal lines, mount-table changes,
    /// and lines servers logged while being probed.
    pub fn absorb_kubelet(&mut self) {
        let Some(k) = self.kubelet.as_mut() else {
            return;
        };
        let lines = std::mem::take(&mut k.journal);
        let ops = std::mem::take(&mut k.os_ops);
        let logs = std::mem::take(&mut k.container_logs);
        self.os.append(crate::node::journal::Unit::Kubelet, lines);
        for op in ops {
            self.os.apply(op);
        }
        for (id, line) in logs {
            self.runtime.append_logs(&id, vec![line]);
        }
    }

    /// Whether the machine is off or cut off from the rest of the cluster's network.
    pub fn cut(&self) -> bool {
        self.partitioned || !self.powered
    }
}

/// Whether machines `a` and `b` can reach each other: a machine always reaches itself
/// while it is on; otherwise neither may be powered off or partitioned. The one rule the
/// control plane's links and the data plane's connections both follow.
pub fn reachable(hosts: &[NodeHost], a: u32, b: u32) -> bool {
    let get = |n: u32| hosts.get(n as usize);
    if a == b {
        return get(a).is_some_and(|h| h.powered);
    }
    !(get(a).is_some_and(NodeHost::cut) || get(b).is_some_and(NodeHost::cut))
}
