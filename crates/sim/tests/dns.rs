//! Cluster DNS as CoreDNS answers it, through the terminal: Service and headless A
//! records, StatefulSet pod hostnames, pod A records, SRV records for named ports,
//! ExternalName CNAMEs, NXDOMAIN, and the resolv.conf each dnsPolicy gives a pod.

mod common;
use common::Term as T;

const HEADLESS: &str = "apiVersion: v1
kind: Service
metadata:
  name: nginx
  labels:
    app: nginx
spec:
  ports:
  - port: 80
    name: web
  clusterIP: None
  selector:
    app: nginx
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: nginx
  replicas: 2
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
          name: web
";

const HEAD: &str = "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n";

fn cluster() -> T {
    let mut t = T::new();
    t.file("web.yaml", HEADLESS);
    t.ok("kubectl apply -f web.yaml");
    t.ok("kubectl run client --image=busybox -- sleep 3600");
    t.settle(60);
    t
}

fn ip_of(t: &mut T, pod: &str) -> String {
    t.ok(&format!(
        "kubectl get pod {pod} -o jsonpath={{.status.podIP}}"
    ))
}

fn nslookup(t: &mut T, args: &str) -> kubeloop_sim::process::Output {
    t.run(&format!("kubectl exec client -- nslookup {args}"))
}

#[test]
fn a_headless_service_answers_one_a_record_per_ready_endpoint() {
    let mut t = cluster();
    // Records come in address order.
    let mut pods = [
        (ip_of(&mut t, "web-0"), "web-0"),
        (ip_of(&mut t, "web-1"), "web-1"),
    ];
    pods.sort_by_key(|(ip, _)| ip.parse::<std::net::Ipv4Addr>().unwrap());
    assert_eq!(
        nslookup(&mut t, "nginx").stdout,
        format!(
            "{HEAD}Name:\tnginx.default.svc.cluster.local\nAddress: {}\nName:\tnginx.default.svc.cluster.local\nAddress: {}\n\n",
            pods[0].0, pods[1].0
        )
    );
    // Each StatefulSet pod has its own name under the Service's subdomain.
    let web0 = ip_of(&mut t, "web-0");
    assert_eq!(
        nslookup(&mut t, "web-0.nginx").stdout,
        format!("{HEAD}Name:\tweb-0.nginx.default.svc.cluster.local\nAddress: {web0}\n\n")
    );
    // SRV for the named port: one per endpoint, the weight split between them.
    let srv = |host: &str| {
        format!("_web._tcp.nginx.default.svc.cluster.local\tservice = 0 50 80 {host}.nginx.default.svc.cluster.local\n")
    };
    let o = nslookup(
        &mut t,
        "-type=srv _web._tcp.nginx.default.svc.cluster.local",
    );
    assert_eq!(
        o.stdout,
        format!("{HEAD}{}{}\n", srv(pods[0].1), srv(pods[1].1))
    );
    // Scaled to one, the headless name answers the one left.
    t.ok("kubectl scale statefulset web --replicas=1");
    t.settle(40);
    assert_eq!(
        nslookup(&mut t, "nginx").stdout,
        format!("{HEAD}Name:\tnginx.default.svc.cluster.local\nAddress: {web0}\n\n")
    );
    let o = nslookup(&mut t, "web-1.nginx");
    assert_eq!(o.exit_code, 1);
    assert_eq!(
        o.stdout,
        format!("{HEAD}** server can't find web-1.nginx: NXDOMAIN\n\n")
    );
}

#[test]
fn services_pods_srv_and_external_names_resolve_as_coredns_answers() {
    let mut t = cluster();
    t.file(
        "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: api\n  namespace: shop\nspec:\n  selector: {app: api}\n  ports:\n  - {name: http, port: 8080, targetPort: 80}\n  - {name: metrics, port: 9090, protocol: UDP}\n",
    );
    t.ok("kubectl create namespace shop");
    t.ok("kubectl apply -f svc.yaml");
    t.ok("kubectl create service externalname my-db --external-name=db.example.com");
    t.settle(3);
    let api = t.ok("kubectl get svc api -n shop -o jsonpath={.spec.clusterIP}");
    // Another namespace's Service by <svc>.<ns>, through the search path.
    assert_eq!(
        nslookup(&mut t, "api.shop").stdout,
        format!("{HEAD}Name:\tapi.shop.svc.cluster.local\nAddress: {api}\n\n")
    );
    assert_eq!(
        nslookup(&mut t, "-type=srv _http._tcp.api.shop.svc.cluster.local").stdout,
        format!("{HEAD}_http._tcp.api.shop.svc.cluster.local\tservice = 0 100 8080 api.shop.svc.cluster.local\n\n")
    );
    // The metrics port is UDP: no _metrics._tcp record.
    let o = nslookup(&mut t, "-type=srv _metrics._tcp.api.shop.svc.cluster.local");
    assert_eq!(o.exit_code, 1, "{o:?}");
    assert!(
        nslookup(&mut t, "-type=srv _metrics._udp.api.shop.svc.cluster.local")
            .stdout
            .contains("service = 0 100 9090 api.shop.svc.cluster.local")
    );
    assert_eq!(
        nslookup(&mut t, "my-db").stdout,
        format!("{HEAD}my-db.default.svc.cluster.local\tcanonical name = db.example.com\n\n")
    );
    // A pod's dashed-address name.
    let ip = ip_of(&mut t, "web-0");
    let dashed = ip.replace('.', "-");
    assert_eq!(
        nslookup(&mut t, &format!("{dashed}.default.pod")).stdout,
        format!("{HEAD}Name:\t{dashed}.default.pod.cluster.local\nAddress: {ip}\n\n")
    );
    // Nothing else exists: NXDOMAIN, and curl cannot resolve it.
    let o = nslookup(&mut t, "nope");
    assert_eq!(
        (o.exit_code, o.stdout),
        (1, format!("{HEAD}** server can't find nope: NXDOMAIN\n\n"))
    );
    let o = t.run("kubectl exec client -- wget -q -O- http://my-db/");
    assert_eq!(
        o.stderr,
        "wget: bad address 'my-db'\ncommand terminated with exit code 1\n"
    );
}

