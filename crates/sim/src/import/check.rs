//! Objects checked the way their steps will apply them: in a throwaway world with the
//! imported nodes, through kubectl and kubeloop's own apiserver (defaulting, admission,
//! validation), so an object that would fail fails here with the apiserver's words.
//!
//! Objects others are admitted against (Namespaces, PriorityClasses, StorageClasses,
//! ServiceAccounts) are created; the rest are applied with `--dry-run=server`, which runs
//! the same create path without storing anything, so no controller or kubelet works
//! between checks and a large list is checked quickly.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::scenario::Scenario;
use crate::world::World;

/// How long one check may keep the terminal (virtual time).
const LIMIT: crate::time::Time = 60_000;

/// Kinds whose objects admission looks up when it admits others.
const PREREQUISITES: &[&str] = &[
    "Namespace",
    "PriorityClass",
    "StorageClass",
    "ServiceAccount",
];

/// A world with the scenario's nodes, where objects are applied one by one.
pub struct Checker {
    world: World,
    /// (kind, namespace, name) of what kubeloop's cluster has before any import.
    existing: BTreeSet<(String, String, String)>,
}

/// The name kubectl lists a kind by: `<kind>.<group>` (`deployment.apps`), lower case.
fn resource(kind: &str, api_version: &str) -> String {
    let kind = kind.to_lowercase();
    match api_version.split_once('/') {
        Some((group, _)) => format!("{kind}.{group}"),
        None => kind,
    }
}

impl Checker {
    /// The world `sc` starts in (nodes, kubeloop's bootstrap objects and add-ons), and what
    /// it already has of each of `kinds` ((kind, apiVersion) pairs).
    pub fn new(sc: &Scenario, kinds: &[(String, String)]) -> Checker {
        let mut c = Checker {
            world: crate::runner::new_world(sc),
            existing: BTreeSet::new(),
        };
        for (kind, api_version) in kinds {
            let line = format!(
                "kubectl get {} -A -o 'jsonpath={{range .items[*]}}{{.metadata.namespace}}/{{.metadata.name}}{{\"\\n\"}}{{end}}'",
                resource(kind, api_version)
            );
            let out = c.run(&line, &BTreeMap::new());
            for l in out.stdout.lines() {
                if let Some((ns, name)) = l.split_once('/') {
                    c.existing
                        .insert((kind.clone(), ns.to_string(), name.to_string()));
                }
            }
        }
        c
    }

    fn run(&mut self, line: &str, files: &BTreeMap<String, String>) -> crate::process::Output {
        crate::cmd::run_within(
            &mut self.world,
            line,
            files,
            LIMIT,
            crate::envelope::MAX_EVENTS_PER_COMMAND,
        )
    }

    /// Whether kubeloop's cluster already has the object (the `kubernetes` Service,
    /// CoreDNS, the `standard` StorageClass, the system PriorityClasses, …).
    pub fn exists(&self, obj: &Value) -> bool {
        let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
        self.existing.contains(&(
            s(&obj["kind"]),
            s(&obj["metadata"]["namespace"]),
            s(&obj["metadata"]["name"]),
        ))
    }

    /// Applies the object as the scenario's step will (a server dry run unless others
    /// depend on it); the error kubectl prints if the apiserver refuses it.
    pub fn apply(&mut self, obj: &Value, yaml: &str) -> Result<(), String> {
        let files = BTreeMap::from([("object.yaml".to_string(), yaml.to_string())]);
        let kind = obj["kind"].as_str().unwrap_or_default();
        let line = if PREREQUISITES.contains(&kind) {
            "kubectl apply -f object.yaml"
        } else {
            "kubectl apply --dry-run=server -f object.yaml"
        };
        let o = self.run(line, &files);
        if o.exit_code == 0 {
            return Ok(());
        }
        Err(o
            .stderr
            .trim_end()
            .replace("error when creating \"object.yaml\": ", ""))
    }
}
