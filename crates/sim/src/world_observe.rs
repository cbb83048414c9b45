//! A read-only look at the world, for the view model, the page, the terminal's node
//! tools and the benchmarks: what each process holds, without a way to change it.

use std::collections::BTreeMap;

use crate::apiserver::ApiServer;
use crate::cluster::ClusterConfig;
use crate::controllers::ControllerManager;
use crate::etcd::Etcd;
use crate::kube_scheduler::KubeScheduler;
use crate::node::host::NodeHost;
use crate::node::net::NetState;
use crate::process::Process;
use crate::time::Time;
use crate::world::World;

/// The world, read-only.
#[derive(Clone, Copy)]
pub struct Observer<'a> {
    w: &'a World,
    parts: Parts<'a>,
}

/// The world's parts, borrowed: [`World::parts`] hands them out.
#[derive(Clone, Copy)]
pub(crate) struct Parts<'a> {
    pub config: &'a ClusterConfig,
    pub etcd: &'a Etcd,
    pub etcd_running: bool,
    pub apiserver: Option<&'a ApiServer>,
    pub controller_manager: Option<&'a ControllerManager>,
    pub scheduler: Option<&'a KubeScheduler>,
    pub nodes: &'a [NodeHost],
    pub processes: &'a BTreeMap<u32, Process>,
    pub net: &'a NetState,
}

impl World {
    /// A read-only look at every process and machine.
    pub fn observe(&self) -> Observer<'_> {
        Observer {
            w: self,
            parts: self.parts(),
        }
    }
}

impl<'a> Observer<'a> {
    /// Current virtual time.
    pub fn now(&self) -> Time {
        self.w.now()
    }

    /// Cluster-wide settings.
    pub fn config(&self) -> &'a ClusterConfig {
        self.parts.config
    }

    /// etcd's data (present even while etcd is stopped: it is on disk).
    pub fn etcd(&self) -> &'a Etcd {
        self.parts.etcd
    }

    /// Whether etcd is running.
    pub fn etcd_running(&self) -> bool {
        self.parts.etcd_running
    }

    /// kube-apiserver, when running.
    pub fn apiserver(&self) -> Option<&'a ApiServer> {
        self.parts.apiserver
    }

    /// The custom kinds the apiserver's discovery serves (none while it is down).
    pub fn custom_kinds(&self) -> crate::object::CustomKinds {
        match self.parts.apiserver {
            Some(a) => crate::apiserver::crd::discovery(
                a.cache()
                    .iter(crate::object::Kind::CustomResourceDefinition)
                    .map(|o| &**o),
            ),
            None => Default::default(),
        }
    }

    /// kube-controller-manager, when running.
    pub fn controller_manager(&self) -> Option<&'a ControllerManager> {
        self.parts.controller_manager
    }

    /// kube-scheduler, when running.
    pub fn scheduler(&self) -> Option<&'a KubeScheduler> {
        self.parts.scheduler
    }

    /// The machines, index = `Actor::Kubelet(i)`.
    pub fn nodes(&self) -> &'a [NodeHost] {
        self.parts.nodes
    }

    /// The machines' names (their Nodes'), in order.
    pub fn node_names(&self) -> Vec<String> {
        self.parts
            .nodes
            .iter()
            .map(|h| h.config.name.clone())
            .collect()
    }

    /// Terminal processes by id.
    pub fn processes(&self) -> &'a BTreeMap<u32, Process> {
        self.parts.processes
    }

    /// The data plane's state: recorded traffic paths, requests served.
    pub fn net(&self) -> &'a NetState {
        self.parts.net
    }
}
