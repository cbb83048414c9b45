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

/// A fresh kubeloop cluster: the `kubernetes` Service and cluster DNS (CoreDNS on the
/// control plane), seen from a worker.
pub(crate) fn kind_default_objects() -> (
    Vec<std::sync::Arc<k8s_openapi::api::core::v1::Service>>,
    Vec<std::sync::Arc<k8s_openapi::api::discovery::v1::EndpointSlice>>,
) {
    let services = vec![
        svc(
            "default",
            "kubernetes",
            json!({"clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}),
        ),
        svc(
            "kube-system",
            "kube-dns",
            json!({"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
            "ports": [
                {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}]}),
        ),
    ];
    let slices = vec![
        slice(
            "default",
            "kubernetes",
            "kubernetes",
            &[("https", 6443, "TCP")],
            &[Ep("172.18.0.2", None, true, true, false)],
        ),
        slice(
            "kube-system",
            "kube-dns-x7k2p",
            "kube-dns",
            &[
                ("dns-tcp", 53, "TCP"),
                ("dns", 53, "UDP"),
                ("metrics", 9153, "TCP"),
            ],
            &[
                ready("10.244.0.2", "kind-control-plane"),
                ready("10.244.0.3", "kind-control-plane"),
            ],
        ),
    ];
    (services, slices)
}

#[test]
fn fresh_cluster_save_has_kubernetes_and_dns_chains() {
    let (services, slices) = kind_default_objects();
    let nodes = nodes(2);
    let inp = input(&services, &slices, &nodes, "kind-worker");
    let save = iptables_save(&inp);
    for chain in [
        "KUBE-SVC-NPX46M4PTMTKRN6Y", // default/kubernetes:https
        "KUBE-SVC-TCOU7JCQXEZGVUNU", // kube-system/kube-dns:dns
        "KUBE-SVC-ERIFXISQEP7F7OF4", // kube-system/kube-dns:dns-tcp
        "KUBE-SVC-JD5MR3NA4I4DYORP", // kube-system/kube-dns:metrics
    ] {
        assert!(
            save.contains(&format!(":{chain} - [0:0]")),
            "{chain} missing"
        );
    }
    assert!(save.contains(
        "-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment \"kube-system/kube-dns:dns cluster IP\" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU"
    ));
    assert_golden("fresh_cluster_save.txt", &save);
}

pub(crate) fn np_service(
    policy: &str,
    affinity: bool,
) -> std::sync::Arc<k8s_openapi::api::core::v1::Service> {
    let mut spec = json!({"type": "NodePort", "clusterIP": "10.96.50.50", "externalTrafficPolicy": policy,
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080, "nodePort": 30080}]});
    if affinity {
        spec["sessionAffinity"] = json!("ClientIP");
        spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 10800}});
    }
    svc("default", "web", spec)
}

pub(crate) fn web_slice() -> Vec<std::sync::Arc<k8s_openapi::api::discovery::v1::EndpointSlice>> {
    vec![slice(
        "default",
        "web-1",
        "web",
        &[("", 8080, "TCP")],
        &[
            ready("10.244.1.5", "kind-worker"),
            ready("10.244.2.6", "kind-worker2"),
        ],
    )]
}

#[test]
fn nodeport_service_jumps_from_kube_nodeports_through_ext_chain() {
    let services = vec![np_service("Cluster", false)];
    let slices = web_slice();
    let nodes = nodes(2);
    let save = iptables_save(&input(&services, &slices, &nodes, "kind-worker"));
    assert!(save.contains(
        "-A KUBE-NODEPORTS -p tcp -m comment --comment \"default/web\" -m tcp --dport 30080 -j KUBE-EXT-"
    ));
    assert!(save.contains("-m comment --comment \"masquerade traffic for default/web external destinations\" -j KUBE-MARK-MASQ"));
    assert_golden("nodeport_save.txt", &save);
}

#[test]
fn service_without_endpoints_is_rejected_in_the_filter_table() {
    let services = vec![np_service("Cluster", false)];
    let nodes = nodes(2);
    let save = iptables_save(&input(&services, &[], &nodes, "kind-worker"));
    assert!(save.contains(
        "-A KUBE-SERVICES -d 10.96.50.50/32 -p tcp -m comment --comment \"default/web has no endpoints\" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable"
    ));
    assert!(save.contains(
        "-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment \"default/web has no endpoints\" -m addrtype --dst-type LOCAL -m tcp --dport 30080 -j REJECT --reject-with icmp-port-unreachable"
    ));
    assert!(
        !save.contains("KUBE-SVC-"),
        "no nat chains without endpoints"
    );
    assert_golden("no_endpoints_save.txt", &save);
}

