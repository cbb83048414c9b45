//! Tests of the causal traces, driven as a learner would: apply, expose, set image.

use std::collections::BTreeMap;

use super::*;
use crate::cluster::ClusterConfig;
use crate::cmd::{self, Started};

const APP: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports:\n  - port: 80\n";

struct Run {
    w: World,
    tl: Timeline,
    files: BTreeMap<String, String>,
}

impl Run {
    fn new() -> Run {
        Run {
            w: World::new(ClusterConfig::default()),
            tl: Timeline::default(),
            files: [("app.yaml".to_string(), APP.to_string())].into(),
        }
    }

    /// Starts `line` now, then runs `ms`, recording after every event.
    fn run(&mut self, line: &str, ms: Time) {
        match cmd::start(&mut self.w, line, &self.files) {
            Started::Running(_) | Started::Done(_) => {}
        }
        self.tl.record(&self.w);
        let until = self.w.now() + ms;
        while self.w.next_event_time().is_some_and(|t| t <= until) {
            self.w.step();
            self.tl.record(&self.w);
        }
        self.w.run_until(until);
    }

    fn pods(&self) -> Vec<String> {
        super::super::stored(&self.w, Kind::Pod)
            .iter()
            .filter(|o| o.namespace() == "default")
            .map(|o| o.name().to_string())
            .collect()
    }
}

#[test]
fn a_pods_trace_has_eight_stages_in_causal_order_each_with_its_request() {
    let mut r = Run::new();
    r.run("kubectl apply -f app.yaml", 30 * SECOND);
    let pods = r.pods();
    assert_eq!(pods.len(), 2, "{pods:?}");
    let t = pod_trace(&r.w, &r.tl, "default", &pods[0]).expect("a trace");
    assert_eq!(t.service.as_deref(), Some("web"));
    assert_eq!(t.deployment.as_deref(), Some("web"));
    let at: Vec<Time> = t
        .steps
        .iter()
        .map(|s| s.at.expect("every stage happened"))
        .collect();
    assert!(
        at[..7].windows(2).all(|w| w[0] <= w[1]),
        "causal order: {at:?}"
    );
    assert!(at[7] >= at[5], "Ready after the containers started: {at:?}");
    let s = &t.steps;
    assert_eq!(s[0].by, "kubectl");
    assert!(
        s[0].what
            .starts_with("POST /api/v1/namespaces/default/services 201")
            || s[0]
                .what
                .starts_with("POST /apis/apps/v1/namespaces/default/deployments 201"),
        "{:?}",
        s[0]
    );
    assert!(s[1].what.starts_with("Txn Put /registry/"), "{:?}", s[1]);
    assert!(s[1].took.is_some());
    assert_eq!(s[2].by, "kube-controller-manager");
    assert!(s[2].what.contains("/replicasets"), "{:?}", s[2]);
    assert!(
        s[2].cause
            .as_ref()
            .is_some_and(|(_, l)| l == "ADDED Deployment web"),
        "the Deployment controller was woken by the Deployment's watch event: {:?}",
        s[2].cause
    );
    assert!(s[3]
        .what
        .starts_with("POST /api/v1/namespaces/default/pods 201"));
    assert_eq!(s[4].by, "kube-scheduler");
    assert!(s[4]
        .what
        .ends_with(&format!("/pods/{}/binding 201", pods[0])));
    assert_eq!(
        s[4].cause.as_ref().map(|(_, l)| l.clone()),
        Some(format!("ADDED Pod {}", pods[0])),
        "the scheduler's informer saw the pod first"
    );
    assert!(s[5].by.starts_with("kubelet node-"), "{:?}", s[5]);
    let calls: Vec<&str> = s[5].inner.iter().map(|(_, l, _)| l.as_str()).collect();
    assert!(
        calls.contains(&format!("RunPodSandbox {}", pods[0]).as_str()),
        "{calls:?}"
    );
    assert!(
        calls.iter().any(|c| c.starts_with("StartContainer")),
        "{calls:?}"
    );
    assert!(s[6].what.contains("endpointslices"), "{:?}", s[6]);
    assert_eq!(s[6].by, "kube-controller-manager");
    let told: Vec<&str> = s[6].inner.iter().map(|(_, l, _)| l.as_str()).collect();
    assert_eq!(
        told.len(),
        3,
        "the three nodes' kube-proxies heard of it: {told:?}"
    );
    assert!(told
        .iter()
        .all(|l| l.starts_with("kube-proxy node-") && l.contains("EndpointSlice")));
    assert!(
        s[7].what.ends_with("/status 200") || s[7].what.ends_with("/status 201"),
        "{:?}",
        s[7]
    );
    for step in s.iter().filter(|s| s.number != 2) {
        let Some(seq) = step.seq else {
            panic!("each request is in the timeline: {step:?}")
        };
        let e = r.tl.get(seq).expect("kept");
        assert!(step.what.starts_with(&e.label), "{step:?} vs {e:?}");
    }
    for (i, step) in s.iter().enumerate().skip(1) {
        let before = at[..i].iter().copied().filter(|t| *t <= at[i]).max();
        assert_eq!(step.since_previous, before.map(|b| at[i] - b), "{step:?}");
    }
    assert_eq!(s[0].since_previous, None);
}

