//! Tests of KubeSchedulerConfiguration defaults, validation and profile building.

use super::*;
use crate::scheduler::pluginargs::res;
use crate::scheduler::plugins::in_tree_registry;
use crate::scheduler::runtime::{build_frameworks, Framework};
use serde_json::json;

fn build(v: Value) -> Result<Framework, String> {
    let cfg = parse(&v).map_err(|e| e.join("; "))?;
    let name = cfg.profiles[0].scheduler_name.clone();
    build_frameworks(&in_tree_registry(), &cfg).map(|mut m| m.remove(&name).unwrap())
}

#[test]
fn empty_config_is_the_default_profile() {
    for v in [
        Value::Null,
        json!({}),
        json!({"apiVersion": API_VERSION, "kind": "KubeSchedulerConfiguration"}),
    ] {
        let c = parse(&v).unwrap();
        assert_eq!(c.parallelism, 16);
        assert_eq!(c.percentage_of_nodes_to_score, 0);
        assert_eq!(
            (c.pod_initial_backoff_seconds, c.pod_max_backoff_seconds),
            (1, 10)
        );
        assert_eq!(c.profiles.len(), 1);
        let p = &c.profiles[0];
        assert_eq!(p.scheduler_name, "default-scheduler");
        assert_eq!(p.plugins, default_plugins());
        assert_eq!(
            p.args("DefaultPreemption"),
            Some(&PluginArgs::DefaultPreemption {
                min_candidate_nodes_percentage: 10,
                min_candidate_nodes_absolute: 100
            })
        );
        assert_eq!(
            p.args("InterPodAffinity"),
            Some(&PluginArgs::InterPodAffinity {
                hard_pod_affinity_weight: 1,
                ignore_preferred_terms_of_existing_pods: false
            })
        );
        let Some(PluginArgs::NodeResourcesFit(fit)) = p.args("NodeResourcesFit") else {
            panic!()
        };
        let s = fit.scoring_strategy.as_ref().unwrap();
        assert_eq!(s.type_, "LeastAllocated");
        assert_eq!(s.resources, [res("cpu", 1), res("memory", 1)]);
        assert_eq!(
            p.args("PodTopologySpread"),
            Some(&PluginArgs::PodTopologySpread {
                default_constraints: vec![],
                defaulting_type: "System".into()
            })
        );
        assert_eq!(
            p.args("VolumeBinding"),
            Some(&PluginArgs::VolumeBinding {
                bind_timeout_seconds: 600,
                shape: None
            })
        );
    }
}

#[test]
fn default_framework_has_upstream_extension_point_lists() {
    let fw = build(json!({})).unwrap();
    let names = fw.plugin_names();
    assert_eq!(names["PreEnqueuePlugin"], ["SchedulingGates"]);
    assert_eq!(names["QueueSortPlugin"], ["PrioritySort"]);
    assert_eq!(
        names["PreFilterPlugin"],
        [
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "VolumeRestrictions",
            "NodeVolumeLimits",
            "VolumeBinding",
            "VolumeZone",
            "PodTopologySpread",
            "InterPodAffinity"
        ]
    );
    assert_eq!(
        names["FilterPlugin"],
        [
            "NodeUnschedulable",
            "NodeName",
            "TaintToleration",
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "VolumeRestrictions",
            "NodeVolumeLimits",
            "VolumeBinding",
            "VolumeZone",
            "PodTopologySpread",
            "InterPodAffinity"
        ]
    );
    assert_eq!(names["PostFilterPlugin"], ["DefaultPreemption"]);
    assert_eq!(
        names["PreScorePlugin"],
        [
            "TaintToleration",
            "NodeAffinity",
            "NodeResourcesFit",
            "VolumeBinding",
            "PodTopologySpread",
            "InterPodAffinity",
            "NodeResourcesBalancedAllocation"
        ]
    );
    assert_eq!(
        fw.score_weights(),
        [
            ("TaintToleration", 3),
            ("NodeAffinity", 2),
            ("NodeResourcesFit", 1),
            ("VolumeBinding", 1),
            ("PodTopologySpread", 2),
            ("InterPodAffinity", 2),
            ("NodeResourcesBalancedAllocation", 1),
            ("ImageLocality", 1)
        ]
    );
    assert_eq!(names["ReservePlugin"], ["VolumeBinding"]);
    assert_eq!(names["PreBindPlugin"], ["VolumeBinding"]);
    assert_eq!(names["BindPlugin"], ["DefaultBinder"]);
}

