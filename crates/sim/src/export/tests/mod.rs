//! Tests of the kind export: the files, kind's schema, the steps, the dry run, the tar.

mod dry_run;
mod kind_schema;
mod run_script;
mod tar;

use serde_yaml::Value;

use super::*;
use crate::scenario::{parse_scenario, Scenario};

pub(super) fn gallery(name: &str) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../public/scenarios")
        .join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    parse_scenario(&text).unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

pub(super) fn file<'a>(files: &'a [(String, String)], path: &str) -> &'a str {
    files
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, c)| c.as_str())
        .unwrap_or_else(|| {
            panic!(
                "no {path} in {:?}",
                files.iter().map(|f| &f.0).collect::<Vec<_>>()
            )
        })
}

/// The scenario's `step`/`stream` lines of run.sh: (seconds, command as bash reads it).
pub(super) fn step_lines(run_sh: &str) -> Vec<(f64, String)> {
    run_sh
        .lines()
        .filter_map(|l| {
            let (skip, rest) = if let Some(r) = l.strip_prefix("step ") {
                (1, r)
            } else {
                (2, l.strip_prefix("stream ")?)
            };
            let mut parts = rest.splitn(skip + 1, ' ');
            let at: f64 = parts.next()?.parse().ok()?;
            let cmd = parts.nth(skip - 1)?.to_string();
            Some((at, cmd))
        })
        .collect()
}

use kind_schema::kind_schema_problems;

pub(super) const LABELLED: &str = r#"
apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata:
  name: zones
spec:
  proxyMode: ipvs
  addons: [ingress-nginx]
  nodes:
  - name: db-1
    capacity: {cpu: "8", memory: 32Gi}
    labels: {topology.kubernetes.io/zone: zone-a, disktype: ssd, node-role.kubernetes.io/db: ""}
    taints: [{key: dedicated, value: db, effect: NoSchedule}, {key: spot, effect: PreferNoSchedule}]
  - namePrefix: web-
    count: 2
    labels: {topology.kubernetes.io/zone: zone-b}
    unschedulable: true
  files:
    pinned.yaml: |
      apiVersion: v1
      kind: Pod
      metadata:
        name: pinned
      spec:
        nodeName: web-2
        containers:
        - name: app
          image: nginx:1.27
  steps:
  - at: 1s
    run: kubectl apply -f pinned.yaml
  - at: 2s
    run: kubectl uncordon web-1
  - at: 3s
    run: kubectl get pods --field-selector spec.nodeName=web-2 -o wide
  - at: 4s
    run: sim node add web-3 --cpu 2
  - at: 5s
    run: sim speed 2
  - at: 6s
    run: sim crash pinned app
  - at: 7s
    run: sim partition web-1
  - at: 8s
    run: kubectl get pods -w
  - at: 10s
    run: ssh web-1 crictl ps | grep app
  - at: 11s
    run: kubectl get pod pinned -o jsonpath={.spec.nodeName}
"#;

#[test]
fn nginx_example_exports_the_kind_directory() {
    let files = to_kind(&gallery("nginx-basic"));
    let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "README.md",
            "kind-config.yaml",
            "manifests/nginx-deploy.yaml",
            "run.sh"
        ]
    );
    assert_eq!(
        file(&files, "manifests/nginx-deploy.yaml"),
        gallery("nginx-basic").spec.files["nginx-deploy.yaml"]
    );
    let run = file(&files, "run.sh");
    assert!(run.starts_with("#!/usr/bin/env bash\n"));
    assert!(run.contains("\nset -euo pipefail\n"));
    let steps: Vec<String> = step_lines(run)
        .into_iter()
        .map(|(at, c)| format!("{at} {c}"))
        .collect();
    assert_eq!(
        steps,
        [
            "0 kubectl apply -f nginx-deploy.yaml",
            "0 kubectl get pods",
            "30 kubectl get pods -o wide",
            "31 kubectl expose deployment nginx --port=80",
            "35 kubectl get deployments,replicasets,services",
        ]
    );
    let readme = file(&files, "README.md");
    assert!(readme.contains("kind create cluster --config kind-config.yaml"));
    assert!(readme.contains("./run.sh"));
    assert!(readme.contains("| node-1 | nginx-basic-worker |"));
    assert!(readme.contains("## What differs from kubeloop"));
    let config: Value = serde_yaml::from_str(file(&files, "kind-config.yaml")).unwrap();
    let roles: Vec<&str> = config["nodes"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|n| n["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["control-plane", "worker", "worker", "worker"]);
}

#[test]
fn kind_config_of_every_gallery_scenario_matches_kinds_schema() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/scenarios");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".yaml")
                .map(String::from)
        })
        .collect();
    names.sort();
    assert!(names.len() > 10);
    for name in names {
        let files = to_kind(&gallery(&name));
        let problems = kind_schema_problems(file(&files, KIND_CONFIG));
        assert!(problems.is_empty(), "{name}: {problems:?}");
    }
}

