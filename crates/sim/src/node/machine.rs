//! The narrow interface node programs run against: one machine's own state (its
//! containers, their logs and files, its operating system) and the network as seen from
//! it. The kubelet API's handlers, `exec`, the container shell, `curl` and load loops get
//! a [`Machine`] and nothing else of the cluster: no etcd, no other component's memory.

use std::net::Ipv4Addr;

use crate::node::cri::Sandbox;
use crate::node::journal::NodeOs;
use crate::node::net::{Network, Source};
use crate::node::runtime::Runtime;
use crate::time::Time;

/// One machine, as a program running on it sees it.
pub struct Machine<'a> {
    node: u32,
    net: Network<'a>,
}

impl<'a> Machine<'a> {
    /// Machine `node` on `net`.
    pub fn new(node: u32, net: Network<'a>) -> Machine<'a> {
        Machine { node, net }
    }

    /// The machine's index (what `Actor::Kubelet(n)` names).
    pub fn node(&self) -> u32 {
        self.node
    }

    /// Current virtual time.
    pub fn now(&self) -> Time {
        self.net.now
    }

    fn host(&self) -> &crate::node::host::NodeHost {
        &self.net.hosts()[self.node as usize]
    }

    /// The machine's hostname (its Node's name).
    pub fn name(&self) -> &str {
        &self.host().config.name
    }

    /// containerd's state: sandboxes, containers, their logs.
    pub fn runtime(&self) -> &Runtime {
        &self.host().runtime
    }

    /// containerd's state, to change it.
    pub fn runtime_mut(&mut self) -> &mut Runtime {
        let n = self.node;
        &mut self
            .net
            .host_mut(n)
            .expect("a machine is built for a node that exists")
            .runtime
    }

    /// The operating system: its files, mounts and directories.
    pub fn os(&self) -> &NodeOs {
        &self.host().os
    }

    /// Appends lines a unit of this machine wrote to its journal.
    pub fn append_journal(
        &mut self,
        unit: crate::node::journal::Unit,
        lines: Vec<crate::node::journal::LogLine>,
    ) {
        let n = self.node;
        if let Some(h) = self.net.host_mut(n) {
            h.os.append(unit, lines);
        }
    }

    /// Writes (or appends to) a file on the machine's disk: a pod volume's contents.
    pub fn write_file(&mut self, path: &str, text: &str, append: bool) {
        let n = self.node;
        if let Some(h) = self.net.host_mut(n) {
            let f = h.os.files.entry(path.to_string()).or_default();
            if !append {
                f.clear();
            }
            f.push_str(text);
        }
    }

    /// Creates a directory on the machine's disk.
    pub fn make_dir(&mut self, path: &str) {
        let n = self.node;
        if let Some(h) = self.net.host_mut(n) {
            h.os.dirs.insert(path.to_string(), 0);
        }
    }

    /// The network, from this machine.
    pub fn net(&mut self) -> &mut Network<'a> {
        &mut self.net
    }

    /// The network, read-only.
    pub fn net_ref(&self) -> &Network<'a> {
        &self.net
    }

    /// A connection source for a program in sandbox `sb` of this machine.
    pub fn source(&self, sb: &Sandbox, agent: &str) -> Source {
        Source {
            node: self.node,
            ip: sb.ip.parse().unwrap_or(Ipv4Addr::UNSPECIFIED),
            pod: Some((sb.namespace.clone(), sb.name.clone())),
            agent: agent.to_string(),
        }
    }
}
