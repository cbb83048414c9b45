//! Tab completion for the page's terminal, as bash completion for kubectl behaves: the
//! word under the cursor (the line's last) completes to commands, kubectl subcommands,
//! flags, resource types, object names, files and node names. One candidate completes
//! with a trailing space; several extend to their common prefix and are listed.

use std::collections::BTreeMap;

use super::kubectl::{sub_flags, subcommand, GLOBAL, SUBCOMMANDS};
use crate::object::Kind;
use crate::world::World;

/// What Tab does to a line: the new line, and the candidates to list (several, or none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The line after completing.
    pub line: String,
    /// The candidates, when there is more than one.
    pub candidates: Vec<String>,
}

const PROGRAMS: &[&str] = &["kubectl", "etcdctl", "ssh", "sim", "help", "clear"];
/// Subcommands whose next word is a resource type.
const TAKES_TYPE: &[&str] = &[
    "get",
    "describe",
    "delete",
    "edit",
    "label",
    "annotate",
    "patch",
    "scale",
    "explain",
    "wait",
    "rollout",
    "autoscale",
    "expose",
    "set",
];

/// Completes the last word of `line`.
pub fn complete(world: &World, line: &str, files: &BTreeMap<String, String>) -> Completion {
    let words: Vec<&str> = line.split_whitespace().collect();
    let ends_blank = line.is_empty() || line.ends_with(' ');
    let (done, word): (Vec<&str>, &str) = if ends_blank {
        (words.clone(), "")
    } else {
        (
            words[..words.len().saturating_sub(1)].to_vec(),
            words.last().copied().unwrap_or(""),
        )
    };
    let pool = candidates(world, &done, word, files);
    let mut hits: Vec<String> = pool.into_iter().filter(|c| c.starts_with(word)).collect();
    hits.sort();
    hits.dedup();
    let head = &line[..line.len() - word.len()];
    match hits.as_slice() {
        [] => Completion {
            line: line.to_string(),
            candidates: Vec::new(),
        },
        [one] => Completion {
            line: format!("{head}{one} "),
            candidates: Vec::new(),
        },
        many => {
            let prefix = common_prefix(many);
            Completion {
                line: format!(
                    "{head}{}",
                    if prefix.len() > word.len() {
                        &prefix
                    } else {
                        word
                    }
                ),
                candidates: many.to_vec(),
            }
        }
    }
}

fn common_prefix(v: &[String]) -> String {
    let first = &v[0];
    let mut n = first.len();
    for s in &v[1..] {
        n = n.min(
            first
                .bytes()
                .zip(s.bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    first[..n].to_string()
}

fn candidates(
    world: &World,
    done: &[&str],
    word: &str,
    files: &BTreeMap<String, String>,
) -> Vec<String> {
    let Some(program) = done.first() else {
        return PROGRAMS.iter().map(|s| s.to_string()).collect();
    };
    let prev = done.last().copied().unwrap_or("");
    match *program {
        "ssh" if done.len() == 1 => node_names(world),
        "kubectl" | "k" => kubectl(world, &done[1..], prev, word, files),
        _ => Vec::new(),
    }
}

fn kubectl(
    world: &World,
    done: &[&str],
    prev: &str,
    word: &str,
    files: &BTreeMap<String, String>,
) -> Vec<String> {
    let args: Vec<String> = done.iter().map(|s| s.to_string()).collect();
    let Some((i, sub)) = subcommand(&args) else {
        return SUBCOMMANDS.iter().map(|s| s.to_string()).collect();
    };
    if matches!(prev, "-f" | "--filename") {
        return files.keys().cloned().collect();
    }
    if matches!(prev, "-n" | "--namespace") {
        return names(world, Kind::Namespace, "");
    }
    if word.starts_with('-') {
        return GLOBAL
            .iter()
            .chain(sub_flags(sub))
            .map(|f| format!("--{}", f.long))
            .collect();
    }
    let positional: Vec<&str> = args[i + 1..]
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let ns = namespace(&args);
    match (sub, positional.as_slice()) {
        ("logs" | "exec", []) => names(world, Kind::Pod, &ns),
        ("rollout", []) => ["status", "history", "undo", "restart", "pause", "resume"]
            .map(String::from)
            .to_vec(),
        ("rollout", [_]) => types(),
        ("rollout", [_, t]) => kind_names(world, t, &ns),
        ("cordon" | "uncordon" | "drain" | "taint", []) => node_names(world),
        (s, []) if TAKES_TYPE.contains(&s) => types(),
        (s, [t]) if TAKES_TYPE.contains(&s) => kind_names(world, t, &ns),
        _ => Vec::new(),
    }
}

fn namespace(args: &[String]) -> String {
    args.iter()
        .position(|a| a == "-n" || a == "--namespace")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "default".into())
}

/// Resource types as kubectl completes them: plural names (and short names).
fn types() -> Vec<String> {
    Kind::ALL
        .iter()
        .flat_map(|k| {
            let i = k.info();
            std::iter::once(i.plural.to_string()).chain(i.short_names.iter().map(|s| s.to_string()))
        })
        .collect()
}

fn kind_names(world: &World, t: &str, ns: &str) -> Vec<String> {
    if let Some((_, rest)) = t.split_once('/') {
        let _ = rest;
        return Vec::new();
    }
    match Kind::from_resource_arg(t) {
        Some(k) => names(world, k, ns),
        None => Vec::new(),
    }
}

/// Names of objects of `kind` in `ns`, as stored (the page sees the whole cluster).
fn names(world: &World, kind: Kind, ns: &str) -> Vec<String> {
    let prefix = kind.registry_prefix(ns);
    world
        .observe()
        .etcd()
        .store
        .range_prefix(&prefix)
        .filter_map(|kv| kv.key.strip_prefix(&prefix).map(String::from))
        .filter(|n| !n.contains('/'))
        .collect()
}

fn node_names(world: &World) -> Vec<String> {
    world.observe().node_names()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterConfig;

    fn tab(w: &World, line: &str) -> Completion {
        complete(
            w,
            line,
            &BTreeMap::from([("web.yaml".to_string(), String::new())]),
        )
    }

    #[test]
    fn commands_subcommands_and_flags_complete() {
        let w = World::new(ClusterConfig::default());
        assert_eq!(tab(&w, "kub").line, "kubectl ");
        assert_eq!(tab(&w, "kubectl rollo").line, "kubectl rollout ");
        let d = tab(&w, "kubectl de");
        assert_eq!(d.line, "kubectl de");
        assert_eq!(d.candidates, ["delete", "describe"]);
        assert_eq!(
            tab(&w, "kubectl get pods --show-l").line,
            "kubectl get pods --show-labels "
        );
        assert_eq!(
            tab(&w, "kubectl apply -f w").line,
            "kubectl apply -f web.yaml "
        );
    }

    #[test]
    fn types_and_object_names_complete_from_the_cluster() {
        let w = World::new(ClusterConfig::default());
        assert_eq!(
            tab(&w, "kubectl get deploym").line,
            "kubectl get deployments "
        );
        let ns = tab(&w, "kubectl get pods -n kube-");
        assert_eq!(ns.line, "kubectl get pods -n kube-");
        assert!(ns.candidates.contains(&"kube-system".to_string()), "{ns:?}");
        let pods = tab(&w, "kubectl describe pod -n kube-system etcd-");
        assert!(
            pods.line
                .starts_with("kubectl describe pod -n kube-system etcd-"),
            "{pods:?}"
        );
        let node = w.observe().nodes()[0].config.name.clone();
        assert!(tab(&w, "ssh ").candidates.contains(&node));
    }
}
