//! LoadBalancer Services on a kind cluster, through the terminal: `<pending>` without a
//! cloud provider; with cloud-provider-kind on the host an envoy container's address on
//! the kind network, the service controller's events and finalizer, `curl` from the host
//! walked envoy → NodePort → kube-proxy → pod in both externalTrafficPolicy modes, the
//! rules of the three proxy modes, and the address released on delete or type change.

mod common;
use common::Term as T;

/// cloud-provider-kind's `examples/loadbalancer_etp_*.yaml`: agnhost netexec (its
/// `/clientip` answers the address the pod sees) behind a LoadBalancer on port 80.
fn app(name: &str, policy: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
      - name: agnhost
        image: registry.k8s.io/e2e-test-images/agnhost:2.66.1
        args: [netexec, --http-port=8080, --udp-port=8080]
        ports:
        - containerPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: {name}
spec:
  type: LoadBalancer
  externalTrafficPolicy: {policy}
  selector:
    app: {name}
  ports:
  - protocol: TCP
    port: 80
    targetPort: 8080
"
    )
}

/// A cluster running `app(name, policy, replicas)`, with cloud-provider-kind started
/// first when `provider`.
fn cluster(provider: bool, name: &str, policy: &str, replicas: u32) -> T {
    let mut t = T::new();
    if provider {
        t.run("cloud-provider-kind");
    }
    t.file("app.yaml", &app(name, policy, replicas));
    t.ok("kubectl apply -f app.yaml");
    t.settle(30);
    t
}

fn external_ip(t: &mut T, name: &str) -> String {
    t.ok(&format!(
        "kubectl get svc {name} -o jsonpath={{.status.loadBalancer.ingress[0].ip}}"
    ))
}

/// The envoy hop of the last walk.
fn envoy_hop(t: &T) -> kubeloop_sim::proxy::traffic::Hop {
    let p = t.w.observe().net().paths.back().cloned().expect("a walk");
    assert_eq!(p.from, "host (172.18.0.1)");
    p.hops[0].clone()
}

#[test]
fn a_load_balancer_stays_pending_on_a_plain_kind_cluster() {
    let mut t = cluster(false, "lb-service-local", "Local", 1);
    let svc = t.ok("kubectl get svc lb-service-local");
    assert!(
        svc.contains("lb-service-local   LoadBalancer   10.96.")
            && svc.contains("<pending>     80:"),
        "{svc}"
    );
    let d = t.ok("kubectl describe svc lb-service-local");
    assert!(!d.contains("LoadBalancer Ingress:"), "{d}");
    assert!(d.contains("External Traffic Policy:  Local\n"), "{d}");
    assert!(d.contains("HealthCheck NodePort:     3"), "{d}");
    assert!(d.ends_with("Events:                   <none>\n"), "{d}");
    let y = t.ok("kubectl get svc lb-service-local -o yaml");
    assert!(!y.contains("finalizers"), "{y}");
    let o = t.run("curl -s http://172.18.0.6/");
    assert_eq!(o.exit_code, 7);
}

