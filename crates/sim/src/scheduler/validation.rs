//! Validation of KubeSchedulerConfiguration and plugin args, with upstream's field-error
//! wording (`pkg/scheduler/apis/config/validation`).

use std::fmt::Display;

use super::config::{
    KubeSchedulerConfiguration, NodeResourcesFitArgs, PluginArgs, ResourceSpec,
    UtilizationShapePoint, API_VERSION,
};

/// `field.Invalid(path, value, detail)` with a numeric value.
pub fn invalid(path: &str, value: impl Display, detail: &str) -> String {
    format!("{path}: Invalid value: {value}: {detail}")
}

/// `field.Invalid` with a string value (Go quotes it).
pub fn invalid_str(path: &str, value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {value:?}: {detail}")
}

/// `field.Required(path, detail)`.
pub fn required(path: &str, detail: &str) -> String {
    if detail.is_empty() {
        format!("{path}: Required value")
    } else {
        format!("{path}: Required value: {detail}")
    }
}

/// `field.Duplicate(path, value)` with a string value.
pub fn duplicate(path: &str, value: &str) -> String {
    format!("{path}: Duplicate value: {value:?}")
}

/// `field.NotSupported(path, value, supported)`.
pub fn not_supported(path: &str, value: &str, supported: &[&str]) -> String {
    let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    format!(
        "{path}: Unsupported value: {value:?}: supported values: {}",
        list.join(", ")
    )
}

/// `field.Forbidden(path, detail)`.
pub fn forbidden(path: &str, detail: &str) -> String {
    format!("{path}: Forbidden: {detail}")
}

fn child(path: &str, c: &str) -> String {
    if path.is_empty() {
        c.to_string()
    } else {
        format!("{path}.{c}")
    }
}

/// Plugins removed in v1: enabling them is an error.
const INVALID_PLUGINS_V1: &[&str] = &[
    "AzureDiskLimits",
    "CinderLimits",
    "EBSLimits",
    "GCEPDLimits",
];

/// Validates a defaulted configuration (`ValidateKubeSchedulerConfiguration`).
pub fn validate(cfg: &KubeSchedulerConfiguration) -> Vec<String> {
    let mut errs = Vec::new();
    if cfg.parallelism <= 0 {
        errs.push(invalid(
            "parallelism",
            cfg.parallelism,
            "should be an integer value greater than zero",
        ));
    }
    if cfg.profiles.is_empty() {
        errs.push(required("profiles", ""));
    }
    for (i, p) in cfg.profiles.iter().enumerate() {
        let path = format!("profiles[{i}]");
        if p.scheduler_name.is_empty() {
            errs.push(required(&format!("{path}.schedulerName"), ""));
        }
        if let Some(pct) = p.percentage_of_nodes_to_score {
            if !(0..=100).contains(&pct) {
                errs.push(invalid(
                    &format!("{path}.percentageOfNodesToScore"),
                    pct,
                    "not in valid range [0-100]",
                ));
            }
        }
        for (stage, set) in p.plugins.sets() {
            for (j, pl) in set.enabled.iter().enumerate() {
                if INVALID_PLUGINS_V1.contains(&pl.name.as_str()) {
                    errs.push(invalid_str(
                        &format!("{path}.plugins.{stage}.enabled[{j}]"),
                        &pl.name,
                        &format!("was invalid in version {API_VERSION:?} (KubeSchedulerConfiguration is version {API_VERSION:?})"),
                    ));
                }
            }
        }
        for (j, pc) in p.plugin_config.iter().enumerate() {
            let pc_path = format!("{path}.pluginConfig[{j}]");
            if p.plugin_config[..j].iter().any(|o| o.name == pc.name) {
                errs.push(duplicate(&pc_path, &pc.name));
            }
            if INVALID_PLUGINS_V1.contains(&pc.name.as_str()) {
                errs.push(invalid_str(
                    &pc_path,
                    &pc.name,
                    &format!("was invalid in version {API_VERSION:?} (KubeSchedulerConfiguration is version {API_VERSION:?})"),
                ));
                continue;
            }
            errs.extend(validate_args(&format!("{pc_path}.args"), &pc.args));
        }
        if let Some((j, _)) = cfg.profiles[..i]
            .iter()
            .enumerate()
            .find(|(_, o)| o.scheduler_name == p.scheduler_name)
        {
            errs.push(format!(
                "{path}.schedulerName: Duplicate value: profiles[{j}].schedulerName"
            ));
        }
    }
    if let Some(first) = cfg.profiles.first() {
        let qs = &first.plugins.queue_sort;
        if qs.enabled.len() > 1 {
            errs.push(invalid(
                "profiles[0].plugins.queueSort.Enabled",
                qs.enabled.len(),
                "only one queue sort plugin can be enabled",
            ));
        }
        for (i, p) in cfg.profiles.iter().enumerate().skip(1) {
            if p.plugins.queue_sort != *qs {
                errs.push(format!(
                    "profiles[{i}].plugins.queueSort: Invalid value: {:?}: must be the same for all profiles",
                    p.plugins.queue_sort
                ));
            }
        }
    }
    if !(0..=100).contains(&cfg.percentage_of_nodes_to_score) {
        errs.push(invalid(
            "percentageOfNodesToScore",
            cfg.percentage_of_nodes_to_score,
            "not in valid range [0-100]",
        ));
    }
    if cfg.pod_initial_backoff_seconds <= 0 {
        errs.push(invalid(
            "podInitialBackoffSeconds",
            cfg.pod_initial_backoff_seconds,
            "must be greater than 0",
        ));
    }
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds {
        errs.push(invalid(
            "podMaxBackoffSeconds",
            cfg.pod_max_backoff_seconds,
            "must be greater than or equal to PodInitialBackoffSeconds",
        ));
    }
    errs
}

