//! Tests of the ServicePort / Endpoint model (servicechangetracker + endpointslicecache).

use serde_json::json;

use super::model::*;
use super::testutil::*;

fn port(ns: &str, name: &str, port: &str, protocol: Protocol) -> ServicePortName {
    ServicePortName {
        namespace: ns.into(),
        name: name.into(),
        port: port.into(),
        protocol,
    }
}

#[test]
fn service_port_names_print_like_upstream() {
    assert_eq!(port("ns", "svc", "", Protocol::Tcp).to_string(), "ns/svc");
    assert_eq!(
        port("ns", "svc", "http", Protocol::Tcp).to_string(),
        "ns/svc:http"
    );
}

#[test]
fn unproxyable_services_are_skipped() {
    let services = vec![
        svc(
            "a",
            "headless",
            json!({"clusterIP": "None", "ports": [{"port": 80}]}),
        ),
        svc("a", "no-ip", json!({"ports": [{"port": 80}]})),
        svc(
            "a",
            "extname",
            json!({"type": "ExternalName", "externalName": "example.com",
            "clusterIP": "10.96.0.50", "ports": [{"port": 80}]}),
        ),
        svc(
            "a",
            "v6",
            json!({"clusterIP": "fd00::1", "ports": [{"port": 80}]}),
        ),
        svc(
            "a",
            "junk",
            json!({"clusterIP": "10.96.0.7",
            "ports": [{"port": 80, "protocol": "ICMP"}, {"port": 99999}]}),
        ),
        svc("a", "nospec", json!(null)),
        svc(
            "a",
            "ok",
            json!({"clusterIP": "10.96.0.9", "ports": [{"port": 80}]}),
        ),
    ];
    let m = build(&services, &[], "n");
    let names: Vec<String> = m.ports.iter().map(|p| p.name_string()).collect();
    assert_eq!(names, vec!["a/ok"]);
    assert_eq!(m.ports[0].name.protocol, Protocol::Tcp);
}

#[test]
fn service_fields_follow_new_base_service_info() {
    let services = vec![svc_with_status(
        "d",
        "web",
        json!({"type": "LoadBalancer", "clusterIP": "10.96.0.20", "externalTrafficPolicy": "Local",
            "healthCheckNodePort": 31000, "sessionAffinity": "ClientIP",
            "loadBalancerSourceRanges": [" 1.2.3.0/24", "bogus"],
            "ports": [{"name": "http", "port": 80, "nodePort": 30080}]}),
        json!({"loadBalancer": {"ingress": [{"ip": "5.5.5.5"}, {"ip": "6.6.6.6", "ipMode": "Proxy"}]}}),
    )];
    let m = build(&services, &[], "n");
    let p = &m.ports[0];
    assert_eq!(
        p.sticky_max_age_seconds,
        Some(DEFAULT_CLIENT_IP_TIMEOUT_SECONDS)
    );
    assert!(p.external_policy_local && !p.internal_policy_local);
    assert_eq!(p.health_check_node_port, 31000);
    assert_eq!(
        p.load_balancer_vips,
        vec!["5.5.5.5".parse::<std::net::Ipv4Addr>().unwrap()]
    );
    assert_eq!(p.load_balancer_source_ranges.len(), 1);
    assert_eq!(p.node_port, 30080);
    assert!(p.uses_cluster_endpoints() && p.uses_local_endpoints());
}

