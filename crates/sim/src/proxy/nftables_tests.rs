//! Tests for the nftables renderer and walk: upstream's expected rules, whole listings of
//! kubeloop clusters (golden files), and packets walked through the chains.

use std::net::Ipv4Addr;

use serde_json::json;

use super::model::Protocol;
use super::nftables::{kube_proxy_table, nft_list_ruleset, nft_list_table, Family, NftTable};
use super::nftables_list::{elem_text, rule_text};
use super::testutil::*;
use super::traffic::{route, AffinityTable, Outcome, Packet};
use super::{Cidr, ProxyInput, ProxyMode};
use crate::rng::Rng;

fn nft_input<'a>(
    services: &'a [std::sync::Arc<k8s_openapi::api::core::v1::Service>],
    slices: &'a [std::sync::Arc<k8s_openapi::api::discovery::v1::EndpointSlice>],
    nodes: &'a [super::NodeAddress],
    node: &str,
) -> ProxyInput<'a> {
    let mut i = input(services, slices, nodes, node);
    i.mode = ProxyMode::Nftables;
    i
}

/// `add rule` lines of one chain, as nft lists them.
fn rules(t: &NftTable, chain: &str) -> Vec<String> {
    t.chain(chain)
        .unwrap_or_else(|| panic!("chain {chain} exists"))
        .rules
        .iter()
        .map(|r| rule_text(t.family, r))
        .collect()
}

fn elements(t: &NftTable, set: &str) -> Vec<String> {
    t.set(set)
        .map(|s| s.elements.iter().map(|e| elem_text(t.family, e)).collect())
        .unwrap_or_default()
}