/// Validates one plugin's args at `path` (NodeResourcesFit is validated by the plugin's
/// constructor upstream, see [`validate_fit_args`]).
pub fn validate_args(path: &str, args: &PluginArgs) -> Vec<String> {
    let mut errs = Vec::new();
    match args {
        PluginArgs::DefaultPreemption {
            min_candidate_nodes_percentage: pct,
            min_candidate_nodes_absolute: abs,
        } => {
            let pp = child(path, "minCandidateNodesPercentage");
            let ap = child(path, "minCandidateNodesAbsolute");
            if !(0..=100).contains(pct) {
                errs.push(invalid(&pp, pct, "not in valid range [0, 100]"));
            }
            if *abs < 0 {
                errs.push(invalid(&ap, abs, "not in valid range [0, inf)"));
            }
            if *pct == 0 && *abs == 0 {
                errs.push(invalid(
                    &pp,
                    pct,
                    "cannot be zero at the same time as minCandidateNodesAbsolute",
                ));
                errs.push(invalid(
                    &ap,
                    abs,
                    "cannot be zero at the same time as minCandidateNodesPercentage",
                ));
            }
        }
        PluginArgs::InterPodAffinity {
            hard_pod_affinity_weight: w,
            ..
        } => {
            if !(0..=100).contains(w) {
                errs.push(invalid(
                    &child(path, "hardPodAffinityWeight"),
                    w,
                    "not in valid range [0, 100]",
                ));
            }
        }
        PluginArgs::NodeResourcesBalancedAllocation { resources } => {
            for (i, r) in resources.iter().enumerate() {
                let rp = format!("{}[{i}]", child(path, "resources"));
                if resources[..i].iter().any(|o| o.name == r.name) {
                    errs.push(duplicate(&format!("{rp}.name"), &r.name));
                }
                if r.weight != 1 {
                    errs.push(invalid(&format!("{rp}.weight"), r.weight, "must be 1"));
                }
            }
        }
        PluginArgs::PodTopologySpread {
            default_constraints,
            defaulting_type,
        } => {
            let dt = child(path, "defaultingType");
            if defaulting_type != "System" && defaulting_type != "List" {
                errs.push(not_supported(&dt, defaulting_type, &["System", "List"]));
            } else if defaulting_type == "System" && !default_constraints.is_empty() {
                errs.push(invalid_str(
                    &dt,
                    defaulting_type,
                    "when .defaultConstraints are not empty",
                ));
            }
            let dc = child(path, "defaultConstraints");
            for (i, c) in default_constraints.iter().enumerate() {
                let p = format!("{dc}[{i}]");
                if c.max_skew <= 0 {
                    errs.push(invalid(
                        &format!("{p}.maxSkew"),
                        c.max_skew,
                        "not in valid range (0, inf)",
                    ));
                }
                if c.topology_key.is_empty() {
                    errs.push(required(&format!("{p}.topologyKey"), "can not be empty"));
                }
                let wu = format!("{p}.whenUnsatisfiable");
                if c.when_unsatisfiable.is_empty() {
                    errs.push(required(&wu, "can not be empty"));
                } else if c.when_unsatisfiable != "DoNotSchedule"
                    && c.when_unsatisfiable != "ScheduleAnyway"
                {
                    errs.push(not_supported(
                        &wu,
                        &c.when_unsatisfiable,
                        &["DoNotSchedule", "ScheduleAnyway"],
                    ));
                }
                if c.label_selector.is_some() {
                    errs.push(forbidden(
                        &format!("{p}.labelSelector"),
                        "constraint must not define a selector, as they deduced for each pod",
                    ));
                }
                if default_constraints[..i].iter().any(|o| {
                    o.topology_key == c.topology_key && o.when_unsatisfiable == c.when_unsatisfiable
                }) {
                    errs.push(duplicate(
                        &p,
                        &format!("{{{}, {}}}", c.topology_key, c.when_unsatisfiable),
                    ));
                }
            }
        }
        PluginArgs::VolumeBinding {
            bind_timeout_seconds,
            shape,
        } => {
            if *bind_timeout_seconds < 0 {
                errs.push(invalid(
                    &child(path, "bindTimeoutSeconds"),
                    bind_timeout_seconds,
                    "invalid BindTimeoutSeconds, should not be a negative value",
                ));
            }
            // StorageCapacityScoring is off by default in v1.35.
            if let Some(s) = shape {
                errs.push(invalid(
                    &child(path, "shape"),
                    format!("{s:?}"),
                    "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
                ));
            }
        }
        PluginArgs::NodeAffinity { .. }
        | PluginArgs::NodeResourcesFit(_)
        | PluginArgs::Unknown(_) => {}
    }
    errs
}

