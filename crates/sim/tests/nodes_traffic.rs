//! Service traffic and the node terminal: NodePort on any node, externalTrafficPolicy,
//! session affinity, IPVS mode, REJECT without endpoints, partitions; crictl, ip route,
//! journalctl, mount, and the shell's own errors.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::{ClusterConfig, ProxyMode};
use kubeloop_sim::cmd;
use kubeloop_sim::process::Output;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

const APP: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        args: [serve-hostname]
        resources:
          requests: {cpu: 500m}
        ports:
        - containerPort: 9376
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: NodePort
  clusterIP: 10.96.50.50
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 9376
    nodePort: 30080
---
apiVersion: v1
kind: Service
metadata:
  name: sticky
spec:
  clusterIP: 10.96.50.51
  sessionAffinity: ClientIP
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 9376
---
apiVersion: v1
kind: Service
metadata:
  name: local
spec:
  type: NodePort
  externalTrafficPolicy: Local
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 9376
    nodePort: 30081
---
apiVersion: v1
kind: Service
metadata:
  name: empty
spec:
  clusterIP: 10.96.50.52
  selector: {app: nothing}
  ports:
  - port: 80
";

fn world(mode: ProxyMode) -> (World, BTreeMap<String, String>) {
    let mut w = World::new(ClusterConfig {
        proxy_mode: mode,
        ..ClusterConfig::default()
    });
    let files: BTreeMap<String, String> = [("app.yaml".to_string(), APP.to_string())]
        .into_iter()
        .collect();
    let o = cmd::run(&mut w, "kubectl apply -f app.yaml", &files, 60 * SECOND);
    assert_eq!(o.exit_code, 0, "{o:?}");
    w.run_for(30 * SECOND);
    (w, files)
}

fn run(w: &mut World, files: &BTreeMap<String, String>, line: &str) -> Output {
    cmd::run(w, line, files, 300 * SECOND)
}

fn pods_by_node(w: &mut World, files: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let o = run(w, files, "kubectl get pods -o wide");
    o.stdout
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.get(6)?.to_string(), f.first()?.to_string()))
        })
        .collect()
}

#[test]
fn nodeports_answer_on_every_node_and_local_policy_drops_where_no_endpoint_lives() {
    for mode in [ProxyMode::Iptables, ProxyMode::Ipvs] {
        let (mut w, f) = world(mode);
        let placed = pods_by_node(&mut w, &f);
        assert_eq!(placed.len(), 2, "{placed:?}");
        let empty_node = ["node-1", "node-2", "node-3"]
            .into_iter()
            .find(|n| !placed.contains_key(*n))
            .unwrap_or("node-1");
        // ClusterIP and NodePort reach a pod from any node (another node's IP too).
        for target in [
            "http://10.96.50.50",
            "http://172.18.0.3:30080",
            "http://172.18.0.5:30080",
        ] {
            let o = run(&mut w, &f, &format!("ssh {empty_node} curl -s {target}"));
            assert_eq!(o.exit_code, 0, "{mode:?} {target}: {o:?}");
            assert!(placed.values().any(|p| *p == o.stdout), "{o:?}");
        }
        // externalTrafficPolicy: Local — the NodePort of a node without an endpoint drops
        // traffic from elsewhere (the node's own traffic would use any endpoint).
        let ip = match empty_node {
            "node-1" => "172.18.0.3",
            "node-2" => "172.18.0.4",
            _ => "172.18.0.5",
        };
        let client = placed.keys().next().cloned().unwrap_or_default();
        let o = run(
            &mut w,
            &f,
            &format!("ssh {empty_node} curl -s http://{ip}:30081"),
        );
        assert_eq!(
            o.exit_code, 0,
            "{mode:?} local traffic uses any endpoint: {o:?}"
        );
        if mode == ProxyMode::Iptables {
            let o = run(
                &mut w,
                &f,
                &format!("ssh {client} curl -sS --connect-timeout 3 http://{ip}:30081"),
            );
            assert_eq!(o.stderr, format!("curl: (28) Failed to connect to {ip} port 30081 after 3001 ms: Timeout was reached\n"));
            assert_eq!(o.exit_code, 28);
        }
        // No endpoints: REJECT (iptables) / nothing behind the VIP (IPVS): refused at once.
        let o = run(
            &mut w,
            &f,
            &format!("ssh {empty_node} curl -sS http://10.96.50.52"),
        );
        assert_eq!(o.stderr, "curl: (7) Failed to connect to 10.96.50.52 port 80 after 0 ms: Couldn't connect to server\n", "{mode:?}");
        assert_eq!(o.exit_code, 7);
    }
}