#[test]
fn a_pod_without_a_service_has_no_endpoint_stage() {
    let mut r = Run::new();
    r.files.insert(
        "app.yaml".into(),
        APP.split("---").next().unwrap_or_default().into(),
    );
    r.run("kubectl apply -f app.yaml", 30 * SECOND);
    let pod = r.pods().remove(0);
    let t = pod_trace(&r.w, &r.tl, "default", &pod).expect("a trace");
    assert!(t.service.is_none());
    assert!(t.steps[6].at.is_none());
    assert!(t.steps[7].at.is_some(), "Ready all the same");
    assert!(pod_trace(&r.w, &r.tl, "default", "no-such-pod").is_none());
}

#[test]
fn a_rollout_says_which_replica_set_scaled_when_and_why() {
    let mut r = Run::new();
    r.run("kubectl apply -f app.yaml", 30 * SECOND);
    r.run(
        "kubectl set image deployment/web web=nginx:1.28",
        90 * SECOND,
    );
    let t = rollout_trace(&r.w, &r.tl, "default", "web").expect("a trace");
    assert!(t.steps.len() >= 3, "{:#?}", t.steps);
    let first = &t.steps[0];
    assert!(first.message.starts_with(&format!(
        "Scaled up replica set {} from 0 to 2",
        first.replica_set
    )));
    assert!(
        first.why.as_ref().is_some_and(
            |(_, w)| w.starts_with("kubectl POST /apis/apps/v1/namespaces/default/deployments")
        ),
        "{first:?}"
    );
    let new_rs = &t.steps[1];
    assert_ne!(
        new_rs.replica_set, first.replica_set,
        "the new template's ReplicaSet"
    );
    assert!(
        new_rs.why.as_ref().is_some_and(
            |(_, w)| w.contains("PATCH /apis/apps/v1/namespaces/default/deployments/web")
        ),
        "set image started it: {new_rs:?}"
    );
    assert!(
        t.steps.iter().any(|s| s.replica_set == first.replica_set
            && s.message.starts_with("Scaled down")
            && s.why
                .as_ref()
                .is_some_and(|(_, w)| w.starts_with("MODIFIED ReplicaSet"))),
        "the old one shrank as the new one's pods came up: {:#?}",
        t.steps
    );
    for s in &t.steps {
        let (req, seq) = s.request.as_ref().expect("the request that scaled it");
        assert!(req.contains("/replicasets"), "{req}");
        assert!(seq.is_some(), "in the timeline: {s:?}");
        assert!(s.why.as_ref().is_some_and(|(w, _)| *w <= s.at));
    }
    let times: Vec<Time> = t.steps.iter().map(|s| s.at).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert!(rollout_trace(&r.w, &r.tl, "default", "nope").is_none());
}

impl Run {
    /// The output of a command that finishes at once (`ssh node-1 iptables-save`).
    fn output(&mut self, line: &str) -> String {
        match cmd::start(&mut self.w, line, &self.files) {
            Started::Done(out) => out.stdout,
            Started::Running(_) => panic!("{line} should finish at once"),
        }
    }
}

