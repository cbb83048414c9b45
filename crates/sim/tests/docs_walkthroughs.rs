//! The Kubernetes documentation's walkthroughs whose containers run shell commands:
//! init containers waiting for Services, a container printing its environment, and a
//! ConfigMap mounted as files — run as the docs describe them.

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
    fn new(files: &[(&str, &str)]) -> T {
        T {
            w: World::new(ClusterConfig::default()),
            files: files
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }
    fn run(&mut self, line: &str) -> Output {
        cmd::run(&mut self.w, line, &self.files, 300 * SECOND)
    }
    fn ok(&mut self, line: &str) -> String {
        let o = self.run(line);
        assert_eq!(o.exit_code, 0, "{line}: {o:?}");
        o.stdout
    }
    fn wait(&mut self, s: u64) {
        self.w.run_for(s * SECOND);
    }
}

// content/en/examples/pods/init-containers.yaml (the "Init containers in use" page).
const MYAPP: &str = "apiVersion: v1
kind: Pod
metadata:
  name: myapp-pod
  labels:
    app.kubernetes.io/name: MyApp
spec:
  containers:
  - name: myapp-container
    image: busybox:1.28
    command: ['sh', '-c', 'echo The app is running! && sleep 3600']
  initContainers:
  - name: init-myservice
    image: busybox:1.28
    command: ['sh', '-c', \"until nslookup myservice.$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace).svc.cluster.local; do echo waiting for myservice; sleep 2; done\"]
  - name: init-mydb
    image: busybox:1.28
    command: ['sh', '-c', \"until nslookup mydb.$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace).svc.cluster.local; do echo waiting for mydb; sleep 2; done\"]
";

const SERVICES: &str = "apiVersion: v1
kind: Service
metadata:
  name: myservice
spec:
  ports:
  - protocol: TCP
    port: 80
    targetPort: 9376
---
apiVersion: v1
kind: Service
metadata:
  name: mydb
spec:
  ports:
  - protocol: TCP
    port: 80
    targetPort: 9377
";

#[test]
fn init_containers_wait_for_their_services_then_the_app_runs() {
    let mut t = T::new(&[("myapp.yaml", MYAPP), ("services.yaml", SERVICES)]);
    t.ok("kubectl apply -f myapp.yaml");
    t.wait(30);
    let pods = t.ok("kubectl get pod myapp-pod");
    assert!(pods.contains("myapp-pod   0/1     Init:0/2   0"), "{pods}");
    let logs = t.ok("kubectl logs myapp-pod -c init-myservice");
    assert!(logs.contains("waiting for myservice\n"), "{logs}");
    assert!(
        logs.contains("** server can't find myservice.default.svc.cluster.local: NXDOMAIN"),
        "{logs}"
    );
    // Creating the Services lets the init containers finish, one after the other.
    t.ok("kubectl apply -f services.yaml");
    t.wait(30);
    let pods = t.ok("kubectl get pod myapp-pod");
    assert!(pods.contains("myapp-pod   1/1     Running   0"), "{pods}");
    assert_eq!(t.ok("kubectl logs myapp-pod"), "The app is running!\n");
}

const ENV: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: special-config
data:
  SPECIAL_LEVEL: very
  SPECIAL_TYPE: charm
---
apiVersion: v1
kind: Pod
metadata:
  name: dapi-test-pod
spec:
  containers:
    - name: test-container
      image: registry.k8s.io/busybox:1.27.2
      command: [ \"/bin/sh\", \"-c\", \"env\" ]
      envFrom:
      - configMapRef:
          name: special-config
  restartPolicy: Never
---
apiVersion: v1
kind: Pod
metadata:
  name: dapi-test-pod-ls
spec:
  containers:
    - name: test-container
      image: registry.k8s.io/busybox:1.27.2
      command: [ \"/bin/sh\", \"-c\", \"ls /etc/config/\" ]
      volumeMounts:
      - name: config-volume
        mountPath: /etc/config
  volumes:
    - name: config-volume
      configMap:
        name: special-config
  restartPolicy: Never
";

#[test]
fn env_prints_the_environment_and_ls_the_mounted_keys_then_the_pods_complete() {
    let mut t = T::new(&[("env.yaml", ENV)]);
    t.ok("kubectl apply -f env.yaml");
    t.wait(30);
    let env = t.ok("kubectl logs dapi-test-pod");
    assert!(env.contains("SPECIAL_LEVEL=very\n"), "{env}");
    assert!(env.contains("SPECIAL_TYPE=charm\n"), "{env}");
    assert!(env.contains("KUBERNETES_SERVICE_HOST=10.96.0.1\n"), "{env}");
    assert!(env.starts_with("PATH="), "{env}");
    assert_eq!(
        t.ok("kubectl logs dapi-test-pod-ls"),
        "SPECIAL_LEVEL\nSPECIAL_TYPE\n"
    );
    let pods = t.ok("kubectl get pods");
    assert!(
        pods.contains("dapi-test-pod      0/1     Completed   0"),
        "{pods}"
    );
}

const FAILING: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: flaky
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox:1.36
        command: [\"sh\", \"-c\", \"echo trying; if [ -f /nope ]; then exit 0; fi; echo giving up >&2; exit 3\"]
";

#[test]
fn a_scripts_exit_status_drives_the_job() {
    let mut t = T::new(&[("job.yaml", FAILING)]);
    t.ok("kubectl apply -f job.yaml");
    t.wait(120);
    let job = t.ok("kubectl get job flaky -o jsonpath={.status.failed}");
    assert_eq!(job, "2");
    let code = t.ok("kubectl get pods -l job-name=flaky -o jsonpath={.items[0].status.containerStatuses[0].state.terminated.exitCode}");
    assert_eq!(code, "3");
    let logs = t.ok("kubectl logs job/flaky");
    assert_eq!(logs, "trying\ngiving up\n");
}

// After "Configure Pod Initialization": an init container prepares the page nginx serves
// from a shared emptyDir (written by the shell here: the simulated cluster has no internet).
const INIT_PAGE: &str = "apiVersion: v1
kind: Pod
metadata:
  name: init-demo
spec:
  containers:
  - name: nginx
    image: nginx:1.14.2
    ports:
    - containerPort: 80
    volumeMounts:
    - name: workdir
      mountPath: /usr/share/nginx/html
  initContainers:
  - name: install
    image: busybox:1.28
    command: [\"sh\", \"-c\", \"echo '<h1>prepared by init</h1>' > /work-dir/index.html\"]
    volumeMounts:
    - name: workdir
      mountPath: \"/work-dir\"
  dnsPolicy: Default
  volumes:
  - name: workdir
    emptyDir: {}
";

#[test]
fn nginx_serves_what_an_init_container_wrote_and_reports_its_tags_version() {
    let mut t = T::new(&[("init.yaml", INIT_PAGE)]);
    t.ok("kubectl apply -f init.yaml");
    t.wait(40);
    let ip = t.ok("kubectl get pod init-demo -o jsonpath={.status.podIP}");
    let node = t.ok("kubectl get pod init-demo -o jsonpath={.spec.nodeName}");
    let page = t.run(&format!("ssh {node} curl -s http://{ip}/"));
    assert_eq!(page.stdout, "<h1>prepared by init</h1>\n", "{page:?}");
    let missing = t.run(&format!(
        "ssh {node} curl -s -o /dev/null -w %{{http_code}} http://{ip}/nope.html"
    ));
    assert_eq!(missing.stdout, "404");
    let logs = t.ok("kubectl logs init-demo");
    assert!(logs.contains("nginx/1.14.2"), "{logs}");
}

// "Deploying PHP Guestbook application with Redis" (application/guestbook/*.yaml).
const GUESTBOOK: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: redis-leader
  labels: {app: redis, role: leader, tier: backend}
spec:
  replicas: 1
  selector:
    matchLabels: {app: redis}
  template:
    metadata:
      labels: {app: redis, role: leader, tier: backend}
    spec:
      containers:
      - name: leader
        image: docker.io/redis:6.0.5
        ports:
        - containerPort: 6379
---
apiVersion: v1
kind: Service
metadata:
  name: redis-leader
  labels: {app: redis, role: leader, tier: backend}
spec:
  ports:
  - port: 6379
    targetPort: 6379
  selector: {app: redis, role: leader, tier: backend}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: redis-follower
  labels: {app: redis, role: follower, tier: backend}
spec:
  replicas: 2
  selector:
    matchLabels: {app: redis}
  template:
    metadata:
      labels: {app: redis, role: follower, tier: backend}
    spec:
      containers:
      - name: follower
        image: us-docker.pkg.dev/google-samples/containers/gke/gb-redis-follower:v2
        ports:
        - containerPort: 6379
---
apiVersion: v1
kind: Service
metadata:
  name: redis-follower
  labels: {app: redis, role: follower, tier: backend}
spec:
  ports:
  - port: 6379
  selector: {app: redis, role: follower, tier: backend}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: frontend
spec:
  replicas: 3
  selector:
    matchLabels: {app: guestbook, tier: frontend}
  template:
    metadata:
      labels: {app: guestbook, tier: frontend}
    spec:
      containers:
      - name: php-redis
        image: us-docker.pkg.dev/google-samples/containers/gke/gb-frontend:v5
        env:
        - name: GET_HOSTS_FROM
          value: dns
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: frontend
  labels: {app: guestbook, tier: frontend}
spec:
  ports:
  - port: 80
  selector: {app: guestbook, tier: frontend}
";

#[test]
fn the_guestbook_stores_messages_through_the_leader_and_reads_them_from_a_follower() {
    let mut t = T::new(&[("guestbook.yaml", GUESTBOOK)]);
    t.ok("kubectl apply -f guestbook.yaml");
    t.wait(90);
    let ip = t.ok("kubectl get svc frontend -o jsonpath={.spec.clusterIP}");
    let node = t.w.observe().nodes()[0].config.name.clone();
    let set = t.run(&format!(
        "ssh {node} curl -s 'http://{ip}/guestbook.php?cmd=set&key=messages&value=,hello%20world'"
    ));
    assert_eq!(set.stdout, "{\"message\": \"Updated\"}", "{set:?}");
    let get = t.run(&format!(
        "ssh {node} curl -s 'http://{ip}/guestbook.php?cmd=get&key=messages'"
    ));
    assert_eq!(get.stdout, "{\"data\": \",hello world\"}", "{get:?}");
    // The leader's log names the release its tag asks for.
    let logs = t.ok("kubectl logs -l role=leader");
    assert!(logs.contains("Redis version=6.0.5"), "{logs}");
}

#[test]
fn image_programs_report_the_version_their_tag_names() {
    let mut t = T::new(&[]);
    t.ok("kubectl run web --image=nginx:1.14.2");
    t.ok("kubectl run cache --image=redis:6.0.5");
    t.wait(30);
    let v = t.run("kubectl exec web -- nginx -v");
    assert_eq!(v.stderr, "nginx version: nginx/1.14.2\n");
    let v = t.ok("kubectl exec cache -- redis-server --version");
    assert!(v.starts_with("redis-server v=6.0.5 "), "{v}");
}
