//! Node names as kind makes them, and rewriting a text's node names to kind's.
//!
//! kind names its node containers (and so its Nodes) `<cluster>-control-plane`,
//! `<cluster>-worker`, `<cluster>-worker2`, …; a scenario names its nodes itself. Every
//! command and manifest that names a node is rewritten through [`NodeNames::translate`].

use std::collections::BTreeMap;

use crate::scenario::Scenario;

/// The cluster name kind gets when the scenario's name is not usable as one.
pub const DEFAULT_CLUSTER: &str = "kubeloop";

/// The scenario's node names and the kind node each becomes, in scenario order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeNames {
    /// The kind cluster's name (`kind create cluster --name`).
    pub cluster: String,
    /// (scenario node, kind node), one per worker, in the order kind creates them.
    pub workers: Vec<(String, String)>,
    map: BTreeMap<String, String>,
}

impl NodeNames {
    /// The names for a scenario's nodes.
    pub fn of(sc: &Scenario) -> NodeNames {
        let cluster = cluster_name(&sc.metadata.name);
        let workers: Vec<(String, String)> = sc
            .nodes()
            .into_iter()
            .enumerate()
            .map(|(i, n)| (n.name, kind_worker(&cluster, i)))
            .collect();
        let map = workers.iter().cloned().collect();
        NodeNames {
            cluster,
            workers,
            map,
        }
    }

    /// The control-plane node container: `<cluster>-control-plane`.
    pub fn control_plane(&self) -> String {
        format!("{}-control-plane", self.cluster)
    }

    /// The kind node a scenario node becomes, if it is one.
    pub fn kind_node(&self, scenario_node: &str) -> Option<&str> {
        self.map.get(scenario_node).map(String::as_str)
    }

    /// `text` with every whole word that is a scenario node's name replaced by the kind
    /// node's. A word is a run of the characters a node name may hold (`a-z0-9.-`, and
    /// upper case so `Node-1` is not split), so `node-1` is replaced in
    /// `spec.nodeName=node-1` and `node/node-1` but not in `node-10` or `node-1.example`.
    pub fn translate(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            match self.map.get(word.as_str()) {
                Some(k) => out.push_str(k),
                None => out.push_str(word),
            }
            word.clear();
        };
        for c in text.chars() {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_' {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        out
    }
}

/// The name kind gives the `i`th (0-based) worker: `<cluster>-worker`, `-worker2`, ….
pub fn kind_worker(cluster: &str, i: usize) -> String {
    if i == 0 {
        format!("{cluster}-worker")
    } else {
        format!("{cluster}-worker{}", i + 1)
    }
}

/// The scenario's name as a kind cluster name when it is a lowercase DNS label short
/// enough for the node names made from it; [`DEFAULT_CLUSTER`] otherwise.
pub fn cluster_name(scenario_name: &str) -> String {
    let ok = !scenario_name.is_empty()
        && scenario_name.len() <= 40
        && scenario_name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !scenario_name.starts_with('-')
        && !scenario_name.ends_with('-');
    if ok {
        scenario_name.to_string()
    } else {
        DEFAULT_CLUSTER.to_string()
    }
}

/// A word for bash: as is when it holds only safe characters, otherwise single-quoted
/// (`'` written as `'\''`). `|` stays bare so a step's pipe still pipes.
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | '@' | '%' | '+' | ',')
        });
    if safe || word == "|" {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Words joined into a bash command line, each quoted by [`shell_quote`].
pub fn shell_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}
