//! Tests of the timeline: what a learner reads in it after `kubectl apply`.

use std::collections::BTreeMap;

use super::*;
use crate::cluster::ClusterConfig;
use crate::cmd::{self, Started};
use crate::time::SECOND;

const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n";

/// Applies the Deployment at t=0 and runs `until`, recording after every event.
fn applied(capacity: usize, until: Time) -> (World, Timeline) {
    let mut w = World::new(ClusterConfig::default());
    let mut tl = Timeline::with_capacity(capacity);
    let files: BTreeMap<String, String> = [("d.yaml".to_string(), DEPLOY.to_string())].into();
    match cmd::start(&mut w, "kubectl apply -f d.yaml", &files) {
        Started::Running(_) | Started::Done(_) => {}
    }
    tl.record(&w);
    while w.next_event_time().is_some_and(|t| t <= until) {
        w.step();
        tl.record(&w);
    }
    (w, tl)
}

fn user_pods(tl: &Timeline) -> Vec<String> {
    let mut pods: Vec<String> = tl
        .entries()
        .filter(|e| e.label.ends_with("/binding"))
        .map(|e| e.object.clone())
        .collect();
    pods.sort();
    pods.dedup();
    pods
}

#[test]
fn the_timeline_lists_the_apply_its_answer_and_the_chain_it_started() {
    let (_, tl) = applied(TIMELINE_CAPACITY, 20 * SECOND);
    let post = tl
        .entries()
        .find(|e| {
            matches!(e.from, Actor::Terminal(_))
                && e.label == "POST /apis/apps/v1/namespaces/default/deployments"
        })
        .expect("kubectl's create is listed");
    assert_eq!(post.answer.as_deref(), Some("201 Created"));
    assert_eq!(
        post.object, "Deployment default/web",
        "named from the answer"
    );
    assert!(post.latency().is_some_and(|l| l > 0), "{post:?}");
    let pods = user_pods(&tl);
    assert_eq!(pods.len(), 2, "the scheduler bound both pods: {pods:?}");
    for pod in &pods {
        let name = pod.rsplit('/').next().unwrap_or_default();
        let about: Vec<&Entry> = tl.entries().filter(|e| &e.object == pod).collect();
        assert!(
            about
                .iter()
                .any(|e| e.kind == EntryKind::Watch && e.to == Actor::Scheduler),
            "the scheduler's informer saw {pod}"
        );
        assert!(
            about
                .iter()
                .any(|e| e.kind == EntryKind::Cri && e.label == format!("RunPodSandbox {name}")),
            "the kubelet asked containerd for {pod}'s sandbox"
        );
        assert!(
            about
                .iter()
                .any(|e| e.kind == EntryKind::Cri && e.label.starts_with("StartContainer")),
            "StartContainer is tied to {pod} through the ids containerd answered"
        );
    }
    let sent: Vec<Time> = tl.entries().map(|e| e.sent).collect();
    assert!(sent.windows(2).all(|w| w[0] <= w[1]), "in the order sent");
}

#[test]
fn the_filter_follows_one_pod_or_one_component_and_hides_heartbeats() {
    let (w, tl) = applied(TIMELINE_CAPACITY, 20 * SECOND);
    let pod = user_pods(&tl).remove(0);
    let name = pod.rsplit('/').next().unwrap_or_default().to_string();
    let follow = Filter {
        object: name.to_uppercase(),
        ..Filter::default()
    };
    let rows = tl.window(&follow, 0, w.now(), 0, usize::MAX).rows;
    assert!(rows.len() > 5, "{rows:?}");
    assert!(rows
        .iter()
        .all(|e| e.object.contains(&name) || e.label.contains(&name)));
    let scheduler = Filter {
        component: Some("kube-scheduler".into()),
        ..Filter::default()
    };
    let rows = tl.window(&scheduler, 0, w.now(), 0, usize::MAX).rows;
    assert!(rows.iter().any(|e| e.label.ends_with("/binding")));
    assert!(rows.iter().all(|e| e.involves("kube-scheduler")));
    let all = Filter::default();
    assert!(tl
        .entries()
        .any(|e| e.heartbeat && e.object.starts_with("Lease ")));
    assert!(tl
        .window(&all, 0, w.now(), 0, usize::MAX)
        .rows
        .iter()
        .all(|e| !e.heartbeat));
    let with = Filter {
        heartbeats: true,
        ..Filter::default()
    };
    assert_eq!(tl.window(&with, 0, w.now(), 0, usize::MAX).total, tl.len());
}

