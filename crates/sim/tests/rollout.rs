//! Rolling updates read through kubectl: set image, rollout status, history, undo,
//! pause/resume, and the surge/unavailability bounds along the way.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::object::{Kind, Object};
use kubeloop_sim::process::Output;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::view::stored;
use kubeloop_sim::World;

fn deployment(replicas: u32, surge: &str, unavailable: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {replicas}
  strategy:
    rollingUpdate:
      maxSurge: {surge}
      maxUnavailable: {unavailable}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.27
"
    )
}

fn run(w: &mut World, files: &BTreeMap<String, String>, line: &str) -> Output {
    cmd::run(w, line, files, 300 * SECOND)
}

/// The rows of a table (header dropped), sorted.
fn sorted_rows(table: &str) -> Vec<String> {
    let mut rows: Vec<String> = table.lines().skip(1).map(str::to_string).collect();
    rows.sort();
    rows
}

/// (active pods, available pods) as etcd holds them.
fn counts(w: &World) -> (usize, usize) {
    let mut active = 0;
    let mut ready = 0;
    for o in stored(w, Kind::Pod) {
        if let Object::Pod(p) = &*o {
            // The cluster's add-ons (CoreDNS, local-path) are not this deployment's.
            if p.metadata.deletion_timestamp.is_some()
                || p.metadata.namespace.as_deref() != Some("default")
            {
                continue;
            }
            active += 1;
            if kubeloop_sim::controllers::util::is_pod_ready(p) {
                ready += 1;
            }
        }
    }
    (active, ready)
}