#[test]
fn session_affinity_keeps_a_client_on_one_pod() {
    let (mut w, f) = world(ProxyMode::Iptables);
    let first = run(&mut w, &f, "ssh node-1 curl -s http://10.96.50.51").stdout;
    assert!(first.starts_with("web-"));
    for _ in 0..6 {
        assert_eq!(
            run(&mut w, &f, "ssh node-1 curl -s http://10.96.50.51").stdout,
            first
        );
    }
    let paths = &w.observe().net().paths;
    let last = paths.back().expect("a recorded walk");
    assert_eq!(last.url, "http://10.96.50.51");
    assert!(
        last.hops
            .iter()
            .any(|h| h.rule.contains("--rcheck --seconds 10800 --reap")),
        "{:?}",
        last.hops
    );
}

#[test]
fn partitioned_or_powered_off_targets_time_out_and_pod_ips_route_directly() {
    let (mut w, f) = world(ProxyMode::Iptables);
    let placed = pods_by_node(&mut w, &f);
    let (node, pod) = placed
        .iter()
        .next()
        .map(|(a, b)| (a.clone(), b.clone()))
        .expect("a pod");
    let ip = run(
        &mut w,
        &f,
        &format!("kubectl get pod {pod} -o jsonpath={{.status.podIP}}"),
    )
    .stdout;
    let other = ["node-1", "node-2", "node-3"]
        .into_iter()
        .find(|n| *n != node)
        .unwrap_or("node-1");
    let o = run(
        &mut w,
        &f,
        &format!("ssh {other} curl -s http://{ip}:9376/"),
    );
    assert_eq!(o.stdout, pod);
    let o = run(
        &mut w,
        &f,
        &format!("ssh {other} curl -sS http://{ip}:8080/"),
    );
    assert_eq!(o.stderr, format!("curl: (7) Failed to connect to {ip} port 8080 after 0 ms: Couldn't connect to server\n"));
    run(&mut w, &f, &format!("sim partition {node}"));
    let o = run(
        &mut w,
        &f,
        &format!("ssh {other} curl -sS --connect-timeout 10 http://{ip}:9376/"),
    );
    assert_eq!(
        o.stderr,
        format!(
            "curl: (28) Failed to connect to {ip} port 9376 after 10001 ms: Timeout was reached\n"
        )
    );
    // The timeout took virtual time.
    run(&mut w, &f, &format!("sim heal {node}"));
    let before = w.now();
    let o = run(
        &mut w,
        &f,
        &format!("ssh {other} curl -sS --connect-timeout 4 http://10.244.99.9/"),
    );
    assert_eq!(o.exit_code, 28, "{o:?}");
    assert!(w.now() >= before + 4 * SECOND);
}

