//! A shortened soak (the engine's `bench soak` workload for three virtual hours): under
//! steady churn, what the cluster keeps stops growing once the first hour has passed —
//! Events expire after their hour, etcd's history is compacted every five minutes, the
//! watch cache keeps a window per resource, and Jobs, ReplicaSets, ConfigMaps, pods,
//! containers and pod workers stay within what the churn keeps — and so does the work
//! an hour takes. Then one regression test per bug the soak found.

use std::collections::BTreeMap;

use kubeloop_sim::bench::soak::{Soak, SoakSample, CONFIGMAPS_KEPT, DEPLOYMENTS, MAX_REPLICAS};
use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::message::Payload;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::{Actor, World};

fn samples() -> Vec<SoakSample> {
    let soak = Soak {
        nodes: 3,
        hours: 3,
        seed: 1,
    };
    let report = soak.run(&mut |s| eprintln!("{s:?}"));
    assert_eq!(report.samples.len(), 4);
    report.samples
}

#[test]
fn three_hours_of_churn_keep_what_the_cluster_holds_bounded() {
    let s = samples();
    let (start, first, last) = (&s[0], &s[1], &s[3]);
    // The churn ran: a command a minute and more, nearly all acknowledged.
    assert!(last.commands >= 3 * 60 * 2, "{last:?}");
    assert!(last.failed * 20 <= last.commands, "{last:?}");
    assert!(last.etcd_revision > first.etcd_revision + 3000, "{last:?}");

    // Events live an hour: after the first, their count stops growing.
    assert!(first.events > 100, "{first:?}");
    for later in &s[2..] {
        assert!(
            later.events * 4 <= first.events * 5,
            "Events kept growing: {} after the first hour, {} at hour {}",
            first.events,
            later.events,
            later.hour
        );
        assert!(
            later.etcd_keys * 4 <= first.etcd_keys * 5,
            "etcd's keys kept growing: {} after the first hour, {} at hour {}",
            first.etcd_keys,
            later.etcd_keys,
            later.hour
        );
    }

    // The watch cache keeps each resource's last 100 changes, or 75 s of a busy one's.
    for later in &s[2..] {
        assert!(
            later.watch_cache_history <= first.watch_cache_history * 5 / 4 + 100,
            "the watch cache's windows kept growing: {} after the first hour, {} at hour {}",
            first.watch_cache_history,
            later.watch_cache_history,
            later.hour
        );
    }
    // And the work an hour of the same churn takes does not grow.
    let per_hour = |h: usize| s[h].messages - s[h - 1].messages;
    assert!(per_hour(3) * 4 <= per_hour(2) * 5, "{s:?}");

    // etcd's history holds at most the two compaction intervals (10 minutes) of writes.
    let last_hour = (last.etcd_revision - s[2].etcd_revision) as usize;
    assert!(last.etcd_history <= last_hour / 6 + 100, "{last:?}");

    // What the churn keeps: the ConfigMaps of the last minutes, three finished Jobs
    // and the running one, two ReplicaSets per Deployment (two images), the pods.
    assert_eq!(
        last.configmaps,
        start.configmaps + CONFIGMAPS_KEPT as usize,
        "{last:?}"
    );
    assert!(last.jobs <= 4, "{last:?}");
    assert!(
        last.replicasets <= start.replicasets + DEPLOYMENTS,
        "{last:?}"
    );
    let churn_pods = DEPLOYMENTS * (MAX_REPLICAS as usize + 1) + 4;
    assert!(last.pods <= start.pods + churn_pods, "{last:?}");
    assert!(last.containers <= start.containers + churn_pods, "{last:?}");
    assert!(last.sandboxes <= start.sandboxes + churn_pods, "{last:?}");
    // A kubelet forgets a pod once it is gone: 180 CronJob pods came and went.
    assert!(
        last.pod_workers <= start.pod_workers + churn_pods,
        "{last:?}"
    );
    assert!(
        last.informer_objects <= first.informer_objects + churn_pods,
        "{last:?}"
    );
}

const FINISHED: &str = "apiVersion: v1
kind: Pod
metadata:
  name: done
spec:
  restartPolicy: Never
  containers:
  - name: date
    image: busybox:1.28
    command: [/bin/sh, -c, date]