#[test]
fn a_long_run_keeps_at_most_the_capacity_and_says_what_it_dropped() {
    let (_, full) = applied(TIMELINE_CAPACITY, 20 * SECOND);
    let (_, small) = applied(100, 20 * SECOND);
    assert_eq!(small.len(), 100);
    let (count, until) = small.dropped().expect("older entries were dropped");
    assert_eq!(count as usize, full.len() - 100);
    let first = small.entries().next().expect("kept");
    assert!(until <= first.sent);
    let kept: Vec<u64> = small.entries().map(|e| e.seq).collect();
    let newest: Vec<u64> = full
        .entries()
        .skip(full.len() - 100)
        .map(|e| e.seq)
        .collect();
    assert_eq!(kept, newest, "the newest are kept");
    assert!(full.dropped().is_none());
}

#[test]
fn the_window_is_centred_on_the_moment_viewed_and_counts_the_rest() {
    let (w, tl) = applied(TIMELINE_CAPACITY, 20 * SECOND);
    let f = Filter::default();
    let at = 5 * SECOND;
    let win = tl.window(&f, 0, w.now(), at, 10);
    assert_eq!(win.rows.len(), 10);
    assert_eq!(
        win.more + 10,
        tl.window(&f, 0, w.now(), at, usize::MAX).rows.len()
    );
    assert!(win.rows.first().is_some_and(|e| e.sent <= at));
    let near = tl.nearest(&f, at).expect("an entry");
    assert!(near.sent <= at);
    assert!(win.rows.iter().any(|e| e.seq == near.seq));
    let narrow = tl.window(&f, at, at + 100, at, usize::MAX);
    assert!(narrow
        .rows
        .iter()
        .all(|e| e.sent >= at && e.sent <= at + 100));
    assert_eq!(
        narrow.total, win.total,
        "the total counts outside the span too"
    );
    // The page's one pass gives what the two calls give, for a span and a search.
    let pod = user_pods(&tl).remove(0);
    let follow = Filter {
        object: format!("  {}  ", pod.to_uppercase()),
        ..Filter::default()
    };
    for (from, to) in [(0, w.now()), (at, at + 100)] {
        let (one, bins) = tl.window_with_density(&follow, (from, to), at, 10, 20);
        assert_eq!(one, tl.window(&follow, from, to, at, 10));
        assert_eq!(bins, tl.density(&follow, from, to, 20));
    }
    let all = tl.window(&follow, 0, w.now(), at, usize::MAX);
    assert!(all.total > 5 && all.total < tl.len(), "{}", all.total);
    assert!(all
        .rows
        .iter()
        .all(|e| e.object.contains(&pod) || e.label.contains(&pod)));
}

#[test]
fn activity_marks_the_burst_after_apply() {
    let (_, tl) = applied(TIMELINE_CAPACITY, 20 * SECOND);
    let post = tl
        .entries()
        .find(|e| e.label.ends_with("/deployments") && e.kind == EntryKind::Request)
        .expect("listed")
        .sent;
    assert!(
        tl.activity(post, 0, 50) > 10,
        "a burst of control-plane messages"
    );
    let lonely = Timeline::with_capacity(10);
    assert_eq!(lonely.activity(post, 1000, 1000), 0);
}