#[test]
fn the_node_terminal_shows_containers_routes_journals_and_mounts() {
    let (mut w, f) = world(ProxyMode::Iptables);
    let placed = pods_by_node(&mut w, &f);
    let (node, pod) = placed
        .iter()
        .next()
        .map(|(a, b)| (a.clone(), b.clone()))
        .expect("a pod");
    let ps = run(&mut w, &f, &format!("ssh {node} crictl ps --name app")).stdout;
    let id = ps
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .expect("a container")
        .to_string();
    let inspect = run(&mut w, &f, &format!("ssh {node} crictl inspect {id}")).stdout;
    let v: serde_json::Value = serde_json::from_str(&inspect).expect("json");
    assert_eq!(v["status"]["state"], "CONTAINER_RUNNING");
    assert_eq!(
        v["status"]["labels"]["io.kubernetes.pod.name"],
        pod.as_str()
    );
    let logs = run(&mut w, &f, &format!("ssh {node} crictl logs {id}"));
    assert!(logs.stderr.contains("Serving on port 9376."), "{logs:?}");
    let o = run(&mut w, &f, &format!("ssh {node} crictl inspect 0000"));
    assert!(
        o.stderr
            .contains("an error occurred when try to find container \"0000\": not found"),
        "{o:?}"
    );
    let routes = run(&mut w, &f, "ssh node-2 ip route").stdout;
    assert_eq!(routes, "default via 172.18.0.1 dev eth0\n10.244.1.0/24 via 172.18.0.3 dev eth0\n10.244.2.0/24 dev cni0 proto kernel scope link src 10.244.2.1\n10.244.3.0/24 via 172.18.0.5 dev eth0\n172.18.0.0/16 dev eth0 proto kernel scope link src 172.18.0.4\n");
    let j = run(&mut w, &f, &format!("ssh {node} journalctl -u kubelet")).stdout;
    let first = j.lines().next().unwrap_or("");
    assert!(
        first.starts_with(&format!("Jan 01 00:00:00 {node} kubelet["))
            && first.contains("] \"Started kubelet\""),
        "{first}"
    );
    assert!(
        j.contains(&format!(
            "kubelet.go:2477] \"SyncLoop ADD\" source=\"api\" pods=[\"default/{pod}\"]"
        )),
        "{j}"
    );
    let j = run(
        &mut w,
        &f,
        &format!("ssh {node} journalctl -u containerd -n 2"),
    )
    .stdout;
    assert_eq!(j.lines().count(), 2);
    assert!(
        j.lines()
            .all(|l| l.contains(" containerd[") && l.contains(" level=info msg=")),
        "{j}"
    );
    let j = run(&mut w, &f, "ssh node-1 journalctl -u kube-proxy").stdout;
    assert!(j.contains("\"SyncProxyRules complete\""), "{j}");
    let uid = run(
        &mut w,
        &f,
        &format!("kubectl get pod {pod} -o jsonpath={{.metadata.uid}}"),
    )
    .stdout;
    let mounts = run(&mut w, &f, &format!("ssh {node} mount | grep {uid}")).stdout;
    assert!(
        mounts.starts_with(&format!(
            "tmpfs on /var/lib/kubelet/pods/{uid}/volumes/kubernetes.io~projected/kube-api-access-"
        )),
        "{mounts}"
    );
    let ls = run(
        &mut w,
        &f,
        &format!("ssh {node} ls /var/lib/kubelet/pods/{uid}/volumes"),
    )
    .stdout;
    assert_eq!(ls, "kubernetes.io~projected\n");
    let o = run(&mut w, &f, "ssh node-1 foo --bar");
    assert_eq!(
        (o.exit_code, o.stderr.as_str()),
        (127, "bash: foo: command not found\n")
    );
    let o = run(&mut w, &f, "ssh node-9 hostname");
    assert_eq!(o.exit_code, 255);
    let ps = run(&mut w, &f, "ssh node-1 ps aux").stdout;
    for p in [
        "/usr/local/bin/containerd",
        "/usr/bin/kubelet --bootstrap-kubeconfig",
        "/usr/local/bin/kube-proxy --config",
        "/pause",
        "/coredns -conf /etc/coredns/Corefile",
    ] {
        assert!(ps.contains(p), "{p}\n{ps}");
    }
}

#[test]
fn nginx_shows_a_master_and_its_workers_under_a_shim() {
    let mut w = World::new(ClusterConfig::default());
    let files: BTreeMap<String, String> = [("p.yaml".to_string(), "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  nodeName: node-2\n  containers:\n  - name: nginx\n    image: nginx:1.27\n".to_string())].into_iter().collect();
    cmd::run(&mut w, "kubectl apply -f p.yaml", &files, 60 * SECOND);
    w.run_for(15 * SECOND);
    let ps = cmd::run(&mut w, "ssh node-2 ps aux", &files, SECOND).stdout;
    let lines: Vec<&str> = ps.lines().collect();
    let master = lines
        .iter()
        .position(|l| l.ends_with("nginx: master process nginx -g daemon off;"))
        .expect("master");
    assert!(lines[master].starts_with("root "));
    let workers = lines[master + 1..]
        .iter()
        .take_while(|l| l.ends_with("nginx: worker process"))
        .count();
    assert_eq!(workers, 4, "one worker per CPU: {ps}");
    assert!(
        lines[..master]
            .iter()
            .rev()
            .take(2)
            .any(|l| l.contains("containerd-shim-runc-v2")),
        "{ps}"
    );
}

#[test]
fn ipvs_mode_warns_that_it_is_deprecated() {
    let (mut w, f) = world(ProxyMode::Ipvs);
    let j = run(&mut w, &f, "ssh node-1 journalctl -u kube-proxy").stdout;
    assert!(
        j.contains("server_linux.go:194] \"Using ipvs Proxier\""),
        "{j}"
    );
    let warning = j
        .lines()
        .find(|l| l.contains(" server_linux.go:196] "))
        .unwrap_or_default();
    assert!(
        warning.contains(": E0101 ")
            && warning.ends_with("\"The ipvs proxier is now deprecated and may be removed in a future release. Please use 'nftables' instead.\""),
        "{j}"
    );
    let events = run(
        &mut w,
        &f,
        "kubectl get events --field-selector reason=IPVSDeprecation",
    )
    .stdout;
    assert!(
        events.contains("Warning   IPVSDeprecation   node/node-1"),
        "{events}"
    );
    // iptables mode says nothing of the kind.
    let (mut w, f) = world(ProxyMode::Iptables);
    let j = run(&mut w, &f, "ssh node-1 journalctl -u kube-proxy").stdout;
    assert!(!j.contains("deprecated"), "{j}");
}
