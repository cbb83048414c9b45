//! The envelope benchmark (issue 13): a full cluster — every node with its kubelet,
//! container runtime and kube-proxy, the controllers and kube-scheduler, as a scenario
//! with `spec.nodes` builds it — given Deployments totalling `pods` pods, run until every
//! one of them is Running and Ready. The engine builds and drives the workload; the
//! caller times it (the engine never reads a clock).

use serde_json::json;

use crate::api::{ApiRequest, Body, Verb};
use crate::cluster::{ClusterConfig, NodeConfig};
use crate::object::{Kind, Object};
use crate::rng::{fnv1a, Rng};
use crate::time::{Time, MINUTE, SECOND};
use crate::world::World;

/// The workload's size.
#[derive(Clone, Copy, Debug)]
pub struct Envelope {
    /// Worker nodes, each with a kubelet and kube-proxy.
    pub nodes: usize,
    /// Pods, in Deployments of 100 to 1,000 replicas.
    pub pods: usize,
    /// The world's seed (Deployment sizes and every random stream of the cluster).
    pub seed: u64,
}

impl Default for Envelope {
    /// The SIG-scalability envelope: 5,000 nodes, 150,000 pods.
    fn default() -> Self {
        Envelope {
            nodes: 5000,
            pods: 150_000,
            seed: 1,
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct EnvelopeReport {
    /// Seconds of the harness's clock to build the cluster and let it settle.
    pub setup_seconds: f64,
    /// Seconds of the harness's clock from the first Deployment create to all Ready.
    pub seconds: f64,
    /// Virtual time from the first Deployment create to all Ready (ms).
    pub virtual_ms: Time,
    /// Messages delivered in that phase.
    pub messages: u64,
    /// The workload's pods Running and Ready at the end.
    pub ready: usize,
    /// Deployments created.
    pub deployments: usize,
    /// Namespaces they were spread over.
    pub namespaces: usize,
    /// A hash of every (namespace/pod, node) placement: equal ⇒ identical decisions.
    pub placements: u64,
    /// etcd writes (revisions) in that phase: Pods, Events, and everything else.
    pub writes: Writes,
}

/// etcd revisions written in the measured phase, by what they stored. Until the
/// apiserver's first compaction (5 minutes) etcd's history keeps every one of them, and
/// each holds a whole object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Writes {
    /// Pod revisions (create, binding, status updates, deletes).
    pub pods: u64,
    /// Event revisions (creates and the EventCorrelator's count patches).
    pub events: u64,
    /// Every other kind's.
    pub other: u64,
}

/// How long the run may take in virtual time before it gives up.
const VIRTUAL_LIMIT: Time = 120 * MINUTE;

/// The workload's namespaces are `envelope-0`, `envelope-1`, …
const NAMESPACE_PREFIX: &str = "envelope-";

impl Envelope {
    /// Deployment sizes (100..=1,000 replicas each, the last one what is left) drawn from
    /// the seed, and how many namespaces they are spread over (one per 1,000 pods).
    pub fn deployments(&self) -> (Vec<usize>, usize) {
        let mut rng = Rng::stream(self.seed, "bench-envelope");
        let mut sizes = Vec::new();
        let mut left = self.pods;
        while left > 0 {
            let n = (100 + rng.intn(901) as usize).min(left);
            sizes.push(n);
            left -= n;
        }
        (sizes, self.pods.div_ceil(1000).max(1))
    }

    /// The cluster: `nodes` nodes of the scenario's default shape, with room for the
    /// workload's pods (`pods` capacity: 110, or more when the workload needs it).
    pub fn config(&self) -> ClusterConfig {
        let per_node = self.pods.div_ceil(self.nodes.max(1));
        // Room for the DaemonSets' pods and an uneven spread.
        let max_pods = 110.max(per_node + per_node / 4 + 10);
        let nodes = (1..=self.nodes)
            .map(|i| {
                let mut n = NodeConfig::standard(&format!("node-{i}"));
                for (k, v) in [("cpu", "64"), ("memory", "256Gi")] {
                    n.capacity.insert(k.into(), v.into());
                    n.allocatable.insert(k.into(), v.into());
                }
                n.capacity.insert("pods".into(), max_pods.to_string());
                n.allocatable.insert("pods".into(), max_pods.to_string());
                n
            })
            .collect();
        ClusterConfig {
            seed: self.seed,
            nodes,
            scheduling_annotations: false,
            // The cluster's own pods (CoreDNS, kube-proxy and kindnet on every node) come
            // on top of the workload's.
            max_pods: crate::envelope::MAX_PODS.max(self.pods + 3 * self.nodes + 100),
            ..ClusterConfig::default()
        }
    }

    /// Runs the workload; `clock` returns seconds (monotonic) from the harness, read at
    /// the start, after setup, and at the end.
    pub fn run(&self, clock: &mut dyn FnMut() -> f64) -> EnvelopeReport {
        let t0 = clock();
        let mut w = World::new(self.config());
        // Every node registers, its DaemonSet pods start.
        w.run_for(30 * SECOND);
        let (sizes, namespaces) = self.deployments();
        for k in 0..namespaces {
            let body = json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": format!("{NAMESPACE_PREFIX}{k}")},
            });
            w.inject_api(
                ApiRequest::new(Verb::Create, Kind::Namespace, "", "").with_body(Body::Raw(body)),
            );
        }
        w.run_for(SECOND);
        let t1 = clock();
        let (v0, m0) = (w.now(), w.delivered());
        let r0 = w.observe().etcd().store.revision();
        for (i, &replicas) in sizes.iter().enumerate() {
            let ns = format!("{NAMESPACE_PREFIX}{}", i % namespaces);
            let name = format!("app-{i}");
            let body = json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name, "labels": {"app": name}},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": {"app": name}},
                    "template": {
                        "metadata": {"labels": {"app": name}},
                        "spec": {"containers": [{
                            "name": "app",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                        }]},
                    },
                },
            });
            w.inject_api(
                ApiRequest::new(Verb::Create, Kind::Deployment, &ns, "").with_body(Body::Raw(body)),
            );
        }
        let mut ready = 0;
        // Look every 100 ms of virtual time (a scan of etcd's pods, outside any actor).
        while w.now() - v0 < VIRTUAL_LIMIT {
            w.run_for(100);
            ready = count_ready(&w);
            if ready >= self.pods {
                break;
            }
        }
        let t2 = clock();
        let mut placements = 0xcbf2_9ce4_8422_2325u64;
        for kv in w.observe().etcd().store.range_prefix("/registry/pods/") {
            if let Object::Pod(p) = &*kv.value {
                let ns = p.metadata.namespace.as_deref().unwrap_or_default();
                if !ns.starts_with(NAMESPACE_PREFIX) {
                    continue;
                }
                let node = p.spec.as_ref().and_then(|s| s.node_name.as_deref());
                let name = p.metadata.name.as_deref().unwrap_or_default();
                placements = (placements
                    ^ fnv1a(format!("{ns}/{name}={}", node.unwrap_or_default()).as_bytes()))
                .wrapping_mul(0x0000_0100_0000_01B3);
            }
        }
        let mut writes = Writes::default();
        let store = &w.observe().etcd().store;
        if store.compact_revision() <= r0 {
            for (rev, key) in store.history_keys() {
                if rev <= r0 {
                    continue;
                }
                if key.starts_with("/registry/pods/") {
                    writes.pods += 1;
                } else if key.starts_with("/registry/events/") {
                    writes.events += 1;
                } else {
                    writes.other += 1;
                }
            }
        }
        EnvelopeReport {
            writes,
            setup_seconds: t1 - t0,
            seconds: t2 - t1,
            virtual_ms: w.now() - v0,
            messages: w.delivered() - m0,
            ready,
            deployments: sizes.len(),
            namespaces,
            placements,
        }
    }
}