#[test]
fn set_image_rolls_within_surge_and_unavailability_bounds() {
    let files: BTreeMap<String, String> = [("web.yaml".to_string(), deployment(4, "1", "1"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    w.run_for(30 * SECOND);
    assert_eq!(counts(&w), (4, 4));
    let out = run(
        &mut w,
        &files,
        "kubectl set image deployment/web web=nginx:1.28",
    );
    assert_eq!(out.stdout, "deployment.apps/web image updated\n");
    let mut max_active = 0;
    let mut min_ready = usize::MAX;
    for _ in 0..600 {
        w.run_for(100);
        let (a, r) = counts(&w);
        max_active = max_active.max(a);
        min_ready = min_ready.min(r);
    }
    assert!(
        max_active <= 5,
        "never more than replicas + maxSurge pods: {max_active}"
    );
    assert!(
        min_ready >= 3,
        "never fewer than replicas - maxUnavailable ready: {min_ready}"
    );
    let status = run(&mut w, &files, "kubectl rollout status deployment/web");
    assert_eq!(
        status.stdout,
        "deployment \"web\" successfully rolled out\n"
    );
    let images = run(
        &mut w,
        &files,
        "kubectl get pods -o jsonpath={.items[*].spec.containers[0].image}",
    );
    assert_eq!(
        images
            .stdout
            .split_whitespace()
            .filter(|i| *i == "nginx:1.28")
            .count(),
        4,
        "{images:?}"
    );
    let history = run(&mut w, &files, "kubectl rollout history deployment/web");
    assert_eq!(
        history.stdout,
        "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    );
}

#[test]
fn rollout_status_prints_upstream_progress_lines_and_undo_goes_back() {
    let files: BTreeMap<String, String> = [("web.yaml".to_string(), deployment(3, "25%", "25%"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    let status = run(&mut w, &files, "kubectl rollout status deployment/web");
    let lines: Vec<&str> = status.stdout.lines().collect();
    assert_eq!(
        lines.last(),
        Some(&"deployment \"web\" successfully rolled out"),
        "{}",
        status.stdout
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Waiting for deployment \"web\" rollout to finish: ")),
        "{}",
        status.stdout
    );
    run(
        &mut w,
        &files,
        "kubectl set image deployment/web web=nginx:1.28",
    );
    run(&mut w, &files, "kubectl rollout status deployment/web");
    let undo = run(&mut w, &files, "kubectl rollout undo deployment/web");
    assert_eq!(undo.stdout, "deployment.apps/web rolled back\n");
    run(&mut w, &files, "kubectl rollout status deployment/web");
    let images = run(
        &mut w,
        &files,
        "kubectl get deploy web -o jsonpath={.spec.template.spec.containers[0].image}",
    );
    assert_eq!(images.stdout, "nginx:1.27");
    let rs = run(&mut w, &files, "kubectl get rs");
    assert_eq!(
        rs.stdout.lines().count(),
        3,
        "two ReplicaSets kept: {}",
        rs.stdout
    );
    let history = run(&mut w, &files, "kubectl rollout history deployment/web");
    assert!(
        history
            .stdout
            .contains("\n2         <none>\n3         <none>\n"),
        "{}",
        history.stdout
    );
}

#[test]
fn paused_deployment_does_not_roll_until_resumed() {
    let files: BTreeMap<String, String> = [("web.yaml".to_string(), deployment(2, "1", "0"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    w.run_for(20 * SECOND);
    assert_eq!(
        run(&mut w, &files, "kubectl rollout pause deployment/web").stdout,
        "deployment.apps/web paused\n"
    );
    assert_eq!(
        run(&mut w, &files, "kubectl rollout pause deployment/web").stderr,
        "error: deployments.apps \"web\" is already paused\n"
    );
    run(
        &mut w,
        &files,
        "kubectl set image deployment/web web=nginx:1.28",
    );
    w.run_for(20 * SECOND);
    assert_eq!(
        run(&mut w, &files, "kubectl get rs").stdout.lines().count(),
        2,
        "no new ReplicaSet while paused"
    );
    assert_eq!(
        run(&mut w, &files, "kubectl rollout resume deployment/web").stdout,
        "deployment.apps/web resumed\n"
    );
    let status = run(&mut w, &files, "kubectl rollout status deployment/web");
    assert!(
        status
            .stdout
            .ends_with("deployment \"web\" successfully rolled out\n"),
        "{status:?}"
    );
}

/// Regression (property test seeds 5 and 8): one apply that changes the template and
/// the replicas together. The old ReplicaSet's desired-replicas annotation no longer
/// matches, so every sync is a scaling event; with `replicas + maxSurge` pods already
/// asked for, upstream's `scale` still rewrites every active ReplicaSet's annotations,
/// which ends the scaling event and lets the rollout go on. Without that write the
/// Deployment stayed at `3/2 ready, 2 updated, 3 total` for ever.
#[test]
fn template_and_replicas_changed_together_still_finish_the_rollout() {
    let mut files: BTreeMap<String, String> =
        [("web.yaml".to_string(), deployment(1, "25%", "25%"))]
            .into_iter()
            .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    w.run_for(20 * SECOND);
    assert_eq!(counts(&w), (1, 1));
    files.insert(
        "web.yaml".to_string(),
        deployment(2, "25%", "25%").replace("nginx:1.27", "nginx:1.28"),
    );
    run(&mut w, &files, "kubectl apply -f web.yaml");
    let status = run(
        &mut w,
        &files,
        "kubectl rollout status deployment/web --timeout=120s",
    );
    assert!(
        status
            .stdout
            .ends_with("deployment \"web\" successfully rolled out\n"),
        "{status:?}"
    );
    w.run_for(40 * SECOND);
    assert_eq!(counts(&w), (2, 2));
    let rs = run(
        &mut w,
        &files,
        "kubectl get rs -o 'custom-columns=IMAGE:.spec.template.spec.containers[0].image,DESIRED:.spec.replicas,ANN:.metadata.annotations.deployment\\.kubernetes\\.io/desired-replicas'",
    );
    assert_eq!(
        sorted_rows(&rs.stdout),
        ["nginx:1.27   0         2", "nginx:1.28   2         2"],
        "{}",
        rs.stdout
    );
}

/// Proportional scaling, the example of the Kubernetes documentation ("Proportional
/// scaling"): 10 replicas, maxSurge 3, maxUnavailable 2, a rollout to an image that
/// cannot be pulled stops at old 8 / new 5; scaling to 15 spreads the 5 extra replicas
/// (plus the surge) as old 11 / new 7 — `round(size × 18 / 13)` each.
#[test]
fn scaling_mid_rollout_spreads_replicas_proportionally() {
    let files: BTreeMap<String, String> = [("web.yaml".to_string(), deployment(10, "3", "2"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    w.run_for(60 * SECOND);
    assert_eq!(counts(&w), (10, 10));
    run(
        &mut w,
        &files,
        "kubectl set image deployment/web web=nginx:no-such-tag",
    );
    w.run_for(60 * SECOND);
    let sizes = |w: &mut World| {
        sorted_rows(
            &run(
                w,
                &files,
                "kubectl get rs -o 'custom-columns=IMAGE:.spec.template.spec.containers[0].image,DESIRED:.spec.replicas,MAX:.metadata.annotations.deployment\\.kubernetes\\.io/max-replicas'",
            )
            .stdout,
        )
    };
    assert_eq!(
        sizes(&mut w),
        [
            "nginx:1.27          8         13",
            "nginx:no-such-tag   5         13"
        ]
    );
    run(&mut w, &files, "kubectl scale deployment web --replicas=15");
    w.run_for(30 * SECOND);
    assert_eq!(
        sizes(&mut w),
        [
            "nginx:1.27          11        18",
            "nginx:no-such-tag   7         18"
        ]
    );
    // Scaling down spreads the removal the same way: 15 → 5 is 18 → 8, so
    // round(11 × 8 / 18) = 5 and round(7 × 8 / 18) = 3; then the rollout goes on within
    // the new bounds (old 5 → 3 once the pods are gone, new 3 → 5) and stops again.
    run(&mut w, &files, "kubectl scale deployment web --replicas=5");
    w.run_for(60 * SECOND);
    let events = run(&mut w, &files, "kubectl describe deployment web").stdout;
    for (from, to) in [(11, 5), (7, 3), (5, 3), (3, 5)] {
        let dir = if to > from { "up" } else { "down" };
        assert!(
            events.contains(&format!("Scaled {dir} replica set web-")),
            "{events}"
        );
        assert!(
            events.contains(&format!(" from {from} to {to}\n")),
            "no scale from {from} to {to}:\n{events}"
        );
    }
    assert_eq!(
        sizes(&mut w),
        [
            "nginx:1.27          3         8",
            "nginx:no-such-tag   5         8"
        ]
    );
}

fn progressing(w: &mut World, files: &BTreeMap<String, String>) -> String {
    run(
        w,
        files,
        "kubectl get deploy web -o 'jsonpath={range .status.conditions[?(@.type==\"Progressing\")]}{.status}/{.reason}/{.message}{end}'",
    )
    .stdout
}

/// `checkPausedConditions`: pausing sets Progressing to Unknown/DeploymentPaused,
/// resuming to Unknown/DeploymentResumed, and the rollout then completes as usual.
#[test]
fn pause_and_resume_set_the_progressing_condition() {
    let files: BTreeMap<String, String> = [("web.yaml".to_string(), deployment(2, "1", "0"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    w.run_for(20 * SECOND);
    let done = progressing(&mut w, &files);
    assert!(
        done.starts_with("True/NewReplicaSetAvailable/ReplicaSet \"web-"),
        "{done}"
    );
    run(&mut w, &files, "kubectl rollout pause deployment/web");
    w.run_for(2 * SECOND);
    assert_eq!(
        progressing(&mut w, &files),
        "Unknown/DeploymentPaused/Deployment is paused"
    );
    run(
        &mut w,
        &files,
        "kubectl set image deployment/web web=nginx:1.28",
    );
    w.run_for(10 * SECOND);
    assert_eq!(
        progressing(&mut w, &files),
        "Unknown/DeploymentPaused/Deployment is paused"
    );
    let from = w.observe().etcd().store.revision() + 1;
    run(&mut w, &files, "kubectl rollout resume deployment/web");
    run(&mut w, &files, "kubectl rollout status deployment/web");
    // The Progressing condition's states, from etcd's history of the Deployment.
    let mut reasons: Vec<String> = Vec::new();
    for e in w
        .observe()
        .etcd()
        .store
        .events_since("/registry/deployments/default/web", from)
        .unwrap()
    {
        if let Object::Deployment(d) = &*e.kv.value {
            let c = d.status.as_ref().and_then(|s| s.conditions.as_ref());
            if let Some(c) = c.and_then(|c| c.iter().find(|c| c.type_ == "Progressing")) {
                let r = format!(
                    "{}/{}/{}",
                    c.status,
                    c.reason.as_deref().unwrap_or(""),
                    c.message.as_deref().unwrap_or("")
                );
                if reasons.last() != Some(&r) {
                    reasons.push(r);
                }
            }
        }
    }
    let reasons: Vec<String> = reasons
        .iter()
        .map(|r| {
            // Hide the generated ReplicaSet name.
            match r.find("\"web-") {
                Some(i) => format!(
                    "{}\"web-…{}",
                    &r[..i],
                    &r[r[i + 1..].find('"').unwrap() + i + 1..]
                ),
                None => r.clone(),
            }
        })
        .collect();
    assert_eq!(
        reasons,
        [
            "Unknown/DeploymentPaused/Deployment is paused",
            "Unknown/DeploymentResumed/Deployment is resumed",
            "True/NewReplicaSetCreated/Created new replica set \"web-…\"",
            "True/ReplicaSetUpdated/ReplicaSet \"web-…\" is progressing.",
            "True/NewReplicaSetAvailable/ReplicaSet \"web-…\" has successfully progressed."
        ]
    );
    let done = progressing(&mut w, &files);
    assert!(
        done.starts_with("True/NewReplicaSetAvailable/ReplicaSet \"web-"),
        "{done}"
    );
}

/// progressDeadlineSeconds: a rollout that makes no progress for that long gets
/// Progressing False/ProgressDeadlineExceeded, and `kubectl rollout status` fails with
/// kubectl's message.
#[test]
fn a_stuck_rollout_exceeds_its_progress_deadline() {
    let manifest = deployment(2, "1", "0").replace(
        "spec:\n  replicas: 2\n",
        "spec:\n  replicas: 2\n  progressDeadlineSeconds: 30\n",
    );
    let files: BTreeMap<String, String> =
        [("web.yaml".to_string(), manifest)].into_iter().collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    w.run_for(20 * SECOND);
    run(
        &mut w,
        &files,
        "kubectl set image deployment/web web=nginx:no-such-tag",
    );
    w.run_for(10 * SECOND);
    let p = progressing(&mut w, &files);
    assert!(
        p.starts_with("True/ReplicaSetUpdated/ReplicaSet \"web-"),
        "{p}"
    );
    assert!(p.ends_with("\" is progressing."), "{p}");
    w.run_for(30 * SECOND);
    let p = progressing(&mut w, &files);
    assert!(
        p.starts_with("False/ProgressDeadlineExceeded/ReplicaSet \"web-"),
        "{p}"
    );
    assert!(p.ends_with("\" has timed out progressing."), "{p}");
    let status = run(&mut w, &files, "kubectl rollout status deployment/web");
    assert_eq!(status.exit_code, 1);
    assert_eq!(
        status.stderr,
        "error: deployment \"web\" exceeded its progress deadline\n"
    );
    // The old pods keep serving (maxUnavailable 0).
    assert_eq!(counts(&w), (3, 2));
}

/// Recreate: every old pod is gone before the first new pod is created.
#[test]
fn recreate_never_runs_old_and_new_pods_together() {
    let manifest = deployment(3, "1", "0").replace(
        "  strategy:\n    rollingUpdate:\n      maxSurge: 1\n      maxUnavailable: 0\n",
        "  strategy:\n    type: Recreate\n",
    );
    assert!(manifest.contains("Recreate"));
    let files: BTreeMap<String, String> =
        [("web.yaml".to_string(), manifest)].into_iter().collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    w.run_for(30 * SECOND);
    assert_eq!(counts(&w), (3, 3));
    run(
        &mut w,
        &files,
        "kubectl set image deployment/web web=nginx:1.28",
    );
    let images = |w: &World| {
        let mut seen = std::collections::BTreeSet::new();
        for o in stored(w, Kind::Pod) {
            if let Object::Pod(p) = &*o {
                if p.metadata.namespace.as_deref() == Some("default") {
                    let spec = p.spec.as_ref().unwrap();
                    seen.insert(spec.containers[0].image.clone().unwrap_or_default());
                }
            }
        }
        seen
    };
    for _ in 0..600 {
        w.run_for(100);
        let seen = images(&w);
        assert!(seen.len() <= 1, "old and new pods together: {seen:?}");
    }
    assert_eq!(counts(&w), (3, 3));
    let events = run(&mut w, &files, "kubectl describe deployment web").stdout;
    assert!(
        events.contains(" from 3 to 0\n") && events.contains(" from 0 to 3\n"),
        "{events}"
    );
    // One ScalingReplicaSet event per scale, each counted once (no "(x2 over ...)").
    let scaling: Vec<&str> = events
        .lines()
        .filter(|l| l.contains("ScalingReplicaSet"))
        .collect();
    assert_eq!(scaling.len(), 3, "{events}");
    assert!(scaling.iter().all(|l| !l.contains("(x")), "{events}");
}

/// `kubectl rollout status` word for word: while the controller has not observed the
/// new generation it waits for the spec update (and `--timeout` ends the wait with
/// kubectl's error); afterwards every line is one of the four rollout_status.go forms.
#[test]
fn rollout_status_words_and_timeout() {
    let files: BTreeMap<String, String> = [("web.yaml".to_string(), deployment(3, "25%", "25%"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    w.run_for(30 * SECOND);
    run(&mut w, &files, "sim stop kube-controller-manager");
    run(
        &mut w,
        &files,
        "kubectl set image deployment/web web=nginx:1.28",
    );
    let t0 = w.now();
    let waiting = run(
        &mut w,
        &files,
        "kubectl rollout status deployment/web --timeout=5s",
    );
    assert_eq!(
        waiting.stdout,
        "Waiting for deployment spec update to be observed...\n"
    );
    assert_eq!(
        waiting.stderr,
        "error: timed out waiting for the condition\n"
    );
    assert_eq!(waiting.exit_code, 1);
    assert!(w.now() - t0 >= 5 * SECOND && w.now() - t0 < 6 * SECOND);
    assert_eq!(
        run(
            &mut w,
            &files,
            "kubectl rollout status deployment/web --timeout=x"
        )
        .stderr,
        "error: invalid argument \"x\" for \"--timeout\" flag: time: invalid duration \"x\"\n"
    );
    run(&mut w, &files, "sim start kube-controller-manager");
    let status = run(&mut w, &files, "kubectl rollout status deployment/web");
    assert_eq!(status.exit_code, 0);
    let lines: Vec<&str> = status.stdout.lines().collect();
    assert_eq!(
        lines.last(),
        Some(&"deployment \"web\" successfully rolled out")
    );
    let num = |s: &str| s.parse::<u32>().is_ok();
    for l in &lines[..lines.len() - 1] {
        if *l == "Waiting for deployment spec update to be observed..." {
            continue;
        }
        let rest = l
            .strip_prefix("Waiting for deployment \"web\" rollout to finish: ")
            .unwrap_or_else(|| panic!("unexpected line {l:?}"));
        let words: Vec<&str> = rest.split(' ').collect();
        let ok = match words.as_slice() {
            [u, "out", "of", "3", "new", "replicas", "have", "been", "updated..."] => num(u),
            [n, "old", "replicas", "are", "pending", "termination..."] => num(n),
            [a, "of", u, "updated", "replicas", "are", "available..."] => num(a) && num(u),
            _ => false,
        };
        assert!(ok, "unexpected line {l:?}");
    }
}

/// revisionHistoryLimit: old ReplicaSets beyond the limit are deleted, lowest revision
/// first, once they are scaled to zero; the history shows what is left.
#[test]
fn revision_history_limit_keeps_that_many_old_replicasets() {
    let manifest = deployment(2, "1", "0").replace(
        "spec:\n  replicas: 2\n",
        "spec:\n  replicas: 2\n  revisionHistoryLimit: 1\n",
    );
    let files: BTreeMap<String, String> =
        [("web.yaml".to_string(), manifest)].into_iter().collect();
    let mut w = World::new(ClusterConfig::default());
    run(&mut w, &files, "kubectl apply -f web.yaml");
    run(&mut w, &files, "kubectl rollout status deployment/web");
    for tag in ["1.28", "1.29"] {
        run(
            &mut w,
            &files,
            &format!("kubectl set image deployment/web web=nginx:{tag}"),
        );
        run(&mut w, &files, "kubectl rollout status deployment/web");
    }
    w.run_for(10 * SECOND);
    let rs = run(
        &mut w,
        &files,
        "kubectl get rs -o 'custom-columns=IMAGE:.spec.template.spec.containers[0].image,DESIRED:.spec.replicas,REVISION:.metadata.annotations.deployment\\.kubernetes\\.io/revision'",
    );
    assert_eq!(
        sorted_rows(&rs.stdout),
        ["nginx:1.28   0         2", "nginx:1.29   2         3"],
        "{}",
        rs.stdout
    );
    let history = run(&mut w, &files, "kubectl rollout history deployment/web");
    assert_eq!(
        history.stdout,
        "deployment.apps/web \nREVISION  CHANGE-CAUSE\n2         <none>\n3         <none>\n\n"
    );
}

#[test]
fn rollout_restart_stamps_the_template_and_rolls_every_pod() {
    let files: BTreeMap<String, String> = [("d.yaml".to_string(), deployment(3, "25%", "25%"))]
        .into_iter()
        .collect();
    let mut w = World::new(ClusterConfig::default());
    assert_eq!(run(&mut w, &files, "kubectl apply -f d.yaml").exit_code, 0);
    run(&mut w, &files, "kubectl rollout status deployment/web");
    let before = run(&mut w, &files, "kubectl get pods -l app=web -o name").stdout;
    let out = run(&mut w, &files, "kubectl rollout restart deployment/web");
    assert_eq!(out.stdout, "deployment.apps/web restarted\n");
    run(&mut w, &files, "kubectl rollout status deployment/web");
    w.run_for(60 * SECOND);
    let ann = run(&mut w, &files, "kubectl get deploy web -o yaml").stdout;
    assert!(ann.contains("kubectl.kubernetes.io/restartedAt: "), "{ann}");
    let after = run(&mut w, &files, "kubectl get pods -l app=web -o name").stdout;
    assert_eq!(after.lines().count(), 3, "{after}");
    assert!(
        after.lines().all(|p| !before.contains(p)),
        "{before}\n{after}"
    );
}