fn validate_shape(shape: &[UtilizationShapePoint], path: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if shape.is_empty() {
        errs.push(required(path, "at least one point must be specified"));
        return errs;
    }
    for i in 1..shape.len() {
        if shape[i - 1].utilization >= shape[i].utilization {
            errs.push(invalid(
                &format!("{path}[{i}].utilization"),
                shape[i].utilization,
                "values must be sorted in increasing order",
            ));
            break;
        }
    }
    for (i, p) in shape.iter().enumerate() {
        if !(0..=100).contains(&p.utilization) {
            errs.push(invalid(
                &format!("{path}[{i}].utilization"),
                p.utilization,
                "not in valid range [0, 100]",
            ));
        }
        if !(0..=10).contains(&p.score) {
            errs.push(invalid(
                &format!("{path}[{i}].score"),
                p.score,
                "not in valid range [0, 10]",
            ));
        }
    }
    errs
}

fn validate_resources(resources: &[ResourceSpec], path: &str) -> Vec<String> {
    resources
        .iter()
        .enumerate()
        .filter(|(_, r)| r.weight <= 0 || r.weight > 100)
        .map(|(i, r)| {
            invalid(
                &format!("{path}[{i}].weight"),
                r.weight,
                &format!("resource weight of {} not in valid range (0, 100]", r.name),
            )
        })
        .collect()
}

/// `ValidateNodeResourcesFitArgs(nil, args)`, as NewFit calls it (paths without prefix).
pub fn validate_fit_args(args: &NodeResourcesFitArgs) -> Vec<String> {
    let mut errs = Vec::new();
    let sp = "scoringStrategy";
    match &args.scoring_strategy {
        None => errs.push(required(sp, "ScoringStrategy field is required")),
        Some(s) => {
            let supported = [
                "LeastAllocated",
                "MostAllocated",
                "RequestedToCapacityRatio",
            ];
            if !supported.contains(&s.type_.as_str()) {
                errs.push(not_supported(&format!("{sp}.type"), &s.type_, &supported));
            }
            errs.extend(validate_resources(&s.resources, &format!("{sp}.resources")));
            let rp = format!("{sp}.requestedToCapacityRatio");
            if s.type_ == "RequestedToCapacityRatio" {
                match &s.requested_to_capacity_ratio {
                    None => errs.push(required(
                        &rp,
                        "must be specified when type is RequestedToCapacityRatio",
                    )),
                    Some(r) => errs.extend(validate_shape(&r.shape, &format!("{rp}.shape"))),
                }
            } else if s.requested_to_capacity_ratio.is_some() {
                errs.push(forbidden(
                    &rp,
                    "must be nil when type is not RequestedToCapacityRatio",
                ));
            }
        }
    }
    errs
}
