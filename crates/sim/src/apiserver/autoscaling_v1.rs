//! autoscaling/v1 HorizontalPodAutoscalers: converted to the stored autoscaling/v2 form
//! as upstream's conversion does (`targetCPUUtilizationPercentage` ⇄ one CPU Utilization
//! metric), so a v1 manifest applies and reads back.

use serde_json::{json, Value};

/// Rewrites an autoscaling/v1 HorizontalPodAutoscaler manifest into autoscaling/v2, in
/// place. Returns whether it was one.
pub fn convert_to_v2(value: &mut Value) -> bool {
    if value["apiVersion"] != "autoscaling/v1" || value["kind"] != "HorizontalPodAutoscaler" {
        return false;
    }
    value["apiVersion"] = json!("autoscaling/v2");
    if let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) {
        if let Some(cpu) = spec.remove("targetCPUUtilizationPercentage") {
            spec.insert(
                "metrics".into(),
                json!([{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": cpu}}}]),
            );
        }
    }
    if let Some(obj) = value.as_object_mut() {
        // v1's status (currentCPUUtilizationPercentage, …) is the controller's to write.
        obj.remove("status");
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_cpu_utilization_becomes_a_resource_metric() {
        let mut v = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "php-apache"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "php-apache"},
                "minReplicas": 1, "maxReplicas": 10, "targetCPUUtilizationPercentage": 50}});
        assert!(convert_to_v2(&mut v));
        assert_eq!(v["apiVersion"], "autoscaling/v2");
        assert_eq!(
            v["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            50
        );
        assert!(v["spec"].get("targetCPUUtilizationPercentage").is_none());
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment"});
        assert!(!convert_to_v2(&mut d));
    }
}
