//! Hostile input on the node side never panics and never blocks other pods: odd images,
//! tuning annotations, probes, commands, URLs.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

const ODD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: odd
  annotations:
    kubeloop.dev/behavior: crash-after=99999999h, start-delay=-1s, oom-after=, cpu=lots, memory=1Ei, bogus
    kubeloop.dev/behavior.b: not-ready-for=9999999999999h
spec:
  containers:
  - name: a
    image: Nginx:1.27
  - name: b
    image: busybox:1.37
    command: [sh, -c, 'sleep 1e300; exit 300; sleep nan']
    livenessProbe:
      exec: {command: [weird, ']]]']}
    readinessProbe:
      httpGet: {port: no-such-port}
  - name: c
    image: regsitry.k8s.io/pause:3.10
  - name: d
    image: ghcr.io/acme/app@sha256:0000
    startupProbe:
      tcpSocket: {port: 65535}
      periodSeconds: 1
      failureThreshold: 1
---
apiVersion: v1
kind: Pod
metadata:
  name: ok
spec:
  containers:
  - name: web
    image: nginx:1.27
";

#[test]
fn odd_pods_and_commands_never_panic() {
    let mut w = World::new(ClusterConfig::default());
    let files: BTreeMap<String, String> = [("odd.yaml".to_string(), ODD.to_string())]
        .into_iter()
        .collect();
    let o = cmd::run(&mut w, "kubectl apply -f odd.yaml", &files, 60 * SECOND);
    assert_eq!(o.exit_code, 0, "{o:?}");
    w.run_for(90 * SECOND);
    let pods = cmd::run(&mut w, "kubectl get pods", &files, 60 * SECOND).stdout;
    assert!(
        pods.lines()
            .any(|l| l.starts_with("ok ") && l.contains("1/1") && l.contains("Running")),
        "{pods}"
    );
    let msg = cmd::run(
        &mut w,
        "kubectl get pod odd -o jsonpath={.status.containerStatuses[0].state.waiting.reason}",
        &files,
        SECOND,
    )
    .stdout;
    assert_eq!(msg, "InvalidImageName");
    for line in [
        "kubectl exec odd -c b -- sh -c ''",
        "kubectl exec ok -- curl http://[::1]:99999/",
        "kubectl exec ok -- curl -m abc http://x",
        "kubectl exec ok -- curl ftp://x/",
        "kubectl exec ok -- curl",
        "kubectl exec ok -- cat /etc/../../nope",
        "kubectl exec ok -- ls -la /nope",
        "kubectl exec ok -- env FOO",
        "kubectl exec nope -- true",
        "kubectl logs ok --tail=-5",
        "kubectl logs ok -f --previous",
        "kubectl top pod nope",
        "kubectl top banana",
        "ssh node-1 curl -sS http://",
        "ssh node-1 curl --connect-timeout 99999999999999999999 http://10.0.0.1",
        "ssh node-1 journalctl -u nope -n abc",
        "ssh node-1 journalctl --bogus",
        "ssh node-1 crictl logs",
        "ssh node-1 crictl inspect",
        "ssh node-1 ls ../../../../",
        "ssh node-1 | grep",
        "ssh node-1 ps aux | grep",
        "ssh node-1 ip link",
        "ssh node-1 systemctl frobnicate kubelet",
        "ssh node-1 systemctl status nope",
    ] {
        let _ = cmd::run(&mut w, line, &files, 200 * SECOND);
    }
    w.run_for(60 * SECOND);
    let pods = cmd::run(&mut w, "kubectl get pods", &files, 60 * SECOND).stdout;
    assert!(pods.contains("ok "), "{pods}");
}
