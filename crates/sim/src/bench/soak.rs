//! The soak (issue 13): a small full cluster under a day of churn — Deployments scaled
//! and rolled, pods deleted, a CronJob every minute, ConfigMaps created and deleted,
//! all through the terminal's kubectl — sampled every virtual hour, so a host can see
//! whether what the engine holds levels off. The engine never reads a clock; the host
//! adds the resident set to each sample.

use std::collections::BTreeMap;

use crate::cluster::{ClusterConfig, NodeConfig};
use crate::cmd;
use crate::object::Object;
use crate::rng::Rng;
use crate::time::{Time, MINUTE, SECOND};
use crate::world::World;

/// One virtual hour.
pub const HOUR: Time = 60 * MINUTE;

/// Deployments the churn works on (`web-0`, `web-1`, …).
pub const DEPLOYMENTS: usize = 3;

/// ConfigMaps alive at once: each minute creates one and deletes the one this many
/// minutes older.
pub const CONFIGMAPS_KEPT: u64 = 5;

/// The most replicas a churned Deployment is scaled to.
pub const MAX_REPLICAS: u64 = 4;

/// How long one churn command may take in virtual time.
const COMMAND_LIMIT: Time = 30 * SECOND;

/// The workload's size.
#[derive(Clone, Copy, Debug)]
pub struct Soak {
    /// Worker nodes, each with a kubelet and kube-proxy.
    pub nodes: usize,
    /// Virtual hours of churn.
    pub hours: u64,
    /// The world's seed (and the churn's choices).
    pub seed: u64,
}

impl Default for Soak {
    /// Five nodes for a day.
    fn default() -> Self {
        Soak {
            nodes: 5,
            hours: 24,
            seed: 1,
        }
    }
}

/// What the engine held at the end of one virtual hour.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SoakSample {
    /// Hours of churn so far (0: before the churn started).
    pub hour: u64,
    /// Virtual time of the sample (ms).
    pub virtual_ms: Time,
    /// Messages the world has delivered so far.
    pub messages: u64,
    /// Churn commands run so far.
    pub commands: u64,
    /// Churn commands that exited non-zero.
    pub failed: u64,
    /// etcd's current revision.
    pub etcd_revision: u64,
    /// Live keys in etcd.
    pub etcd_keys: usize,
    /// Revisions etcd's history holds (since the last compaction).
    pub etcd_history: usize,
    /// Event objects in etcd.
    pub events: usize,
    /// Pods in etcd.
    pub pods: usize,
    /// ReplicaSets in etcd.
    pub replicasets: usize,
    /// Jobs in etcd.
    pub jobs: usize,
    /// ConfigMaps in etcd.
    pub configmaps: usize,
    /// Objects in the apiserver's watch cache.
    pub watch_cache_objects: usize,
    /// Changes the watch cache keeps for watches that resume.
    pub watch_cache_history: usize,
    /// Objects in kube-controller-manager's informers.
    pub informer_objects: usize,
    /// Containers (running or exited) in every node's container runtime.
    pub containers: usize,
    /// Pod sandboxes in every node's container runtime.
    pub sandboxes: usize,
    /// Pods the kubelets keep a pod worker for (each synced every minute).
    pub pod_workers: usize,
    /// Terminal processes still open (each churn command's ends when it returns).
    pub processes: usize,
}

/// What a run measured: one sample before the churn and one per virtual hour.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SoakReport {
    /// The samples, hour 0 first.
    pub samples: Vec<SoakSample>,
}

/// The soak's CronJob: a pod every minute that prints the date and completes.
pub const CRONJOB: &str = "apiVersion: batch/v1
kind: CronJob
metadata:
  name: tick
spec:
  schedule: \"* * * * *\"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: tick
            image: busybox:1.28
            command: [/bin/sh, -c, date]
          restartPolicy: OnFailure
";

/// A Deployment of `replicas` pods labelled `app: NAME`, one container `app` running
/// `image` (the soak runs `nginx:1.27`; the property test rolls nginx tags with it).
pub fn deployment(name: &str, replicas: u64, image: &str) -> String {
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
      - name: app
        image: {image}
"
    )
}

/// The churn's state: the world, the terminal's files and the running counts.
struct Churn {
    w: World,
    files: BTreeMap<String, String>,
    rng: Rng,
    minute: u64,
    commands: u64,
    failed: u64,
}

impl Churn {
    fn run(&mut self, line: &str) {
        let o = cmd::run(&mut self.w, line, &self.files, COMMAND_LIMIT);
        self.commands += 1;
        if o.exit_code != 0 {
            self.failed += 1;
        }
    }

