//! Benchmarks that run the whole engine: the upstream scheduler_perf `SchedulingBasic`
//! workload through kube-apiserver, etcd, watches, kube-scheduler and binding. Timing is
//! the caller's: the engine never reads a clock, the harness passes one in.

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::{ApiRequest, Body, Verb};
use crate::cluster::{ClusterConfig, NodeConfig};
use crate::object::{Kind, Object};
use crate::rng::fnv1a;
use crate::world::World;

/// The workload's size.
#[derive(Clone, Copy, Debug)]
pub struct SchedulingBasic {
    /// Nodes (4 CPU, 32Gi, 110 pods each).
    pub nodes: usize,
    /// Pods created and scheduled before measuring.
    pub initial_pods: usize,
    /// Pods measured.
    pub measured_pods: usize,
}

impl Default for SchedulingBasic {
    /// Upstream's 5000Nodes_10000Pods case.
    fn default() -> Self {
        SchedulingBasic {
            nodes: 5000,
            initial_pods: 1000,
            measured_pods: 10_000,
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedulingReport {
    /// Measured pods per second of the harness's clock.
    pub pods_per_second: f64,
    /// Seconds the measured phase took.
    pub seconds: f64,
    /// Seconds to build the cluster.
    pub setup_seconds: f64,
    /// A hash of every (pod, node) placement: equal ⇒ identical scheduling decisions.
    pub placements: u64,
    /// Pods bound at the end.
    pub bound: usize,
    /// Virtual time the measured phase took (ms).
    pub virtual_ms: u64,
    /// Messages delivered in the measured phase.
    pub messages: u64,
}

fn pod(i: usize) -> Pod {
    let requests = [
        ("cpu".to_string(), Quantity("100m".into())),
        ("memory".to_string(), Quantity("500Mi".into())),
    ]
    .into_iter()
    .collect();
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("pod-{i:05}")),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "pause".into(),
                image: Some("registry.k8s.io/pause:3.10".into()),
                resources: Some(ResourceRequirements {
                    requests: Some(requests),
                    ..ResourceRequirements::default()
                }),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        status: None,
    }
}

fn bound_pods(w: &World) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for kv in w
        .observe()
        .etcd()
        .store
        .range_prefix("/registry/pods/default/")
    {
        if let Object::Pod(p) = &*kv.value {
            if let Some(n) = p.spec.as_ref().and_then(|s| s.node_name.clone()) {
                out.push((p.metadata.name.clone().unwrap_or_default(), n));
            }
        }
    }
    out
}

fn count_bound(w: &World) -> usize {
    w.observe().etcd()
        .store
        .range_prefix("/registry/pods/default/")
        .filter(|kv| matches!(&*kv.value, Object::Pod(p) if p.spec.as_ref().is_some_and(|s| s.node_name.is_some())))
        .count()
}

fn create_and_schedule(w: &mut World, range: std::ops::Range<usize>) -> usize {
    let want = range.end;
    for i in range {
        let req = ApiRequest::new(Verb::Create, Kind::Pod, "default", "")
            .with_body(Body::Object(pod(i).into()));
        w.inject_api(req);
    }
    // Virtual time barely moves: every hop is a millisecond or two.
    let mut bound = 0;
    for _ in 0..10_000 {
        w.run_for(50);
        bound = count_bound(w);
        if bound >= want {
            break;
        }
    }
    bound
}

impl SchedulingBasic {
    /// Runs the workload; `clock` returns seconds (monotonic) from the harness.
    pub fn run(&self, clock: &mut dyn FnMut() -> f64) -> SchedulingReport {
        let t0 = clock();
        let mut config = ClusterConfig {
            nodes: (1..=self.nodes)
                .map(|i| {
                    let mut n = NodeConfig::standard(&format!("node-{i}"));
                    for (k, v) in [("cpu", "4"), ("memory", "32Gi"), ("pods", "110")] {
                        n.capacity.insert(k.into(), v.into());
                        n.allocatable.insert(k.into(), v.into());
                    }
                    n
                })
                .collect(),
            scheduling_annotations: false,
            hollow_nodes: true,
            ..ClusterConfig::default()
        };
        config.seed = 1;
        let mut w = World::new(config);
        w.run_for(100);
        create_and_schedule(&mut w, 0..self.initial_pods);
        let t1 = clock();
        let (v0, m0) = (w.now(), w.delivered());
        let bound = create_and_schedule(
            &mut w,
            self.initial_pods..self.initial_pods + self.measured_pods,
        );
        let t2 = clock();
        let (virtual_ms, messages) = (w.now() - v0, w.delivered() - m0);
        let mut placements = 0xcbf2_9ce4_8422_2325u64;
        for (p, n) in bound_pods(&w) {
            placements = (placements ^ fnv1a(format!("{p}={n}").as_bytes()))
                .wrapping_mul(0x0000_0100_0000_01B3);
        }
        let seconds = t2 - t1;
        SchedulingReport {
            pods_per_second: self.measured_pods as f64 / seconds.max(1e-9),
            seconds,
            setup_seconds: t1 - t0,
            placements,
            bound,
            virtual_ms,
            messages,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_scheduling_basic_run_binds_every_pod_deterministically() {
        let b = SchedulingBasic {
            nodes: 20,
            initial_pods: 10,
            measured_pods: 40,
        };
        let mut t = 0.0;
        let mut clock = || {
            t += 1.0;
            t
        };
        let r1 = b.run(&mut clock);
        assert_eq!(r1.bound, 50);
        let r2 = b.run(&mut clock);
        assert_eq!(r1.placements, r2.placements);
    }
}
