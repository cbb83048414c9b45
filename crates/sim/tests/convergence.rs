//! Issue 13: everything converges once failures heal.

use kubeloop_sim::time::SECOND;

mod common;
use common::Term;

/// The kubelet's final delete of a terminated pod, lost when its connection to the
/// apiserver dropped, is retried: no pod stays Terminating once everything heals.
#[test]
fn a_final_delete_lost_to_a_dropped_connection_is_retried() {
    // The failures land at every moment of the pods' termination in turn, so some runs
    // cut the kubelets' final deletes in flight.
    for delay_ms in (0..3_000).step_by(250) {
        let mut t = Term::new();
        t.ok("sim node add node-4");
        t.ok("kubectl apply -f nginx.yaml");
        t.ok("kubectl scale deployment nginx --replicas=8");
        t.settle(40);
        t.ok("kubectl delete deployment nginx --wait=false");
        t.w.run_for(delay_ms);
        t.ok("sim stop kube-apiserver");
        t.w.run_for(SECOND);
        t.ok("sim start kube-apiserver");
        t.w.run_for(SECOND);
        t.ok("sim stop kube-apiserver");
        t.ok("sim partition node-4");
        t.w.run_for(20 * SECOND);
        t.ok("sim start kube-apiserver");
        t.ok("sim heal node-4");
        t.settle(180);
        let out = t.run("kubectl get pods");
        assert_eq!(
            out.stderr, "No resources found in default namespace.\n",
            "failures {delay_ms} ms after the delete: {}",
            out.stdout
        );
    }
}
