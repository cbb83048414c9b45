//! kube-proxy in nftables mode, through the terminal language: `spec.proxyMode: nftables`,
//! `ssh NODE nft list …`, curl through the nftables chains, and the gallery pair that shows
//! the same Service in iptables and nftables modes.

use kubeloop_sim::runner::{self, StepResult};
use kubeloop_sim::scenario::parse_scenario;

fn run_text(text: &str) -> Vec<StepResult> {
    let sc = parse_scenario(text).unwrap_or_else(|e| panic!("valid: {e:?}"));
    runner::run(&sc, None).1
}

fn run_file(name: &str) -> Vec<StepResult> {
    let path = format!(
        "{}/../../public/scenarios/{name}.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("scenario file");
    let sc = parse_scenario(&text).unwrap_or_else(|e| panic!("{name} is valid: {e:?}"));
    for key in ["kubeloop.dev/description", "kubeloop.dev/description-zh"] {
        let d = sc
            .metadata
            .annotations
            .get(key)
            .cloned()
            .unwrap_or_default();
        assert!(d.len() > 40, "{name} has {key}");
    }
    runner::run(&sc, None).1
}

fn step<'a>(r: &'a [StepResult], at: u64, prefix: &str) -> &'a StepResult {
    r.iter()
        .find(|s| s.at_ms == at * 1000 && s.command.starts_with(prefix))
        .unwrap_or_else(|| panic!("no step `{prefix}` at {at}s"))
}

#[test]
fn nftables_example_lists_the_kube_proxy_table_and_curl_reaches_nginx() {
    let r = run_file("service-nftables-mode");
    let j = step(&r, 21, "ssh node-1 journalctl");
    assert!(j.stdout.contains("\"Using nftables Proxier\""), "{j:?}");
    let t = &step(&r, 22, "ssh node-1 nft list table ip kube-proxy").stdout;
    assert!(
        t.starts_with(
            "table ip kube-proxy {\n\tcomment \"rules for kube-proxy\"\n\n\tset cluster-ips {\n"
        ),
        "{t}"
    );
    for want in [
        "\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n",
        "\t\telements = { tcp . 30080 : goto external-SUSTUHLJ-default/web/tcp/http }\n",
        "\tchain filter-prerouting-pre-dnat {\n\t\ttype filter hook prerouting priority dstnat - 10; policy accept;\n\t\tct state new jump firewall-check\n\t}\n",
        "\tchain nat-postrouting {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n\t\tjump masquerading\n\t}\n",
        "\t\tnumgen random mod 2 vmap { 0 : goto endpoint-",
        "\t\tip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports\n",
        "\t\tmasquerade fully-random\n",
    ] {
        assert!(t.contains(want), "missing {want:?} in\n{t}");
    }
    assert_eq!(step(&r, 23, "kubectl exec client -- curl").stdout, "200\n");
    assert_eq!(step(&r, 24, "ssh node-2 curl").stdout, "200\n");
    // Only kubelet's canary is left in iptables' nat table.
    let nat = &step(&r, 25, "ssh node-1 iptables-save -t nat").stdout;
    assert!(nat.contains(":KUBE-KUBELET-CANARY - [0:0]\n"), "{nat}");
    assert!(
        !nat.contains("KUBE-SVC-") && !nat.contains("KUBE-SERVICES"),
        "{nat}"
    );
}

#[test]
fn iptables_example_shows_the_same_service_as_kube_svc_chains() {
    let r = run_file("service-iptables-mode");
    let nat = &step(&r, 22, "ssh node-1 iptables-save -t nat").stdout;
    assert!(
        nat.contains("-m comment --comment \"default/web:http cluster IP\""),
        "{nat}"
    );
    assert!(nat.contains("--probability 0.50000000000"), "{nat}");
    assert_eq!(step(&r, 23, "kubectl exec client -- curl").stdout, "200\n");
    assert_eq!(step(&r, 24, "ssh node-2 curl").stdout, "200\n");
}

const NO_ENDPOINTS: &str = r#"apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata:
  name: nft-no-endpoints
spec:
  proxyMode: nftables
  files:
    svc.yaml: |
      apiVersion: v1
      kind: Service
      metadata:
        name: empty
      spec:
        clusterIP: 10.96.50.50
        selector:
          app: nothing
        ports:
        - port: 80
    pod.yaml: |
      apiVersion: v1
      kind: Pod
      metadata:
        name: client
      spec:
        containers:
        - name: curl
          image: curlimages/curl:8.16.0
          command: ["sleep", "infinity"]
  steps:
  - at: 0s
    run: kubectl apply -f svc.yaml
  - at: 0s
    run: kubectl apply -f pod.yaml
  - at: 20s
    run: kubectl exec client -- curl -sS http://10.96.50.50
  - at: 21s
    run: ssh node-1 nft list ruleset
  - at: 22s
    run: ssh node-1 nft list table ip nat
  - at: 23s
    run: ssh node-1 nft list tables
"#;

#[test]
fn a_service_without_endpoints_is_rejected_through_reject_chain() {
    let r = run_text(NO_ENDPOINTS);
    let curl = step(&r, 20, "kubectl exec client -- curl");
    assert!(
        curl.stderr.contains("Connection refused") || curl.stderr.contains("Couldn't connect"),
        "{curl:?}"
    );
    assert_ne!(curl.exit_code, 0);
    let ruleset = &step(&r, 21, "ssh node-1 nft list ruleset").stdout;
    assert!(ruleset.contains("\t\telements = { 10.96.50.50 . tcp . 80 comment \"default/empty\" : goto reject-chain }\n"), "{ruleset}");
    assert!(
        ruleset.contains("}\ntable ip6 kube-proxy {\n\tcomment \"rules for kube-proxy\"\n"),
        "{ruleset}"
    );
    assert!(
        !ruleset.contains("chain service-") || !ruleset.contains("default/empty/tcp"),
        "{ruleset}"
    );
    let nat = step(&r, 22, "ssh node-1 nft list table ip nat");
    assert_eq!(nat.exit_code, 1);
    assert_eq!(
        nat.stderr,
        "Error: No such file or directory\nlist table ip nat\n              ^^^\n"
    );
    assert_eq!(
        step(&r, 23, "ssh node-1 nft list tables").stdout,
        "table ip kube-proxy\ntable ip6 kube-proxy\n"
    );
}

#[test]
fn proxy_mode_nftables_is_accepted_and_unknown_modes_list_it() {
    let bad = NO_ENDPOINTS.replace("proxyMode: nftables", "proxyMode: userspace");
    let err = parse_scenario(&bad).expect_err("invalid mode");
    let text = format!("{err:?}");
    assert!(
        text.contains(r#"supported values: \"iptables\", \"ipvs\", \"nftables\""#),
        "{text}"
    );
}