#[test]
fn client_ip_affinity_uses_recent_lists() {
    let services = vec![np_service("Cluster", true)];
    let slices = web_slice();
    let nodes = nodes(2);
    let inp = input(&services, &slices, &nodes, "kind-worker");
    let save = iptables_save(&inp);
    assert!(save.contains("-m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-"));
    assert!(save.contains("--mask 255.255.255.255 --rsource -j KUBE-SEP-"));
    assert!(save
        .contains("-p tcp -m comment --comment \"default/web\" -m recent --set --name KUBE-SEP-"));
    let restore = iptables_restore(&inp);
    let svc_lines: Vec<&str> = restore
        .lines()
        .filter(|l| l.starts_with("-A KUBE-SVC-") && l.contains(" -> "))
        .collect();
    // Two affinity checks first, then the two load-balancing rules.
    assert_eq!(svc_lines.len(), 4);
    assert!(svc_lines[0].contains("--rcheck") && svc_lines[1].contains("--rcheck"));
    assert!(svc_lines[2].contains("--probability 0.5000000000"));
    assert_golden("affinity_save.txt", &save);
}

#[test]
fn external_traffic_policy_local_adds_svl_chain_and_short_circuits() {
    let services = vec![np_service("Local", false)];
    let slices = web_slice();
    let nodes = nodes(3);
    // On kind-worker (has a local endpoint): KUBE-EXT → KUBE-SVL with one endpoint.
    let save = iptables_save(&input(&services, &slices, &nodes, "kind-worker"));
    assert!(save.contains(":KUBE-SVL-"));
    assert!(save.contains("-s 10.244.0.0/16 -m comment --comment \"pod traffic for default/web external destinations\" -j KUBE-SVC-"));
    assert!(save.contains("-m comment --comment \"masquerade LOCAL traffic for default/web external destinations\" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ"));
    assert_golden("local_policy_save.txt", &save);
    // On kind-worker3 (none local): NodePort traffic from outside is dropped.
    let save = iptables_save(&input(&services, &slices, &nodes, "kind-worker3"));
    assert!(!save.contains(":KUBE-SVL-"));
    assert!(save.contains("\"default/web has no local endpoints\" -m addrtype --dst-type LOCAL -m tcp --dport 30080 -j DROP"));
}

#[test]
fn odd_input_never_panics_and_renders_the_fixed_chains() {
    let services = vec![
        svc("x", "a", json!({"clusterIP": "None"})),
        svc(
            "x",
            "b",
            json!({"type": "ExternalName", "externalName": "e.com"}),
        ),
        svc("x", "c", json!({"clusterIP": "", "ports": []})),
    ];
    let nodes = nodes(1);
    let mut inp = input(&services, &[], &nodes, "kind-worker");
    inp.cluster_cidr = None;
    inp.node_name = "not-a-node".into();
    let save = iptables_save(&inp);
    assert!(save.contains(":KUBE-SERVICES - [0:0]"));
    assert!(!save.contains("KUBE-SVC-"));
}

#[test]
fn ipvsadm_lists_cluster_ips_and_nodeports_with_masq_real_servers() {
    let (mut services, mut slices) = kind_default_objects();
    services.push(np_service("Cluster", true));
    slices.extend(web_slice());
    let nodes = nodes(2);
    let mut inp = input(&services, &slices, &nodes, "kind-worker");
    inp.mode = super::ProxyMode::Ipvs;
    let out = super::ipvs::ipvsadm_ln(&inp);
    assert!(out.starts_with(
        "IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n"
    ));
    assert!(out.contains("TCP  10.96.0.1:443 rr\n  -> 172.18.0.2:6443              Masq    1      0          0         \n"));
    assert!(out.contains("TCP  10.96.50.50:80 rr persistent 10800\n"));
    assert!(out.contains("TCP  172.18.0.3:30080 rr persistent 10800\n"));
    assert!(out.contains("UDP  10.96.0.10:53 rr\n"));
    assert_golden("ipvsadm_ln.txt", &out);
    assert_golden("ipvs_iptables_save.txt", &iptables_save(&inp));
}
