//! Objects checked the way their steps will apply them: in a throwaway world with the
//! imported nodes, through kubectl and kubeloop's own apiserver (defaulting, admission,
//! validation), so an object that would fail fails here with the apiserver's words.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::scenario::Scenario;
use crate::world::World;

/// How long one check may keep the terminal (virtual time).
const LIMIT: crate::time::Time = 60_000;

/// A world with the scenario's nodes, where objects are applied one by one.
pub struct Checker {
    world: World,
}

/// The name kubectl gets an object by: `<kind>.<group>` (`deployment.apps`), lower case.
fn resource(obj: &Value) -> String {
    let kind = obj["kind"].as_str().unwrap_or_default().to_lowercase();
    match obj["apiVersion"].as_str().and_then(|v| v.split_once('/')) {
        Some((group, _)) => format!("{kind}.{group}"),
        None => kind,
    }
}

impl Checker {
    /// The world `sc` starts in (nodes, kubeloop's bootstrap objects and add-ons).
    pub fn new(sc: &Scenario) -> Checker {
        Checker {
            world: crate::runner::new_world(sc),
        }
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
    pub fn exists(&mut self, obj: &Value) -> bool {
        let name = obj["metadata"]["name"].as_str().unwrap_or_default();
        let mut words = vec![
            "kubectl".to_string(),
            "get".into(),
            resource(obj),
            name.to_string(),
            "-o".into(),
            "name".into(),
        ];
        if let Some(ns) = obj["metadata"]["namespace"].as_str() {
            words.extend(["-n".to_string(), ns.to_string()]);
        }
        let line = crate::export::shell_join(&words);
        self.run(&line, &BTreeMap::new()).exit_code == 0
    }

    /// Applies the object as the scenario's step will; the error kubectl prints if the
    /// apiserver refuses it.
    pub fn apply(&mut self, yaml: &str) -> Result<(), String> {
        let files = BTreeMap::from([("object.yaml".to_string(), yaml.to_string())]);
        let o = self.run("kubectl apply -f object.yaml", &files);
        if o.exit_code == 0 {
            return Ok(());
        }
        Err(o
            .stderr
            .trim_end()
            .replace("error when creating \"object.yaml\": ", ""))
    }
}
