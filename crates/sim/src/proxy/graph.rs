//! kube-proxy's rules on one node as a graph: KUBE-SERVICES → KUBE-SVC-… (each endpoint's
//! probability) → KUBE-SEP-… DNAT, IPVS virtual → real servers, or nftables
//! `@service-ips` → `service-…` → `endpoint-…`.
//!
//! Read from the very tables [`super::iptables::iptables_save`] prints (and the virtual
//! servers `ipvsadm -Ln` lists), so chain names, probabilities and rule texts are the
//! renderer's own: each entry carries the `iptables-save` line it stands for, which is
//! also what a packet walk's [`super::traffic::Hop::rule`] holds.

use super::iptables::KUBE_SERVICES;
use super::ipvs::{self, VirtualServer};
use super::model;
use super::node::NodeTable;
use super::rules::{Rule, Target};
use super::{ProxyInput, ProxyMode};

/// One service port's rules on the node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceRules {
    /// `default/web:http` (the comment and hash name; `default/web` for an unnamed port).
    pub service: String,
    /// `10.96.0.12:80` (ClusterIP and port).
    pub vip: String,
    /// The capturing rule as `iptables-save` prints it (KUBE-SERVICES' jump or its REJECT;
    /// in IPVS mode the virtual server line).
    pub capture: String,
    /// The table the capture rule lives in (`nat`, `filter`, `ipvs`).
    pub table: &'static str,
    /// `KUBE-SVC-…` / `KUBE-SVL-…` (IPVS: the virtual server line); empty when rejected.
    pub chain: String,
    /// No endpoints: the filter table REJECTs the ClusterIP.
    pub reject: bool,
    /// The endpoint chains, in rule order.
    pub endpoints: Vec<EndpointRules>,
}

/// One endpoint's rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointRules {
    /// `KUBE-SEP-…` (IPVS: empty).
    pub chain: String,
    /// `0.33333333349`, as `iptables-save` prints the statistic match; `None` for the
    /// last rule (taken unconditionally) and in IPVS mode.
    pub probability: Option<String>,
    /// The KUBE-SVC-… rule that jumps here (IPVS: the real server line).
    pub jump: String,
    /// The DNAT rule (IPVS: the real server line).
    pub dnat: String,
    /// `10.244.1.4:80`.
    pub destination: String,
    /// The endpoint's node, if known.
    pub node: Option<String>,
}

/// The graph of one node's rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleGraph {
    /// The node.
    pub node: String,
    /// iptables or IPVS.
    pub mode: ProxyMode,
    /// Every ClusterIP service port, in KUBE-SERVICES order.
    pub services: Vec<ServiceRules>,
}

/// `0.33333333349` from `… -m statistic --mode random --probability 0.33333333349 …`.
fn probability_of(line: &str) -> Option<String> {
    let at = line.find("--probability ")? + "--probability ".len();
    line[at..].split_whitespace().next().map(str::to_string)
}

fn jump_of(r: &Rule) -> Option<&str> {
    match &r.target {
        Target::Jump(c) => Some(c.as_str()),
        _ => None,
    }
}

fn endpoints_of(
    nat: &NodeTable,
    chain: &str,
    node_of: &dyn Fn(&str) -> Option<String>,
) -> Vec<EndpointRules> {
    nat.rules_of(chain)
        .filter_map(|r| {
            let sep = jump_of(r).filter(|c| c.starts_with("KUBE-SEP-"))?;
            let jump = r.save_line();
            // -m recent affinity checks jump too; the statistic rules are the choice.
            if jump.contains("--rcheck") {
                return None;
            }
            let dnat = nat
                .rules_of(sep)
                .find(|d| matches!(d.target, Target::Dnat(_)))?;
            let Target::Dnat(destination) = &dnat.target else {
                return None;
            };
            Some(EndpointRules {
                chain: sep.to_string(),
                probability: probability_of(&jump),
                jump,
                dnat: dnat.save_line(),
                destination: destination.clone(),
                node: node_of(destination),
            })
        })
        .collect()
}

fn iptables_graph(input: &ProxyInput, model: &model::ProxyModel) -> Vec<ServiceRules> {
    let t = super::node::node_tables(input, model);
    let node_of = |dest: &str| -> Option<String> {
        let ip = dest.split(':').next()?.parse().ok()?;
        input.node_of_pod_ip(ip).map(|n| n.name.clone())
    };
    let mut out = Vec::new();
    for svc in &model.ports {
        let name = svc.name_string();
        let vip = format!("{}:{}", svc.cluster_ip, svc.port);
        let cluster_comment = format!("\"{name} cluster IP\"");
        let nat_capture = t.nat.rules_of(KUBE_SERVICES).find(|r| {
            let line = r.save_line();
            line.contains(&cluster_comment) && jump_of(r).is_some()
        });
        if let Some(r) = nat_capture {
            let chain = jump_of(r).unwrap_or_default().to_string();
            out.push(ServiceRules {
                service: name,
                vip,
                capture: r.save_line(),
                table: "nat",
                endpoints: endpoints_of(&t.nat, &chain, &node_of),
                chain,
                reject: false,
            });
            continue;
        }
        let no_endpoints = format!("\"{name} has no endpoints\"");
        if let Some(r) = t
            .filter
            .rules_of(KUBE_SERVICES)
            .find(|r| r.save_line().contains(&no_endpoints))
        {
            out.push(ServiceRules {
                service: name,
                vip,
                capture: r.save_line(),
                table: "filter",
                chain: String::new(),
                reject: true,
                endpoints: Vec::new(),
            });
        }
    }
    out
}

