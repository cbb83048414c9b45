//! Export to a real cluster: a scenario as a kind directory (kind-config.yaml, manifests,
//! run.sh, README.md) and that directory as a tar archive (issue 12, item 4).

mod kind_config;
mod names;
mod readme;
mod script;
mod steps;
mod tar;

pub use kind_config::kubelet_may_set;
pub use names::{cluster_name, kind_worker, shell_join, shell_quote, NodeNames};
pub use steps::{translate as translate_step, Line};
pub use tar::to_tar;

use crate::scenario::Scenario;

/// The file kind reads (`kind create cluster --config kind-config.yaml`).
pub const KIND_CONFIG: &str = "kind-config.yaml";
/// The script of the scenario's steps.
pub const RUN_SH: &str = "run.sh";
/// How to run it.
pub const README: &str = "README.md";
/// The directory of the scenario's files.
pub const MANIFESTS: &str = "manifests";

/// The kind directory for a scenario: relative path → contents, in a fixed order
/// (README.md, kind-config.yaml, manifests/… by name, run.sh). Deterministic.
pub fn to_kind(sc: &Scenario) -> Vec<(String, String)> {
    let names = NodeNames::of(sc);
    let kubeloop_only: Vec<String> = sc
        .steps_in_order()
        .iter()
        .filter(|s| matches!(steps::translate(&s.run, &names), Line::KubeloopOnly(_)))
        .map(|s| s.run.clone())
        .collect();
    let mut out = vec![
        (
            README.to_string(),
            readme::readme(sc, &names, &kubeloop_only),
        ),
        (
            KIND_CONFIG.to_string(),
            kind_config::kind_config(sc, &names),
        ),
    ];
    for (name, text) in &sc.spec.files {
        out.push((
            format!("{MANIFESTS}/{}", safe_path(name)),
            manifest(text, &names),
        ));
    }
    out.push((RUN_SH.to_string(), script::run_sh(sc, &names)));
    out
}

/// A file's text with node names translated; a file that changed says so at the top.
fn manifest(text: &str, names: &NodeNames) -> String {
    let translated = names.translate(text);
    if translated == text {
        return translated;
    }
    let mapping: Vec<String> = names
        .workers
        .iter()
        .filter(|(s, _)| text.contains(s.as_str()))
        .map(|(s, k)| format!("{s} -> {k}"))
        .collect();
    format!(
        "# kubeloop export: node names are kind's here ({}).\n{translated}",
        mapping.join(", ")
    )
}

/// A scenario file name as a path inside `manifests/`: kept when it is a plain relative
/// path, otherwise its unsafe parts (`..`, a leading `/`, empty segments) replaced.
fn safe_path(name: &str) -> String {
    let parts: Vec<String> = name
        .split('/')
        .filter(|p| !p.is_empty())
        .map(|p| {
            if p == ".." || p == "." {
                "_".to_string()
            } else {
                p.to_string()
            }
        })
        .collect();
    if parts.is_empty() {
        "_".to_string()
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
mod tests;
