//! Cluster DNS without the network: the resolver configuration the kubelet gives a pod
//! (dnsPolicy, dnsConfig → `/etc/resolv.conf`), the search-path expansion a resolver makes
//! of a short name (ndots), and what CoreDNS's kubernetes plugin answers for a name in
//! `cluster.local` (A, CNAME, SRV) from Services and EndpointSlices.

use std::net::Ipv4Addr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;

use crate::node::net::CLUSTER_DNS;

/// The resolver a kind node uses (Docker's network gateway), from its `/etc/resolv.conf`.
pub const HOST_DNS: &str = "172.18.0.1";
/// The cluster domain.
const DOMAIN: &str = "cluster.local";
/// CoreDNS's record TTL in kind's Corefile.
pub const TTL: u32 = 30;

/// A pod's resolver configuration: what containerd writes to `/etc/resolv.conf`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DnsConfig {
    /// `nameserver` lines, in order.
    pub servers: Vec<String>,
    /// The `search` list.
    pub searches: Vec<String>,
    /// `options` (`ndots:5`, `edns0`).
    pub options: Vec<String>,
}

impl DnsConfig {
    /// The node's own resolver configuration (kind: `nameserver 172.18.0.1`).
    pub fn host() -> DnsConfig {
        DnsConfig {
            servers: vec![HOST_DNS.into()],
            searches: Vec::new(),
            options: vec!["edns0".into(), "trust-ad".into(), "ndots:0".into()],
        }
    }

    /// ClusterFirst: the cluster DNS Service, the namespace's search path, `ndots:5`.
    fn cluster(ns: &str) -> DnsConfig {
        DnsConfig {
            servers: vec![CLUSTER_DNS.into()],
            searches: vec![
                format!("{ns}.svc.{DOMAIN}"),
                format!("svc.{DOMAIN}"),
                DOMAIN.into(),
            ],
            options: vec!["ndots:5".into()],
        }
    }

    /// What the kubelet's `GetPodDNS` gives `pod`: by dnsPolicy (ClusterFirst, which a
    /// host-network pod treats as Default unless ClusterFirstWithHostNet; Default; None),
    /// then the pod's dnsConfig appended (servers and searches without duplicates, options
    /// merged by name, later values winning; kept in order where Go's map has none).
    pub fn for_pod(pod: &Pod) -> DnsConfig {
        let spec = pod.spec.clone().unwrap_or_default();
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        let host_net = spec.host_network == Some(true);
        let mut cfg = match spec.dns_policy.as_deref().unwrap_or("ClusterFirst") {
            "ClusterFirstWithHostNet" => DnsConfig::cluster(ns),
            "ClusterFirst" if !host_net => DnsConfig::cluster(ns),
            "None" => DnsConfig::default(),
            _ => DnsConfig::host(),
        };
        let Some(extra) = spec.dns_config else {
            return cfg;
        };
        for s in extra.nameservers.into_iter().flatten() {
            if !cfg.servers.contains(&s) {
                cfg.servers.push(s);
            }
        }
        for s in extra.searches.into_iter().flatten() {
            if !cfg.searches.contains(&s) {
                cfg.searches.push(s);
            }
        }
        for o in extra.options.into_iter().flatten() {
            let name = o.name.unwrap_or_default();
            let text = match o.value.filter(|v| !v.is_empty()) {
                Some(v) => format!("{name}:{v}"),
                None => name.clone(),
            };
            match cfg
                .options
                .iter()
                .position(|x| x.split(':').next() == Some(name.as_str()))
            {
                Some(i) => cfg.options[i] = text,
                None => cfg.options.push(text),
            }
        }
        cfg
    }

    /// `/etc/resolv.conf` as containerd writes it: search, nameservers, options.
    pub fn resolv_conf(&self) -> String {
        let mut s = String::new();
        if !self.searches.is_empty() {
            s.push_str(&format!("search {}\n", self.searches.join(" ")));
        }
        for n in &self.servers {
            s.push_str(&format!("nameserver {n}\n"));
        }
        if !self.options.is_empty() {
            s.push_str(&format!("options {}\n", self.options.join(" ")));
        }
        s
    }

    /// `options ndots:N` (the resolver's default is 1).
    pub fn ndots(&self) -> usize {
        self.options
            .iter()
            .filter_map(|o| o.strip_prefix("ndots:"))
            .filter_map(|n| n.parse().ok())
            .next_back()
            .unwrap_or(1)
    }

    /// The names a resolver asks for, in order: an absolute name (`web.`) as is; a name
    /// with at least ndots dots first as is, then with each search domain; a shorter one
    /// with each search domain first.
    pub fn candidates(&self, name: &str) -> Vec<String> {
        if let Some(abs) = name.strip_suffix('.') {
            return vec![abs.to_string()];
        }
        let searched = self.searches.iter().map(|d| format!("{name}.{d}"));
        if name.matches('.').count() >= self.ndots() {
            std::iter::once(name.to_string()).chain(searched).collect()
        } else {
            searched.chain(std::iter::once(name.to_string())).collect()
        }
    }
}