#[test]
fn cloud_provider_kind_gives_the_next_kind_address_with_its_events_and_finalizer() {
    let mut t = T::new();
    let o = t.run("cloud-provider-kind");
    assert_eq!(o.exit_code, 0);
    assert!(
        o.stderr.starts_with(
            "I0101 00:00:00.000000   48213 app.go:108] FLAG: --enable-default-ingress=\"true\"\n"
        ),
        "{}",
        o.stderr
    );
    assert!(o
        .stderr
        .ends_with("controller.go:102] \"Starting cloud controller\" cluster=\"kind\"\n"));
    t.file("app.yaml", &app("web", "Cluster", 1));
    t.ok("kubectl apply -f app.yaml");
    t.settle(1);
    // envoy is still starting: the Service is marked, not yet given an address.
    assert!(t.ok("kubectl get svc web").contains("<pending>"));
    t.settle(5);
    let svc = t.ok("kubectl get svc web");
    assert!(
        svc.contains("LoadBalancer   10.96.") && svc.contains("   172.18.0.6    80:3"),
        "{svc}"
    );
    let y = t.ok("kubectl get svc web -o yaml");
    assert!(
        y.contains("  finalizers:\n  - service.kubernetes.io/load-balancer-cleanup\n"),
        "{y}"
    );
    assert!(y.ends_with("status:\n  loadBalancer:\n    ingress:\n    - ip: 172.18.0.6\n      ipMode: Proxy\n      ports:\n      - port: 80\n        protocol: TCP\n"), "{y}");
    let d = t.ok("kubectl describe svc web");
    assert!(d.contains("LoadBalancer Ingress:     172.18.0.6\n"), "{d}");
    assert!(d.ends_with("  Normal  EnsuringLoadBalancer  6s    service-controller  Ensuring load balancer\n  Normal  EnsuredLoadBalancer   4s    service-controller  Ensured load balancer\n"), "{d}");
    // A second Service gets the next free address.
    t.file("two.yaml", &app("two", "Cluster", 1));
    t.ok("kubectl apply -f two.yaml");
    t.settle(5);
    assert_eq!(external_ip(&mut t, "two"), "172.18.0.7");
    // A Service naming another class is left to that class's controller.
    t.file(
        "other.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: other\nspec:\n  type: LoadBalancer\n  loadBalancerClass: example.com/lb\n  ports:\n  - port: 80\n",
    );
    t.ok("kubectl apply -f other.yaml");
    t.settle(5);
    assert!(t.ok("kubectl get svc other").contains("<pending>"));
    assert!(t
        .ok("kubectl describe svc other")
        .ends_with("Events:                   <none>\n"));
}

#[test]
fn local_policy_reaches_only_the_node_with_the_pod_which_sees_envoys_address() {
    let mut t = cluster(true, "lb-service-local", "Local", 1);
    let ip = external_ip(&mut t, "lb-service-local");
    assert_eq!(ip, "172.18.0.6");
    let pod_node =
        t.ok("kubectl get pods -l app=lb-service-local -o jsonpath={.items[0].spec.nodeName}");
    let pod =
        t.ok("kubectl get pods -l app=lb-service-local -o jsonpath={.items[0].metadata.name}");
    for _ in 0..6 {
        let client = t.ok("curl -s http://172.18.0.6:80/clientip");
        // envoy's tcp_proxy opens its own connection and nothing masquerades it.
        assert!(client.starts_with("172.18.0.6:"), "{client}");
        let hop = envoy_hop(&t);
        assert_eq!(hop.table, "envoy");
        assert_eq!(hop.chain, "listener_IPv4_80_TCP");
        assert!(hop.rule.ends_with(&format!("({pod_node})")), "{hop:?}");
        assert!(
            hop.note
                .starts_with("RANDOM among 1 of 3 healthy nodes (health check :3"),
            "{hop:?}"
        );
    }
    assert_eq!(t.ok("curl -s http://172.18.0.6/hostname"), pod);
    // The node's rules take the NodePort to its local endpoint (KUBE-EXT → KUBE-SVL).
    let p = t.w.observe().net().paths.back().cloned().unwrap();
    assert!(
        p.hops
            .iter()
            .any(|h| h.node == pod_node && h.chain.starts_with("KUBE-SVL-")),
        "{p:#?}"
    );
    // No pod left: no node passes the health check; envoy closes the connection.
    t.ok("kubectl scale deploy lb-service-local --replicas=0");
    t.settle(40);
    let o = t.run("curl -sS http://172.18.0.6/");
    assert_eq!(
        (o.exit_code, o.stderr.as_str()),
        (52, "curl: (52) Empty reply from server\n")
    );
    assert!(envoy_hop(&t)
        .note
        .contains("no healthy host (0 of 3 pass the health check"));
}

