//! Who sends and receives messages.

use crate::rng::fnv1a;

/// Who sends and receives messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Actor {
    /// The etcd member.
    Etcd,
    /// kube-apiserver.
    ApiServer,
    /// kube-controller-manager.
    ControllerManager,
    /// kube-scheduler.
    Scheduler,
    /// The kubelet of node N (index into the world's nodes).
    Kubelet(u32),
    /// containerd on node N.
    Runtime(u32),
    /// kube-proxy on node N.
    KubeProxy(u32),
    /// A terminal process (kubectl, etcdctl) with its id.
    Terminal(u32),
    /// cloud-provider-kind, running on the terminal's host outside the cluster.
    CloudProvider,
}

impl Actor {
    /// The node this actor runs on, if it is a node component.
    pub fn node(self) -> Option<u32> {
        match self {
            Actor::Kubelet(n) | Actor::Runtime(n) | Actor::KubeProxy(n) => Some(n),
            _ => None,
        }
    }

    /// The component's name as `systemctl`/`sim` know it.
    pub fn component_name(self) -> &'static str {
        match self {
            Actor::Etcd => "etcd",
            Actor::ApiServer => "kube-apiserver",
            Actor::ControllerManager => "kube-controller-manager",
            Actor::Scheduler => "kube-scheduler",
            Actor::Kubelet(_) => "kubelet",
            Actor::Runtime(_) => "containerd",
            Actor::KubeProxy(_) => "kube-proxy",
            Actor::Terminal(_) => "kubectl",
            Actor::CloudProvider => "cloud-provider-kind",
        }
    }

    /// A number standing for the actor in the run's hash.
    pub fn code(self) -> u64 {
        match self {
            Actor::Etcd => 1,
            Actor::ApiServer => 2,
            Actor::ControllerManager => 3,
            Actor::Scheduler => 4,
            Actor::Kubelet(n) => 0x100 + u64::from(n),
            Actor::Runtime(n) => 0x10000 + u64::from(n),
            Actor::KubeProxy(n) => 0x1000000 + u64::from(n),
            Actor::Terminal(n) => fnv1a(&n.to_le_bytes()),
            Actor::CloudProvider => 5,
        }
    }
}