fn ipvs_graph(input: &ProxyInput, model: &model::ProxyModel) -> Vec<ServiceRules> {
    let cluster_ips: Vec<_> = model.ports.iter().map(|p| p.cluster_ip).collect();
    ipvs::virtual_servers_of(input, model)
        .into_iter()
        .filter(|vs| cluster_ips.contains(&vs.addr))
        .map(|vs| {
            let line = vs.line();
            let endpoints = vs
                .real_servers
                .iter()
                .map(|rs| {
                    let rl = VirtualServer::real_server_line(rs).trim_end().to_string();
                    EndpointRules {
                        chain: String::new(),
                        probability: None,
                        jump: rl.clone(),
                        dnat: rl,
                        destination: format!("{}:{}", rs.ip, rs.port),
                        node: input.node_of_pod_ip(rs.ip).map(|n| n.name.clone()),
                    }
                })
                .collect::<Vec<_>>();
            ServiceRules {
                service: vs.service.to_string(),
                vip: format!("{}:{}", vs.addr, vs.port),
                capture: line.clone(),
                table: "ipvs",
                reject: endpoints.is_empty(),
                chain: line,
                endpoints,
            }
        })
        .collect()
}

/// nftables mode: the `@service-ips` element → `service-…` chain → `endpoint-…` DNATs,
/// or the `@no-endpoint-services` element that rejects.
fn nft_graph(input: &ProxyInput, model: &model::ProxyModel) -> Vec<ServiceRules> {
    use super::nftables::{self as nft, Key, Stmt};
    use super::nftables_list::{elem_text, rule_text};
    let t = nft::build_table(input, model);
    let mut out = Vec::new();
    for svc in &model.ports {
        let key = Key::IpProtoPort(svc.cluster_ip, svc.name.protocol, svc.port);
        let find = |map: &str| {
            t.set(map)
                .and_then(|m| m.elements.iter().find(|e| e.key == key))
        };
        let vip = format!("{}:{}", svc.cluster_ip, svc.port);
        if let Some(e) = find(nft::SERVICE_IPS) {
            let Some(Stmt::Goto(chain)) = &e.value else {
                continue;
            };
            let targets = t
                .chain(chain)
                .and_then(|c| {
                    c.rules.iter().find_map(|r| match &r.stmt {
                        Stmt::Numgen(v) => Some(v.clone()),
                        _ => None,
                    })
                })
                .unwrap_or_default();
            let n = targets.len();
            let endpoints = targets
                .iter()
                .enumerate()
                .filter_map(|(i, ep)| {
                    let r = t
                        .chain(ep)?
                        .rules
                        .iter()
                        .find(|r| matches!(r.stmt, Stmt::Dnat(..)))?;
                    let Stmt::Dnat(_, ip, port) = r.stmt else {
                        return None;
                    };
                    Some(EndpointRules {
                        chain: ep.clone(),
                        probability: Some(format!("{i} of mod {n}")),
                        jump: String::new(),
                        dnat: rule_text(t.family, r),
                        destination: format!("{ip}:{port}"),
                        node: input.node_of_pod_ip(ip).map(|n| n.name.clone()),
                    })
                })
                .collect();
            out.push(ServiceRules {
                service: svc.name_string(),
                vip,
                capture: elem_text(t.family, e),
                table: "nft",
                chain: chain.clone(),
                reject: false,
                endpoints,
            });
        } else if let Some(e) = find(nft::NO_ENDPOINT_SERVICES) {
            out.push(ServiceRules {
                service: svc.name_string(),
                vip,
                capture: elem_text(t.family, e),
                table: "nft",
                chain: String::new(),
                reject: true,
                endpoints: Vec::new(),
            });
        }
    }
    out
}