#[test]
fn cluster_policy_spreads_over_every_node_and_the_pod_sees_a_masqueraded_node_address() {
    let mut t = cluster(true, "lb-service-cluster", "Cluster", 1);
    let mut nodes = std::collections::BTreeSet::new();
    for _ in 0..12 {
        let client = t.ok("curl -s http://172.18.0.6/clientip");
        assert!(!client.starts_with("172.18.0.6:"), "masqueraded: {client}");
        let hop = envoy_hop(&t);
        assert!(
            hop.note
                .starts_with("RANDOM among 3 of 3 healthy nodes (health check :10256/healthz)"),
            "{hop:?}"
        );
        nodes.insert(hop.rule.rsplit('(').next().unwrap().to_string());
    }
    assert!(nodes.len() > 1, "envoy picks at random: {nodes:?}");
    // A node labelled out of load balancers leaves envoy's cluster.
    t.ok("kubectl label node node-1 node.kubernetes.io/exclude-from-external-load-balancers=true");
    t.settle(2);
    t.ok("curl -s http://172.18.0.6/clientip");
    assert!(envoy_hop(&t).note.contains(" of 2 healthy nodes"));
    let ev = t.ok("kubectl get events --field-selector involvedObject.name=lb-service-cluster");
    let updated = ev
        .lines()
        .find(|l| l.contains("UpdatedLoadBalancer"))
        .unwrap_or_default();
    assert_eq!(
        updated.split_whitespace().collect::<Vec<_>>(),
        [
            "2s",
            "Normal",
            "UpdatedLoadBalancer",
            "service/lb-service-cluster",
            "Updated",
            "load",
            "balancer",
            "with",
            "new",
            "hosts"
        ],
        "{ev}"
    );
}

#[test]
fn the_rules_serve_the_nodeport_not_the_proxy_mode_address_in_all_three_modes() {
    // ipMode Proxy: kube-proxy leaves the load-balancer IP alone (envoy is in front).
    let mut t = cluster(true, "web", "Local", 1);
    let rules = t.ok("ssh node-1 iptables-save -t nat");
    assert!(!rules.contains("172.18.0.6"), "{rules}");
    assert!(
        rules.contains(
            "-A KUBE-NODEPORTS -p tcp -m comment --comment \"default/web\" -m tcp --dport 3"
        ),
        "{rules}"
    );
    assert!(rules.contains("comment \"pod traffic for default/web external destinations\""));
    let filter = t.ok("ssh node-1 iptables-save -t filter");
    assert!(
        filter.contains(
            "-m comment --comment \"default/web health check node port\" -m tcp --dport 3"
        ),
        "{filter}"
    );
    // A provider that reports ipMode VIP gets the address programmed (KUBE-EXT, as upstream).
    t.ok(VIP_PATCH);
    t.settle(2);
    let vip = t.ok("ssh node-1 iptables-save -t nat");
    assert!(vip.contains("-A KUBE-SERVICES -d 172.18.0.6/32 -p tcp -m comment --comment \"default/web loadbalancer IP\" -m tcp --dport 80 -j KUBE-EXT-"), "{vip}");

    for (mode, cmd) in [("nftables", "nft list ruleset"), ("ipvs", "ipvsadm -Ln")] {
        let sc = kubeloop_sim::scenario::parse_scenario(&format!(
            "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata: {{name: m}}\nspec:\n  proxyMode: {mode}\n  addons: [cloud-provider-kind]\n  files:\n    app.yaml: |\n{}\n  steps:\n  - at: 0s\n    run: kubectl apply -f app.yaml\n  - at: 30s\n    run: ssh node-1 {cmd}\n  - at: 30s\n    run: \"kubectl get svc web -o jsonpath={{.status.loadBalancer.ingress[0].ip}}\"\n  - at: 30s\n    run: curl -s http://172.18.0.6/hostname\n",
            app("web", "Cluster", 1).lines().map(|l| format!("      {l}")).collect::<Vec<_>>().join("\n")
        ))
        .expect("valid");
        let (w, r) = kubeloop_sim::runner::run(&sc, None);
        assert_eq!(r[2].stdout, "172.18.0.6", "{mode}");
        assert!(
            !r[1].stdout.contains("172.18.0.6"),
            "{mode}: {}",
            r[1].stdout
        );
        assert!(r[3].stdout.starts_with("web-"), "{mode}: {:?}", r[3]);
        if mode == "ipvs" {
            assert!(r[1].stdout.contains("TCP  172.18.0.3:3"), "{}", r[1].stdout);
        } else {
            assert!(r[1].stdout.contains(" : goto external-"), "{}", r[1].stdout);
        }
        // The same Service with a VIP-mode status: the address is programmed.
        let mut t = T {
            w,
            files: Default::default(),
        };
        t.ok(VIP_PATCH);
        t.settle(2);
        let rules = t.ok(&format!("ssh node-1 {cmd}"));
        if mode == "ipvs" {
            assert!(rules.contains("TCP  172.18.0.6:80 rr"), "{rules}");
        } else {
            assert!(
                rules.contains("172.18.0.6 . tcp . 80 : goto external-"),
                "{rules}"
            );
        }
    }
}

