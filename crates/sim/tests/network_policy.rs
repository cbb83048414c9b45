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
        "kubectl run busybox --rm -i --restart=Never --image=busybox {labels} -- wget --spider --timeout=1 nginx"
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

/// The concepts page's `service/networking/networkpolicy.yaml`.
const TEST_NETWORK_POLICY: &str = "apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: test-network-policy
  namespace: default
spec:
  podSelector:
    matchLabels:
      role: db
  policyTypes:
  - Ingress
  - Egress
  ingress:
  - from:
    - ipBlock:
        cidr: 172.17.0.0/16
        except:
        - 172.17.1.0/24
    - namespaceSelector:
        matchLabels:
          project: myproject
    - podSelector:
        matchLabels:
          role: frontend
    ports:
    - protocol: TCP
      port: 6379
  egress:
  - to:
    - ipBlock:
        cidr: 10.0.0.0/24
    ports:
    - protocol: TCP
      port: 5978
";

#[test]
fn get_and_describe_print_the_policy_as_kubectl_does() {
    let mut t = T::new();
    t.file("np.yaml", TEST_NETWORK_POLICY);
    t.file("nginx-policy.yaml", ACCESS_NGINX);
    assert_eq!(
        t.ok("kubectl create -f np.yaml"),
        "networkpolicy.networking.k8s.io/test-network-policy created\n"
    );
    t.ok("kubectl create -f nginx-policy.yaml");
    t.file(
        "deny.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: default-deny-ingress\nspec:\n  podSelector: {}\n",
    );
    t.ok("kubectl create -f deny.yaml");
    t.settle(5);
    assert_eq!(
        t.ok("kubectl get networkpolicy"),
        "NAME                   POD-SELECTOR   AGE\naccess-nginx           app=nginx      5s\ndefault-deny-ingress   <none>         5s\ntest-network-policy    role=db        5s\n"
    );
    assert_eq!(
        t.ok("kubectl get netpol default-deny-ingress -o jsonpath={.spec}"),
        "{\"podSelector\":{},\"policyTypes\":[\"Ingress\"]}"
    );
    let d = t.ok("kubectl describe networkpolicy test-network-policy");
    let (head, _) = d.split_once("Created on:").unwrap();
    assert_eq!(
        head,
        "Name:         test-network-policy\nNamespace:    default\n"
    );
    let spec = d.split_once("Spec:\n").unwrap().1;
    assert_eq!(
        spec,
        "  PodSelector:     role=db
  Allowing ingress traffic:
    To Port: 6379/TCP
    From:
      IPBlock:
        CIDR: 172.17.0.0/16
        Except: 172.17.1.0/24
    From:
      NamespaceSelector: project=myproject
    From:
      PodSelector: role=frontend
  Allowing egress traffic:
    To Port: 5978/TCP
    To:
      IPBlock:
        CIDR: 10.0.0.0/24
        Except: 
  Policy Types: Ingress, Egress
"
    );
    assert!(d.contains("Created on:   20"), "{d}");
    let d = t.ok("kubectl describe netpol default-deny-ingress");
    assert!(
        d.ends_with("Spec:\n  PodSelector:     <none> (Allowing the specific traffic to all pods in this namespace)\n  Allowing ingress traffic:\n    <none> (Selected pods are isolated for ingress connectivity)\n  Not affecting egress traffic\n  Policy Types: Ingress\n"),
        "{d}"
    );
}

#[test]
fn an_invalid_policy_is_refused_with_the_apiservers_field_errors() {
    let mut t = T::new();
    t.file(
        "bad.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: bad\nspec:\n  podSelector: {}\n  ingress:\n  - from:\n    - ipBlock: {cidr: 10.0.0.0/16}\n      podSelector: {}\n    ports:\n    - {port: 8080, endPort: 80}\n",
    );
    assert_eq!(
        t.err("kubectl apply -f bad.yaml"),
        "The NetworkPolicy \"bad\" is invalid: \n* spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`\n* spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer\n"
    );
}