/// Upstream `pkg/proxy/nftables/proxier_test.go` `TestOverallNFTablesRules`, with the
/// same objects, node (192.168.0.2) and pod CIDR (10.0.0.0/8), in nft's listing form.
#[test]
fn rules_match_upstream_test_overall_nftables_rules() {
    let services = vec![
        svc(
            "ns1",
            "svc1",
            json!({"clusterIP": "172.30.0.41",
            "ports": [{"name": "p80", "port": 80, "protocol": "TCP"}]}),
        ),
        svc_with_status(
            "ns2",
            "svc2",
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local",
            "clusterIP": "172.30.0.42", "externalIPs": ["192.168.99.22"], "healthCheckNodePort": 30000,
            "ports": [{"name": "p80", "port": 80, "protocol": "TCP", "nodePort": 3001}]}),
            json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}),
        ),
        svc(
            "ns3",
            "svc3",
            json!({"type": "NodePort", "clusterIP": "172.30.0.43",
            "ports": [{"name": "p80", "port": 80, "protocol": "TCP", "nodePort": 3003}]}),
        ),
        svc_with_status(
            "ns5",
            "svc5",
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Cluster",
            "clusterIP": "172.30.0.45", "loadBalancerSourceRanges": ["203.0.113.0/25"],
            "sessionAffinity": "ClientIP",
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
            "ports": [{"name": "p80", "port": 80, "protocol": "TCP", "nodePort": 3002}]}),
            json!({"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}]}}),
        ),
        svc(
            "ns6",
            "svc6",
            json!({"type": "ClusterIP", "clusterIP": "172.30.0.46",
            "ports": [{"name": "p80", "port": 80, "protocol": "TCP", "targetPort": 80}]}),
        ),
    ];
    let p80 = &[("p80", 80, "TCP")];
    let any = |ip| Ep(ip, None, true, true, false);
    let slices = vec![
        slice("ns1", "svc1-1", "svc1", p80, &[any("10.180.0.1")]),
        slice("ns2", "svc2-1", "svc2", p80, &[any("10.180.0.2")]),
        slice("ns3", "svc3-1", "svc3", p80, &[any("10.180.0.3")]),
        slice("ns5", "svc5-1", "svc5", p80, &[any("10.180.0.3")]),
    ];
    let nodes = vec![super::NodeAddress {
        name: "test-node".into(),
        ip: Ipv4Addr::new(192, 168, 0, 2),
        pod_cidr: None,
    }];
    let mut inp = nft_input(&services, &slices, &nodes, "test-node");
    inp.cluster_cidr = Cidr::parse("10.0.0.0/8");
    let t = kube_proxy_table(&inp);

    assert_eq!(
        rules(&t, "service-ULMVA6XW-ns1/svc1/tcp/p80"),
        [
            "ip daddr 172.30.0.41 ip saddr != 10.0.0.0/8 jump mark-for-masquerade",
            "numgen random mod 1 vmap { 0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 }",
        ]
    );
    assert_eq!(
        rules(&t, "endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"),
        [
            "ip saddr 10.180.0.1 jump mark-for-masquerade",
            "meta l4proto tcp dnat to 10.180.0.1:80",
        ]
    );
    // svc2: Local policy without a local endpoint keeps only the short-circuit rules.
    assert_eq!(
        rules(&t, "external-42NFTM6N-ns2/svc2/tcp/p80"),
        [
            "ip saddr 10.0.0.0/8 goto service-42NFTM6N-ns2/svc2/tcp/p80 comment \"short-circuit pod traffic\"",
            "fib saddr type local jump mark-for-masquerade comment \"masquerade local traffic\"",
            "fib saddr type local goto service-42NFTM6N-ns2/svc2/tcp/p80 comment \"short-circuit local traffic\"",
        ]
    );
    assert_eq!(
        rules(&t, "external-4AT6LBPK-ns3/svc3/tcp/p80"),
        [
            "jump mark-for-masquerade",
            "goto service-4AT6LBPK-ns3/svc3/tcp/p80",
        ]
    );
    assert_eq!(
        rules(&t, "service-HVFWP5L3-ns5/svc5/tcp/p80"),
        [
            "ip daddr 172.30.0.45 ip saddr != 10.0.0.0/8 jump mark-for-masquerade",
            "ip saddr @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 goto endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80",
            "numgen random mod 1 vmap { 0 : goto endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 }",
        ]
    );
    assert_eq!(
        rules(&t, "endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80"),
        [
            "ip saddr 10.180.0.3 jump mark-for-masquerade",
            "update @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 { ip saddr }",
            "meta l4proto tcp dnat to 10.180.0.3:80",
        ]
    );
    assert_eq!(
        rules(&t, "firewall-HVFWP5L3-ns5/svc5/tcp/p80"),
        ["ip saddr != 203.0.113.0/25 drop"]
    );
    let mut no_ep = elements(&t, "no-endpoint-services");
    no_ep.sort();
    assert_eq!(
        no_ep,
        [
            "1.2.3.4 . tcp . 80 comment \"ns2/svc2:p80\" : drop",
            "172.30.0.46 . tcp . 80 comment \"ns6/svc6:p80\" : goto reject-chain",
            "192.168.99.22 . tcp . 80 comment \"ns2/svc2:p80\" : drop",
        ]
    );
    assert_eq!(
        elements(&t, "no-endpoint-nodeports"),
        ["tcp . 3001 comment \"ns2/svc2:p80\" : drop"]
    );
    assert_eq!(
        elements(&t, "firewall-ips"),
        ["5.6.7.8 . tcp . 80 : goto firewall-HVFWP5L3-ns5/svc5/tcp/p80"]
    );
    assert_eq!(elements(&t, "nodeport-ips"), ["192.168.0.2"]);
    assert!(t.chain("service-ZZZZZZZZ-ns6/svc6/tcp/p80").is_none());
}

fn web(
    eps: &[Ep],
    spec: serde_json::Value,
) -> (
    Vec<std::sync::Arc<k8s_openapi::api::core::v1::Service>>,
    Vec<std::sync::Arc<k8s_openapi::api::discovery::v1::EndpointSlice>>,
) {
    let services = vec![svc("default", "web", spec)];
    let slices = vec![slice(
        "default",
        "web-abcde",
        "web",
        &[("http", 80, "TCP")],
        eps,
    )];
    (services, slices)
}