    /// One minute's churn: a ConfigMap in and an older one out, then one of scale,
    /// roll out a new image, or delete a pod of a random Deployment.
    fn minute(&mut self) {
        let m = self.minute;
        self.minute += 1;
        self.run(&format!(
            "kubectl create configmap soak-{m} --from-literal=minute={m}"
        ));
        if m >= CONFIGMAPS_KEPT {
            self.run(&format!(
                "kubectl delete configmap soak-{} --wait=false",
                m - CONFIGMAPS_KEPT
            ));
        }
        let d = format!("web-{}", self.rng.intn(DEPLOYMENTS as u64));
        match self.rng.intn(3) {
            0 => {
                let n = 1 + self.rng.intn(MAX_REPLICAS);
                self.run(&format!("kubectl scale deployment {d} --replicas={n}"));
            }
            1 => {
                let tag = ["1.26", "1.27"][self.rng.intn(2) as usize];
                self.run(&format!("kubectl set image deployment/{d} app=nginx:{tag}"));
            }
            _ => {
                let pods = self.pods_of(&d);
                if !pods.is_empty() {
                    let p = &pods[self.rng.intn(pods.len() as u64) as usize];
                    self.run(&format!("kubectl delete pod {p} --wait=false"));
                }
            }
        }
    }

    /// The names of `app`'s pods that are not being deleted, as etcd holds them.
    fn pods_of(&self, app: &str) -> Vec<String> {
        let obs = self.w.observe();
        obs.etcd()
            .store
            .range_prefix("/registry/pods/default/")
            .filter_map(|kv| match &*kv.value {
                Object::Pod(p)
                    if p.metadata.deletion_timestamp.is_none()
                        && p.metadata
                            .labels
                            .as_ref()
                            .and_then(|l| l.get("app"))
                            .is_some_and(|a| a == app) =>
                {
                    p.metadata.name.clone()
                }
                _ => None,
            })
            .collect()
    }

    fn sample(&self, hour: u64) -> SoakSample {
        let obs = self.w.observe();
        let store = &obs.etcd().store;
        let count = |prefix: &str| store.range_prefix(prefix).count();
        let (watch_cache_objects, watch_cache_history) = obs
            .apiserver()
            .map_or((0, 0), |a| (a.cache().len(), a.cache().history_len()));
        let informer_objects = obs.controller_manager().map_or(0, |cm| {
            let inf = cm.informers();
            inf.kinds().map(|k| inf.of(k).len()).sum()
        });
        let runtimes = obs.nodes().iter().map(|n| &n.runtime);
        let (containers, sandboxes) = runtimes.fold((0, 0), |(c, s), r| {
            (c + r.containers.len(), s + r.sandboxes.len())
        });
        let pod_workers = obs
            .nodes()
            .iter()
            .filter_map(|n| n.kubelet.as_ref())
            .map(|k| k.workers().len())
            .sum();
        SoakSample {
            pod_workers,
            hour,
            virtual_ms: self.w.now(),
            messages: self.w.delivered(),
            commands: self.commands,
            failed: self.failed,
            etcd_revision: store.revision(),
            etcd_keys: store.len(),
            etcd_history: store.history_len(),
            events: count("/registry/events/"),
            pods: count("/registry/pods/"),
            replicasets: count("/registry/replicasets/"),
            jobs: count("/registry/jobs/"),
            configmaps: count("/registry/configmaps/"),
            watch_cache_objects,
            watch_cache_history,
            informer_objects,
            containers,
            sandboxes,
            processes: obs.processes().len(),
        }
    }
}

impl Soak {
    /// The cluster: `nodes` nodes of the scenario's default shape (4 CPU, 8Gi).
    pub fn config(&self) -> ClusterConfig {
        ClusterConfig {
            seed: self.seed,
            nodes: (1..=self.nodes.max(1))
                .map(|i| NodeConfig::standard(&format!("node-{i}")))
                .collect(),
            ..ClusterConfig::default()
        }
    }

    /// Runs the workload, calling `on_hour` with each sample as it is taken (hour 0
    /// once the workload is applied and settled, then every virtual hour).
    pub fn run(&self, on_hour: &mut dyn FnMut(&SoakSample)) -> SoakReport {
        let mut c = Churn {
            w: World::new(self.config()),
            files: BTreeMap::new(),
            rng: Rng::stream(self.seed, "bench-soak"),
            minute: 0,
            commands: 0,
            failed: 0,
        };
        c.w.run_for(30 * SECOND);
        for i in 0..DEPLOYMENTS {
            let name = format!("web-{i}");
            c.files
                .insert(format!("{name}.yaml"), deployment(&name, 2, "nginx:1.27"));
            c.run(&format!("kubectl apply -f {name}.yaml"));
        }
        c.files.insert("cronjob.yaml".into(), CRONJOB.into());
        c.run("kubectl apply -f cronjob.yaml");
        c.w.run_for(MINUTE);
        let mut report = SoakReport::default();
        let start = c.w.now();
        let sample = c.sample(0);
        on_hour(&sample);
        report.samples.push(sample);
        for hour in 1..=self.hours {
            for m in 0..60 {
                c.minute();
                let next = start + (hour - 1) * HOUR + (m + 1) * MINUTE;
                if next > c.w.now() {
                    c.w.run_until(next);
                }
            }
            let sample = c.sample(hour);
            on_hour(&sample);
            report.samples.push(sample);
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_churn_is_deterministic_from_the_seed() {
        let s = Soak {
            nodes: 3,
            hours: 0,
            seed: 7,
        };
        let a = s.run(&mut |_| {});
        let b = s.run(&mut |_| {});
        assert_eq!(a, b);
        assert_eq!(a.samples.len(), 1);
        assert!(a.samples[0].pods >= 2 * DEPLOYMENTS, "{:?}", a.samples[0]);
    }
}
