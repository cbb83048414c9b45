//! The kubelet through the terminal: probes, restarts, termination, config errors,
//! volumes, sidecars, logs, exec and top — compared with upstream's wording.

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::process::Output;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

struct T {
    w: World,
    files: BTreeMap<String, String>,
}

impl T {
    fn new(manifest: &str) -> T {
        let mut t = T {
            w: World::new(ClusterConfig::default()),
            files: [("m.yaml".to_string(), manifest.to_string())]
                .into_iter()
                .collect(),
        };
        let o = t.run("kubectl apply -f m.yaml");
        assert_eq!(o.exit_code, 0, "{o:?}");
        t
    }

    fn run(&mut self, line: &str) -> Output {
        cmd::run(&mut self.w, line, &self.files, 300 * SECOND)
    }

    fn wait(&mut self, secs: u64) {
        self.w.run_for(secs * SECOND);
    }

    fn pod_ip(&mut self, pod: &str) -> String {
        self.run(&format!(
            "kubectl get pod {pod} -o jsonpath={{.status.podIP}}"
        ))
        .stdout
    }

    fn node_of(&mut self, pod: &str) -> String {
        self.run(&format!(
            "kubectl get pod {pod} -o jsonpath={{.spec.nodeName}}"
        ))
        .stdout
    }

    fn events(&mut self, pod: &str) -> String {
        self.run(&format!(
            "kubectl get events --field-selector involvedObject.name={pod}"
        ))
        .stdout
    }
}

const PROBES: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: nginx
    image: nginx:1.27
    readinessProbe:
      httpGet: {path: /, port: 81}
      periodSeconds: 5
    livenessProbe:
      httpGet: {path: /healthz, port: 80}
      periodSeconds: 5
      failureThreshold: 2
";

#[test]
fn probes_report_upstream_messages_and_liveness_restarts_the_container() {
    let mut t = T::new(PROBES);
    t.wait(30);
    let ip = t.pod_ip("web");
    let ev = t.events("web");
    assert!(ev.contains(&format!("Warning   Unhealthy   pod/web   Readiness probe failed: Get \"http://{ip}:81/\": dial tcp {ip}:81: connect: connection refused")), "{ev}");
    assert!(ev.contains("Warning   Unhealthy   pod/web   Liveness probe failed: HTTP probe failed with statuscode: 404"), "{ev}");
    assert!(ev.contains("Normal    Killing     pod/web   Container nginx failed liveness probe, will be restarted"), "{ev}");
    assert!(
        ev.contains("Normal    Created     pod/web   Container created"),
        "{ev}"
    );
    assert!(
        ev.contains("Normal    Started     pod/web   Container started"),
        "{ev}"
    );
    let pods = t.run("kubectl get pod web").stdout;
    let row: Vec<&str> = pods
        .lines()
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(row[1], "0/1", "never ready: {pods}");
    assert_ne!(row[3], "0", "restarted: {pods}");
    // nginx answered every probe: its access log shows kube-probe.
    let logs = t.run("kubectl logs web").stdout;
    assert!(
        logs.contains("\"GET /healthz HTTP/1.1\" 404 153 \"-\" \"kube-probe/1.35\" \"-\""),
        "{logs}"
    );
    let node = t.node_of("web");
    let j = t.run(&format!("ssh {node} journalctl -u kubelet")).stdout;
    assert!(
        j.contains("prober.go:107] \"Probe failed\" probeType=\"Readiness\" pod=\"default/web\""),
        "{j}"
    );
}

const LIFECYCLE: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: nginx
    image: nginx:1.27
    lifecycle:
      preStop:
        exec:
          command: [sh, -c, sleep 5]
---
apiVersion: v1
kind: Pod
metadata:
  name: sleeper