";

fn has_worker(w: &World, uid: &str) -> bool {
    w.observe()
        .nodes()
        .iter()
        .filter_map(|n| n.kubelet.as_ref())
        .any(|k| k.workers().contains_key(uid))
}

/// The soak found the work growing hour by hour: a pod the apiserver deletes at once
/// (one that has finished, Succeeded or Failed, gets no grace period — every CronJob's
/// old Jobs' pods) never went through the kubelet's final delete, so its pod worker
/// was never forgotten and asked containerd for the pod's status every minute, for
/// ever. Upstream's `SyncKnownPods` forgets a removed pod's worker once it has stopped.
#[test]
fn regression_a_finished_pod_deleted_at_once_leaves_no_pod_worker() {
    let mut w = World::new(ClusterConfig::default());
    let files: BTreeMap<String, String> = [("pod.yaml".to_string(), FINISHED.to_string())]
        .into_iter()
        .collect();
    let run = |w: &mut World, line: &str| {
        let o = cmd::run(w, line, &files, 60 * SECOND);
        assert_eq!(o.exit_code, 0, "{line}: {o:?}");
        o.stdout
    };
    run(&mut w, "kubectl apply -f pod.yaml");
    w.run_for(30 * SECOND);
    assert_eq!(
        run(&mut w, "kubectl get pod done -o jsonpath={.status.phase}"),
        "Succeeded"
    );
    let uid = run(&mut w, "kubectl get pod done -o jsonpath={.metadata.uid}");
    assert!(has_worker(&w, &uid));
    run(&mut w, "kubectl delete pod done");
    // The next resync (a minute) finds nothing left to stop.
    w.run_for(2 * 60 * SECOND);
    assert!(!has_worker(&w, &uid), "the kubelet still syncs pod {uid}");
}

/// Timers kube-controller-manager has set to itself and not yet received.
fn controller_manager_timers(w: &World) -> usize {
    w.in_flight()
        .filter(|e| e.to == Actor::ControllerManager && e.from == Actor::ControllerManager)
        .filter(|e| matches!(e.payload, Payload::Timer(_)))
        .count()
}

/// The soak also found kube-controller-manager's work growing hour by hour: when a
/// work queue's next delayed key became due earlier than the wake-up already set, a
/// second timer was set and the first one kept; each superseded timer, on firing,
/// cleared the wake-up and set yet another, so every supersession left one more timer
/// going round for ever (25,000 wake-ups an hour after six hours of churn). Like
/// client-go's delaying queue, the manager now keeps one wake-up timer.
#[test]
fn regression_superseded_work_queue_wakeups_do_not_pile_up() {
    let mut files = BTreeMap::new();
    files.insert(
        "web.yaml".to_string(),
        kubeloop_sim::bench::soak::deployment("web", 2, "nginx:1.27"),
    );
    files.insert(
        "tick.yaml".to_string(),
        kubeloop_sim::bench::soak::CRONJOB.to_string(),
    );
    let mut w = World::new(ClusterConfig::default());
    let run = |w: &mut World, line: &str| {
        let o = cmd::run(w, line, &files, 60 * SECOND);
        assert_eq!(o.exit_code, 0, "{line}: {o:?}");
    };
    // A CronJob keeps a key waiting for its next schedule at all times.
    run(&mut w, "kubectl apply -f tick.yaml");
    run(&mut w, "kubectl apply -f web.yaml");
    // Each rollout asks for a progress-deadline check minutes away; scaling in between
    // moves the Progressing condition, and with it the next check, earlier and later.
    for i in 0..30 {
        let line = match i % 3 {
            0 => format!(
                "kubectl set image deployment/web app=nginx:1.2{}",
                6 + i % 2
            ),
            1 => format!("kubectl scale deployment web --replicas={}", 1 + i % 4),
            _ => "kubectl rollout restart deployment/web".to_string(),
        };
        run(&mut w, &line);
        w.run_for(20 * SECOND);
    }
    w.run_for(30 * 60 * SECOND);
    let timers = controller_manager_timers(&w);
    assert!(
        timers <= 3,
        "{timers} timers in flight to kube-controller-manager"
    );
}
