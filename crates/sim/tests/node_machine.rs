//! What a node's programs see through the machine: volume files the kubelet wrote
//! (not etcd), the kubelet API reached through kube-apiserver's proxy and the kubelet,
//! and the data plane's reachability when machines are cut off.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::process::Output;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

const POD: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: game-config
data:
  game.properties: |
    enemies=aliens
    lives=3
  ui.properties: color.good=purple
---
apiVersion: v1
kind: Pod
metadata:
  name: reader
spec:
  containers:
  - name: shell
    image: busybox:1.36
    command: [\"sleep\", \"3600\"]
    volumeMounts:
    - name: all
      mountPath: /etc/config
    - name: picked
      mountPath: /etc/picked
  volumes:
  - name: all
    configMap:
      name: game-config
  - name: picked
    configMap:
      name: game-config
      items:
      - key: ui.properties
        path: ui/settings.conf
";

fn run(w: &mut World, files: &BTreeMap<String, String>, line: &str) -> Output {
    cmd::run(w, line, files, 300 * SECOND)
}

fn started() -> (World, BTreeMap<String, String>) {
    let mut w = World::new(ClusterConfig::default());
    let files: BTreeMap<String, String> = [("m.yaml".to_string(), POD.to_string())].into();
    assert_eq!(run(&mut w, &files, "kubectl apply -f m.yaml").exit_code, 0);
    w.run_for(30 * SECOND);
    let phase = run(
        &mut w,
        &files,
        "kubectl get pod reader -o jsonpath={.status.phase}",
    );
    assert_eq!(phase.stdout, "Running");
    (w, files)
}

#[test]
fn a_config_map_volume_holds_one_file_per_key_and_items_choose_paths() {
    let (mut w, files) = started();
    let ls = run(&mut w, &files, "kubectl exec reader -- ls /etc/config");
    assert_eq!(ls.stdout, "game.properties\nui.properties\n");
    let cat = run(
        &mut w,
        &files,
        "kubectl exec reader -- cat /etc/config/game.properties",
    );
    assert_eq!(cat.stdout, "enemies=aliens\nlives=3\n");
    // With items only the listed keys appear, at their paths.
    let ls = run(&mut w, &files, "kubectl exec reader -- ls /etc/picked");
    assert_eq!(ls.stdout, "ui\n");
    let cat = run(
        &mut w,
        &files,
        "kubectl exec reader -- cat /etc/picked/ui/settings.conf",
    );
    assert_eq!(cat.stdout, "color.good=purple");
    let missing = run(
        &mut w,
        &files,
        "kubectl exec reader -- cat /etc/picked/ui.properties",
    );
    assert_eq!(missing.exit_code, 1);
    assert_eq!(
        missing.stderr,
        "cat: can't open '/etc/picked/ui.properties': No such file or directory\ncommand terminated with exit code 1\n"
    );
}

#[test]
fn volume_files_live_on_the_node_not_in_etcd() {
    let (mut w, files) = started();
    // Deleting the ConfigMap does not take the files away from a running pod.
    assert_eq!(
        run(&mut w, &files, "kubectl delete configmap game-config").exit_code,
        0
    );
    let cat = run(
        &mut w,
        &files,
        "kubectl exec reader -- cat /etc/config/ui.properties",
    );
    assert_eq!(cat.stdout, "color.good=purple");
    // On the machine they are in the pod's volume directory.
    let node = run(
        &mut w,
        &files,
        "kubectl get pod reader -o jsonpath={.spec.nodeName}",
    )
    .stdout;
    let n = w.node_index(&node).expect("node");
    let host = &w.observe().nodes()[n as usize];
    let on_disk: Vec<&String> = host
        .os
        .files
        .keys()
        .filter(|p| p.ends_with("/volumes/kubernetes.io~configmap/all/ui.properties"))
        .collect();
    assert_eq!(on_disk.len(), 1, "{:?}", host.os.files.keys());
}

#[test]
fn the_kubelet_api_goes_through_the_kubelet_and_fails_as_upstream_when_it_is_down() {
    let (mut w, files) = started();
    let node = run(
        &mut w,
        &files,
        "kubectl get pod reader -o jsonpath={.spec.nodeName}",
    )
    .stdout;
    let ok = run(&mut w, &files, "kubectl exec reader -- hostname");
    assert_eq!(ok.stdout, "reader\n");
    let stop = run(
        &mut w,
        &files,
        &format!("ssh {node} systemctl stop kubelet"),
    );
    assert_eq!(stop.exit_code, 0, "{stop:?}");
    let n = w.node_index(&node).expect("node");
    let ip = kubeloop_sim::cluster::node_ip(n as usize);
    let down = run(&mut w, &files, "kubectl exec reader -- hostname");
    assert_eq!(down.exit_code, 1);
    assert!(
        down.stderr
            .contains(&format!("dial tcp {ip}:10250: connect: connection refused")),
        "{down:?}"
    );
}

#[test]
fn a_partitioned_node_is_unreachable_from_pods_elsewhere_but_reaches_itself() {
    let (mut w, files) = started();
    let node = run(
        &mut w,
        &files,
        "kubectl get pod reader -o jsonpath={.spec.nodeName}",
    )
    .stdout;
    let ip = run(
        &mut w,
        &files,
        "kubectl get pod reader -o jsonpath={.status.podIP}",
    )
    .stdout;
    let n = w.node_index(&node).expect("node");
    let other = (0..w.observe().nodes().len() as u32)
        .find(|&i| i != n)
        .expect("a second node");
    let other_name = w.observe().nodes()[other as usize].config.name.clone();
    w.partition(n);
    // From the other machine, the pod's address times out (no answer at all).
    let far = run(
        &mut w,
        &files,
        &format!("ssh {other_name} curl -sS -m 2 http://{ip}:8080/"),
    );
    assert_eq!(far.exit_code, 28, "{far:?}");
    // From its own machine, the pod answers (refused here: busybox sleep listens on nothing).
    let near = run(
        &mut w,
        &files,
        &format!("ssh {node} curl -sS http://{ip}:8080/"),
    );
    assert_eq!(near.exit_code, 7, "{near:?}");
}

const SHARED: &str = "apiVersion: v1
kind: Pod
metadata:
  name: pair
spec:
  containers:
  - name: writer
    image: busybox:1.36
    command: [\"sleep\", \"3600\"]
    volumeMounts:
    - name: shared
      mountPath: /data
  - name: reader
    image: busybox:1.36
    command: [\"sleep\", \"3600\"]
    volumeMounts:
    - name: shared
      mountPath: /srv
  volumes:
  - name: shared
    emptyDir: {}
";

#[test]
fn exec_runs_shell_scripts_whose_files_persist_in_the_container() {
    let (mut w, files) = started();
    let o = run(&mut w, &files, "kubectl exec reader -- sh -c 'X=$(hostname); echo \"I am $X\" > /tmp/who; for f in a b; do echo $f >> /tmp/who; done'");
    assert_eq!(o.exit_code, 0, "{o:?}");
    let o = run(&mut w, &files, "kubectl exec reader -- cat /tmp/who");
    assert_eq!(o.stdout, "I am reader\na\nb\n");
    let o = run(
        &mut w,
        &files,
        "kubectl exec reader -- sh -c 'grep -c . /tmp/who && ls /tmp'",
    );
    assert_eq!(o.stdout, "3\nwho\n");
}

#[test]
fn an_empty_dir_is_shared_by_the_pods_containers() {
    let mut w = World::new(ClusterConfig::default());
    let files: BTreeMap<String, String> = [("m.yaml".to_string(), SHARED.to_string())].into();
    assert_eq!(run(&mut w, &files, "kubectl apply -f m.yaml").exit_code, 0);
    w.run_for(30 * SECOND);
    let o = run(
        &mut w,
        &files,
        "kubectl exec pair -c writer -- sh -c 'echo from-writer > /data/msg'",
    );
    assert_eq!(o.exit_code, 0, "{o:?}");
    let o = run(
        &mut w,
        &files,
        "kubectl exec pair -c reader -- cat /srv/msg",
    );
    assert_eq!(o.stdout, "from-writer\n");
    let o = run(&mut w, &files, "kubectl exec pair -c reader -- ls /srv");
    assert_eq!(o.stdout, "msg\n");
}

#[test]
fn shell_errors_are_the_shells_own() {
    let (mut w, files) = started();
    let o = run(
        &mut w,
        &files,
        "kubectl exec reader -- sh -c 'echo x > /etc/config/new'",
    );
    assert_eq!(o.exit_code, 1);
    assert_eq!(
        o.stderr,
        "sh: can't create /etc/config/new: Read-only file system\ncommand terminated with exit code 1\n"
    );
    let o = run(&mut w, &files, "kubectl exec reader -- sh -c 'frobnicate'");
    assert_eq!(o.exit_code, 127);
    assert!(o.stderr.starts_with("sh: frobnicate: not found\n"), "{o:?}");
    let o = run(
        &mut w,
        &files,
        "kubectl exec reader -- sh -c 'if true; then'",
    );
    assert_eq!(o.exit_code, 2);
    assert!(
        o.stderr
            .starts_with("sh: syntax error: unexpected end of file"),
        "{o:?}"
    );
}

#[test]
fn sleep_in_exec_takes_virtual_time() {
    let (mut w, files) = started();
    let before = w.now();
    let o = run(
        &mut w,
        &files,
        "kubectl exec reader -- sh -c 'sleep 5; echo done'",
    );
    assert_eq!(o.stdout, "done\n");
    assert!(w.now() >= before + 5 * SECOND, "{} -> {}", before, w.now());
}

#[test]
fn an_interactive_shell_keeps_its_state_between_lines_until_exit() {
    let (mut w, files) = started();
    let o = run(&mut w, &files, "kubectl exec -it reader -- sh");
    assert_eq!((o.exit_code, o.stdout.as_str()), (0, ""));
    assert_eq!(w.shell_session().map(|s| s.prompt.as_str()), Some("/ # "));
    assert_eq!(run(&mut w, &files, "cd /etc/config").exit_code, 0);
    run(&mut w, &files, "GREETING=\"hi  there\"");
    let o = run(&mut w, &files, "echo \"$GREETING\" from $(pwd); ls");
    assert_eq!(
        o.stdout,
        "hi  there from /etc/config\ngame.properties\nui.properties\n"
    );
    let o = run(&mut w, &files, "cat nope");
    assert_eq!(o.exit_code, 1);
    assert!(
        o.stderr
            .starts_with("cat: can't open 'nope': No such file or directory\n"),
        "{o:?}"
    );
    run(&mut w, &files, "exit");
    assert!(w.shell_session().is_none());
    // Back in the terminal: kubectl again.
    let o = run(
        &mut w,
        &files,
        "kubectl get pod reader -o jsonpath={.metadata.name}",
    );
    assert_eq!(o.stdout, "reader");
}

#[test]
fn kubectl_cp_puts_a_page_file_into_the_container() {
    let (mut w, mut files) = started();
    files.insert("notes.txt".into(), "it's here\nline 2\n".into());
    let o = run(&mut w, &files, "kubectl cp notes.txt reader:/tmp/");
    assert_eq!((o.exit_code, o.stderr.as_str()), (0, ""), "{o:?}");
    assert_eq!(
        run(&mut w, &files, "kubectl exec reader -- cat /tmp/notes.txt").stdout,
        "it's here\nline 2\n"
    );
    let o = run(&mut w, &files, "kubectl cp missing.txt reader:/tmp/x");
    assert_eq!(
        o.stderr,
        "error: missing.txt doesn't exist in local filesystem\n"
    );
    let o = run(
        &mut w,
        &files,
        "kubectl cp notes.txt reader:/etc/config/notes.txt",
    );
    assert_eq!(o.exit_code, 1);
    assert!(o.stderr.contains("Read-only file system"), "{o:?}");
}

#[test]
fn kubectl_cp_brings_a_containers_file_into_the_page_files() {
    let (mut w, mut files) = started();
    let o = cmd::run_in_dir(
        &mut w,
        "kubectl cp reader:/etc/config/game.properties game.properties",
        &mut files,
        30 * SECOND,
    );
    assert_eq!(o.exit_code, 0, "{o:?}");
    assert_eq!(o.stderr, "tar: Removing leading `/' from member names\n");
    assert_eq!(files["game.properties"], "enemies=aliens\nlives=3\n");
    // `.` keeps the file's own name; a missing file fails as tar does.
    cmd::run_in_dir(
        &mut w,
        "kubectl cp reader:/etc/config/ui.properties .",
        &mut files,
        30 * SECOND,
    );
    assert_eq!(files["ui.properties"], "color.good=purple");
    let o = cmd::run_in_dir(
        &mut w,
        "kubectl cp reader:/etc/nope nope.txt",
        &mut files,
        30 * SECOND,
    );
    assert_eq!(o.exit_code, 2);
    assert!(
        o.stderr
            .contains("tar: /etc/nope: Cannot stat: No such file or directory\n"),
        "{o:?}"
    );
    assert!(!files.contains_key("nope.txt"));
}

#[test]
fn a_changed_config_map_reaches_its_volume_at_the_kubelets_next_sync() {
    let (mut w, mut files) = started();
    let again = run(&mut w, &files, "kubectl apply -f m.yaml");
    assert_eq!(again.exit_code, 0, "{again:?}");
    let cat = |w: &mut World, files: &BTreeMap<String, String>, path: &str| {
        run(w, files, &format!("kubectl exec reader -- cat {path}")).stdout
    };
    files.insert(
        "m.yaml".into(),
        POD.replace("color.good=purple", "color.good=green")
            .replace("    enemies=aliens\n", ""),
    );
    let o = run(&mut w, &files, "kubectl apply -f m.yaml");
    assert_eq!(o.exit_code, 0, "{o:?}");
    // The kubelet writes the new contents on its periodic sync (syncFrequency, 1m), not
    // at once.
    assert_eq!(
        cat(&mut w, &files, "/etc/config/ui.properties"),
        "color.good=purple"
    );
    w.run_for(61 * SECOND);
    assert_eq!(
        cat(&mut w, &files, "/etc/config/ui.properties"),
        "color.good=green"
    );
    assert_eq!(
        cat(&mut w, &files, "/etc/picked/ui/settings.conf"),
        "color.good=green"
    );
    assert_eq!(
        cat(&mut w, &files, "/etc/config/game.properties"),
        "lives=3\n"
    );
    // A key the ConfigMap no longer has leaves the volume.
    files.insert(
        "cm.yaml".into(),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: game-config\ndata:\n  ui.properties: x\n"
            .into(),
    );
    assert_eq!(run(&mut w, &files, "kubectl apply -f cm.yaml").exit_code, 0);
    w.run_for(61 * SECOND);
    let ls = run(&mut w, &files, "kubectl exec reader -- ls /etc/config");
    assert_eq!(ls.stdout, "ui.properties\n");
}

const CLAIMED: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
---
apiVersion: v1
kind: Pod
metadata:
  name: writer
spec:
  containers:
  - name: shell
    image: busybox:1.36
    command: [\"sleep\", \"3600\"]
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    persistentVolumeClaim:
      claimName: data
";

#[test]
fn files_on_a_claim_outlive_the_pod_that_wrote_them() {
    let mut w = World::new(ClusterConfig::default());
    let mut files: BTreeMap<String, String> = [("p.yaml".to_string(), CLAIMED.to_string())].into();
    assert_eq!(run(&mut w, &files, "kubectl apply -f p.yaml").exit_code, 0);
    w.run_for(60 * SECOND);
    let o = run(
        &mut w,
        &files,
        "kubectl exec writer -- sh -c 'echo kept > /data/note; cat /data/note'",
    );
    assert_eq!(o.stdout, "kept\n", "{o:?}");
    assert_eq!(
        run(&mut w, &files, "kubectl delete pod writer").exit_code,
        0
    );
    w.run_for(10 * SECOND);
    files.insert(
        "p.yaml".into(),
        CLAIMED.replace("name: writer", "name: reader"),
    );
    assert_eq!(run(&mut w, &files, "kubectl apply -f p.yaml").exit_code, 0);
    w.run_for(60 * SECOND);
    let o = run(&mut w, &files, "kubectl exec reader -- cat /data/note");
    assert_eq!(o.stdout, "kept\n", "{o:?}");
}
