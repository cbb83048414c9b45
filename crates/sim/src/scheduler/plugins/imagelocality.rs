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
/// Borrows the name when it has a tag: the score looks it up on every node of every
/// cycle, and most images are tagged.
pub fn normalized_image_name(name: &str) -> std::borrow::Cow<'_, str> {
    let colon = name.rfind(':');
    let slash = name.rfind('/');
    let has_tag = match (colon, slash) {
        (Some(c), Some(s)) => c > s,
        (Some(_), None) => true,
        _ => false,
    };
    if has_tag {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(format!("{name}:latest"))
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
            if let Some(size) = node.images.get(image.as_ref()) {
                let spread = snap.num_nodes_with_image(image.as_ref()) as f64 / total;
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
        // The node images of TestImageLocalityPriority, scored with the current formula
        // (maxThreshold = 1000MB per container; old fixed-1000MB expectations don't apply).
        let m1 = node(
            "machine1",
            json!({"status": {"images": [
            {"names": ["gcr.io/40:latest", "gcr.io/40:v1"], "sizeBytes": 40 * MB},
            {"names": ["gcr.io/300:latest", "gcr.io/300:v1"], "sizeBytes": 300 * MB},
            {"names": ["gcr.io/2000:latest"], "sizeBytes": 2000 * MB}]}}),
        );
        let m2 = node(
            "machine2",
            json!({"status": {"images": [
            {"names": ["gcr.io/250:latest"], "sizeBytes": 250 * MB},
            {"names": ["gcr.io/10:latest", "gcr.io/10:v1"], "sizeBytes": 10 * MB}]}}),
        );
        let score = |snap: &Snapshot, images: &[&str]| -> Vec<i64> {
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
                        .score(&CycleState::default(), &p, n, snap)
                        .unwrap()
                })
                .collect()
        };
        let snap = Snapshot::new(&[m1.clone(), m2.clone()], &[]);
        // gcr.io/40 + gcr.io/250 (2 containers → max 2000MB): machine1 40MB/2 = 20MB < 23MB
        // → 0; machine2 250MB/2 = 125MB → 100*(125−23)/(2000−23) = 10200/1977 = 5.
        assert_eq!(score(&snap, &["gcr.io/40", "gcr.io/250"]), [0, 5]);
        // gcr.io/40 + gcr.io/300: machine1 20 + 150 = 170MB → 14700/1977 = 7; machine2 0.
        assert_eq!(score(&snap, &["gcr.io/40", "gcr.io/300"]), [7, 0]);
        // gcr.io/10 + gcr.io/2000: machine1 2000/2 = 1000MB → 97700/1977 = 49; machine2
        // 10/2 = 5MB → 0.
        assert_eq!(score(&snap, &["gcr.io/10", "gcr.io/2000"]), [49, 0]);
        // With a third node without images the spread is 1/3: int64(2000MB/3) = 699050666 B;
        // 100*(699050666 − 24117248)/(2097152000 − 24117248) = 32.
        let snap3 = Snapshot::new(&[m1, m2, node("machine3", json!({}))], &[]);
        assert_eq!(score(&snap3, &["gcr.io/10", "gcr.io/2000"]), [32, 0, 0]);
        // Over the maximum: clamp to 100.
        let big = Snapshot::new(
            &[node(
                "solo",
                json!({"status": {"images": [
            {"names": ["gcr.io/2000:latest"], "sizeBytes": 2000 * MB}]}}),
            )],
            &[],
        );
        assert_eq!(score(&big, &["gcr.io/2000"]), [100]);
    }
}