fn cluster_ip_spec() -> serde_json::Value {
    json!({"clusterIP": "10.96.120.7", "ports": [{"name": "http", "port": 80, "targetPort": 80}]})
}

#[test]
fn whole_listing_of_a_cluster_ip_service_with_two_endpoints() {
    let (services, slices) = web(
        &[
            ready("10.244.1.5", "kind-worker"),
            ready("10.244.2.7", "kind-worker2"),
        ],
        cluster_ip_spec(),
    );
    let nodes = nodes(2);
    let inp = nft_input(&services, &slices, &nodes, "kind-worker");
    assert_golden("nft_cluster_ip_ruleset.txt", &nft_list_ruleset(&inp));
}

#[test]
fn whole_listing_of_a_node_port_service() {
    let (services, slices) = web(
        &[ready("10.244.1.5", "kind-worker")],
        json!({"type": "NodePort", "clusterIP": "10.96.120.7",
               "ports": [{"name": "http", "port": 80, "targetPort": 80, "nodePort": 30080}]}),
    );
    let nodes = nodes(2);
    let inp = nft_input(&services, &slices, &nodes, "kind-worker");
    assert_golden("nft_nodeport_table.txt", &nft_list_table(&inp, Family::Ip));
}

#[test]
fn whole_listing_of_a_service_without_endpoints() {
    let (services, slices) = web(&[], cluster_ip_spec());
    let nodes = nodes(2);
    let inp = nft_input(&services, &slices, &nodes, "kind-worker");
    assert_golden(
        "nft_no_endpoints_table.txt",
        &nft_list_table(&inp, Family::Ip),
    );
}

#[test]
fn ip6_table_is_the_skeleton_without_services() {
    let (services, slices) = web(&[ready("10.244.1.5", "kind-worker")], cluster_ip_spec());
    let nodes = nodes(1);
    let inp = nft_input(&services, &slices, &nodes, "kind-worker");
    let v6 = nft_list_table(&inp, Family::Ip6);
    assert!(v6.starts_with("table ip6 kube-proxy {\n\tcomment \"rules for kube-proxy\"\n"));
    assert!(v6.contains("\t\tip6 daddr . meta l4proto . th dport vmap @service-ips\n"));
    assert!(v6.contains("\t\ttype ipv6_addr . inet_proto . inet_service : verdict\n"));
    assert!(!v6.contains("elements"), "{v6}");
    assert!(!v6.contains("/web/"), "{v6}");
    assert!(
        !v6.contains("Drop traffic to unallocated ClusterIPs"),
        "{v6}"
    );
}

fn curl(inp: &ProxyInput, src: &str, dst: &str, port: u16, seed: u64) -> super::traffic::Route {
    let packet = Packet {
        src_ip: src.parse().expect("ip"),
        dst_ip: dst.parse().expect("ip"),
        dst_port: port,
        protocol: Protocol::Tcp,
    };
    route(inp, &packet, &mut Rng::new(seed), &mut AffinityTable::new())
}

#[test]
fn walk_follows_services_then_service_then_endpoint_chains() {
    let (services, slices) = web(
        &[
            ready("10.244.1.5", "kind-worker"),
            ready("10.244.2.7", "kind-worker2"),
        ],
        cluster_ip_spec(),
    );
    let nodes = nodes(2);
    let inp = nft_input(&services, &slices, &nodes, "kind-worker");
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let r = curl(&inp, "10.244.1.9", "10.96.120.7", 80, seed);
        let Outcome::Delivered {
            pod_ip,
            masqueraded,
            service,
            ..
        } = r.outcome
        else {
            panic!("delivered: {:?}", r.outcome);
        };
        assert!(!masqueraded);
        assert_eq!(service, "default/web:http");
        seen.insert(pod_ip);
        let chains: Vec<&str> = r.hops.iter().map(|h| h.chain.as_str()).collect();
        assert_eq!(
            chains[..4],
            [
                "nat-prerouting",
                "services",
                "service-ips",
                "service-SUSTUHLJ-default/web/tcp/http"
            ][..],
            "{chains:?}"
        );
        assert!(chains[4].starts_with("endpoint-"), "{chains:?}");
        assert!(r.hops.iter().all(|h| h.table == "nft"));
    }
    assert_eq!(seen.len(), 2, "numgen picks both endpoints");
}