/// A pod `name` running `image` with `labels`, kept alive; returns its IP.
fn pod(t: &mut T, name: &str, image: &str, labels: &str, ns: &str) -> String {
    t.ok(&format!(
        "kubectl run {name} -n {ns} --image={image} --labels={labels} -- sleep 3600"
    ));
    t.settle(20);
    t.ok(&format!(
        "kubectl get pod {name} -n {ns} -o jsonpath={{.status.podIP}}"
    ))
}

#[test]
fn the_concepts_example_admits_frontends_the_project_and_the_ip_block_only() {
    let mut t = T::new();
    t.ok("kubectl run db --image=redis --labels=role=db --port=6379");
    t.settle(20);
    let db = t.ok("kubectl get pod db -o jsonpath={.status.podIP}");
    t.ok("kubectl create namespace other");
    t.ok("kubectl create namespace mine");
    t.ok("kubectl label namespace mine project=myproject");
    pod(&mut t, "fe", "curlimages/curl", "role=frontend", "default");
    pod(
        &mut t,
        "stranger",
        "curlimages/curl",
        "role=other",
        "default",
    );
    pod(
        &mut t,
        "frontend-elsewhere",
        "curlimages/curl",
        "role=frontend",
        "other",
    );
    pod(&mut t, "neighbour", "curlimages/curl", "role=any", "mine");
    t.file("np.yaml", TEST_NETWORK_POLICY);
    t.ok("kubectl apply -f np.yaml");
    let curl = |t: &mut T, who: &str, ns: &str| {
        t.run(&format!(
            "kubectl exec {who} -n {ns} -- curl -sS -m 2 http://{db}:6379/"
        ))
        .stderr
    };
    let answered = "curl: (1) Received HTTP/0.9 when not allowed\n";
    assert!(curl(&mut t, "fe", "default").starts_with(answered));
    assert!(curl(&mut t, "neighbour", "mine").starts_with(answered));
    let timed_out = format!(
        "curl: (28) Failed to connect to {db} port 6379 after 2001 ms: Timeout was reached\n"
    );
    // A frontend in another namespace is not "role=frontend in default".
    assert!(curl(&mut t, "frontend-elsewhere", "other").starts_with(&timed_out));
    assert!(curl(&mut t, "stranger", "default").starts_with(&timed_out));
    let path = t.w.observe().net().paths.back().cloned().unwrap();
    assert!(
        path.outcome.starts_with(
            "dropped by NetworkPolicy default/test-network-policy (ingress to default/db"
        ),
        "{path:?}"
    );
    let hop = path.hops.last().unwrap();
    assert_eq!(
        (hop.table.as_str(), hop.chain.as_str()),
        ("netpol", "ingress")
    );
    // The page draws it as a dropped packet, the policy as the last rule.
    use kubeloop_sim::view::proxy::{classify, path_view, PathOutcome};
    assert_eq!(classify(&path), PathOutcome::Dropped);
    let steps = path_view(&path).steps;
    assert!(
        steps.iter().any(|s| s.title == "netpol ingress"),
        "{steps:?}"
    );
    // Only port 6379 is opened: the frontend's connection to port 80 is dropped too.
    let o = t.run(&format!("kubectl exec fe -- curl -sS -m 1 http://{db}:80/"));
    assert_eq!(
        o.stderr.lines().next().unwrap(),
        format!("curl: (28) Failed to connect to {db} port 80 after 1001 ms: Timeout was reached")
    );
    // The allowed connection is recorded with the policy that allowed it.
    curl(&mut t, "fe", "default");
    let path = t.w.observe().net().paths.back().cloned().unwrap();
    let hop = path.hops.last().unwrap();
    assert_eq!(hop.rule, "default/test-network-policy");
    assert!(
        hop.note
            .ends_with("allowed by NetworkPolicy default/test-network-policy"),
        "{hop:?}"
    );
    // Egress from db is limited to 10.0.0.0/24:5978, so db cannot even resolve names.
    pod(&mut t, "db-tools", "busybox", "role=db", "default");
    let o = t.run("kubectl exec db-tools -- nslookup kubernetes");
    assert_eq!(
        o.stdout,
        ";; connection timed out; no servers could be reached\n\n"
    );
}

