//! Pods that were already running when the machine finished booting (the add-ons).

use crate::node::images;
use crate::time::Time;

use super::{ContainerConfig, ContainerState, CriResult, Runtime, Sandbox};

impl Runtime {
    /// Starts a pod that was already running when the machine finished booting (the
    /// cluster's add-ons): sandbox with `ip`, containers running since `at`.
    pub fn boot_pod(
        &mut self,
        uid: &str,
        name: &str,
        namespace: &str,
        ip: &str,
        containers: Vec<ContainerConfig>,
        at: Time,
    ) {
        let id = self.hex_id();
        if let Some(host) = self.host_part(ip) {
            self.used_ips.insert(host);
            self.last_ip = self.last_ip.max(host);
        }
        self.next_pid += 13;
        self.sandboxes.insert(
            id.clone(),
            std::sync::Arc::new(Sandbox {
                id: id.clone(),
                pod_uid: uid.to_string(),
                name: name.to_string(),
                namespace: namespace.to_string(),
                ip: ip.to_string(),
                ready: true,
                created: at,
                pid: self.next_pid,
                dns: crate::node::dns::DnsConfig::host(),
                port_mappings: Vec::new(),
            }),
        );
        for cfg in containers {
            let size = images::resolve(&images::parse(&cfg.image)).unwrap_or(0);
            self.store(&images::parse(&cfg.image), size);
            if let Ok(CriResult::Container(cid)) = self.create(at, id.clone(), cfg) {
                if let Some(c) = self.containers.get_mut(&cid).map(std::sync::Arc::make_mut) {
                    c.state = ContainerState::Running;
                    c.started = Some(at);
                    // It has been up since before the cluster finished booting.
                    c.behaviour.start_ms = 0;
                }
                self.write_startup(&cid, ip);
            }
        }
        self.journal.clear();
    }
}