#[test]
fn endpoints_merge_slices_dedupe_and_sort_as_strings() {
    let p = &[("http", 8080, "TCP")];
    let slices = vec![
        slice(
            "d",
            "web-b",
            "web",
            p,
            &[Ep("10.244.1.10", Some("w1"), true, true, false)],
        ),
        slice(
            "d",
            "web-a",
            "web",
            p,
            &[
                Ep("10.244.1.9", Some("w1"), true, true, false),
                Ep("10.244.1.10", None, true, true, false),
            ],
        ),
        // Another protocol is another service port.
        slice(
            "d",
            "web-c",
            "web",
            &[("http", 8080, "UDP")],
            &[ready("10.244.2.2", "w2")],
        ),
    ];
    let m = endpoints_map(&slices, "w1");
    let eps = &m[&port("d", "web", "http", Protocol::Tcp)];
    let got: Vec<String> = eps.iter().map(|e| e.to_string()).collect();
    // Upstream sorts by the "ip:port" string: "10.244.1.10" < "10.244.1.9".
    assert_eq!(got, vec!["10.244.1.10:8080", "10.244.1.9:8080"]);
    // The local copy of a duplicated endpoint wins.
    assert!(eps[0].is_local);
    assert_eq!(m[&port("d", "web", "http", Protocol::Udp)].len(), 1);
}

#[test]
fn only_ready_endpoints_unless_none_then_serving_terminating() {
    let services = vec![svc(
        "d",
        "web",
        json!({"clusterIP": "10.96.0.30", "ports": [{"port": 80}]}),
    )];
    let p = &[("", 80, "TCP")];
    let mixed = vec![slice(
        "d",
        "web-1",
        "web",
        p,
        &[
            Ep("10.244.1.2", Some("w1"), true, true, false),
            Ep("10.244.1.3", Some("w1"), false, true, true),
            Ep("10.244.1.4", Some("w1"), false, false, false),
        ],
    )];
    let m = build(&services, &mixed, "w1");
    let c = categorize_endpoints(m.endpoints_of(&m.ports[0].name), &m.ports[0]);
    assert_eq!(c.cluster.len(), 1);
    assert_eq!(c.cluster[0].to_string(), "10.244.1.2:80");
    assert!(c.has_any);

    let terminating = vec![slice(
        "d",
        "web-1",
        "web",
        p,
        &[
            Ep("10.244.1.3", Some("w1"), false, true, true),
            Ep("10.244.1.4", Some("w1"), false, false, true),
        ],
    )];
    let m = build(&services, &terminating, "w1");
    let c = categorize_endpoints(m.endpoints_of(&m.ports[0].name), &m.ports[0]);
    assert_eq!(c.cluster.len(), 1);
    assert_eq!(c.cluster[0].to_string(), "10.244.1.3:80");

    let none = vec![slice(
        "d",
        "web-1",
        "web",
        p,
        &[Ep("10.244.1.4", Some("w1"), false, false, false)],
    )];
    let m = build(&services, &none, "w1");
    let c = categorize_endpoints(m.endpoints_of(&m.ports[0].name), &m.ports[0]);
    assert!(c.cluster.is_empty() && !c.has_any);
}

#[test]
fn local_policy_uses_local_endpoints_and_union_for_sep_chains() {
    let services = vec![svc(
        "d",
        "web",
        json!({"type": "NodePort", "clusterIP": "10.96.0.31",
        "externalTrafficPolicy": "Local", "ports": [{"port": 80, "nodePort": 30001}]}),
    )];
    let p = &[("", 80, "TCP")];
    let slices = vec![slice(
        "d",
        "web-1",
        "web",
        p,
        &[ready("10.244.1.2", "w1"), ready("10.244.2.2", "w2")],
    )];
    let m = build(&services, &slices, "w1");
    let c = categorize_endpoints(m.endpoints_of(&m.ports[0].name), &m.ports[0]);
    assert_eq!(c.cluster.len(), 2);
    assert_eq!(c.local.len(), 1);
    assert_eq!(c.all_reachable.len(), 2);

    let internal_local = vec![svc(
        "d",
        "web",
        json!({"clusterIP": "10.96.0.31",
        "internalTrafficPolicy": "Local", "ports": [{"port": 80}]}),
    )];
    let m = build(&internal_local, &slices, "w3");
    let c = categorize_endpoints(m.endpoints_of(&m.ports[0].name), &m.ports[0]);
    assert!(c.cluster.is_empty() && c.local.is_empty() && c.all_reachable.is_empty());
    assert!(c.has_any, "endpoints exist elsewhere: DROP, not REJECT");
}
