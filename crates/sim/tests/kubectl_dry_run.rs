//! `--dry-run=client|server` on the commands that write (apply, create -f, replace,
//! delete, expose): kubectl's `(dry run)` / `(server dry run)` lines, and nothing stored,
//! changed or deleted.

mod common;
use common::Term as T;

#[test]
fn dry_runs_change_nothing() {
    let mut t = T::new();
    assert_eq!(
        t.ok("kubectl apply -f nginx.yaml --dry-run=client"),
        "deployment.apps/nginx created (dry run)\n"
    );
    assert_eq!(
        t.ok("kubectl apply -f nginx.yaml --dry-run=server"),
        "deployment.apps/nginx created (server dry run)\n"
    );
    assert_eq!(
        t.ok("kubectl create -f nginx.yaml --dry-run=client"),
        "deployment.apps/nginx created (dry run)\n"
    );
    assert_eq!(
        t.ok("kubectl create -f nginx.yaml --dry-run=server"),
        "deployment.apps/nginx created (server dry run)\n"
    );
    assert_eq!(
        t.run("kubectl get deploy").stderr,
        "No resources found in default namespace.\n"
    );
    t.ok("kubectl apply -f nginx.yaml");
    t.file(
        "nginx.yaml",
        &common::NGINX.replace("replicas: 3", "replicas: 5"),
    );
    assert_eq!(
        t.ok("kubectl apply -f nginx.yaml --dry-run=client"),
        "deployment.apps/nginx configured (dry run)\n"
    );
    assert_eq!(
        t.ok("kubectl apply -f nginx.yaml --dry-run=server"),
        "deployment.apps/nginx configured (server dry run)\n"
    );
    assert_eq!(
        t.ok("kubectl get deploy nginx -o jsonpath={.spec.replicas}"),
        "3"
    );
    assert_eq!(
        t.ok("kubectl delete deploy nginx --dry-run=client"),
        "deployment.apps \"nginx\" deleted (dry run) from default namespace\n"
    );
    assert_eq!(
        t.ok("kubectl delete -f nginx.yaml --dry-run=server"),
        "deployment.apps \"nginx\" deleted (server dry run) from default namespace\n"
    );
    assert_eq!(
        t.err("kubectl delete deploy ghost --dry-run=client"),
        "Error from server (NotFound): deployments.apps \"ghost\" not found\n"
    );
    assert_eq!(
        t.ok("kubectl get deploy nginx -o jsonpath={.metadata.name}"),
        "nginx"
    );
    assert!(t
        .err("kubectl delete deploy nginx --dry-run=yes")
        .starts_with("error: Invalid dry-run value (yes)."));
}

#[test]
fn expose_dry_run_prints_the_service() {
    let mut t = T::new();
    t.file("nginx.yaml", &common::nginx_serving());
    t.ok("kubectl apply -f nginx.yaml");
    assert_eq!(
        t.ok("kubectl expose deployment nginx --port=80 --dry-run=client -o yaml"),
        "apiVersion: v1
kind: Service
metadata:
  name: nginx
spec:
  ports:
  - port: 80
    protocol: TCP
    targetPort: 80
  selector:
    app: nginx
status:
  loadBalancer: {}
"
    );
    assert_eq!(
        t.ok("kubectl expose deployment nginx --port=80 --dry-run=client"),
        "service/nginx exposed (dry run)\n"
    );
    assert_eq!(
        t.err("kubectl get svc nginx"),
        "Error from server (NotFound): services \"nginx\" not found\n"
    );
    assert_eq!(
        t.ok("kubectl expose deployment nginx --port=80"),
        "service/nginx exposed\n"
    );
}