#[test]
fn walk_rejects_a_service_without_endpoints_and_unknown_ports() {
    let (services, slices) = web(&[], cluster_ip_spec());
    let nodes = nodes(1);
    let inp = nft_input(&services, &slices, &nodes, "kind-worker");
    let r = curl(&inp, "10.244.1.9", "10.96.120.7", 80, 1);
    assert_eq!(
        r.outcome,
        Outcome::Rejected {
            reason: "connection refused (default/web:http has no endpoints)".into()
        }
    );
    let last = r.hops.last().expect("hops");
    assert_eq!(
        (last.chain.as_str(), last.rule.as_str()),
        ("reject-chain", "reject")
    );
    let r = curl(&inp, "10.244.1.9", "10.96.120.7", 8080, 1);
    assert_eq!(
        r.outcome,
        Outcome::Rejected {
            reason: "connection refused (Reject traffic to invalid ports of ClusterIPs)".into()
        }
    );
    let r = curl(&inp, "10.244.1.9", "10.96.200.200", 80, 1);
    assert!(
        matches!(r.outcome, Outcome::Dropped { .. }),
        "{:?}",
        r.outcome
    );
}

#[test]
fn walk_takes_a_node_port_on_another_node_and_masquerades() {
    let (services, slices) = web(
        &[ready("10.244.2.7", "kind-worker2")],
        json!({"type": "NodePort", "clusterIP": "10.96.120.7",
               "ports": [{"name": "http", "port": 80, "targetPort": 80, "nodePort": 30080}]}),
    );
    let nodes = nodes(2);
    let inp = nft_input(&services, &slices, &nodes, "kind-worker");
    // From outside the cluster to kind-worker's IP.
    let r = curl(&inp, "172.18.0.100", "172.18.0.3", 30080, 3);
    let Outcome::Delivered {
        pod_ip,
        masqueraded,
        ..
    } = r.outcome
    else {
        panic!("delivered: {:?}", r.outcome);
    };
    assert_eq!(pod_ip, Ipv4Addr::new(10, 244, 2, 7));
    assert!(masqueraded);
    let chains: Vec<&str> = r.hops.iter().map(|h| h.chain.as_str()).collect();
    assert!(chains.contains(&"service-nodeports"), "{chains:?}");
    assert!(
        chains.contains(&"external-SUSTUHLJ-default/web/tcp/http"),
        "{chains:?}"
    );
    assert!(chains.contains(&"masquerading"), "{chains:?}");
}

#[test]
fn walk_keeps_client_ip_affinity_through_the_affinity_set() {
    let mut spec = cluster_ip_spec();
    spec["sessionAffinity"] = json!("ClientIP");
    let (services, slices) = web(
        &[
            ready("10.244.1.5", "kind-worker"),
            ready("10.244.2.7", "kind-worker2"),
        ],
        spec,
    );
    let nodes = nodes(2);
    let inp = nft_input(&services, &slices, &nodes, "kind-worker");
    let mut aff = AffinityTable::new();
    let mut rng = Rng::new(5);
    let packet = Packet {
        src_ip: "10.244.1.9".parse().expect("ip"),
        dst_ip: "10.96.120.7".parse().expect("ip"),
        dst_port: 80,
        protocol: Protocol::Tcp,
    };
    let first = route(&inp, &packet, &mut rng, &mut aff);
    let Outcome::Delivered { pod_ip, .. } = first.outcome else {
        panic!("delivered");
    };
    for _ in 0..10 {
        let r = route(&inp, &packet, &mut rng, &mut aff);
        assert!(matches!(r.outcome, Outcome::Delivered { pod_ip: p, .. } if p == pod_ip));
        assert!(r
            .hops
            .iter()
            .any(|h| h.rule.starts_with("ip saddr @affinity-") && h.matched));
    }
}
