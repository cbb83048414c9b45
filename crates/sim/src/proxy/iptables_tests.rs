//! Golden tests for the iptables renderer: upstream's expected output, and kubeloop clusters.

use serde_json::json;

use super::iptables::{iptables_restore, iptables_save};
use super::testutil::*;
use super::{Cidr, ProxyOptions};

/// Upstream `pkg/proxy/iptables/proxier_test.go` `TestOverallIPTablesRules`: six services
/// (ClusterIP, LB+Local, NodePort, externalIP, LB+source ranges+affinity, no endpoints).
#[test]
fn restore_input_matches_upstream_test_overall_iptables_rules() {
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
        svc(
            "ns4",
            "svc4",
            json!({"type": "NodePort", "clusterIP": "172.30.0.44",
            "externalIPs": ["192.168.99.33"],
            "ports": [{"name": "p80", "port": 80, "protocol": "TCP", "targetPort": 80}]}),
        ),
        svc_with_status(
            "ns5",
            "svc5",
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Cluster",
            "clusterIP": "172.30.0.45", "healthCheckNodePort": 30000,
            "loadBalancerSourceRanges": [" 203.0.113.0/25"],
            "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
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
    let p = &[("p80", 80, "TCP")];
    let slices = vec![
        slice(
            "ns1",
            "svc1-1",
            "svc1",
            p,
            &[Ep("10.180.0.1", None, true, true, false)],
        ),
        slice(
            "ns2",
            "svc2-1",
            "svc2",
            p,
            &[Ep("10.180.0.2", None, true, true, false)],
        ),
        slice(
            "ns3",
            "svc3-1",
            "svc3",
            p,
            &[Ep("10.180.0.3", None, true, true, false)],
        ),
        slice(
            "ns4",
            "svc4-1",
            "svc4",
            p,
            &[
                Ep("10.180.0.4", None, true, true, false),
                Ep("10.180.0.5", Some("test-node"), true, true, false),
            ],
        ),
        slice(
            "ns5",
            "svc5-1",
            "svc5",
            p,
            &[Ep("10.180.0.3", None, true, true, false)],
        ),
    ];
    let nodes = vec![super::NodeAddress {
        name: "test-node".into(),
        ip: "192.168.0.2".parse().unwrap(),
        pod_cidr: None,
    }];
    let mut inp = input(&services, &slices, &nodes, "test-node");
    inp.cluster_cidr = Cidr::parse("10.0.0.0/8");
    // The fake proxier: no --random-fully, nfacct counters present.
    inp.options = ProxyOptions {
        random_fully: false,
        nfacct: true,
        ..ProxyOptions::default()
    };
    // Upstream's fake proxier spells the mark "0x4000"; real kube-proxy uses "%#08x".
    let got = iptables_restore(&inp).replace("0x00004000", "0x4000");
    assert_golden("overall_iptables_rules.txt", &got);
}

#[test]
fn cluster_ip_service_with_three_endpoints_spreads_one_third_each() {
    let (services, slices) = nginx_cluster();
    let nodes = nodes(3);
    let inp = input(&services, &slices, &nodes, "kind-worker");
    let restore = iptables_restore(&inp);
    let svc_rules: Vec<&str> = restore
        .lines()
        .filter(|l| l.starts_with("-A KUBE-SVC-") && l.contains(" -> "))
        .collect();
    assert_eq!(svc_rules.len(), 3);
    assert!(svc_rules[0].contains("--probability 0.3333333333 -j KUBE-SEP-"));
    assert!(svc_rules[1].contains("--probability 0.5000000000 -j KUBE-SEP-"));
    assert!(!svc_rules[2].contains("--probability"));
    assert!(svc_rules[0].contains("\"default/nginx -> 10.244.1.5:80\""));

    assert_golden("nginx_save.txt", &iptables_save(&inp));
}