spec:
  terminationGracePeriodSeconds: 10
  containers:
  - name: sleeper
    image: busybox:1.37
    command: [sleep, \"3600\"]
---
apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers:
  - name: app
    image: ghcr.io/acme/shop:v3
";

#[test]
fn graceful_termination_gives_0_137_or_143_as_real_containers_do() {
    let mut t = T::new(LIFECYCLE);
    t.wait(20);
    let nodes: Vec<String> = ["web", "sleeper", "app"]
        .iter()
        .map(|p| t.node_of(p))
        .collect();
    let ids: Vec<String> = ["web", "sleeper", "app"]
        .iter()
        .map(|p| {
            let id = t
                .run(&format!(
                    "kubectl get pod {p} -o jsonpath={{.status.containerStatuses[0].containerID}}"
                ))
                .stdout;
            id.trim_start_matches("containerd://").to_string()
        })
        .collect();
    let o = t.run("kubectl delete pod web sleeper app --wait=false");
    assert_eq!(o.exit_code, 0, "{o:?}");
    t.wait(30);
    let mut exits = Vec::new();
    for (node, id) in nodes.iter().zip(&ids) {
        let j = t
            .run(&format!("ssh {node} journalctl -u containerd"))
            .stdout;
        let line = j
            .lines()
            .find(|l| l.contains("received exit event") && l.contains(id.as_str()))
            .unwrap_or_default()
            .to_string();
        let code: String = line
            .split("exit_status:")
            .nth(1)
            .unwrap_or("")
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        exits.push(code);
        if id == &ids[0] {
            // SIGQUIT (nginx's stop signal) arrived after the 5 s preStop hook.
            assert!(
                j.contains(&format!("Stop container \\\"{id}\\\" with signal quit")),
                "{j}"
            );
        }
    }
    assert_eq!(exits, ["0", "137", "143"]);
    let ev = t
        .run("kubectl get events --field-selector reason=Killing")
        .stdout;
    assert!(
        ev.contains("Normal   Killing   pod/web       Stopping container nginx"),
        "{ev}"
    );
    assert!(t
        .run("kubectl get pods")
        .stderr
        .contains("No resources found in default namespace."));
}

const BROKEN: &str = "apiVersion: v1
kind: Pod
metadata:
  name: needs-config
spec:
  containers:
  - name: app
    image: nginx:1.27
    env:
    - name: LEVEL
      valueFrom:
        configMapKeyRef: {name: app-config, key: level}
---
apiVersion: v1
kind: Pod
metadata:
  name: needs-volume
spec:
  containers:
  - name: app
    image: nginx:1.27
    volumeMounts: [{name: cfg, mountPath: /etc/app}]
  volumes:
  - name: cfg
    secret: {secretName: app-secret}
---
apiVersion: v1
kind: Pod
metadata:
  name: needs-claim
spec:
  nodeName: node-2
  containers:
  - name: app
    image: nginx:1.27
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: missing}
---
apiVersion: v1
kind: Pod
metadata:
  name: unschedulable-claim
spec:
  containers:
  - name: app
    image: nginx:1.27
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: missing}
---
apiVersion: v1
kind: Pod
metadata:
  name: fine
spec:
  containers:
  - name: app
    image: nginx:1.27
---
apiVersion: v1
kind: Pod
metadata:
  name: typo
spec:
  containers:
  - name: app
    image: ngnix
---
apiVersion: v1
kind: Pod
metadata:
  name: never
spec:
  containers:
  - name: app
    image: redis:7.4
    imagePullPolicy: Never
";