const DENY_ALL: &str = "apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny-all
spec:
  podSelector: {}
  policyTypes:
  - Ingress
  - Egress
";

const ALLOW_DNS: &str = "apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: allow-dns
spec:
  podSelector: {}
  policyTypes:
  - Egress
  egress:
  - to:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: kube-system
      podSelector:
        matchLabels:
          k8s-app: kube-dns
    ports:
    - protocol: UDP
      port: 53
    - protocol: TCP
      port: 53
";

#[test]
fn default_deny_breaks_dns_until_a_rule_allows_it() {
    let mut t = nginx();
    pod(&mut t, "client", "busybox", "app=client", "default");
    let ok = t.run("kubectl exec client -- nslookup nginx");
    assert_eq!(ok.exit_code, 0, "{ok:?}");
    t.file("deny.yaml", DENY_ALL);
    t.ok("kubectl apply -f deny.yaml");
    let before = t.w.now();
    let o = t.run("kubectl exec client -- nslookup nginx");
    assert_eq!(
        o.stdout,
        ";; connection timed out; no servers could be reached\n\n"
    );
    assert_eq!(o.stderr, "command terminated with exit code 1\n");
    assert!(t.w.now() - before >= 10 * kubeloop_sim::time::SECOND);
    let path = t.w.observe().net().paths.back().cloned().unwrap();
    assert_eq!(path.url, "dns:nginx");
    let view = kubeloop_sim::view::proxy::path_view(&path);
    assert_eq!(view.steps[0].detail, "DNS query nginx (UDP 53)");
    assert!(
        path.outcome.starts_with(
            "dropped by NetworkPolicy default/default-deny-all (egress from default/client to "
        ),
        "{path:?}"
    );
    // Allowing DNS egress to kube-dns brings names back; nginx itself is still denied.
    t.file("dns.yaml", ALLOW_DNS);
    t.ok("kubectl apply -f dns.yaml");
    let o = t.run("kubectl exec client -- nslookup nginx");
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert!(
        o.stdout
            .contains("Name:\tnginx.default.svc.cluster.local\n"),
        "{o:?}"
    );
    let o = t.run("kubectl exec client -- wget -q -T 2 -O- http://nginx");
    assert!(o.stderr.starts_with("wget: download timed out\n"), "{o:?}");
    // Egress from the client and ingress to nginx, each by its own policy: additive.
    t.file(
        "web.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: client-to-web\nspec:\n  podSelector: {matchLabels: {app: client}}\n  policyTypes: [Egress]\n  egress:\n  - to:\n    - podSelector: {matchLabels: {app: nginx}}\n    ports:\n    - port: 80\n---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: web-from-client\nspec:\n  podSelector: {matchLabels: {app: nginx}}\n  ingress:\n  - from:\n    - podSelector: {matchLabels: {app: client}}\n",
    );
    t.ok("kubectl apply -f web.yaml");
    let o = t.run("kubectl exec client -- wget -q -T 2 -O- http://nginx");
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert!(o.stdout.contains("Welcome to nginx!"));
    let path = t.w.observe().net().paths.back().cloned().unwrap();
    let rules: Vec<(&str, &str, &str)> = path
        .hops
        .iter()
        .filter(|h| h.table == "netpol")
        .map(|h| (h.chain.as_str(), h.rule.as_str(), h.node.as_str()))
        .collect();
    // Egress is judged on the client's node, ingress on the web pod's.
    let client_node = t.ok("kubectl get pod client -o jsonpath={.spec.nodeName}");
    let web_node = t.ok("kubectl get pods -l app=nginx -o jsonpath={.items[0].spec.nodeName}");
    assert_eq!(
        rules,
        [
            ("egress", "default/client-to-web", client_node.as_str()),
            ("ingress", "default/web-from-client", web_node.as_str())
        ]
    );
    // Deleting the deny policy does not open what the others still isolate.
    t.ok("kubectl delete networkpolicy default-deny-all");
    let o = t.run("kubectl exec client -- wget -q -T 1 -O- http://kubernetes.default.svc:443");
    assert!(o.stderr.starts_with("wget: download timed out\n"), "{o:?}");
}

