//! Tests of the packet walk: distribution, determinism, affinity, rejects, policies, IPVS.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use serde_json::json;

use super::iptables_tests::{kind_default_objects, np_service, web_slice};
use super::model::Protocol;
use super::testutil::*;
use super::traffic::{route, AffinityTable, Outcome, Packet, Router};
use super::ProxyMode;
use crate::rng::Rng;

fn ip(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

fn tcp(src: &str, dst: &str, port: u16) -> Packet {
    Packet {
        src_ip: ip(src),
        dst_ip: ip(dst),
        dst_port: port,
        protocol: Protocol::Tcp,
    }
}

fn delivered(o: &Outcome) -> (Ipv4Addr, u16) {
    match o {
        Outcome::Delivered { pod_ip, port, .. } => (*pod_ip, *port),
        other => panic!("expected Delivered, got {other:?}"),
    }
}

#[test]
fn cluster_ip_walk_shows_each_hop_to_the_dnat() {
    let (services, slices) = nginx_cluster();
    let nodes = nodes(3);
    let inp = input(&services, &slices, &nodes, "kind-worker");
    let r = route(
        &inp,
        &tcp("10.244.1.20", "10.96.100.10", 80),
        &mut Rng::new(1),
        &mut AffinityTable::new(),
    );
    let chains: Vec<&str> = r
        .hops
        .iter()
        .filter(|h| h.matched)
        .map(|h| h.chain.as_str())
        .collect();
    assert_eq!(&chains[..2], &["PREROUTING", "KUBE-SERVICES"]);
    assert!(chains[2].starts_with("KUBE-SVC-"));
    let last = r.hops.last().unwrap();
    assert!(last.chain.starts_with("KUBE-SEP-") && last.note.starts_with("DNAT to 10.244."));
    assert!(
        r.hops[0].rule
            == "-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES"
    );
    match r.outcome {
        Outcome::Delivered {
            service,
            masqueraded,
            source_seen,
            ..
        } => {
            assert_eq!(service, "default/nginx");
            assert!(!masqueraded, "pod-to-service traffic keeps its source");
            assert_eq!(source_seen, ip("10.244.1.20"));
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn endpoint_choice_is_uniform_and_deterministic_per_seed() {
    let (services, slices) = nginx_cluster();
    let nodes = nodes(3);
    let inp = input(&services, &slices, &nodes, "kind-worker2");
    let router = Router::new(&inp);
    let draw = |seed: u64| {
        let mut rng = Rng::new(seed);
        let mut aff = AffinityTable::new();
        (0..3000)
            .map(|_| {
                delivered(
                    &router
                        .route(&tcp("10.244.2.9", "10.96.100.10", 80), &mut rng, &mut aff)
                        .outcome,
                )
                .0
            })
            .collect::<Vec<_>>()
    };
    let a = draw(42);
    assert_eq!(a, draw(42), "same seed, same choices");
    assert_ne!(a, draw(43));
    let mut counts: BTreeMap<Ipv4Addr, usize> = BTreeMap::new();
    for x in &a {
        *counts.entry(*x).or_default() += 1;
    }
    assert_eq!(counts.len(), 3);
    for (ep, n) in counts {
        assert!((850..=1150).contains(&n), "{ep} got {n} of 3000");
    }
}

#[test]
fn client_ip_affinity_sticks_until_the_timeout() {
    let services = vec![np_service("Cluster", true)];
    let slices = web_slice();
    let nodes = nodes(2);
    let mut inp = input(&services, &slices, &nodes, "kind-worker");
    let mut rng = Rng::new(7);
    let mut aff = AffinityTable::new();
    let pkt = tcp("10.244.1.30", "10.96.50.50", 80);
    let first = delivered(&route(&inp, &pkt, &mut rng, &mut aff).outcome);
    for i in 0..50 {
        inp.now = i * 60_000;
        let r = route(&inp, &pkt, &mut rng, &mut aff);
        assert_eq!(delivered(&r.outcome), first);
        assert!(r
            .hops
            .iter()
            .any(|h| h.matched && h.rule.contains("--rcheck")));
    }
    // Another client is balanced independently; the kernel's lists remember both.
    let _ = route(
        &inp,
        &tcp("10.244.2.40", "10.96.50.50", 80),
        &mut rng,
        &mut aff,
    );
    let remembered: usize = r_lists(&inp).iter().map(|l| aff.recent(l).len()).sum();
    assert_eq!(remembered, 2);
    // Past the 10800 s window the statistic rules decide again (both endpoints reachable).
    let router = Router::new(&inp);
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..40u64 {
        let now = 4 * 3_600_000 * (i + 1);
        seen.insert(delivered(
            &router.route_at(now, &pkt, &mut rng, &mut aff).outcome,
        ));
    }
    assert_eq!(seen.len(), 2);
}

#[test]
fn services_without_endpoints_refuse_connections() {
    let services = vec![np_service("Cluster", false)];
    let nodes = nodes(2);
    let inp = input(&services, &[], &nodes, "kind-worker");
    let mut aff = AffinityTable::new();
    for pkt in [
        tcp("10.244.1.30", "10.96.50.50", 80), // pod → ClusterIP (FORWARD)
        tcp("172.18.0.3", "10.96.50.50", 80),  // node → ClusterIP (OUTPUT)
        tcp("172.18.0.1", "172.18.0.3", 30080), // outside → NodePort (INPUT)
    ] {
        let r = route(&inp, &pkt, &mut Rng::new(1), &mut aff);
        match &r.outcome {
            Outcome::Rejected { reason } => {
                assert!(reason.contains("default/web has no endpoints"), "{reason}")
            }
            o => panic!("{pkt:?}: {o:?}"),
        }
        assert!(r
            .hops
            .last()
            .unwrap()
            .rule
            .contains("-j REJECT --reject-with icmp-port-unreachable"));
    }
}

#[test]
fn external_policy_local_keeps_the_client_ip_or_drops() {
    let services = vec![np_service("Local", false)];
    let slices = web_slice();
    let nodes = nodes(3);
    let mut aff = AffinityTable::new();
    let client = "172.18.0.1";
    // kind-worker has 10.244.1.5 locally: delivered there, client IP preserved.
    let inp = input(&services, &slices, &nodes, "kind-worker");
    let r = route(
        &inp,
        &tcp(client, "172.18.0.3", 30080),
        &mut Rng::new(3),
        &mut aff,
    );
    match r.outcome {
        Outcome::Delivered {
            pod_ip,
            masqueraded,
            source_seen,
            ..
        } => {
            assert_eq!(pod_ip, ip("10.244.1.5"));
            assert!(!masqueraded);
            assert_eq!(source_seen, ip(client));
        }
        o => panic!("{o:?}"),
    }
    // kind-worker3 has none: dropped.
    let inp = input(&services, &slices, &nodes, "kind-worker3");
    let r = route(
        &inp,
        &tcp(client, "172.18.0.5", 30080),
        &mut Rng::new(3),
        &mut aff,
    );
    assert!(
        matches!(r.outcome, Outcome::Dropped { .. }),
        "{:?}",
        r.outcome
    );
}

#[test]
fn cluster_policy_nodeport_masquerades_and_follows_other_nodes() {
    let services = vec![np_service("Cluster", false)];
    let slices = web_slice();
    let nodes = nodes(3);
    let inp = input(&services, &slices, &nodes, "kind-worker");
    // A pod on kind-worker calls kind-worker3's NodePort: the packet leaves this node.
    let r = route(
        &inp,
        &tcp("10.244.1.30", "172.18.0.5", 30080),
        &mut Rng::new(9),
        &mut AffinityTable::new(),
    );
    assert!(r
        .hops
        .iter()
        .any(|h| h.table == "route" && h.note.contains("kind-worker3")));
    assert!(r
        .hops
        .iter()
        .any(|h| h.node == "kind-worker3" && h.chain == "KUBE-NODEPORTS"));
    match r.outcome {
        Outcome::Delivered {
            masqueraded,
            source_seen,
            ..
        } => {
            assert!(masqueraded);
            assert_eq!(
                source_seen,
                ip("10.244.3.0"),
                "flannel.1 address of kind-worker3"
            );
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn non_service_traffic_passes_through() {
    let (services, slices) = nginx_cluster();
    let nodes = nodes(3);
    let inp = input(&services, &slices, &nodes, "kind-worker");
    let r = route(
        &inp,
        &tcp("10.244.1.20", "10.244.2.7", 80),
        &mut Rng::new(1),
        &mut AffinityTable::new(),
    );
    assert_eq!(
        r.outcome,
        Outcome::NotAService {
            dst_ip: ip("10.244.2.7"),
            dst_port: 80
        }
    );
    let r = route(
        &inp,
        &tcp("10.244.1.20", "10.96.100.10", 81),
        &mut Rng::new(1),
        &mut AffinityTable::new(),
    );
    assert!(matches!(r.outcome, Outcome::NotAService { .. }));
}

#[test]
fn node_to_cluster_ip_is_masqueraded_and_dns_udp_works() {
    let (services, slices) = kind_default_objects();
    let nodes = nodes(1);
    let inp = input(&services, &slices, &nodes, "kind-worker");
    let r = route(
        &inp,
        &tcp("172.18.0.3", "10.96.0.1", 443),
        &mut Rng::new(5),
        &mut AffinityTable::new(),
    );
    match r.outcome {
        Outcome::Delivered {
            pod_ip,
            port,
            node,
            masqueraded,
            ..
        } => {
            assert_eq!((pod_ip, port), (ip("172.18.0.2"), 6443));
            assert_eq!(node.as_deref(), Some("kind-control-plane"));
            assert!(masqueraded, "! -s 10.244.0.0/16 marks host traffic");
        }
        o => panic!("{o:?}"),
    }
    let dns = Packet {
        src_ip: ip("10.244.1.8"),
        dst_ip: ip("10.96.0.10"),
        dst_port: 53,
        protocol: Protocol::Udp,
    };
    let (pod, port) =
        delivered(&route(&inp, &dns, &mut Rng::new(5), &mut AffinityTable::new()).outcome);
    assert!(pod == ip("10.244.0.2") || pod == ip("10.244.0.3"));
    assert_eq!(port, 53);
}

#[test]
fn ipvs_round_robin_persistence_and_empty_services() {
    let (mut services, mut slices) = kind_default_objects();
    services.push(np_service("Cluster", false));
    services.push(svc(
        "default",
        "empty",
        json!({"clusterIP": "10.96.9.9", "ports": [{"port": 80}]}),
    ));
    slices.extend(web_slice());
    let nodes = nodes(2);
    let mut inp = input(&services, &slices, &nodes, "kind-worker");
    inp.mode = ProxyMode::Ipvs;
    let mut aff = AffinityTable::new();
    let mut rng = Rng::new(1);
    let picks: Vec<Ipv4Addr> = (0..4)
        .map(|_| {
            delivered(
                &route(
                    &inp,
                    &tcp("10.244.1.30", "10.96.50.50", 80),
                    &mut rng,
                    &mut aff,
                )
                .outcome,
            )
            .0
        })
        .collect();
    assert_eq!(
        picks,
        vec![
            ip("10.244.1.5"),
            ip("10.244.2.6"),
            ip("10.244.1.5"),
            ip("10.244.2.6")
        ]
    );
    let r = route(
        &inp,
        &tcp("10.244.1.30", "10.96.9.9", 80),
        &mut rng,
        &mut aff,
    );
    assert!(
        matches!(r.outcome, Outcome::Rejected { .. }),
        "{:?}",
        r.outcome
    );
    // A VIP on a port no service uses is rejected by KUBE-IPVS-FILTER.
    let r = route(
        &inp,
        &tcp("172.18.0.1", "10.96.50.50", 22),
        &mut rng,
        &mut aff,
    );
    assert!(
        matches!(r.outcome, Outcome::Rejected { .. }),
        "{:?}",
        r.outcome
    );
    // NodePort from outside: marked for masquerade via KUBE-NODE-PORT-TCP.
    let r = route(
        &inp,
        &tcp("172.18.0.1", "172.18.0.3", 30080),
        &mut rng,
        &mut aff,
    );
    assert!(
        matches!(
            r.outcome,
            Outcome::Delivered {
                masqueraded: true,
                ..
            }
        ),
        "{:?}",
        r.outcome
    );
    assert!(r
        .hops
        .iter()
        .any(|h| h.table == "ipvs" && h.chain == "TCP  172.18.0.3:30080 rr"));

    // ClientIP affinity → persistent 10800: one client always lands on one real server.
    let sticky = vec![np_service("Cluster", true)];
    let mut inp = input(&sticky, &slices, &nodes, "kind-worker");
    inp.mode = ProxyMode::Ipvs;
    let pkt = tcp("10.244.1.30", "10.96.50.50", 80);
    let first = delivered(&route(&inp, &pkt, &mut rng, &mut aff).outcome);
    for _ in 0..5 {
        assert_eq!(
            delivered(&route(&inp, &pkt, &mut rng, &mut aff).outcome),
            first
        );
    }
}

/// The KUBE-SEP chains (= xt_recent list names) of the services in `inp`.
fn r_lists(inp: &super::ProxyInput) -> Vec<String> {
    let m = super::model::build(inp.services, inp.slices, &inp.node_name);
    m.endpoints
        .values()
        .flatten()
        .map(|e| e.chain.clone())
        .collect()
}

#[test]
#[ignore = "prints walks for eyeballing: cargo test -p kubeloop-sim print_walks -- --ignored --nocapture"]
fn print_walks() {
    let services = vec![np_service("Cluster", true)];
    let slices = web_slice();
    let nodes = nodes(3);
    let inp = input(&services, &slices, &nodes, "kind-worker");
    let mut aff = AffinityTable::new();
    let mut ipvs = inp.clone();
    ipvs.mode = ProxyMode::Ipvs;
    for (inp, pkt) in [
        (&inp, tcp("172.18.0.1", "172.18.0.5", 30080)),
        (&inp, tcp("172.18.0.1", "172.18.0.5", 30080)),
        (&ipvs, tcp("10.244.1.5", "10.96.50.50", 80)),
        (&ipvs, tcp("172.18.0.1", "172.18.0.3", 30080)),
    ] {
        let r = route(inp, &pkt, &mut Rng::new(11), &mut aff);
        for h in &r.hops {
            let taken = if h.matched { "" } else { " (not taken)" };
            println!(
                "[{}] {} {}{taken}\n      {}\n      -- {}",
                h.node, h.table, h.chain, h.rule, h.note
            );
        }
        println!("=> {:?}\n", r.outcome);
    }
}