/// What a provider reporting `ipMode: VIP` would write.
const VIP_PATCH: &str = "kubectl patch svc web --subresource=status --type=merge -p '{\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"172.18.0.6\",\"ipMode\":\"VIP\"}]}}}'";

#[test]
fn delete_and_type_change_release_the_address() {
    let mut t = cluster(true, "web", "Cluster", 1);
    t.file("two.yaml", &app("two", "Local", 1));
    t.ok("kubectl apply -f two.yaml");
    t.settle(5);
    assert_eq!(external_ip(&mut t, "two"), "172.18.0.7");
    // Back to ClusterIP: the finalizer and the status go, the container too.
    t.ok("kubectl patch svc two -p '{\"spec\":{\"type\":\"ClusterIP\"}}'");
    t.settle(2);
    let svc = t.ok("kubectl get svc two");
    let row: Vec<&str> = svc
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        (row[1], row[3], row[4]),
        ("ClusterIP", "<none>", "80/TCP"),
        "{svc}"
    );
    let y = t.ok("kubectl get svc two -o yaml");
    assert!(
        !y.contains("finalizers")
            && !y.contains("172.18.0.7")
            && !y.contains("healthCheckNodePort"),
        "{y}"
    );
    let d = t.ok("kubectl describe svc two");
    assert!(d.ends_with("  Normal  DeletingLoadBalancer  2s    service-controller  Deleting load balancer\n  Normal  DeletedLoadBalancer   2s    service-controller  Deleted load balancer\n"), "{d}");
    assert_eq!(t.run("curl -s http://172.18.0.7/").exit_code, 7);
    // Deleting waits on the finalizer until the load balancer is gone.
    assert_eq!(
        t.ok("kubectl delete svc web"),
        "service \"web\" deleted from default namespace\n"
    );
    t.settle(2);
    assert!(t.err("kubectl get svc web").contains("NotFound"));
    assert_eq!(t.run("curl -s http://172.18.0.6/").exit_code, 7);
    let ev = t.ok("kubectl get events --field-selector involvedObject.name=web");
    assert!(
        ev.contains("Deleting load balancer") && ev.contains("Deleted load balancer"),
        "{ev}"
    );
    // The freed address is the next one handed out.
    t.file("three.yaml", &app("three", "Cluster", 1));
    t.ok("kubectl apply -f three.yaml");
    t.settle(5);
    assert_eq!(external_ip(&mut t, "three"), "172.18.0.6");
}

