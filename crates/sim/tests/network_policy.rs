//! NetworkPolicy through the terminal: the objects as kubectl shows them (get, describe,
//! validation errors), and kindnet enforcing them in the data plane — the docs'
//! declare-network-policy walkthrough, default deny, DNS egress, ipBlock and ports.

mod common;
use common::Term as T;

/// The docs' `service/networking/nginx-policy.yaml`.
const ACCESS_NGINX: &str = "apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: access-nginx
spec:
  podSelector:
    matchLabels:
      app: nginx
  ingress:
  - from:
    - podSelector:
        matchLabels:
          access: \"true\"
";

/// nginx as the walkthrough creates it: a Deployment exposed on port 80.
fn nginx() -> T {
    let mut t = T::new();
    t.ok("kubectl create deployment nginx --image=nginx");
    t.ok("kubectl expose deployment nginx --port=80");
    t.settle(30);
    t
}

/// `wget --spider --timeout=1 nginx` from a fresh busybox pod (labels optional).
fn spider(t: &mut T, labels: &str) -> kubeloop_sim::process::Output {
    t.run(&format!(
        "kubectl run busybox --rm -i --restart=Never --image=busybox {labels} -- sh -c 'wget --spider --timeout=1 nginx'"
    ))
}

#[test]
fn the_docs_access_nginx_policy_admits_only_labelled_clients() {
    let mut t = nginx();
    let ip = t.ok("kubectl get svc nginx -o jsonpath={.spec.clusterIP}");
    let o = spider(&mut t, "");
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert_eq!(
        o.stdout,
        format!("Connecting to nginx ({ip}:80)\nremote file exists\npod \"busybox\" deleted from default namespace\n")
    );
    t.file("nginx-policy.yaml", ACCESS_NGINX);
    assert_eq!(
        t.ok("kubectl apply -f nginx-policy.yaml"),
        "networkpolicy.networking.k8s.io/access-nginx created\n"
    );
    let o = spider(&mut t, "");
    assert_eq!(o.exit_code, 1, "{o:?}");
    assert!(
        o.stdout.starts_with(&format!(
            "Connecting to nginx ({ip}:80)\nwget: download timed out\n"
        )),
        "{o:?}"
    );
    let o = spider(&mut t, "--labels=access=true");
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert!(o.stdout.contains("remote file exists\n"), "{o:?}");
}
