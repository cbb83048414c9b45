//! What the terminal-language tests share: the classic nginx Deployment and a terminal
//! bound to a cluster.
#![allow(dead_code)] // each test file uses its own part

pub mod crd;
pub mod gateway;

use std::collections::BTreeMap;

use kubeloop_sim::cluster::ClusterConfig;
use kubeloop_sim::cmd;
use kubeloop_sim::process::Output;
use kubeloop_sim::time::SECOND;
use kubeloop_sim::World;

/// The seed notes' nginx Deployment with three replicas.
pub const NGINX: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
spec:
  replicas: 3
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
";

/// [`NGINX`] with its container declaring port 80, for Services and traffic.
pub fn nginx_serving() -> String {
    format!("{NGINX}        ports:\n        - containerPort: 80\n")
}

/// Runs one terminal line with `nginx.yaml` holding `manifest`, waiting up to 120 s.
pub fn run_with(w: &mut World, manifest: &str, line: &str) -> Output {
    let files: BTreeMap<String, String> = [("nginx.yaml".to_string(), manifest.to_string())]
        .into_iter()
        .collect();
    cmd::run(w, line, &files, 120 * SECOND)
}

/// A terminal on a default three-node cluster, with `nginx.yaml` in its files.
pub struct Term {
    pub w: World,
    pub files: BTreeMap<String, String>,
}

impl Term {
    pub fn new() -> Term {
        let mut t = Term {
            w: World::new(ClusterConfig::default()),
            files: BTreeMap::new(),
        };
        t.file("nginx.yaml", NGINX);
        t
    }

    pub fn file(&mut self, name: &str, text: &str) {
        self.files.insert(name.to_string(), text.to_string());
    }

    pub fn run(&mut self, line: &str) -> Output {
        cmd::run(&mut self.w, line, &self.files, 300 * SECOND)
    }

    /// Runs a line that must succeed; its stdout.
    pub fn ok(&mut self, line: &str) -> String {
        let o = self.run(line);
        assert_eq!(o.exit_code, 0, "{line}: {o:?}");
        o.stdout
    }

    /// Runs a line that must fail; its stderr.
    pub fn err(&mut self, line: &str) -> String {
        let o = self.run(line);
        assert_ne!(o.exit_code, 0, "{line}: {o:?}");
        o.stderr
    }

    pub fn settle(&mut self, secs: u64) {
        self.w.run_for(secs * SECOND);
    }
}

/// The PriorityClass `high` (value 1000) and a pod of that class asking for 3 CPUs: on a
/// one-node cluster whose node already runs a 3-CPU pod, it preempts.
pub fn preemptor(name: &str) -> String {
    format!(
        "apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  priorityClassName: high
  containers:
  - name: app
    image: nginx:1.27
    resources:
      requests: {{cpu: \"3\"}}
"
    )
}

/// A 3-CPU pod that ignores SIGTERM and has 120 s to stop: a victim that stays
/// Terminating for a while.
pub fn slow_victim(name: &str) -> String {
    format!(
        "apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations:
    kubeloop.dev/behavior: ignore-sigterm
spec:
  terminationGracePeriodSeconds: 120
  containers:
  - name: app
    image: nginx:1.27
    resources:
      requests: {{cpu: \"3\"}}
"
    )
}