#[test]
fn pods_that_cannot_start_show_upstream_reasons_and_never_block_others() {
    let mut t = T::new(BROKEN);
    t.wait(130);
    let pods = t.run("kubectl get pods").stdout;
    let status = |name: &str| -> String {
        pods.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .and_then(|l| l.split_whitespace().nth(2))
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(status("fine"), "Running", "{pods}");
    assert_eq!(status("needs-config"), "CreateContainerConfigError");
    assert_eq!(status("needs-volume"), "ContainerCreating");
    // Bound by nodeName, the claim error comes from the kubelet's volume manager;
    // through the scheduler, VolumeBinding's PreFilter keeps the pod Pending.
    assert_eq!(status("needs-claim"), "ContainerCreating");
    assert_eq!(status("unschedulable-claim"), "Pending");
    assert!(t.events("unschedulable-claim").contains(
        "FailedScheduling   pod/unschedulable-claim   0/3 nodes are available: persistentvolumeclaim \"missing\" not found."
    ), "{}", t.events("unschedulable-claim"));
    assert!(
        ["ErrImagePull", "ImagePullBackOff"].contains(&status("typo").as_str()),
        "{pods}"
    );
    assert_eq!(status("never"), "ErrImageNeverPull");
    let msg = t.run("kubectl get pod needs-config -o jsonpath={.status.containerStatuses[0].state.waiting.message}").stdout;
    assert_eq!(msg, "configmap \"app-config\" not found");
    assert!(t.events("needs-config").contains(
        "Warning   Failed      pod/needs-config   Error: configmap \"app-config\" not found"
    ));
    let ev = t.events("needs-volume");
    assert!(ev.contains("FailedMount   pod/needs-volume   MountVolume.SetUp failed for volume \"cfg\" : secret \"app-secret\" not found"), "{ev}");
    assert!(ev.contains("FailedMount   pod/needs-volume   Unable to attach or mount volumes: unmounted volumes=[cfg], unattached volumes=[], failed to process volumes=[]: context deadline exceeded"), "{ev}");
    let ev = t.events("needs-claim");
    assert!(ev.contains("Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: context deadline exceeded"), "{ev}");
    let node = t.node_of("needs-claim");
    let j = t
        .run(&format!(
            "ssh {node} journalctl -u kubelet | grep \"Error processing volume\" | tail -n 1"
        ))
        .stdout;
    assert!(j.contains("\"Error processing volume\" err=\"error processing PVC default/missing: failed to fetch PVC from API server: persistentvolumeclaims \\\"missing\\\" not found\" pod=\"default/needs-claim\" volumeName=\"data\""), "{j}");
    let ev = t.events("typo");
    assert!(ev.contains("Failed to pull image \"ngnix\": rpc error: code = Unknown desc = failed to pull and unpack image \"docker.io/library/ngnix:latest\": failed to resolve reference \"docker.io/library/ngnix:latest\": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed"), "{ev}");
    assert!(t
        .events("never")
        .contains("Container image \"redis:7.4\" is not present with pull policy of Never"));
    // Creating the ConfigMap lets the pod start on its next retry.
    t.files.insert(
        "cm.yaml".into(),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  level: debug\n"
            .into(),
    );
    t.run("kubectl apply -f cm.yaml");
    t.wait(20);
    assert!(t
        .run("kubectl get pod needs-config")
        .stdout
        .contains("Running"));
    assert_eq!(
        t.run("kubectl exec needs-config -- printenv LEVEL").stdout,
        "debug\n"
    );
}

const EXTRAS: &str = "apiVersion: v1
kind: Pod
metadata:
  name: db
spec:
  containers:
  - name: mysql
    image: mysql:8.4
---
apiVersion: v1
kind: Pod
metadata:
  name: hog
  annotations:
    kubeloop.dev/behavior: oom-after=5s
spec:
  containers:
  - name: hog
    image: nginx:1.27
    resources:
      limits: {memory: 64Mi}
---
apiVersion: v1
kind: Pod
metadata:
  name: with-sidecar
spec:
  initContainers:
  - name: init-wait
    image: busybox:1.37
    command: [sh, -c, echo waiting; sleep 3]
  - name: log-shipper
    image: busybox:1.37
    restartPolicy: Always
    command: [sh, -c, tail -f /dev/null]
  containers:
  - name: main
    image: nginx:1.27
";

#[test]
fn mysql_without_a_password_oom_kills_and_sidecars() {
    let mut t = T::new(EXTRAS);
    t.wait(30);
    let logs = t.run("kubectl logs db --previous").stdout + &t.run("kubectl logs db").stdout;
    assert!(logs.contains("[ERROR] [Entrypoint]: Database is uninitialized and password option is not specified\n    You need to specify one of the following as an environment variable:\n    - MYSQL_ROOT_PASSWORD\n    - MYSQL_ALLOW_EMPTY_PASSWORD\n    - MYSQL_RANDOM_ROOT_PASSWORD\n"), "{logs}");
    let last = t.run("kubectl get pod db -o jsonpath={.status.containerStatuses[0].lastState.terminated.exitCode}").stdout;
    assert_eq!(last, "1");
    let oom = t.run("kubectl get pod hog -o jsonpath={.status.containerStatuses[0].lastState.terminated.reason}/{.status.containerStatuses[0].lastState.terminated.exitCode}").stdout;
    assert_eq!(oom, "OOMKilled/137");
    let pod = t.run("kubectl get pod with-sidecar").stdout;
    assert!(pod.contains("with-sidecar   2/2     Running"), "{pod}");
    let init = t
        .run("kubectl get pod with-sidecar -o jsonpath={.status.initContainerStatuses[*].name}")
        .stdout;
    assert_eq!(init, "init-wait log-shipper");
    let o = t.run("kubectl logs with-sidecar -c init-wait");
    assert_eq!(o.stdout, "waiting\n");
    let o = t.run("kubectl logs with-sidecar");
    assert_eq!(
        o.stderr,
        "Defaulted container \"main\" out of: main, init-wait (init), log-shipper (init)\n"
    );
}

const WEB: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: nginx
    image: nginx:1.27
  - name: shell
    image: busybox:1.37
    command: [sleep, infinity]
";

#[test]
fn logs_exec_and_top_talk_to_the_kubelet_through_the_apiserver() {
    let mut t = T::new(WEB);
    let o = t.run("kubectl logs web");
    assert_eq!(o.stderr, "Defaulted container \"nginx\" out of: nginx, shell\nError from server (BadRequest): container \"nginx\" in pod \"web\" is waiting to start: ContainerCreating\n");
    let o = t.run("kubectl top pod web");
    assert_eq!(o.stderr, "error: metrics not available yet\n");
    t.wait(40);
    let o = t.run("kubectl logs web -c nope");
    assert_eq!(
        o.stderr,
        "Error from server (BadRequest): container nope is not valid for pod web\n"
    );
    let o = t.run("kubectl logs web -c nginx --previous");
    assert_eq!(o.stderr, "Error from server (BadRequest): previous terminated container \"nginx\" in pod \"web\" not found\n");
    let o = t.run("kubectl logs web -c nginx --tail=1");
    assert!(
        o.stdout.starts_with("2026/01/01 00:00:0")
            && o.stdout.contains("[notice] 1#1: start worker process"),
        "{o:?}"
    );
    let o = t.run("kubectl exec web -c shell -- curl -s localhost");
    assert!(
        o.stderr
            .contains("exec: \\\"curl\\\": executable file not found in $PATH: unknown")
            || o.stderr
                .contains("exec: \"curl\": executable file not found in $PATH: unknown"),
        "{o:?}"
    );
    assert_eq!(o.exit_code, 1);
    let ip = t.pod_ip("web");
    let o = t.run(&format!(
        "kubectl exec web -c shell -- wget -qO- http://{ip}/"
    ));
    assert_eq!(o.stdout.len(), 615, "{o:?}");
    let o = t.run("kubectl exec web -c shell -- cat /etc/resolv.conf");
    assert_eq!(o.stdout, "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n");
    let o = t.run("kubectl exec web -c shell -- cat /nope");
    assert_eq!(
        o.stderr,
        "cat: can't open '/nope': No such file or directory\ncommand terminated with exit code 1\n"
    );
    assert_eq!(o.exit_code, 1);
    let o = t.run("kubectl exec web");
    assert_eq!(
        o.stderr,
        "error: you must specify at least one command for the container\n"
    );
    let o = t.run("kubectl top pods");
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines[0], "NAME   CPU(cores)   MEMORY(bytes)", "{o:?}");
    assert!(
        lines[1].starts_with("web    ") && lines[1].ends_with("Mi"),
        "{o:?}"
    );
    let o = t.run("kubectl top nodes");
    assert!(
        o.stdout
            .starts_with("NAME     CPU(cores)   CPU(%)   MEMORY(bytes)   MEMORY(%)\nnode-1   "),
        "{o:?}"
    );
    // The kubelet is down: the apiserver cannot reach port 10250.
    let node = t.node_of("web");
    t.run(&format!("ssh {node} systemctl stop kubelet"));
    let o = t.run("kubectl logs web -c nginx");
    let host = t
        .run("kubectl get pod web -o jsonpath={.status.hostIP}")
        .stdout;
    assert_eq!(o.stderr, format!("Error from server: Get \"https://{host}:10250/containerLogs/default/web/nginx\": dial tcp {host}:10250: connect: connection refused\n"));
}