#[test]
fn schema_check_catches_what_kind_refuses() {
    let bad =
        "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: master\n  taints: []\n";
    let p = kind_schema_problems(bad);
    assert!(
        p.iter()
            .any(|e| e.contains("nodes[0].taints: unknown field")),
        "{p:?}"
    );
    assert!(p.iter().any(|e| e.contains("nodes[0].role")), "{p:?}");
}

#[test]
fn labels_taints_and_capacity_reach_kind_config_or_run_sh() {
    let sc = parse_scenario(LABELLED).unwrap();
    let files = to_kind(&sc);
    let text = file(&files, KIND_CONFIG);
    assert_eq!(kind_schema_problems(text), Vec::<String>::new());
    let v: Value = serde_yaml::from_str(text).unwrap();
    assert_eq!(v["name"].as_str(), Some("zones"));
    assert_eq!(v["networking"]["kubeProxyMode"].as_str(), Some("ipvs"));
    let nodes = v["nodes"].as_sequence().unwrap();
    assert_eq!(nodes.len(), 4, "a control plane and three workers");
    // ingress-nginx as kind's ingress guide sets it up.
    assert_eq!(nodes[0]["labels"]["ingress-ready"].as_str(), Some("true"));
    assert_eq!(
        nodes[0]["extraPortMappings"][0]["hostPort"].as_i64(),
        Some(80)
    );
    let db = &nodes[1];
    assert_eq!(
        db["labels"]["topology.kubernetes.io/zone"].as_str(),
        Some("zone-a")
    );
    assert_eq!(db["labels"]["disktype"].as_str(), Some("ssd"));
    assert!(
        db["labels"]["node-role.kubernetes.io/db"].is_null(),
        "the kubelet refuses it"
    );
    let patch: Value =
        serde_yaml::from_str(db["kubeadmConfigPatches"][0].as_str().unwrap()).unwrap();
    assert_eq!(patch["kind"].as_str(), Some("JoinConfiguration"));
    let taints = patch["nodeRegistration"]["taints"].as_sequence().unwrap();
    assert_eq!(taints.len(), 2);
    assert_eq!(taints[0]["key"].as_str(), Some("dedicated"));
    assert_eq!(taints[0]["value"].as_str(), Some("db"));
    assert_eq!(taints[0]["effect"].as_str(), Some("NoSchedule"));
    assert!(taints[1]["value"].is_null());
    assert!(text.contains("- role: worker   # db-1 -> zones-worker\n"));
    assert!(text
        .contains("cpu: 8, ephemeral-storage: 100Gi, memory: 32Gi, pods: 110 (kind cannot set it"));
    assert!(text.contains("- role: worker   # web-2 -> zones-worker3\n"));
    let run = file(&files, RUN_SH);
    assert!(
        run.contains("kubectl label node zones-worker node-role.kubernetes.io/db=\n"),
        "{run}"
    );
    assert!(run.contains("kubectl cordon zones-worker2\nkubectl cordon zones-worker3\n"));
    assert!(run.contains(
        "kubectl apply -f https://kind.sigs.k8s.io/examples/ingress/deploy-ingress-nginx.yaml\n"
    ));
}

#[test]
fn steps_become_kind_commands_or_kubeloop_only_comments() {
    let files = to_kind(&parse_scenario(LABELLED).unwrap());
    let run = file(&files, RUN_SH);
    for line in [
        "step 1 kubectl apply -f pinned.yaml",
        "step 2 kubectl uncordon zones-worker2",
        "step 3 kubectl get pods --field-selector spec.nodeName=zones-worker3 -o wide",
        "# kubeloop only: [4s] kind cannot add a node to a running cluster",
        "# kubeloop only: [5s] a real cluster runs at the wall clock's speed: sim speed 2",
        "step 6 crash_container default pinned app",
        "step 7 partition zones-worker2",
        "stream 8 10 kubectl get pods -w",
        "step 10 docker exec zones-worker2 sh -c 'crictl ps | grep app'",
        "step 11 kubectl get pod pinned -o 'jsonpath={.spec.nodeName}'",
    ] {
        assert!(run.contains(line), "run.sh lacks {line:?}:\n{run}");
    }
    let pinned = file(&files, "manifests/pinned.yaml");
    assert!(pinned
        .starts_with("# kubeloop export: node names are kind's here (web-2 -> zones-worker3).\n"));
    assert!(pinned.contains("nodeName: zones-worker3\n"));
    let readme = file(&files, README);
    assert!(
        readme.contains("- `sim node add web-3 --cpu 2`\n- `sim speed 2`\n"),
        "{readme}"
    );
}