/// A query type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QType {
    /// An address (and the CNAME leading to it).
    A,
    /// Service records for named ports.
    Srv,
}

/// A resource record in an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// `name A ip`.
    A {
        /// Owner name (no trailing dot).
        name: String,
        /// Address.
        ip: Ipv4Addr,
    },
    /// `name CNAME target` (an ExternalName Service).
    Cname {
        /// Owner name.
        name: String,
        /// The external name.
        target: String,
    },
    /// `name SRV priority weight port target`.
    Srv {
        /// Owner name (`_http._tcp.web.default.svc.cluster.local`).
        name: String,
        /// Always 0 from CoreDNS.
        priority: u16,
        /// 100 split evenly between the targets.
        weight: u16,
        /// The port.
        port: u16,
        /// The target host.
        target: String,
    },
}

/// What CoreDNS knows: the Services and EndpointSlices its informers hold.
pub struct Zone<'a> {
    /// Services.
    pub services: &'a [Arc<Service>],
    /// EndpointSlices.
    pub slices: &'a [Arc<EndpointSlice>],
}

/// A ready endpoint of a Service: its DNS host label, address, and ports by name.
struct Endpoint {
    host: String,
    ip: Ipv4Addr,
    ports: Vec<(String, String, u16)>,
}

impl Zone<'_> {
    /// CoreDNS's answer for `qname` (no trailing dot); None is NXDOMAIN. Names outside
    /// `cluster.local` go to the upstream resolver, which kubeloop does not have.
    pub fn answer(&self, qname: &str, qtype: QType) -> Option<Vec<Record>> {
        let q = qname.trim_end_matches('.').to_ascii_lowercase();
        let labels: Vec<&str> = q.split('.').collect();
        let n = labels.len();
        if n < 3 || labels[n - 2..] != ["cluster", "local"] {
            return None;
        }
        let rest = &labels[..n - 2];
        match rest {
            [dashed, _ns, "pod"] if qtype == QType::A => {
                let ip: Ipv4Addr = dashed.replace('-', ".").parse().ok()?;
                Some(vec![Record::A {
                    name: q.clone(),
                    ip,
                }])
            }
            [svc, ns, "svc"] => self.service(&q, svc, ns, qtype),
            [host, svc, ns, "svc"] if qtype == QType::A => {
                let ep = self
                    .endpoints(svc, ns)?
                    .into_iter()
                    .find(|e| e.host == *host)?;
                Some(vec![Record::A {
                    name: q.clone(),
                    ip: ep.ip,
                }])
            }
            [port, proto, svc, ns, "svc"] if qtype == QType::Srv => self.srv(
                &q,
                port.strip_prefix('_')?,
                proto.strip_prefix('_')?,
                svc,
                ns,
            ),
            _ => None,
        }
    }

    fn find(&self, svc: &str, ns: &str) -> Option<&Service> {
        self.services
            .iter()
            .find(|s| {
                s.metadata.name.as_deref() == Some(svc)
                    && s.metadata.namespace.as_deref() == Some(ns)
            })
            .map(|s| &**s)
    }

    /// `svc.ns.svc.cluster.local`: the ClusterIP, every ready endpoint of a headless
    /// Service, or an ExternalName's CNAME (for any type).
    fn service(&self, q: &str, svc: &str, ns: &str, qtype: QType) -> Option<Vec<Record>> {
        let s = self.find(svc, ns)?;
        let spec = s.spec.clone().unwrap_or_default();
        if spec.type_.as_deref() == Some("ExternalName") {
            let target = spec.external_name.unwrap_or_default();
            return Some(vec![Record::Cname {
                name: q.to_string(),
                target: target.trim_end_matches('.').to_string(),
            }]);
        }
        if qtype == QType::Srv {
            let ports = spec.ports.unwrap_or_default();
            let weight = (100 / ports.len().max(1)) as u16;
            let recs: Vec<Record> = ports
                .iter()
                .map(|p| Record::Srv {
                    name: q.to_string(),
                    priority: 0,
                    weight,
                    port: p.port as u16,
                    target: q.to_string(),
                })
                .collect();
            return (!recs.is_empty()).then_some(recs);
        }
        if spec.cluster_ip.as_deref() == Some("None") {
            let recs: Vec<Record> = self
                .endpoints(svc, ns)?
                .into_iter()
                .map(|e| Record::A {
                    name: q.to_string(),
                    ip: e.ip,
                })
                .collect();
            return (!recs.is_empty()).then_some(recs);
        }
        let ip = spec.cluster_ip.as_deref()?.parse().ok()?;
        Some(vec![Record::A {
            name: q.to_string(),
            ip,
        }])
    }

    /// `_port._proto.svc.ns.svc.cluster.local`: the ClusterIP Service's port (target the
    /// Service's name), or one record per ready endpoint of a headless one.
    fn srv(&self, q: &str, port: &str, proto: &str, svc: &str, ns: &str) -> Option<Vec<Record>> {
        let s = self.find(svc, ns)?;
        let spec = s.spec.clone().unwrap_or_default();
        let svc_name = format!("{svc}.{ns}.svc.{DOMAIN}");
        let proto_ok = |p: &str| p.eq_ignore_ascii_case(proto);
        let mut targets: Vec<(String, u16)> = Vec::new();
        if spec.cluster_ip.as_deref() == Some("None") {
            for e in self.endpoints(svc, ns)? {
                for (name, pr, num) in &e.ports {
                    if name == port && proto_ok(pr) {
                        targets.push((format!("{}.{svc_name}", e.host), *num));
                    }
                }
            }
        } else {
            for p in spec.ports.iter().flatten() {
                let pr = p.protocol.as_deref().unwrap_or("TCP");
                if p.name.as_deref() == Some(port) && proto_ok(pr) {
                    targets.push((svc_name.clone(), p.port as u16));
                }
            }
        }
        if targets.is_empty() {
            return None;
        }
        let weight = (100 / targets.len()) as u16;
        Some(
            targets
                .into_iter()
                .map(|(target, port)| Record::Srv {
                    name: q.to_string(),
                    priority: 0,
                    weight,
                    port,
                    target,
                })
                .collect(),
        )
    }

    /// The ready endpoints of headless Service `svc`, by address; None when the Service
    /// is not headless.
    fn endpoints(&self, svc: &str, ns: &str) -> Option<Vec<Endpoint>> {
        let s = self.find(svc, ns)?;
        if s.spec.as_ref().and_then(|x| x.cluster_ip.as_deref()) != Some("None") {
            return None;
        }
        let mut out: Vec<Endpoint> = Vec::new();
        for sl in self.slices.iter().filter(|sl| {
            sl.metadata.namespace.as_deref() == Some(ns)
                && sl
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("kubernetes.io/service-name"))
                    .map(String::as_str)
                    == Some(svc)
        }) {
            let ports: Vec<(String, String, u16)> = sl
                .ports
                .iter()
                .flatten()
                .map(|p| {
                    (
                        p.name.clone().unwrap_or_default(),
                        p.protocol.clone().unwrap_or_else(|| "TCP".into()),
                        p.port.unwrap_or(0) as u16,
                    )
                })
                .collect();
            for e in &sl.endpoints {
                if e.conditions.as_ref().and_then(|c| c.ready) == Some(false) {
                    continue;
                }
                let Some(ip) = e.addresses.first().and_then(|a| a.parse::<Ipv4Addr>().ok()) else {
                    continue;
                };
                let host = e
                    .hostname
                    .clone()
                    .unwrap_or_else(|| ip.to_string().replace('.', "-"));
                if !out.iter().any(|x| x.ip == ip) {
                    out.push(Endpoint {
                        host,
                        ip,
                        ports: ports.clone(),
                    });
                }
            }
        }
        out.sort_by_key(|e| e.ip);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn cluster_first_gives_the_namespace_search_path_and_ndots_5() {
        let p = pod("metadata: {name: a, namespace: shop}\nspec: {containers: []}\n");
        let c = DnsConfig::for_pod(&p);
        assert_eq!(
            c.resolv_conf(),
            "search shop.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
        );
        assert_eq!(
            c.candidates("web"),
            [
                "web.shop.svc.cluster.local",
                "web.svc.cluster.local",
                "web.cluster.local",
                "web"
            ]
        );
        assert_eq!(
            c.candidates("a.b.c.d.e")[0],
            "a.b.c.d.e.shop.svc.cluster.local"
        );
        assert_eq!(c.candidates("a.b.c.d.e.f")[0], "a.b.c.d.e.f");
        assert_eq!(c.candidates("web.")[..], ["web"]);
    }

    #[test]
    fn dns_policy_none_and_default_and_dns_config_merge_as_the_kubelet_does() {
        let p = pod("metadata: {name: a, namespace: default}\nspec:\n  containers: []\n  dnsPolicy: None\n  dnsConfig:\n    nameservers: [192.0.2.1]\n    searches: [ns1.svc.cluster-domain.example, my.dns.search.suffix]\n    options:\n    - {name: ndots, value: \"2\"}\n    - {name: edns0}\n");
        assert_eq!(
            DnsConfig::for_pod(&p).resolv_conf(),
            "search ns1.svc.cluster-domain.example my.dns.search.suffix\nnameserver 192.0.2.1\noptions ndots:2 edns0\n"
        );
        let p = pod("metadata: {name: a}\nspec:\n  containers: []\n  dnsPolicy: Default\n");
        assert_eq!(
            DnsConfig::for_pod(&p).resolv_conf(),
            "nameserver 172.18.0.1\noptions edns0 trust-ad ndots:0\n"
        );
        let p = pod("metadata: {name: a}\nspec:\n  containers: []\n  hostNetwork: true\n");
        assert_eq!(DnsConfig::for_pod(&p), DnsConfig::host());
        let p = pod("metadata: {name: a}\nspec:\n  containers: []\n  dnsConfig:\n    options: [{name: ndots, value: \"1\"}]\n");
        let c = DnsConfig::for_pod(&p);
        assert_eq!(c.options, ["ndots:1"]);
        assert_eq!(c.candidates("web.shop")[0], "web.shop");
    }
}
