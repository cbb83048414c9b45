//! `curl -v` as curl prints it: the connection, the request head (`>`) and the response
//! head (`<`) on stderr before the body, `* Connection #0 … left intact` after it; and the
//! order a terminal shows the two streams in.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::node::curl::in_written_order;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

const APP: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  clusterIP: 10.96.60.60
  selector: {app: web}
  ports:
  - port: 80
";

fn cluster() -> (World, BTreeMap<String, String>) {
    let mut w = World::new(ClusterConfig::default());
    let files: BTreeMap<String, String> = [("app.yaml".to_string(), APP.to_string())].into();
    let o = cmd::run(&mut w, "kubectl apply -f app.yaml", &files, 10 * SECOND);
    assert_eq!(o.exit_code, 0, "{o:?}");
    w.run_for(60 * SECOND);
    (w, files)
}

#[test]
fn verbose_curl_writes_its_heads_to_stderr_around_the_body() {
    let (mut w, files) = cluster();
    let o = cmd::run(
        &mut w,
        "ssh node-1 curl -v http://10.96.60.60/",
        &files,
        30 * SECOND,
    );
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert!(
        o.stdout.contains("<title>Welcome to nginx!</title>"),
        "{}",
        o.stdout
    );
    let err: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(err[0], "*   Trying 10.96.60.60:80...");
    assert!(
        err[1].starts_with("* Connected to 10.96.60.60 (10.96.60.60) port 80"),
        "{err:?}"
    );
    assert_eq!(err[2], "> GET / HTTP/1.1");
    assert_eq!(err[3], "> Host: 10.96.60.60");
    assert_eq!(err[6], "> ");
    assert_eq!(err[7], "< HTTP/1.1 200 OK");
    assert!(
        err.iter().any(|l| l.starts_with("< Server: nginx/1.27")),
        "{err:?}"
    );
    assert!(
        err.iter().any(|l| *l == "< Content-Type: text/html"),
        "{err:?}"
    );
    let blank = err
        .iter()
        .position(|l| *l == "< ")
        .expect("the head ends with `< `");
    assert_eq!(
        err[blank + 1],
        "* Connection #0 to host 10.96.60.60 left intact"
    );
    assert_eq!(blank + 2, err.len(), "{err:?}");
    assert!(!o.stderr.contains("% Total"), "no progress meter with -v");

    // In a terminal: the heads, the body, then the connection line.
    let order = in_written_order(&o.stdout, &o.stderr);
    let kinds: Vec<bool> = order.iter().map(|(e, _)| *e).collect();
    assert_eq!(kinds, [true, false, true]);
    assert!(order[0].1.ends_with("< \n"));
    assert_eq!(order[1].1, o.stdout);
    assert_eq!(
        order[2].1,
        "* Connection #0 to host 10.96.60.60 left intact\n"
    );
}

#[test]
fn a_failed_curl_prints_its_error_before_the_write_out() {
    let (mut w, files) = cluster();
    let o = cmd::run(
        &mut w,
        "ssh node-1 curl -sS --connect-timeout 1 -w '%{http_code}\\n' http://10.96.60.60:81/",
        &files,
        30 * SECOND,
    );
    assert_ne!(o.exit_code, 0, "{o:?}");
    assert!(o.stderr.starts_with("curl: ("), "{o:?}");
    let order = in_written_order(&o.stdout, &o.stderr);
    assert_eq!(order[0], (true, o.stderr.clone()));
    assert_eq!(order[1], (false, "000\n".to_string()));
    // Without -v, a plain body and a meter keep stdout first.
    assert_eq!(
        in_written_order("hello\n", ""),
        vec![(false, "hello\n".to_string())]
    );
}
