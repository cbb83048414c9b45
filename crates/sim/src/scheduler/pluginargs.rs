//! Decoding and defaulting of plugin args (`SetDefaults_<Plugin>Args`) and the strict
//! JSON decoding shared by the configuration parser.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use k8s_openapi::api::core::v1::{NodeAffinity, TopologySpreadConstraint};

use super::config::{
    NodeResourcesFitArgs, PluginArgs, ResourceSpec, ScoringStrategy, UtilizationShapePoint,
};
use crate::object::decode_tracking_unknown;

pub(crate) fn decode<T: serde::de::DeserializeOwned + serde::Serialize>(
    v: &Value,
    path: &str,
    errs: &mut Vec<String>,
) -> Option<T> {
    let mut unknown = Vec::new();
    let v = if v.is_null() {
        Value::Object(Default::default())
    } else {
        v.clone()
    };
    // apiVersion/kind may appear in args; they are not fields of the args types.
    let v = match v {
        Value::Object(mut m) => {
            m.remove("apiVersion");
            m.remove("kind");
            Value::Object(m)
        }
        other => other,
    };
    match decode_tracking_unknown::<T>(&v, &mut unknown) {
        Ok(t) => {
            for u in unknown {
                errs.push(format!(
                    "strict decoding error: unknown field \"{}\"",
                    join_path(path, &u)
                ));
            }
            Some(t)
        }
        Err(e) => {
            errs.push(format!("decoding {path}: {e}"));
            None
        }
    }
}

fn join_path(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else if b.starts_with('[') {
        format!("{a}{b}")
    } else {
        format!("{a}.{b}")
    }
}

/// Decodes and defaults one plugin's args (`SetDefaults_<Plugin>Args`).
pub(crate) fn plugin_args(name: &str, v: &Value, path: &str, errs: &mut Vec<String>) -> PluginArgs {
    #[derive(Deserialize, Serialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Dp {
        min_candidate_nodes_percentage: Option<i32>,
        min_candidate_nodes_absolute: Option<i32>,
    }
    #[derive(Deserialize, Serialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Ipa {
        hard_pod_affinity_weight: Option<i32>,
        #[serde(default)]
        ignore_preferred_terms_of_existing_pods: bool,
    }
    #[derive(Deserialize, Serialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Na {
        added_affinity: Option<NodeAffinity>,
    }
    #[derive(Deserialize, Serialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Ba {
        #[serde(default)]
        resources: Vec<ResourceSpec>,
    }
    #[derive(Deserialize, Serialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Pts {
        #[serde(default)]
        default_constraints: Vec<TopologySpreadConstraint>,
        #[serde(default)]
        defaulting_type: String,
    }
    #[derive(Deserialize, Serialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Vb {
        bind_timeout_seconds: Option<i64>,
        shape: Option<Vec<UtilizationShapePoint>>,
    }
    let default_res = || vec![res("cpu", 1), res("memory", 1)];
    match name {
        "DefaultPreemption" => {
            let a: Dp = decode(v, path, errs).unwrap_or_default();
            PluginArgs::DefaultPreemption {
                min_candidate_nodes_percentage: a.min_candidate_nodes_percentage.unwrap_or(10),
                min_candidate_nodes_absolute: a.min_candidate_nodes_absolute.unwrap_or(100),
            }
        }
        "InterPodAffinity" => {
            let a: Ipa = decode(v, path, errs).unwrap_or_default();
            PluginArgs::InterPodAffinity {
                hard_pod_affinity_weight: a.hard_pod_affinity_weight.unwrap_or(1),
                ignore_preferred_terms_of_existing_pods: a.ignore_preferred_terms_of_existing_pods,
            }
        }
        "NodeAffinity" => {
            let a: Na = decode(v, path, errs).unwrap_or_default();
            PluginArgs::NodeAffinity {
                added_affinity: a.added_affinity,
            }
        }
        "NodeResourcesFit" => {
            let mut a: NodeResourcesFitArgs = decode(v, path, errs).unwrap_or_default();
            let s = a.scoring_strategy.get_or_insert_with(|| ScoringStrategy {
                type_: "LeastAllocated".into(),
                resources: default_res(),
                requested_to_capacity_ratio: None,
            });
            if s.resources.is_empty() {
                s.resources = default_res();
            }
            for r in &mut s.resources {
                if r.weight == 0 {
                    r.weight = 1;
                }
            }
            PluginArgs::NodeResourcesFit(a)
        }
        "NodeResourcesBalancedAllocation" => {
            let mut a: Ba = decode(v, path, errs).unwrap_or_default();
            if a.resources.is_empty() {
                a.resources = default_res();
            }
            for r in &mut a.resources {
                if r.weight == 0 {
                    r.weight = 1;
                }
            }
            PluginArgs::NodeResourcesBalancedAllocation {
                resources: a.resources,
            }
        }
        "PodTopologySpread" => {
            let a: Pts = decode(v, path, errs).unwrap_or_default();
            PluginArgs::PodTopologySpread {
                default_constraints: a.default_constraints,
                defaulting_type: if a.defaulting_type.is_empty() {
                    "System".into()
                } else {
                    a.defaulting_type
                },
            }
        }
        "VolumeBinding" => {
            let a: Vb = decode(v, path, errs).unwrap_or_default();
            PluginArgs::VolumeBinding {
                bind_timeout_seconds: a.bind_timeout_seconds.unwrap_or(600),
                shape: a.shape,
            }
        }
        _ => PluginArgs::Unknown(v.clone()),
    }
}

pub(crate) fn res(name: &str, weight: i64) -> ResourceSpec {
    ResourceSpec {
        name: name.into(),
        weight,
    }
}

/// Plugins that have an args type (`<Name>Args` registered in the scheme).
pub(crate) const PLUGINS_WITH_ARGS: &[&str] = &[
    "DefaultPreemption",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "PodTopologySpread",
    "VolumeBinding",
];
