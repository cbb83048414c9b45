//! The node lifecycle controller through the terminal: a cordon becomes the
//! `node.kubernetes.io/unschedulable:NoSchedule` taint (and an uncordon removes it), and a
//! node that stops reporting has its pods marked not Ready (`MarkPodsNotReady`) before the
//! taint manager evicts them; and how a cordon or a taint reads in FailedScheduling.

mod common;
use common::Term;

const PINNED: &str = "apiVersion: v1
kind: Pod
metadata:
  name: pinned
spec:
  nodeSelector:
    kubernetes.io/hostname: node-2
  containers:
  - name: app
    image: nginx:1.27
";

/// `kubectl describe node` line starting with `field`.
fn field(describe: &str, field: &str) -> String {
    describe
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_cordon_taints_the_node_unschedulable_and_an_uncordon_removes_it() {
    let mut t = Term::new();
    t.settle(10);
    assert_eq!(t.ok("kubectl cordon node-2"), "node/node-2 cordoned\n");
    t.settle(1);
    let d = t.ok("kubectl describe node node-2");
    assert_eq!(
        field(&d, "Taints:"),
        "Taints:             node.kubernetes.io/unschedulable:NoSchedule"
    );
    assert_eq!(field(&d, "Unschedulable:"), "Unschedulable:      true");
    assert_eq!(
        t.ok("kubectl get nodes node-2 --no-headers")
            .split_whitespace()
            .nth(1),
        Some("Ready,SchedulingDisabled")
    );

    // NodeUnschedulable runs before TaintToleration and the framework stops at the first
    // failing filter, so a cordoned node is reported as unschedulable, not as tainted.
    t.file("pinned.yaml", PINNED);
    t.ok("kubectl apply -f pinned.yaml");
    t.settle(5);
    let ev = t.ok("kubectl get events --field-selector reason=FailedScheduling");
    assert!(
        ev.contains("0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."),
        "{ev}"
    );

    assert_eq!(t.ok("kubectl uncordon node-2"), "node/node-2 uncordoned\n");
    t.settle(10);
    let d = t.ok("kubectl describe node node-2");
    assert_eq!(field(&d, "Taints:"), "Taints:             <none>");
    assert_eq!(field(&d, "Unschedulable:"), "Unschedulable:      false");
    assert_eq!(
        t.ok("kubectl get pod pinned -o jsonpath={.spec.nodeName}"),
        "node-2"
    );
}

#[test]
fn a_cordon_keeps_the_user_taints() {
    let mut t = Term::new();
    t.settle(10);
    t.ok("kubectl taint nodes node-1 dedicated=db:NoSchedule");
    t.ok("kubectl cordon node-1");
    t.settle(1);
    let d = t.ok("kubectl describe node node-1");
    assert!(
        d.contains("Taints:             dedicated=db:NoSchedule\n                    node.kubernetes.io/unschedulable:NoSchedule\nUnschedulable:      true\n"),
        "{d}"
    );
    t.ok("kubectl uncordon node-1");
    t.settle(1);
    let d = t.ok("kubectl describe node node-1");
    assert_eq!(
        field(&d, "Taints:"),
        "Taints:             dedicated=db:NoSchedule"
    );
}

#[test]
fn pods_on_a_powered_off_node_are_marked_not_ready_then_evicted() {
    let mut t = Term::new();
    t.file("pinned.yaml", PINNED);
    t.ok("kubectl apply -f pinned.yaml");
    t.settle(20);
    t.ok("sim poweroff node-2");
    t.settle(60);
    // The Ready condition goes False; the container statuses are the kubelet's and stay
    // as last reported, so READY still counts 1/1 and STATUS stays Running.
    let row = t.ok("kubectl get pod pinned --no-headers");
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cols[1..3], ["1/1", "Running"], "{row}");
    assert_eq!(
        t.ok(
            "kubectl get pod pinned -o jsonpath={.status.conditions[?(@.type==\"Ready\")].status}"
        ),
        "False"
    );
    assert_eq!(
        t.ok("kubectl get pod pinned -o jsonpath={.status.conditions[?(@.type==\"ContainersReady\")].status}"),
        "True"
    );
    let ev =
        t.ok("kubectl get events --field-selector involvedObject.name=pinned,reason=NodeNotReady");
    assert!(
        ev.contains("Warning   NodeNotReady   pod/pinned   Node is not ready"),
        "{ev}"
    );
    let ev =
        t.ok("kubectl get events --field-selector involvedObject.kind=Node,reason=NodeNotReady");
    assert!(
        ev.contains(
            "Normal   NodeNotReady   node/node-2   Node node-2 status is now: NodeNotReady"
        ),
        "{ev}"
    );
    let d = t.ok("kubectl describe node node-2");
    assert!(
        d.contains("Taints:             node.kubernetes.io/unreachable:NoExecute\n                    node.kubernetes.io/unreachable:NoSchedule\n"),
        "{d}"
    );
    // Unreachable since ~+55 s; the default 300 s toleration runs out at ~+355 s.
    t.settle(240);
    assert!(t
        .ok("kubectl get pod pinned --no-headers")
        .contains("Running"));
    t.settle(70);
    let ev = t.ok("kubectl get events --field-selector involvedObject.name=pinned,reason=TaintManagerEviction");
    assert!(
        ev.contains("Marking for deletion Pod default/pinned"),
        "{ev}"
    );
}

/// v1.35's TaintToleration reason names no taint (kubernetes/kubernetes#134740, merged
/// before v1.35 and cherry-picked to v1.34: taint keys and values may be sensitive), and
/// FitError sorts the `<count> <reason>` strings, so the count leads the order.
#[test]
fn an_untolerated_taint_is_reported_without_its_key_and_value() {
    let mut t = Term::new();
    t.settle(10);
    t.ok("kubectl taint nodes node-2 dedicated=db:NoSchedule");
    t.file("pinned.yaml", PINNED);
    t.ok("kubectl apply -f pinned.yaml");
    t.settle(5);
    let ev = t.ok("kubectl get events --field-selector reason=FailedScheduling");
    assert!(
        ev.contains("0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.\n"),
        "{ev}"
    );
}
