//! ImageLocality: prefers nodes that already have the pod's images, weighted by image size
//! and by how widely the image is spread across nodes.

use super::helper::MAX;
use crate::scheduler::config::PluginArgs;
use crate::scheduler::framework::*;
use crate::scheduler::nodeinfo::{NodeInfo, Snapshot};
use crate::scheduler::podinfo::PodInfo;

/// The plugin name.
pub const NAME: &str = "ImageLocality";
const MB: i64 = 1024 * 1024;
const MIN_THRESHOLD: i64 = 23 * MB;
const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

/// The ImageLocality plugin.
pub struct ImageLocality;

/// Constructor for the registry.
pub fn new(_: Option<&PluginArgs>) -> Result<Box<dyn Plugin>, String> {
    Ok(Box::new(ImageLocality))
}

impl Plugin for ImageLocality {
    fn name(&self) -> &'static str {
        NAME
    }
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        Some(self)
    }
}

/// `normalizedImageName`: appends `:latest` when the name has no tag.
pub fn normalized_image_name(name: &str) -> String {
    let colon = name.rfind(':');
    let slash = name.rfind('/');
    let has_tag = match (colon, slash) {
        (Some(c), Some(s)) => c > s,
        (Some(_), None) => true,
        _ => false,
    };
    if has_tag {
        name.to_string()
    } else {
        format!("{name}:latest")
    }
}

impl ScorePlugin for ImageLocality {
    fn score(
        &self,
        _: &CycleState,
        pod: &PodInfo,
        node: &NodeInfo,
        snap: &Snapshot,
    ) -> Result<i64, Status> {
        if node.images.is_empty() {
            return Ok(calculate_priority(0, container_count(pod)));
        }
        let total = snap.num_nodes() as f64;
        let mut sum: i64 = 0;
        let spec = pod.pod.spec.as_ref();
        let containers = spec.into_iter().flat_map(|s| {
            s.init_containers
                .iter()
                .flatten()
                .chain(s.containers.iter())
        });
        for c in containers {
            let image = normalized_image_name(c.image.as_deref().unwrap_or(""));
            if let Some(size) = node.images.get(&image) {
                let spread = snap.num_nodes_with_image(&image) as f64 / total;
                sum += (*size as f64 * spread) as i64;
            }
        }
        Ok(calculate_priority(sum, container_count(pod)))
    }
}

fn container_count(pod: &PodInfo) -> i64 {
    pod.pod
        .spec
        .as_ref()
        .map(|s| s.containers.len() + s.init_containers.as_ref().map_or(0, |v| v.len()))
        .unwrap_or(0) as i64
}

fn calculate_priority(sum: i64, num_containers: i64) -> i64 {
    let max_threshold = MAX_CONTAINER_THRESHOLD * num_containers.max(1);
    let sum = sum.clamp(MIN_THRESHOLD, max_threshold);
    MAX * (sum - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::plugins::helper::fixtures::*;
    use serde_json::json;

    #[test]
    fn image_names_normalize() {
        assert_eq!(normalized_image_name("root"), "root:latest");
        assert_eq!(
            normalized_image_name("gcr.io:5000/root"),
            "gcr.io:5000/root:latest"
        );
        assert_eq!(normalized_image_name("root:tag"), "root:tag");
        assert_eq!(
            normalized_image_name("gcr.io:5000/root:tag"),
            "gcr.io:5000/root:tag"
        );
        assert_eq!(normalized_image_name("root@sha256:abc"), "root@sha256:abc");
    }

    #[test]
    fn scores_follow_spread_scaled_sizes() {
        // Modelled on TestImageLocalityPriority: node1 has gcr.io/40 (40MB) and gcr.io/300
        // (300MB); node2 has gcr.io/250 (250MB) and gcr.io/10 (10MB).
        let n1 = node(
            "node1",
            json!({"status": {"images": [
            {"names": ["gcr.io/40:latest"], "sizeBytes": 40 * MB},
            {"names": ["gcr.io/300:latest"], "sizeBytes": 300 * MB}]}}),
        );
        let n2 = node(
            "node2",
            json!({"status": {"images": [
            {"names": ["gcr.io/250:latest"], "sizeBytes": 250 * MB},
            {"names": ["gcr.io/10:latest"], "sizeBytes": 10 * MB}]}}),
        );
        let snap = Snapshot::new(&[n1, n2], &[]);
        let score = |images: &[&str]| -> Vec<i64> {
            let cs: Vec<_> = images
                .iter()
                .enumerate()
                .map(|(i, im)| json!({"name": format!("c{i}"), "image": im}))
                .collect();
            let p = info(pod("p", json!({"spec": {"containers": cs}})));
            snap.nodes()
                .iter()
                .map(|n| {
                    ImageLocality
                        .score(&CycleState::default(), &p, n, &snap)
                        .unwrap()
                })
                .collect()
        };
        // Pod gcr.io/40 + gcr.io/250 (2 containers → max 2000MB).
        // node1: 40MB * 1/2 = 20MB → clamp to 23MB → 0.
        // node2: 250MB * 1/2 = 125MB → 100*(125−23)/(2000−23) = 10200/1977 = 5.
        assert_eq!(score(&["gcr.io/40", "gcr.io/250"]), [0, 5]);
        // Pod gcr.io/300 (1 container → max 1000MB): node1 300MB * 1/2 = 150MB →
        // 100*(150−23)/(1000−23) = 12700/977 = 12; node2 has nothing → 0.
        assert_eq!(score(&["gcr.io/300"]), [12, 0]);
        // Pod gcr.io/10:latest: 10MB*1/2 = 5MB < 23MB → 0 everywhere.
        assert_eq!(score(&["gcr.io/10:latest"]), [0, 0]);
    }
}