#[test]
fn sim_failures_become_docker_and_static_pod_moves() {
    let run = file(&to_kind(&gallery("node-failure")), RUN_SH).to_string();
    assert!(
        run.contains("\nstep 21 docker stop node-failure-worker3\n"),
        "{run}"
    );
    assert!(run.contains(
        "\nstep 30 docker exec node-failure-worker curl -sS --connect-timeout 2 http://10.96.100.100\n"
    ));
    let run = file(&to_kind(&gallery("scheduler-down")), RUN_SH).to_string();
    assert!(run.contains("\nstep 20 stop_component kube-scheduler\n"));
    assert!(run.contains("\nstep 40 start_component kube-scheduler\n"));
    assert!(run.contains(r#"mv "/etc/kubernetes/manifests/$1.yaml" "/etc/kubernetes/$1.yaml""#));
    let sc = parse_scenario(
        "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nspec:\n  steps:\n  - {at: 1s, run: sim poweroff node-2}\n  - {at: 1m, run: sim poweron node-2}\n  - {at: 61s, run: sim advance 1m30s}\n  - {at: 62s, run: sim poweroff node-9}\n",
    )
    .unwrap();
    let run = file(&to_kind(&sc), RUN_SH).to_string();
    assert!(run.contains("\nstep 1 docker stop kubeloop-worker2\n"));
    assert!(run.contains("\nstep 60 docker start kubeloop-worker2\n"));
    assert!(run.contains("\nstep 61 sleep 90\n"));
    assert!(run.contains("\n# kubeloop only: [62s] no kind equivalent: sim poweroff node-9\n"));
}

#[test]
fn node_names_are_translated_as_whole_words_only() {
    let sc = parse_scenario(
        "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nspec:\n  nodes:\n  - {namePrefix: node-, count: 10}\n",
    )
    .unwrap();
    let n = NodeNames::of(&sc);
    assert_eq!(
        n.translate("node-1 node-10 node/node-1,node-2 node-1.example node-1x spec.nodeName=node-3"),
        "kubeloop-worker kubeloop-worker10 node/kubeloop-worker,kubeloop-worker2 node-1.example node-1x spec.nodeName=kubeloop-worker3"
    );
}

#[test]
fn run_sh_is_valid_bash() {
    for sc in [
        gallery("nginx-basic"),
        gallery("node-failure"),
        parse_scenario(LABELLED).unwrap(),
    ] {
        let files = to_kind(&sc);
        let path = std::env::temp_dir().join(format!(
            "kubeloop-export-{}-{}.sh",
            sc.metadata.name,
            std::process::id()
        ));
        std::fs::write(&path, file(&files, RUN_SH)).unwrap();
        let out = std::process::Command::new("bash")
            .arg("-n")
            .arg(&path)
            .output();
        let _ = std::fs::remove_file(&path);
        let out = out.expect("bash runs");
        assert!(
            out.status.success(),
            "{}: {}",
            sc.metadata.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn odd_steps_become_comments_and_never_break_the_script() {
    let sc = parse_scenario(
        "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata:\n  name: Not_A_DNS_Name\nspec:\n  files:\n    ../escape.yaml: 'a: 1'\n  steps:\n  - run: \"kubectl get pods 'unclosed\"\n  - run: ssh node-1\n  - run: k get nodes\n  - run: echo $HOME\n  - run: sim stop cloud-provider-kind\n  - run: 'kubectl annotate pod x \"note=it''s $(rm -rf /)\"'\n",
    )
    .unwrap();
    let files = to_kind(&sc);
    assert!(
        files.iter().any(|(p, _)| p == "manifests/_/escape.yaml"),
        "no path leaves manifests/"
    );
    let run = file(&files, RUN_SH);
    assert!(
        run.contains("CLUSTER=kubeloop\n"),
        "a name kind refuses falls back to kubeloop"
    );
    for line in [
        "# kubeloop only: [0s] unexpected EOF while looking for matching `''",
        "# kubeloop only: [0s] an interactive shell: use `docker exec -it kubeloop-worker bash`: ssh node-1",
        "step 0 kubectl get nodes",
        "# kubeloop only: [0s] not a command kubeloop exports: echo $HOME",
        "# kubeloop only: [0s] cloud-provider-kind runs on the host",
        r"step 0 kubectl annotate pod x 'note=it'\''s $(rm -rf /)'",
    ] {
        assert!(run.contains(line), "run.sh lacks {line:?}:\n{run}");
    }
    let path = std::env::temp_dir().join(format!("kubeloop-export-odd-{}.sh", std::process::id()));
    std::fs::write(&path, run).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .output()
        .expect("bash runs");
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn readme_warns_that_many_kind_nodes_need_a_large_machine() {
    let readme = to_kind(&gallery("hundred-nodes"))[0].1.clone();
    assert!(
        readme.contains("kind runs every node as a container: 101 nodes need a large machine"),
        "{readme}"
    );
    let readme = to_kind(&gallery("nginx-basic"))[0].1.clone();
    assert!(!readme.contains("large machine"));
}
