//! The way out to a real cluster and the way in from one, as the page offers them (design
//! §6.21): the scenario as a kind directory in a tar to download, and a pasted or uploaded
//! `kubectl get … -A -o yaml` list turned into a scenario, with what was skipped, changed
//! or refused listed for the learner. Plain Rust over `kubeloop_sim::{export, import}`.

use kubeloop_sim::export;
use kubeloop_sim::import::{self, ImportResult};
use kubeloop_sim::scenario::Scenario;

/// The download: its file name (`<cluster>-kind.tar`) and bytes; unpacked it is one
/// directory named after the kind cluster.
pub fn kind_tar(scenario: &Scenario) -> (String, Vec<u8>) {
    let root = export::cluster_name(&scenario.metadata.name);
    let files = export::to_kind(scenario);
    (format!("{root}-kind.tar"), export::to_tar(&files, &root))
}

/// The commands that run a downloaded tar on a machine with docker, kind and kubectl.
pub fn kind_commands(scenario: &Scenario) -> String {
    let root = export::cluster_name(&scenario.metadata.name);
    format!(
        "tar xf {root}-kind.tar && cd {root}\nkind create cluster --name {root} --config {}\n./{}",
        export::KIND_CONFIG,
        export::RUN_SH
    )
}

/// What an import brought in, for the page to show.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportReport {
    /// How many nodes and files the scenario has.
    pub nodes: usize,
    /// Files (one per object imported).
    pub files: usize,
    /// Objects of kinds not imported.
    pub skipped: Vec<String>,
    /// What was changed or left to kubeloop.
    pub notices: Vec<String>,
    /// Objects the apiserver refused, with its error.
    pub errors: Vec<String>,
}

/// Imports a pasted or uploaded list: the scenario to load and what to tell the learner,
/// or why nothing could be imported (`3:1: …`, located).
pub fn import_list(text: &str) -> Result<(Scenario, ImportReport), String> {
    if text.trim().is_empty() {
        return Err("nothing to import: paste the output of kubectl get … -A -o yaml".into());
    }
    let ImportResult {
        scenario,
        skipped,
        notices,
        errors,
    } = import::from_cluster(text).map_err(|e| e.to_string())?;
    let report = ImportReport {
        nodes: scenario.nodes().len(),
        files: scenario.spec.files.len(),
        skipped,
        notices,
        errors,
    };
    Ok((scenario, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    const LIST: &str = "apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: big-1
    labels: {kubernetes.io/hostname: big-1, disktype: ssd}
  status:
    capacity: {cpu: '16', memory: 64Gi, pods: '110'}
    allocatable: {cpu: '16', memory: 64Gi, pods: '110'}
- apiVersion: v1
  kind: Secret
  metadata: {name: creds, namespace: default}
  data: {password: c2VjcmV0}
- apiVersion: example.com/v1
  kind: Widget
  metadata: {name: w, namespace: default}
";

    #[wasm_bindgen_test(unsupported = test)]
    fn should_import_a_pasted_list_and_say_what_it_left_out() {
        let (sc, report) = import_list(LIST).expect("imports");
        assert_eq!(report.nodes, 1);
        assert_eq!(sc.nodes()[0].name, "big-1");
        assert!(
            report.skipped.iter().any(|s| s.contains("Widget")),
            "{report:?}"
        );
        assert!(
            report.notices.iter().any(|n| n.contains("creds")),
            "the Secret's data is dropped with a notice: {report:?}"
        );
        assert!(!sc.to_yaml().contains("c2VjcmV0"));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_refuse_what_is_not_a_list_with_its_place() {
        assert!(import_list("  \n")
            .unwrap_err()
            .starts_with("nothing to import"));
        let err = import_list("items: [unclosed").unwrap_err();
        let (line, rest) = err.split_once(':').unwrap();
        let (column, _) = rest.split_once(':').unwrap();
        assert!(
            line.parse::<usize>().is_ok() && column.parse::<usize>().is_ok(),
            "{err}"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_export_a_tar_named_after_the_kind_cluster() {
        let sc = crate::examples::default_scenario();
        let (name, bytes) = kind_tar(&sc);
        let root = export::cluster_name(&sc.metadata.name);
        assert_eq!(name, format!("{root}-kind.tar"));
        // ustar: the first header names the first file under the root directory.
        assert_eq!(&bytes[257..262], b"ustar");
        let first = String::from_utf8_lossy(&bytes[..100]);
        assert!(first.starts_with(&format!("{root}/")), "{first}");
        assert!(bytes.len() % 512 == 0);
        assert!(kind_commands(&sc).contains("kind create cluster --name"));
    }
}