/// The workload's pods that are Running with condition Ready=True, as etcd holds them.
fn count_ready(w: &World) -> usize {
    w.observe()
        .etcd()
        .store
        .range_prefix("/registry/pods/")
        .filter(|kv| match &*kv.value {
            Object::Pod(p) => {
                p.metadata
                    .namespace
                    .as_deref()
                    .is_some_and(|ns| ns.starts_with(NAMESPACE_PREFIX))
                    && p.status.as_ref().is_some_and(|s| {
                        s.phase.as_deref() == Some("Running")
                            && s.conditions.as_ref().is_some_and(|c| {
                                c.iter().any(|c| c.type_ == "Ready" && c.status == "True")
                            })
                    })
            }
            _ => false,
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_sizes_are_100_to_1000_and_add_up() {
        let e = Envelope {
            nodes: 10,
            pods: 30_000,
            seed: 1,
        };
        let (sizes, namespaces) = e.deployments();
        assert_eq!(sizes.iter().sum::<usize>(), 30_000);
        assert!(sizes[..sizes.len() - 1]
            .iter()
            .all(|&n| (100..=1000).contains(&n)));
        assert_eq!(namespaces, 30);
        assert_eq!(e.deployments().0, sizes, "deterministic from the seed");
    }

    #[test]
    fn a_small_envelope_run_gets_every_pod_ready_deterministically() {
        let e = Envelope {
            nodes: 4,
            pods: 250,
            seed: 1,
        };
        let mut t = 0.0;
        let mut clock = || {
            t += 1.0;
            t
        };
        let r1 = e.run(&mut clock);
        assert_eq!(r1.ready, 250);
        eprintln!("{r1:?}");
        // Every pod is at least created, bound and given a status, in etcd's history.
        assert!(r1.writes.pods >= 3 * 250, "{:?}", r1.writes);
        assert!(r1.writes.events > 0, "{:?}", r1.writes);
        assert!(r1.virtual_ms > 0 && r1.virtual_ms < VIRTUAL_LIMIT);
        let r2 = e.run(&mut clock);
        assert_eq!(r1.placements, r2.placements);
        assert_eq!(r1.virtual_ms, r2.virtual_ms);
    }

    #[test]
    fn the_bench_world_admits_more_pods_than_the_envelope() {
        let e = Envelope {
            nodes: 5000,
            pods: 150_000,
            seed: 1,
        };
        assert!(e.config().max_pods >= 150_000 + 3 * 5000);
        assert_eq!(ClusterConfig::default().max_pods, crate::envelope::MAX_PODS);
    }
}