#[test]
fn stopping_cloud_provider_kind_removes_its_containers_and_keeps_the_status() {
    let mut t = cluster(true, "web", "Cluster", 1);
    assert_eq!(
        t.ok("sim stop cloud-provider-kind"),
        "cloud-provider-kind stopped\n"
    );
    assert_eq!(t.run("curl -s http://172.18.0.6/").exit_code, 7);
    assert_eq!(external_ip(&mut t, "web"), "172.18.0.6");
    // Started again, it makes the container anew at the same address.
    assert_eq!(
        t.ok("sim start cloud-provider-kind"),
        "cloud-provider-kind started\n"
    );
    t.settle(5);
    assert!(t
        .ok("curl -s http://172.18.0.6/hostname")
        .starts_with("web-"));
    assert_eq!(t.run("cloud-provider-kind").exit_code, 1);
}

#[test]
fn the_ingress_nginx_controller_service_gets_an_address_with_both_addons() {
    let sc = kubeloop_sim::scenario::parse_scenario(
        "apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata: {name: both}
spec:
  addons: [ingress-nginx, cloud-provider-kind]
  steps:
  - {at: 30s, run: kubectl get svc -n ingress-nginx}
  - {at: 30s, run: curl -s http://172.18.0.6/}
",
    )
    .expect("valid");
    let (_, r) = kubeloop_sim::runner::run(&sc, None);
    let row: Vec<&str> = r[0]
        .stdout
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        (row[0], row[1], row[3]),
        ("ingress-nginx-controller", "LoadBalancer", "172.18.0.6"),
        "{}",
        r[0].stdout
    );
    assert!(r[1].stdout.contains("<center>nginx</center>"), "{:?}", r[1]);
}

#[test]
fn the_gallery_scenario_reads_as_documented_and_is_deterministic() {
    let text = include_str!("../../../public/scenarios/loadbalancer-kind.yaml");
    let sc = kubeloop_sim::scenario::parse_scenario(text).expect("valid");
    let (w1, r) = kubeloop_sim::runner::run(&sc, None);
    let out = |line: &str| {
        r.iter()
            .find(|s| s.command == line)
            .unwrap_or_else(|| panic!("{line}"))
            .stdout
            .clone()
    };
    assert!(out("kubectl get svc lb-service-local").contains("<pending>"));
    assert!(out("kubectl get svc").contains("   172.18.0.6    80:"));
    assert!(out("curl -s http://172.18.0.6/clientip").starts_with("172.18.0.6:"));
    assert!(out("curl -s http://172.18.0.6/hostname").starts_with("policy-local-"));
    assert!(out("curl -s http://172.18.0.7/clientip").starts_with("10.244."));
    assert!(out("kubectl describe svc lb-service-local").contains("EnsuredLoadBalancer"));
    let (w2, again) = kubeloop_sim::runner::run(&sc, None);
    let texts = |r: &[kubeloop_sim::runner::StepResult]| {
        r.iter()
            .map(|s| format!("{}{}", s.stdout, s.stderr))
            .collect::<Vec<_>>()
    };
    assert_eq!(texts(&r), texts(&again));
    assert_eq!(w1.log_hash(), w2.log_hash());
}

#[test]
fn a_status_patch_lost_to_a_stopped_apiserver_is_retried() {
    let mut t = T::new();
    t.run("cloud-provider-kind");
    t.file("app.yaml", &app("web", "Cluster", 1));
    t.ok("kubectl apply -f app.yaml");
    t.settle(1);
    // envoy becomes ready while kube-apiserver is down: the status write fails.
    t.ok("sim stop kube-apiserver");
    t.settle(10);
    t.ok("sim start kube-apiserver");
    t.settle(60);
    assert_eq!(external_ip(&mut t, "web"), "172.18.0.6");
    let y = t.ok("kubectl get svc web -o yaml");
    assert!(
        y.contains("- service.kubernetes.io/load-balancer-cleanup\n"),
        "{y}"
    );
    assert!(t
        .ok("curl -s http://172.18.0.6/hostname")
        .starts_with("web-"));
}