#[test]
fn resolv_conf_follows_the_dns_policy() {
    let mut t = cluster();
    assert_eq!(
        t.ok("kubectl exec client -- cat /etc/resolv.conf"),
        "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
    );
    // The docs' dns-example pod: dnsPolicy None with its own dnsConfig.
    t.file(
        "dns-example.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  namespace: default\n  name: dns-example\nspec:\n  containers:\n    - name: test\n      image: busybox\n      command: [sleep, \"3600\"]\n  dnsPolicy: \"None\"\n  dnsConfig:\n    nameservers:\n      - 192.0.2.1 # this is an example\n    searches:\n      - ns1.svc.cluster-domain.example\n      - my.dns.search.suffix\n    options:\n      - name: ndots\n        value: \"2\"\n      - name: edns0\n",
    );
    t.ok("kubectl apply -f dns-example.yaml");
    t.settle(20);
    assert_eq!(
        t.ok("kubectl exec dns-example -- cat /etc/resolv.conf"),
        "search ns1.svc.cluster-domain.example my.dns.search.suffix\nnameserver 192.0.2.1\noptions ndots:2 edns0\n"
    );
    // 192.0.2.1 is outside the cluster and nothing answers there.
    let o = t.run("kubectl exec dns-example -- nslookup nginx");
    assert_eq!(
        o.stdout,
        ";; connection timed out; no servers could be reached\n\n"
    );
    // dnsPolicy Default: the node's resolver, which knows no cluster names.
    t.file(
        "host.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: hostdns\nspec:\n  dnsPolicy: Default\n  containers:\n  - name: c\n    image: busybox\n    command: [sleep, \"3600\"]\n",
    );
    t.ok("kubectl apply -f host.yaml");
    t.settle(20);
    assert_eq!(
        t.ok("kubectl exec hostdns -- cat /etc/resolv.conf"),
        "nameserver 172.18.0.1\noptions edns0 trust-ad ndots:0\n"
    );
    let o = t.run("kubectl exec hostdns -- nslookup kubernetes.default");
    assert_eq!(o.stdout, "Server:\t\t172.18.0.1\nAddress:\t172.18.0.1:53\n\n** server can't find kubernetes.default: NXDOMAIN\n\n");
}

/// The docs' dnsutils pod (Debugging DNS Resolution).
const DNSUTILS: &str = "apiVersion: v1
kind: Pod
metadata:
  name: dnsutils
  namespace: default
spec:
  containers:
  - name: dnsutils
    image: registry.k8s.io/e2e-test-images/jessie-dnsutils:1.3
    command:
      - sleep
      - \"infinity\"
    imagePullPolicy: IfNotPresent
  restartPolicy: Always
";

#[test]
fn the_dnsutils_image_has_dig_and_binds_nslookup() {
    let mut t = cluster();
    t.file("dnsutils.yaml", DNSUTILS);
    t.ok("kubectl apply -f dnsutils.yaml");
    t.settle(40);
    assert_eq!(
        t.ok("kubectl exec -i -t dnsutils -- nslookup kubernetes.default"),
        "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10#53\n\nName:\tkubernetes.default.svc.cluster.local\nAddress: 10.96.0.1\n\n"
    );
    assert_eq!(
        t.ok("kubectl exec dnsutils -- dig +short kubernetes.default.svc.cluster.local"),
        "10.96.0.1\n"
    );
    let web0 = ip_of(&mut t, "web-0");
    let d = t.ok("kubectl exec dnsutils -- dig web-0.nginx.default.svc.cluster.local");
    assert!(d.starts_with("\n; <<>> DiG 9.9.5-9+deb8u19-Debian <<>> web-0.nginx.default.svc.cluster.local\n;; global options: +cmd\n;; Got answer:\n;; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: "), "{d}");
    assert!(
        d.contains(";; flags: qr aa rd; QUERY: 1, ANSWER: 1, AUTHORITY: 0, ADDITIONAL: 1\n"),
        "{d}"
    );
    assert!(d.contains(&format!(";; QUESTION SECTION:\n;web-0.nginx.default.svc.cluster.local. IN A\n\n;; ANSWER SECTION:\nweb-0.nginx.default.svc.cluster.local. 30 IN A\t{web0}\n\n;; Query time: 0 msec\n;; SERVER: 10.96.0.10#53(10.96.0.10)\n;; WHEN: ")), "{d}");
    // dig does not use the search path unless told to.
    let d = t.ok("kubectl exec dnsutils -- dig kubernetes");
    assert!(d.contains("status: NXDOMAIN"), "{d}");
    assert_eq!(
        t.ok("kubectl exec dnsutils -- dig +short +search kubernetes"),
        "10.96.0.1\n"
    );
    assert_eq!(
        t.ok(
            "kubectl exec dnsutils -- dig +short -t srv _web._tcp.nginx.default.svc.cluster.local"
        )
        .lines()
        .count(),
        2
    );
    let d = t.ok("kubectl exec dnsutils -- dig nope.default.svc.cluster.local");
    assert!(d.contains(";; AUTHORITY SECTION:\ncluster.local.\t\t30\tIN\tSOA\tns.dns.cluster.local. hostmaster.cluster.local. 1767225600 7200 1800 86400 30\n"), "{d}");
}