#[test]
fn custom_plugins_merge_with_defaults() {
    let fw = build(json!({"profiles": [{"plugins": {"score": {
        "enabled": [{"name": "NodeResourcesFit", "weight": 5}],
        "disabled": [{"name": "ImageLocality"}]}}}]}))
    .unwrap();
    // The explicitly configured plugin comes first (it overrides its MultiPoint entry).
    assert_eq!(
        fw.score_weights(),
        [
            ("NodeResourcesFit", 5),
            ("TaintToleration", 3),
            ("NodeAffinity", 2),
            ("VolumeBinding", 1),
            ("PodTopologySpread", 2),
            ("InterPodAffinity", 2),
            ("NodeResourcesBalancedAllocation", 1)
        ]
    );
    // Disabling everything at an extension point and re-enabling one plugin.
    let fw = build(
        json!({"profiles": [{"plugins": {"score": {"disabled": [{"name": "*"}],
        "enabled": [{"name": "ImageLocality"}]}}}]}),
    )
    .unwrap();
    assert_eq!(fw.score_weights(), [("ImageLocality", 1)]);
    // A MultiPoint weight of 0 means 1.
    let fw = build(json!({"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 0}]}}}]})).unwrap();
    assert!(fw.score_weights().contains(&("ImageLocality", 1)));
}

#[test]
fn framework_errors_use_upstream_wording() {
    let prefix = "initializing profiles: creating profile for scheduler name default-scheduler: ";
    let cases = [
        (json!({"profiles": [{"plugins": {"filter": {"enabled": [{"name": "Foo"}]}}}]}),
         "FilterPlugin \"Foo\" does not exist"),
        (json!({"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "DefaultBinder"}]}}}]}),
         "at least one bind plugin is needed for profile with scheduler name \"default-scheduler\""),
        (json!({"profiles": [{"plugins": {"queueSort": {"disabled": [{"name": "*"}]}, "multiPoint": {"disabled": [{"name": "PrioritySort"}]}}}]}),
         "only one queue sort plugin required for profile with scheduler name \"default-scheduler\", but got 0"),
        (json!({"profiles": [{"plugins": {"filter": {"enabled": [{"name": "PrioritySort"}]}}}]}),
         "plugin \"PrioritySort\" does not extend FilterPlugin plugin"),
        (json!({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}}}]}]}),
         "initializing plugin \"NodeResourcesFit\": scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]"),
        (json!({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Foo"}}}]}]}),
         "initializing plugin \"NodeResourcesFit\": scoringStrategy.type: Unsupported value: \"Foo\": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""),
    ];
    for (cfg, want) in cases {
        assert_eq!(build(cfg).err().unwrap(), format!("{prefix}{want}"));
    }
    // Weight 0 on a resource is defaulted to 1, not rejected.
    assert!(build(json!({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}]}}}]}]})).is_ok());
}

#[test]
fn validation_errors_use_field_paths() {
    let errs = |v: Value| parse(&v).err().unwrap_or_else(|| panic!("accepted: {v}"));
    assert_eq!(
        errs(json!({"percentageOfNodesToScore": 101})),
        ["percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"]
    );
    assert_eq!(
        errs(json!({"podInitialBackoffSeconds": 0, "podMaxBackoffSeconds": 0})),
        ["podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"]
    );
    assert_eq!(errs(json!({"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2})),
        ["podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds"]);
    assert_eq!(
        errs(json!({"profiles": [{"pluginConfig": [{"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 101}}]}]})),
        ["profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"]
    );
    assert_eq!(
        errs(json!({"profiles": [{"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": -1}}]}]})),
        ["profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"]
    );
    assert_eq!(
        errs(
            json!({"profiles": [{"pluginConfig": [{"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 2}]}}]}]})
        ),
        ["profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1"]
    );
    assert_eq!(
        errs(json!({"profiles": [{"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "System",
            "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]}}]}]})),
        ["profiles[0].pluginConfig[0].args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"]
    );
    assert_eq!(
        errs(json!({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]})),
        ["profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName"]
    );
    assert_eq!(
        errs(json!({"profiles": [{"schedulerName": "a"}, {}]})),
        ["profiles[1].schedulerName: Required value"]
    );
    assert_eq!(
        errs(json!({"profiles": [{"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]})),
        ["profiles[0].plugins.filter.enabled[0]: Invalid value: \"EBSLimits\": was invalid in version \"kubescheduler.config.k8s.io/v1\" (KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1\")"]
    );
    assert_eq!(
        errs(json!({"profiles": [{"schedulerName": "x", "foo": 1}]})),
        ["strict decoding error: unknown field \"profiles[0].foo\""]
    );
    assert_eq!(errs(json!({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"})),
        ["no kind \"KubeSchedulerConfiguration\" is registered for version \"kubescheduler.config.k8s.io/v1beta3\""]);
}