#[test]
fn logs_follow_streams_new_lines_until_interrupted() {
    let mut t = T::new(WEB);
    t.wait(20);
    let ip = t.pod_ip("web");
    let pid = match cmd::start(&mut t.w, "kubectl logs -f web -c nginx", &t.files) {
        cmd::Started::Running(id) => id,
        cmd::Started::Done(o) => panic!("{o:?}"),
    };
    t.wait(2);
    t.run(&format!(
        "kubectl exec web -c shell -- wget -qO- http://{ip}/follow-me"
    ));
    t.wait(3);
    let p = t.w.terminal(pid).expect("still running");
    let seen = p.take_unread();
    assert!(
        seen.contains("\"GET /follow-me HTTP/1.1\" 404 153 \"-\" \"Wget\" \"-\""),
        "{seen}"
    );
    assert!(!p.is_finished());
}

const CSI: &str = "apiVersion: v1
kind: PersistentVolume
metadata:
  name: csi-vol
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ''
  csi: {driver: hostpath.csi.k8s.io, volumeHandle: vol-0001, fsType: ext4}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  storageClassName: ''
  accessModes: [ReadWriteOnce]
  resources:
    requests: {storage: 1Gi}
---
apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers:
  - name: app
    image: nginx:1.27
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}
";

#[test]
fn a_csi_volume_is_attached_staged_and_published_under_the_pod_directory() {
    let mut t = T::new(CSI);
    t.wait(20);
    let pvc = t.run("kubectl get pvc data").stdout;
    assert!(
        pvc.contains("data   Bound    csi-vol   5Gi        RWO"),
        "{pvc}"
    );
    let pv = t.run("kubectl get pv csi-vol").stdout;
    assert!(
        pv.contains("Retain           Bound    default/data"),
        "{pv}"
    );
    assert!(t.run("kubectl get pod app").stdout.contains("Running"));
    let node = t.node_of("app");
    let uid = t
        .run("kubectl get pod app -o jsonpath={.metadata.uid}")
        .stdout;
    let mounts = t.run(&format!("ssh {node} mount | grep csi")).stdout;
    let lines: Vec<&str> = mounts.lines().collect();
    assert_eq!(lines.len(), 2, "{mounts}");
    assert!(
        lines.iter().any(|l| l.starts_with(
            "/dev/loop0 on /var/lib/kubelet/plugins/kubernetes.io/csi/hostpath.csi.k8s.io/"
        ) && l.ends_with("/globalmount type ext4 (rw,relatime)")),
        "{mounts}"
    );
    assert!(lines.contains(&format!("/dev/loop0 on /var/lib/kubelet/pods/{uid}/volumes/kubernetes.io~csi/csi-vol/mount type ext4 (rw,relatime)").as_str()), "{mounts}");
    let j = t
        .run(&format!("ssh {node} journalctl -u kubelet | grep csi-vol"))
        .stdout;
    for step in [
        "operationExecutor.VerifyControllerAttachedVolume started for volume \\\"csi-vol\\\"",
        "MountVolume.MountDevice succeeded for volume \\\"csi-vol\\\"",
        "MountVolume.SetUp succeeded for volume \\\"csi-vol\\\"",
    ] {
        assert!(j.contains(step), "{step}\n{j}");
    }
    let inspect_mounts = t.run(&format!("ssh {node} crictl ps --name app -q")).stdout;
    let id = inspect_mounts.lines().next().unwrap_or("").to_string();
    let inspect = t.run(&format!("ssh {node} crictl inspect {id}")).stdout;
    assert!(
        inspect.contains(&format!(
            "\"hostPath\": \"/var/lib/kubelet/pods/{uid}/volumes/kubernetes.io~csi/csi-vol/mount\""
        )),
        "{inspect}"
    );
    // Node status lists the images on the machine, largest first.
    let images = t
        .run(&format!(
            "kubectl get node {node} -o jsonpath={{.status.images[0].names}}"
        ))
        .stdout;
    assert!(images.contains("docker.io/library/nginx:1.27"), "{images}");
}