#[test]
fn ip_blocks_except_and_port_ranges_and_named_ports_select_as_upstream() {
    let mut t = nginx();
    let web = t.ok("kubectl get pods -l app=nginx -o jsonpath={.items[0].status.podIP}");
    let a = pod(&mut t, "a", "busybox", "app=a", "default");
    pod(&mut t, "b", "busybox", "app=b", "default");
    // Allow from the whole pod network except a's address, to a range covering 80.
    t.file(
        "p.yaml",
        &format!("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: block\nspec:\n  podSelector: {{matchLabels: {{app: nginx}}}}\n  ingress:\n  - from:\n    - ipBlock:\n        cidr: 10.244.0.0/16\n        except: [{a}/32]\n    ports:\n    - {{port: 70, endPort: 90}}\n"),
    );
    t.ok("kubectl apply -f p.yaml");
    let get = |t: &mut T, who: &str| {
        t.run(&format!(
            "kubectl exec {who} -- wget -q -T 1 -O- http://{web}"
        ))
        .exit_code
    };
    assert_eq!(get(&mut t, "b"), 0);
    assert_eq!(get(&mut t, "a"), 1);
    // A range that misses 80 denies everyone; a named port opens it again.
    t.file(
        "p.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: block\nspec:\n  podSelector: {matchLabels: {app: nginx}}\n  ingress:\n  - ports:\n    - {port: 81, endPort: 90}\n",
    );
    t.ok("kubectl apply -f p.yaml");
    assert_eq!(get(&mut t, "b"), 1);
    t.ok("kubectl patch deployment nginx --type=json -p='[{\"op\":\"add\",\"path\":\"/spec/template/spec/containers/0/ports\",\"value\":[{\"name\":\"http\",\"containerPort\":80}]}]'");
    t.settle(40);
    let web = t.ok("kubectl get pods -l app=nginx --field-selector=status.phase=Running -o jsonpath={.items[0].status.podIP}");
    t.file(
        "p.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: block\nspec:\n  podSelector: {matchLabels: {app: nginx}}\n  ingress:\n  - ports:\n    - port: http\n",
    );
    t.ok("kubectl apply -f p.yaml");
    let o = t.run(&format!("kubectl exec b -- wget -q -T 1 -O- http://{web}"));
    assert_eq!(o.exit_code, 0, "{o:?}");
}

#[test]
fn a_policy_that_selects_nothing_changes_nothing() {
    let mut t = nginx();
    pod(&mut t, "client", "busybox", "app=client", "default");
    t.file(
        "none.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: nobody\nspec:\n  podSelector: {matchLabels: {app: nothing}}\n  policyTypes: [Ingress, Egress]\n",
    );
    t.ok("kubectl apply -f none.yaml");
    let o = t.run("kubectl exec client -- wget -q -T 1 -O- http://nginx");
    assert_eq!(o.exit_code, 0, "{o:?}");
    let path = t.w.observe().net().paths.back().cloned().unwrap();
    assert!(path.hops.iter().all(|h| h.table != "netpol"), "{path:?}");
    // A policy in another namespace does not isolate default's pods either.
    t.ok("kubectl create namespace elsewhere");
    t.file("deny.yaml", DENY_ALL);
    t.ok("kubectl apply -n elsewhere -f deny.yaml");
    let o = t.run("kubectl exec client -- wget -q -T 1 -O- http://nginx");
    assert_eq!(o.exit_code, 0, "{o:?}");
}