/// The rule graph of `input.node_name`.
pub fn rule_graph(input: &ProxyInput) -> RuleGraph {
    let model = model::build(input.services, input.slices, &input.node_name);
    let services = match input.mode {
        ProxyMode::Iptables => iptables_graph(input, &model),
        ProxyMode::Ipvs => ipvs_graph(input, &model),
        ProxyMode::Nftables => nft_graph(input, &model),
    };
    RuleGraph {
        node: input.node_name.clone(),
        mode: input.mode,
        services,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{nodes, ready, slice, svc};
    use super::super::{iptables, Cidr, ProxyOptions};
    use super::*;
    use serde_json::json;

    fn input<'a>(
        services: &'a [std::sync::Arc<k8s_openapi::api::core::v1::Service>],
        slices: &'a [std::sync::Arc<k8s_openapi::api::discovery::v1::EndpointSlice>],
        nodes: &'a [super::super::NodeAddress],
        mode: ProxyMode,
    ) -> ProxyInput<'a> {
        ProxyInput {
            node_name: nodes[1].name.clone(),
            node_ip: nodes[1].ip,
            pod_cidr: nodes[1].pod_cidr,
            cluster_cidr: Cidr::parse("10.244.0.0/16"),
            services,
            slices,
            nodes,
            mode,
            now: 0,
            options: ProxyOptions::default(),
        }
    }

    fn web(
        eps: usize,
    ) -> (
        Vec<std::sync::Arc<k8s_openapi::api::core::v1::Service>>,
        Vec<std::sync::Arc<k8s_openapi::api::discovery::v1::EndpointSlice>>,
    ) {
        let all = [
            ready("10.244.1.4", "kind-worker"),
            ready("10.244.2.3", "kind-worker2"),
            ready("10.244.1.5", "kind-worker"),
            ready("10.244.2.6", "kind-worker2"),
        ];
        let services = vec![svc(
            "default",
            "web",
            json!({"clusterIP": "10.96.0.50", "ports": [{"port": 80, "targetPort": 80}]}),
        )];
        let eps: Vec<_> = all.into_iter().take(eps).collect();
        let slices = vec![slice("default", "web-abc", "web", &[("", 80, "TCP")], &eps)];
        (services, slices)
    }

    #[test]
    fn should_take_chain_names_probabilities_and_lines_from_iptables_save() {
        let (services, slices) = web(3);
        let nodes = nodes(2);
        let inp = input(&services, &slices, &nodes, ProxyMode::Iptables);
        let g = rule_graph(&inp);
        let save = iptables::iptables_save(&inp);
        assert_eq!(g.services.len(), 1);
        let s = &g.services[0];
        assert_eq!(s.service, "default/web");
        assert_eq!(s.vip, "10.96.0.50:80");
        assert!(s.chain.starts_with("KUBE-SVC-"), "{}", s.chain);
        assert!(save.lines().any(|l| l == s.capture), "{}", s.capture);
        let probs: Vec<_> = s.endpoints.iter().map(|e| e.probability.clone()).collect();
        assert_eq!(
            probs,
            vec![
                Some("0.33333333349".into()),
                Some("0.50000000000".into()),
                None
            ]
        );
        for e in &s.endpoints {
            assert!(e.chain.starts_with("KUBE-SEP-"));
            assert!(save.lines().any(|l| l == e.jump), "{}", e.jump);
            assert!(save.lines().any(|l| l == e.dnat), "{}", e.dnat);
            assert!(e
                .dnat
                .contains(&format!("--to-destination {}", e.destination)));
        }
        for e in &s.endpoints {
            let want = if e.destination.starts_with("10.244.1.") {
                "kind-worker"
            } else {
                "kind-worker2"
            };
            assert_eq!(e.node.as_deref(), Some(want), "{}", e.destination);
        }
    }

    #[test]
    fn should_grow_an_endpoint_chain_when_endpoints_are_added() {
        let nodes = nodes(2);
        let (s3, e3) = web(3);
        let (s4, e4) = web(4);
        let g3 = rule_graph(&input(&s3, &e3, &nodes, ProxyMode::Iptables));
        let g4 = rule_graph(&input(&s4, &e4, &nodes, ProxyMode::Iptables));
        assert_eq!(g3.services[0].endpoints.len(), 3);
        assert_eq!(g4.services[0].endpoints.len(), 4);
        assert_eq!(
            g4.services[0].endpoints[0].probability.as_deref(),
            Some("0.25000000000")
        );
    }

    #[test]
    fn should_show_a_service_without_endpoints_as_its_reject_rule() {
        let nodes = nodes(2);
        let (services, slices) = web(0);
        let g = rule_graph(&input(&services, &slices, &nodes, ProxyMode::Iptables));
        let s = &g.services[0];
        assert!(s.reject && s.endpoints.is_empty());
        assert_eq!(s.table, "filter");
        assert!(
            s.capture.contains("has no endpoints")
                && s.capture
                    .ends_with("-j REJECT --reject-with icmp-port-unreachable")
        );
    }

    #[test]
    fn should_list_ipvs_virtual_and_real_servers() {
        let nodes = nodes(2);
        let (services, slices) = web(2);
        let inp = input(&services, &slices, &nodes, ProxyMode::Ipvs);
        let g = rule_graph(&inp);
        let text = ipvs::ipvsadm_ln(&inp);
        let s = &g.services[0];
        assert_eq!(s.capture, "TCP  10.96.0.50:80 rr");
        assert!(text.lines().any(|l| l == s.capture));
        assert_eq!(s.endpoints.len(), 2);
        assert!(text.lines().any(|l| l.trim_end() == s.endpoints[0].jump));
    }
}
