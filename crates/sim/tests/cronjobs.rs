//! CronJobs through the terminal: the docs' `hello` CronJob runs a Job every minute
//! and keeps three, `kubectl get|describe cronjob`, `kubectl create job --from`,
//! concurrencyPolicy Forbid, suspend, and schedule validation.

mod common;
use common::Term as T;

/// The documentation's CronJob (content/en/examples/application/job/cronjob.yaml).
const HELLO: &str = "apiVersion: batch/v1
kind: CronJob
metadata:
  name: hello
spec:
  schedule: \"* * * * *\"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: hello
            image: busybox:1.28
            imagePullPolicy: IfNotPresent
            command:
            - /bin/sh
            - -c
            - date; echo Hello from the Kubernetes cluster
          restartPolicy: OnFailure
";

#[test]
fn debug_cron() {
    let mut t = T::new();
    t.file("cronjob.yaml", HELLO);
    println!("{}", t.ok("kubectl apply -f cronjob.yaml"));
    println!("{}", t.ok("kubectl get cronjob hello"));
    for _ in 0..6 {
        t.settle(60);
        println!("{}", t.ok("kubectl get cronjobs,jobs"));
    }
    println!("{}", t.ok("kubectl describe cronjob hello"));
    println!("{}", t.ok("kubectl get cronjob hello -o yaml"));
    println!("{:?}", t.run("kubectl logs job/hello-29453766"));
    println!("{}", t.ok("kubectl create job manual --from=cronjob/hello"));
    t.settle(10);
    println!("{}", t.ok("kubectl get jobs"));
    println!("{}", t.ok("kubectl get events --field-selector involvedObject.kind=CronJob"));
    panic!();
}