#[test]
fn the_walkthrough_runs_as_typed_in_an_interactive_busybox_shell() {
    let mut t = nginx();
    t.file("nginx-policy.yaml", ACCESS_NGINX);
    t.ok("kubectl apply -f nginx-policy.yaml");
    let ip = t.ok("kubectl get svc nginx -o jsonpath={.spec.clusterIP}");
    let o = t.run("kubectl run busybox --rm -ti --image=busybox -- /bin/sh");
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert_eq!(
        o.stderr,
        "If you don't see a command prompt, try pressing enter.\n"
    );
    assert_eq!(t.w.shell_session().map(|s| s.prompt.as_str()), Some("/ # "));
    let o = t.run("wget --spider --timeout=1 nginx");
    assert_eq!(o.exit_code, 1, "{o:?}");
    assert_eq!(
        o.stderr,
        format!("Connecting to nginx ({ip}:80)\nwget: download timed out\ncommand terminated with exit code 1\n")
    );
    let o = t.run("exit");
    assert_eq!(
        o.stdout,
        "Session ended, resume using 'kubectl attach busybox -c busybox -i -t' command when the pod is running\npod \"busybox\" deleted from default namespace\n"
    );
    assert!(t.w.shell_session().is_none());
    // With the label the policy admits it.
    t.run("kubectl run busybox --rm -ti --labels=\"access=true\" --image=busybox -- /bin/sh");
    let o = t.run("wget --spider --timeout=1 nginx");
    assert_eq!(
        (o.exit_code, o.stdout.as_str()),
        (0, "remote file exists\n"),
        "{o:?}"
    );
    t.run("exit");
    assert_eq!(
        t.run("kubectl get pods -l run=busybox").stderr,
        "No resources found in default namespace.\n"
    );
}

#[test]
fn the_view_and_edit_roles_cover_network_policies() {
    let mut t = T::new();
    t.ok("kubectl create rolebinding jane-view --clusterrole=view --user=jane");
    t.ok("kubectl create rolebinding joe-edit --clusterrole=edit --user=joe");
    assert_eq!(
        t.ok("kubectl auth can-i list networkpolicies --as=jane"),
        "yes\n"
    );
    assert_eq!(
        t.run("kubectl auth can-i create networkpolicies --as=jane")
            .stdout,
        "no\n"
    );
    assert_eq!(t.ok("kubectl auth can-i create netpol --as=joe"), "yes\n");
}

#[test]
fn explain_knows_the_network_policy_schema() {
    let mut t = T::new();
    let e = t.ok("kubectl explain netpol.spec.ingress.from.ipBlock");
    assert!(
        e.starts_with("GROUP:      networking.k8s.io\nKIND:       NetworkPolicy\nVERSION:    v1\n\nFIELD: ipBlock <IPBlock>\n"),
        "{e}"
    );
    assert!(e.contains("  cidr\t<string> -required-\n"), "{e}");
}

#[test]
fn traffic_from_the_pods_own_node_is_always_allowed() {
    let mut t = nginx();
    let ip = t.ok("kubectl get pods -l app=nginx -o jsonpath={.items[0].status.podIP}");
    let own = t.ok("kubectl get pods -l app=nginx -o jsonpath={.items[0].spec.nodeName}");
    let other = ["node-1", "node-2", "node-3"]
        .into_iter()
        .find(|n| *n != own)
        .unwrap();
    t.file("deny.yaml", DENY_ALL);
    t.ok("kubectl apply -f deny.yaml");
    let o = t.run(&format!(
        "ssh {own} curl -s -o /dev/null -w %{{http_code}} -m 2 http://{ip}/"
    ));
    assert_eq!(o.stdout, "200", "{o:?}");
    let o = t.run(&format!("ssh {other} curl -sS -m 2 http://{ip}/"));
    assert_eq!(
        o.stderr,
        format!(
            "curl: (28) Failed to connect to {ip} port 80 after 2001 ms: Timeout was reached\n"
        )
    );
}