#[test]
fn a_services_trace_names_the_rules_each_endpoint_change_wrote_and_dropped() {
    let mut r = Run::new();
    r.run("kubectl apply -f app.yaml", 30 * SECOND);
    let t = service_trace(&r.w, &r.tl, "default", "web").expect("a trace");
    assert_eq!(t.service, "default/web");
    let added: Vec<&RuleChange> = t.changes.iter().flat_map(|c| &c.added).collect();
    assert_eq!(
        added.len(),
        2,
        "both pods became endpoints: {:#?}",
        t.changes
    );
    // The chains are the ones kube-proxy wrote on the node.
    let rules = r.output("ssh node-1 iptables-save");
    for a in &added {
        assert_eq!(a.port, "default/web");
        let jump = format!("-A {} ", a.service_chain);
        assert!(
            rules
                .lines()
                .any(|l| l.starts_with(&jump) && l.ends_with(&format!("-j {}", a.endpoint_chain))),
            "{a:?} in\n{rules}"
        );
        assert!(
            rules.contains(&format!("--to-destination {}", a.endpoint)),
            "{a:?}"
        );
    }
    let first = &t.changes[0];
    assert_eq!(first.by, "kube-controller-manager");
    assert!(
        first
            .what
            .starts_with("POST /apis/discovery.k8s.io/v1/namespaces/default/endpointslices 201"),
        "{first:?}"
    );
    assert!(first.seq.is_some());
    let last_with_endpoints = t
        .changes
        .iter()
        .rfind(|c| !c.added.is_empty())
        .expect("a change");
    assert_eq!(
        last_with_endpoints.proxies.len(),
        3,
        "every node's kube-proxy heard of it: {last_with_endpoints:?}"
    );
    assert!(last_with_endpoints
        .proxies
        .iter()
        .all(|(at, l, after)| l.starts_with("kube-proxy node-")
            && *at >= last_with_endpoints.at
            && after.is_some()));
    // Scaling down removes one endpoint: a later change drops its jump.
    let before = t.changes.len();
    r.run("kubectl scale deployment web --replicas=1", 60 * SECOND);
    let t = service_trace(&r.w, &r.tl, "default", "web").expect("a trace");
    let later = &t.changes[before..];
    let removed: Vec<&RuleChange> = later.iter().flat_map(|c| &c.removed).collect();
    assert_eq!(removed.len(), 1, "{later:#?}");
    assert!(
        later
            .iter()
            .all(|c| c.what.starts_with("PUT ") || c.what.starts_with("PATCH ")),
        "{later:#?}"
    );
    let rules = r.output("ssh node-1 iptables-save");
    assert!(
        !rules.contains(&removed[0].endpoint_chain),
        "the dropped chain is gone:\n{rules}"
    );
    assert!(service_trace(&r.w, &r.tl, "default", "nope").is_none());
}

#[test]
fn a_services_trace_describes_only_its_newest_changes_and_counts_the_rest() {
    let mut r = Run::new();
    r.run("kubectl apply -f app.yaml", 20 * SECOND);
    for n in [4, 1, 3, 1, 4, 2, 5, 1, 3, 1] {
        r.run(
            &format!("kubectl scale deployment web --replicas={n}"),
            20 * SECOND,
        );
    }
    let t = service_trace(&r.w, &r.tl, "default", "web").expect("a trace");
    assert_eq!(t.changes.len(), MAX_CHANGES, "{:#?}", t.changes);
    assert!(t.earlier > 0);
    assert!(t.changes.windows(2).all(|w| w[0].revision < w[1].revision));
    // The newest change is the last write etcd holds for the slice.
    let newest = t.changes.last().expect("a change");
    let key = format!("/registry/endpointslices/default/{}", newest.slice);
    let kv = r.w.observe().etcd().store.get(&key).expect("the slice");
    assert_eq!(newest.revision, kv.mod_revision);
    assert!(newest.seq.is_some(), "{newest:?}");
}