#[test]
fn the_density_strip_counts_every_shown_entry_once_and_spans_stay_inside() {
    let (w, tl) = applied(TIMELINE_CAPACITY, 20 * SECOND);
    let f = Filter::default();
    let bins = tl.density(&f, 0, w.now(), 50);
    assert_eq!(bins.len(), 50);
    assert_eq!(
        bins.iter().sum::<usize>(),
        tl.window(&f, 0, w.now(), 0, usize::MAX).rows.len()
    );
    assert!(
        bins[0] > bins[25],
        "the apply's burst is at the start: {bins:?}"
    );
    assert_eq!(span_around(5_000, 20_000, 0), (0, 20_000));
    assert_eq!(span_around(5_000, 20_000, 1_000), (4_500, 5_500));
    assert_eq!(span_around(100, 20_000, 1_000), (0, 1_000));
    assert_eq!(span_around(19_900, 20_000, 1_000), (19_000, 20_000));
    assert_eq!(
        span_around(3, 2, 1_000),
        (0, 2),
        "a span longer than the run is all of it"
    );
}

#[test]
fn requests_still_waiting_are_forgotten_with_their_dropped_entries() {
    // A small timeline over a cluster whose components hold many watches open: the
    // requests it waits on stay within twice its capacity (pruned in passes, not on
    // every entry), and the kept requests that were answered still show their answer.
    let (_, tl) = applied(40, 20 * SECOND);
    assert_eq!(tl.len(), 40);
    assert!(tl.open.len() <= 80, "{} open requests kept", tl.open.len());
    assert!(tl
        .entries()
        .any(|e| e.kind == EntryKind::Request && e.answer.is_some()));
}

/// The requests node-1's kubelet sent about its Lease, as the timeline labels them, with
/// their answers.
fn lease_requests(tl: &Timeline) -> Vec<(String, String)> {
    tl.entries()
        .filter(|e| e.from == Actor::Kubelet(0) && e.object == "Lease kube-node-lease/node-1")
        .map(|e| {
            let verb = e.label.split(' ').next().unwrap_or_default().to_string();
            (verb, e.answer.clone().unwrap_or_default())
        })
        .collect()
}

#[test]
fn the_kubelet_renews_its_lease_by_updating_what_the_last_renewal_returned() {
    let (_, tl) = applied(TIMELINE_CAPACITY, 35 * SECOND);
    let got = lease_requests(&tl);
    // The lease controller reads the Lease once, then updates the copy each renewal
    // returned (no read, no patch), every 10 s.
    assert_eq!(
        got.first(),
        Some(&("GET".into(), "200 OK".into())),
        "{got:?}"
    );
    assert!(got.len() >= 4, "{got:?}");
    for r in &got[1..] {
        assert_eq!(r, &("PUT".to_string(), "200 OK".to_string()), "{got:?}");
    }
}

#[test]
fn a_lease_changed_by_someone_else_is_read_again_after_the_conflict() {
    let (mut w, mut tl) = applied(TIMELINE_CAPACITY, 12 * SECOND);
    let files = BTreeMap::new();
    let line = "kubectl annotate lease -n kube-node-lease node-1 touched=yes";
    match cmd::start(&mut w, line, &files) {
        Started::Running(_) | Started::Done(_) => {}
    }
    while w.next_event_time().is_some_and(|t| t <= 45 * SECOND) {
        w.step();
        tl.record(&w);
    }
    let got = lease_requests(&tl);
    let conflict = got
        .iter()
        .position(|r| r == &("PUT".to_string(), "409 Conflict".to_string()))
        .unwrap_or_else(|| panic!("the stale update conflicts: {got:?}"));
    assert_eq!(
        got[conflict + 1..conflict + 3],
        [
            ("GET".to_string(), "200 OK".to_string()),
            ("PUT".to_string(), "200 OK".to_string())
        ],
        "{got:?}"
    );
    assert!(
        got[conflict + 3..].iter().all(|r| r.0 == "PUT"),
        "then it renews from the fresh copy: {got:?}"
    );
}
