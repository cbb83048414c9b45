//! Events as a real cluster keeps them: kube-apiserver writes each with an etcd lease of
//! `--event-ttl` (1 h), so they expire an hour after their last write; a repeat counts up
//! the first one (`(x3 over 2m)`), and one deleted meanwhile is created again with its
//! count, as client-go's recorder does.

mod common;
use common::Term as T;

const CRASHER: &str = "apiVersion: v1
kind: Pod
metadata:
  name: crasher
spec:
  containers:
  - name: app
    image: busybox:1.36
    command: [\"sh\", \"-c\", \"exit 1\"]
";

/// The EVENTS rows of `kubectl get events` (without the header).
fn rows(out: &str) -> Vec<&str> {
    out.lines().skip(1).collect()
}

/// A cluster a minute after the nginx Deployment was applied: its pods scheduled and
/// started, each step an Event.
fn nginx_a_minute_on() -> T {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.settle(60);
    t
}

#[test]
fn events_expire_an_hour_after_their_last_write() {
    let mut t = nginx_a_minute_on();
    let events = t.ok("kubectl get events");
    assert!(events.contains("Scheduled"), "{events}");
    t.settle(59 * 60);
    assert!(
        t.ok("kubectl get events").contains("Scheduled"),
        "an hour has not passed since the pods were scheduled"
    );
    // The lease is a minute longer than the TTL, so every one has gone by 61 minutes.
    t.settle(2 * 60);
    let gone = t.run("kubectl get events");
    assert_eq!(gone.stdout, "", "{gone:?}");
    assert_eq!(gone.stderr, "No resources found in default namespace.\n");
    // The objects the events were about are still there.
    assert!(t.ok("kubectl get pods").contains("Running"));
}

#[test]
fn a_repeated_event_counts_up_and_comes_back_with_its_count_after_a_delete() {
    let mut t = T::new();
    t.file("crasher.yaml", CRASHER);
    t.ok("kubectl apply -f crasher.yaml");
    t.settle(10 * 60);
    let describe = t.ok("kubectl describe pod crasher");
    let backoff: Vec<&str> = describe
        .lines()
        .filter(|l| l.contains("Warning  BackOff"))
        .collect();
    assert_eq!(backoff.len(), 1, "one BackOff event, counted: {describe}");
    assert!(
        backoff[0].contains(" (x"),
        "counted, not repeated: {backoff:?}"
    );

    let counts = |t: &mut T| -> Vec<(String, i32)> {
        let out =
            t.ok("kubectl get events -o custom-columns=REASON:.reason,COUNT:.count --no-headers");
        out.lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                Some((w.next()?.to_string(), w.next()?.parse().ok()?))
            })
            .collect()
    };
    let before = counts(&mut t);
    t.ok("kubectl delete events --all");
    assert_eq!(t.run("kubectl get events").stdout, "");
    // The spam filter lets the kubelet send one event about the pod every 5 minutes.
    t.settle(6 * 60);
    let after = counts(&mut t);
    let (reason, count) = after.first().unwrap_or_else(|| panic!("nothing came back"));
    let had = before
        .iter()
        .find(|(r, _)| r == reason)
        .map_or(0, |(_, c)| *c);
    assert!(
        had >= 1 && *count > had,
        "{reason} was created again with the count it had: {had} → {count}"
    );
}

#[test]
fn hours_of_churn_keep_about_an_hour_of_events() {
    let mut t = T::new();
    t.file(
        "hello.yaml",
        "apiVersion: batch/v1
kind: CronJob
metadata:
  name: hello
spec:
  schedule: \"*/2 * * * *\"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: hello
            image: busybox:1.36
            command: [\"sh\", \"-c\", \"echo hello\"]
          restartPolicy: OnFailure
",
    );
    t.ok("kubectl apply -f hello.yaml");
    let count = |t: &mut T| rows(&t.ok("kubectl get events -A")).len();
    t.settle(80 * 60);
    let at_80 = count(&mut t);
    t.settle(70 * 60);
    let at_150 = count(&mut t);
    assert!(at_80 > 50, "the churn records events: {at_80}");
    // Without the TTL the second count would be nearly twice the first.
    assert!(
        at_150 * 10 < at_80 * 12,
        "an hour of events is kept, not all of them: {at_80} at 80 min, {at_150} at 150 min"
    );
}

#[test]
fn etcdctl_shows_the_lease_events_are_written_with() {
    let mut t = nginx_a_minute_on();
    let list = t.ok("etcdctl lease list");
    let mut lines = list.lines();
    let found = lines.next().unwrap_or_default();
    assert!(
        found.starts_with("found ") && found.ends_with(" leases"),
        "{list}"
    );
    let id = lines.next().unwrap_or_else(|| panic!("{list}")).to_string();
    assert_eq!(id.len(), 16, "{list}");
    let ttl = t.ok(&format!("etcdctl lease timetolive {id} --keys"));
    assert!(
        ttl.starts_with(&format!("lease {id} granted with TTL(3660s), remaining(")),
        "{ttl}"
    );
    assert!(
        ttl.contains(", attached keys([/registry/events/default/"),
        "{ttl}"
    );
    t.settle(62 * 60);
    assert_eq!(
        t.ok(&format!("etcdctl lease timetolive {id}")),
        format!("lease {id} already expired\n")
    );
    assert!(t
        .err("etcdctl lease timetolive xyz")
        .contains("expecting ID in Hex"));
}
