//! Tests of the proxy view: the graph from the real renderers, the matched rules of a
//! `curl`, the hops to animate, and the rules rewriting themselves on scale.

use super::*;
use crate::cluster::ClusterConfig;
use crate::time::SECOND;

const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.27\n        ports:\n        - containerPort: 80\n";

const CLIENT: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: client\nspec:\n  containers:\n  - name: curl\n    image: curlimages/curl:8.16.0\n    command: [\"sleep\", \"infinity\"]\n";

fn run(w: &mut World, line: &str) -> crate::process::Output {
    let files = [
        ("web.yaml".to_string(), WEB.to_string()),
        ("client.yaml".to_string(), CLIENT.to_string()),
    ]
    .into_iter()
    .collect();
    crate::cmd::run(w, line, &files, 60 * SECOND)
}

/// A cluster with `web` (3 replicas) exposed on port 80, rules synced.
fn exposed() -> World {
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, "kubectl apply -f web.yaml");
    w.run_for(20 * SECOND);
    run(&mut w, "kubectl expose deployment web --port=80");
    w.run_for(5 * SECOND);
    w
}

fn web_box(v: &ProxyView) -> &GraphBox {
    v.graph
        .boxes
        .iter()
        .find(|b| b.kind == BoxKind::Service && b.lines[1] == "default/web")
        .expect("a KUBE-SVC box for default/web")
}

#[test]
fn should_draw_kube_services_to_svc_to_sep_with_upstream_names_and_probabilities() {
    let w = exposed();
    let snap = snapshot(&w, "node-1").expect("kube-proxy synced");
    let v = proxy_view(&snap, None);
    let svc = web_box(&v);
    assert!(svc.lines[0].starts_with("KUBE-SVC-"), "{:?}", svc.lines);
    let save: Vec<&str> = v
        .save
        .iter()
        .filter_map(|r| match r {
            SaveRow::Line { text, .. } => Some(text.as_str()),
            SaveRow::Elided(_) => None,
        })
        .collect();
    assert!(
        save.contains(&svc.rule.as_str()),
        "the capture rule is an iptables-save line"
    );
    let labels: Vec<String> = v
        .graph
        .edges
        .iter()
        .filter(|e| e.from.0 > SVC_X && (e.from.1 - (svc.y + svc.h / 2.0)).abs() < 1e-6)
        .filter_map(|e| e.label.clone())
        .collect();
    assert_eq!(labels, vec!["0.33333333349", "0.50000000000", "1 (last)"]);
    let seps: Vec<&GraphBox> = v
        .graph
        .boxes
        .iter()
        .filter(|b| b.kind == BoxKind::Endpoint && b.y >= svc.y && b.y < svc.y + svc.h)
        .collect();
    assert_eq!(seps.len(), 3);
    for b in &seps {
        assert!(b.lines[0].starts_with("KUBE-SEP-"));
        assert!(save.contains(&b.rule.as_str()));
        assert!(
            b.lines[2].contains("web-"),
            "the endpoint's pod is named: {:?}",
            b.lines
        );
    }
    assert!(v.graph.height > svc.y + svc.h);
}

#[test]
fn should_rewrite_the_graph_when_the_deployment_scales() {
    let mut w = exposed();
    let before = proxy_view(&snapshot(&w, "node-2").unwrap(), None);
    let count = |v: &ProxyView| {
        let s = web_box(v);
        v.graph
            .boxes
            .iter()
            .filter(|b| b.kind == BoxKind::Endpoint && b.y >= s.y && b.y < s.y + s.h)
            .count()
    };
    assert_eq!(count(&before), 3);
    let key = rules_key(&w, "node-2");
    run(&mut w, "kubectl scale deployment web --replicas=5");
    w.run_for(20 * SECOND);
    assert_ne!(rules_key(&w, "node-2"), key, "kube-proxy wrote new rules");
    let after = proxy_view(&snapshot(&w, "node-2").unwrap(), None);
    assert_eq!(count(&after), 5);
}

#[test]
fn should_mark_the_rules_a_curl_matched_and_list_its_hops() {
    let mut w = exposed();
    let svc_ip = {
        let snap = snapshot(&w, "node-1").unwrap();
        let v = proxy_view(&snap, None);
        web_box(&v).lines[2].clone()
    };
    let out = run(&mut w, &format!("ssh node-1 curl -s http://{svc_ip}/"));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    let path = last_path(&w).expect("the walk is recorded").clone();
    let snap = snapshot(&w, "node-1").unwrap();
    let v = proxy_view(&snap, Some(&path));
    assert!(v.path_here);
    assert_eq!(web_box(&v).mark, Mark::Taken);
    let taken: Vec<&GraphBox> = v
        .graph
        .boxes
        .iter()
        .filter(|b| b.kind == BoxKind::Endpoint && b.mark == Mark::Taken)
        .collect();
    assert_eq!(taken.len(), 1, "one endpoint chosen");
    let marked: Vec<&str> = v
        .save
        .iter()
        .filter_map(|r| match r {
            SaveRow::Line {
                text,
                mark: Mark::Taken,
            } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(marked
        .iter()
        .any(|l| l.starts_with("-A KUBE-SERVICES") && l.contains("default/web cluster IP")));
    assert!(marked
        .iter()
        .any(|l| l.contains("-j DNAT --to-destination")));
    let p = v.path.expect("a path");
    assert_eq!(p.outcome, PathOutcome::Answered);
    let kinds: Vec<StepKind> = p.steps.iter().map(|s| s.kind).collect();
    assert_eq!(kinds.first(), Some(&StepKind::Client));
    assert_eq!(
        &kinds[kinds.len() - 2..],
        &[StepKind::Endpoint, StepKind::Container]
    );
    assert!(p.steps.iter().any(|s| s.title.contains("KUBE-SEP-")));
    assert!(p.steps[kinds.len() - 1].title.starts_with("default/web-"));
}

#[test]
fn should_mark_a_reject_when_the_service_has_no_endpoints() {
    let mut w = exposed();
    run(&mut w, "kubectl scale deployment web --replicas=0");
    w.run_for(40 * SECOND);
    let snap = snapshot(&w, "node-1").unwrap();
    let v = proxy_view(&snap, None);
    let reject = v
        .graph
        .boxes
        .iter()
        .find(|b| b.kind == BoxKind::Reject && b.lines[1] == "default/web")
        .expect("a REJECT box");
    let ip = reject.lines[2].clone();
    let out = run(&mut w, &format!("ssh node-1 curl -s http://{ip}/"));
    assert_ne!(out.exit_code, 0);
    let path = last_path(&w).unwrap().clone();
    let v = proxy_view(&snapshot(&w, "node-1").unwrap(), Some(&path));
    let p = v.path.unwrap();
    assert_eq!(p.outcome, PathOutcome::Rejected);
    assert_eq!(p.steps.last().map(|s| s.kind), Some(StepKind::Failure));
    assert_eq!(p.steps.last().map(|s| s.title.as_str()), Some("REJECT"));
    let reject = v
        .graph
        .boxes
        .iter()
        .find(|b| b.kind == BoxKind::Reject && b.lines[1] == "default/web")
        .unwrap();
    assert_eq!(reject.mark, Mark::Taken);
}

#[test]
fn should_cap_endpoints_and_keep_the_chosen_one() {
    let items: Vec<u32> = (0..20).collect();
    let (kept, more) = capped(&items, 6, |x| *x == 17);
    assert_eq!(kept, vec![0, 1, 2, 3, 4, 17]);
    assert_eq!(more, 14);
    let (kept, more) = capped(&items[..3], 6, |_| false);
    assert_eq!((kept.len(), more), (3, 0));
}

#[test]
fn should_elide_long_rules_text_but_keep_what_matched() {
    let mut w = exposed();
    run(&mut w, "kubectl scale deployment web --replicas=80");
    w.run_for(60 * SECOND);
    let snap = snapshot(&w, "node-1").unwrap();
    let v = proxy_view(&snap, None);
    assert!(v
        .save
        .iter()
        .any(|r| matches!(r, SaveRow::Elided(n) if *n > 0)));
    let lines = v
        .save
        .iter()
        .filter(|r| matches!(r, SaveRow::Line { .. }))
        .count();
    assert!(lines <= HEAD_LINES + 3, "{lines}");
    let svc = web_box(&v);
    let more = v
        .graph
        .boxes
        .iter()
        .find(|b| b.kind == BoxKind::More && b.y >= svc.y && b.y < svc.y + svc.h)
        .expect("+N more endpoints");
    assert_eq!(more.lines[0], "+74");
}

#[test]
fn should_classify_outcomes_from_the_recorded_words() {
    let p = |outcome: &str| TrafficPath {
        at: 0,
        from: "node-1".into(),
        node: "node-1".into(),
        url: "http://x/".into(),
        dns: None,
        hops: Vec::new(),
        outcome: outcome.into(),
        endpoint: None,
    };
    assert_eq!(
        classify(&p("rejected: no ready endpoints")),
        PathOutcome::Rejected
    );
    assert_eq!(classify(&p("dropped")), PathOutcome::Dropped);
    assert_eq!(
        classify(&p("10.244.1.4:80: host unreachable (no answer)")),
        PathOutcome::Timeout
    );
    assert_eq!(
        classify(&p(
            "10.244.1.4:80 (default/web-1) on node-1: connection refused"
        )),
        PathOutcome::Refused
    );
    let v = path_view(&p("10.244.2.3:80 (default/web-7c5d-x) on node-2"));
    assert_eq!(v.outcome, PathOutcome::Answered);
    let ep = &v.steps[v.steps.len() - 2];
    assert_eq!(ep.title, "10.244.2.3:80");
    assert_eq!(ep.node.as_deref(), Some("node-2"));
    assert_eq!(v.steps.last().unwrap().title, "default/web-7c5d-x");
}

/// Issue 8 ("Why"): after `kubectl expose` and a `curl` from a client pod, the flow's
/// stage 7 still asked for a Service: it followed the newest pod, the client, which no
/// Service selects. It follows the Service's pods.
#[test]
fn the_flow_follows_the_services_pods_not_the_client_that_curls_them() {
    let mut w = exposed();
    let out = run(&mut w, "kubectl apply -f client.yaml");
    assert_eq!(out.exit_code, 0, "{out:?}");
    w.run_for(20 * SECOND);
    let out = run(&mut w, "kubectl exec client -- curl -s web");
    assert!(out.stdout.contains("Welcome to nginx"), "{out:?}");
    let pod = crate::view::newest_user_pod(&w).expect("a pod to follow");
    assert!(pod.starts_with("default/web-"), "{pod}");
    let (ns, name) = pod.split_once('/').unwrap();
    let flow = crate::view::pod_flow(&w, ns, name).unwrap();
    assert_eq!(flow.service.as_deref(), Some("web"));
    assert!(
        flow.stages[6].at.is_some(),
        "stage 7 lit: {:?}",
        flow.stages[6]
    );
    assert_eq!(
        last_path(&w).map(|p| p.from.as_str()),
        Some("default/client")
    );
}

#[test]
fn should_draw_and_mark_nftables_chains_in_nftables_mode() {
    let mut w = World::new(ClusterConfig {
        proxy_mode: crate::proxy::ProxyMode::Nftables,
        ..ClusterConfig::default()
    });
    run(&mut w, "kubectl apply -f web.yaml");
    w.run_for(20 * SECOND);
    run(&mut w, "kubectl expose deployment web --port=80");
    w.run_for(5 * SECOND);
    let svc_ip = {
        let snap = snapshot(&w, "node-1").unwrap();
        let v = proxy_view(&snap, None);
        assert_eq!(v.graph.boxes[0].lines[0], "services");
        web_box(&v).lines[2].clone()
    };
    let out = run(&mut w, &format!("ssh node-1 curl -s http://{svc_ip}/"));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    let path = last_path(&w).expect("the walk is recorded").clone();
    let snap = snapshot(&w, "node-1").unwrap();
    let v = proxy_view(&snap, Some(&path));
    let svc = web_box(&v);
    assert!(svc.lines[0].starts_with("service-"), "{:?}", svc.lines);
    assert_eq!(svc.mark, Mark::Taken);
    let taken: Vec<&GraphBox> = v
        .graph
        .boxes
        .iter()
        .filter(|b| b.kind == BoxKind::Endpoint && b.mark == Mark::Taken)
        .collect();
    assert_eq!(taken.len(), 1, "one endpoint chosen");
    assert!(taken[0].lines[0].starts_with("endpoint-"));
    let lines: Vec<(&str, Mark)> = v
        .save
        .iter()
        .filter_map(|r| match r {
            SaveRow::Line { text, mark } => Some((text.as_str(), *mark)),
            SaveRow::Elided(_) => None,
        })
        .collect();
    assert_eq!(lines[0].0, "table ip kube-proxy {");
    assert!(lines
        .iter()
        .any(|(l, m)| *m == Mark::Taken && l.contains(" dnat to ")));
    assert!(lines
        .iter()
        .any(|(l, m)| *m == Mark::Taken && l.contains(": goto service-")));
    let p = v.path.expect("a path");
    assert_eq!(p.outcome, PathOutcome::Answered);
    assert!(p.steps.iter().any(|s| s.title.starts_with("nft endpoint-")));
}
