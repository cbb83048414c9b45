//! `kubectl top pod|node`: usage as metrics-server would serve it, from each kubelet's
//! resource summary (scraped every 15 s; pods appear after their first full interval).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;

use crate::api::{ApiRequest, ApiResult, Verb};
use crate::cmd::kubectl::Kubectl;
use crate::kubectl::tabwriter::{TabConfig, TabWriter};
use crate::node::kubelet_api::{KubeletCall, KubeletReply, PodUsage, Summary};
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;

const MI: u64 = 1024 * 1024;

/// A node row: name and (cpu, cpu %, memory, memory %) if metrics exist.
type NodeRow = (String, Option<(u64, u64, u64, u64)>);

async fn nodes(k: &Kubectl) -> Result<Vec<Node>, i32> {
    match k
        .sys
        .api(ApiRequest::new(Verb::List, Kind::Node, "", ""))
        .await
    {
        Ok(ApiResult::List { items, .. }) => Ok(items
            .iter()
            .filter_map(|o| match &**o {
                Object::Node(n) => Some((**n).clone()),
                _ => None,
            })
            .collect()),
        Ok(_) => Ok(Vec::new()),
        Err(s) => Err(k.status_error(&s)),
    }
}

async fn summaries(k: &Kubectl, nodes: &[Node]) -> BTreeMap<String, Summary> {
    let mut out = BTreeMap::new();
    for n in nodes {
        let name = n.metadata.name.clone().unwrap_or_default();
        if let Ok(KubeletReply::Stats(s)) = k.sys.kubelet(&name, KubeletCall::Stats).await {
            out.insert(name, s);
        }
    }
    out
}

fn writer() -> TabWriter {
    TabWriter::new(TabConfig::KUBECTL_GET)
}

/// `kubectl top`.
pub async fn top(k: Kubectl) -> i32 {
    let args = k.flags.args.clone();
    match args.first().map(String::as_str) {
        Some("pod" | "pods" | "po") => top_pods(&k, args.get(1).cloned()).await,
        Some("node" | "nodes" | "no") => top_nodes(&k, args.get(1).cloned()).await,
        Some(other) => k.error(&format!("unknown command \"{other}\" for \"kubectl top\"")),
        None => {
            k.sys.out("Display resource (CPU/memory) usage.\n\n The top command allows you to see the resource consumption for nodes or pods.\n\n This command requires Metrics Server to be correctly configured and working on the server.\n\nAvailable Commands:\n  node          Display resource (CPU/memory) usage of nodes\n  pod           Display resource (CPU/memory) usage of pods\n\nUsage:\n  kubectl top [flags] [options]\n");
            0
        }
    }
}

async fn top_nodes(k: &Kubectl, name: Option<String>) -> i32 {
    let mut all = match nodes(k).await {
        Ok(n) => n,
        Err(c) => return c,
    };
    if let Some(n) = &name {
        all.retain(|x| x.metadata.name.as_deref() == Some(n.as_str()));
        if all.is_empty() {
            k.sys.err(&format!(
                "Error from server (NotFound): nodes \"{n}\" not found\n"
            ));
            return 1;
        }
    }
    let stats = summaries(k, &all).await;
    if stats.is_empty() {
        return k.error("metrics not available yet");
    }
    let mut rows: Vec<NodeRow> = all
        .iter()
        .map(|n| {
            let name = n.metadata.name.clone().unwrap_or_default();
            let alloc = n
                .status
                .as_ref()
                .and_then(|s| s.allocatable.clone())
                .unwrap_or_default();
            let cpu_alloc = alloc
                .get("cpu")
                .and_then(|q| crate::quantity::parse(&q.0).ok())
                .map_or(1, |q| q.milli_value().max(1) as u64);
            let mem_alloc = alloc
                .get("memory")
                .and_then(|q| crate::quantity::parse(&q.0).ok())
                .map_or(1, |q| q.value().max(1) as u64);
            let v = stats.get(&name).map(|s| {
                (
                    s.cpu_m,
                    s.cpu_m * 100 / cpu_alloc,
                    s.mem_bytes,
                    s.mem_bytes * 100 / mem_alloc,
                )
            });
            (name, v)
        })
        .collect();
    match k.flags.get("sort-by") {
        Some("cpu") => rows.sort_by_key(|r| std::cmp::Reverse(r.1.map_or(0, |v| v.0))),
        Some("memory") => rows.sort_by_key(|r| std::cmp::Reverse(r.1.map_or(0, |v| v.2))),
        _ => {}
    }
    let mut w = writer();
    if !k.flags.bool("no-headers") {
        w.write_str("NAME\tCPU(cores)\tCPU(%)\tMEMORY(bytes)\tMEMORY(%)\n");
    }
    for (name, v) in rows {
        match v {
            Some((c, cp, m, mp)) => {
                w.write_str(&format!("{name}\t{c}m\t{cp}%\t{}Mi\t{mp}%\n", m / MI))
            }
            None => w.write_str(&format!(
                "{name}\t<unknown>\t<unknown>\t<unknown>\t<unknown>\n"
            )),
        }
    }
    k.sys.out(&w.finish());
    0
}

async fn top_pods(k: &Kubectl, name: Option<String>) -> i32 {
    let all_ns = k.flags.bool("all-namespaces");
    let ns = k.namespace();
    let all = match nodes(k).await {
        Ok(n) => n,
        Err(c) => return c,
    };
    // Pods the apiserver knows (for names, namespaces and label selection).
    let mut req = ApiRequest::new(Verb::List, Kind::Pod, if all_ns { "" } else { &ns }, "");
    if let Some(l) = k.flags.get("selector") {
        match LabelSelector::parse(l) {
            Ok(s) => req.options.label_selector = Some(s),
            Err(e) => return k.error(&e),
        }
    }
    let known: Vec<(String, String)> = match k.sys.api(req).await {
        Ok(ApiResult::List { items, .. }) => items
            .iter()
            .map(|o| (o.namespace().to_string(), o.name().to_string()))
            .collect(),
        Ok(_) => Vec::new(),
        Err(s) => return k.status_error(&s),
    };
    if let Some(n) = &name {
        if !known.iter().any(|(_, x)| x == n) {
            k.sys.err(&format!(
                "Error from server (NotFound): pods \"{n}\" not found\n"
            ));
            return 1;
        }
    }
    let stats = summaries(k, &all).await;
    let mut pods: Vec<PodUsage> = stats
        .values()
        .flat_map(|s| s.pods.clone())
        .filter(|p| known.iter().any(|(a, b)| *a == p.namespace && *b == p.name))
        .filter(|p| name.as_ref().is_none_or(|n| *n == p.name))
        .collect();
    pods.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    if pods.is_empty() {
        if name.is_some() {
            return k.error("metrics not available yet");
        }
        if all_ns {
            k.sys.err("No resources found\n");
        } else {
            k.sys
                .err(&format!("No resources found in {ns} namespace.\n"));
        }
        return 0;
    }
    let total = |p: &PodUsage| -> (u64, u64) {
        p.containers
            .iter()
            .fold((0, 0), |(c, m), x| (c + x.cpu_m, m + x.mem_bytes))
    };
    match k.flags.get("sort-by") {
        Some("cpu") => pods.sort_by_key(|p| std::cmp::Reverse(total(p).0)),
        Some("memory") => pods.sort_by_key(|p| std::cmp::Reverse(total(p).1)),
        _ => {}
    }
    let containers = k.flags.bool("containers");
    let mut w = writer();
    if !k.flags.bool("no-headers") {
        let mut h = String::new();
        if all_ns {
            h.push_str("NAMESPACE\t");
        }
        h.push_str(if containers {
            "POD\tNAME\tCPU(cores)\tMEMORY(bytes)\n"
        } else {
            "NAME\tCPU(cores)\tMEMORY(bytes)\n"
        });
        w.write_str(&h);
    }
    for p in &pods {
        let prefix = if all_ns {
            format!("{}\t", p.namespace)
        } else {
            String::new()
        };
        if containers {
            for c in &p.containers {
                w.write_str(&format!(
                    "{prefix}{}\t{}\t{}m\t{}Mi\n",
                    p.name,
                    c.name,
                    c.cpu_m,
                    c.mem_bytes / MI
                ));
            }
        } else {
            let (c, m) = total(p);
            w.write_str(&format!("{prefix}{}\t{c}m\t{}Mi\n", p.name, m / MI));
        }
    }
    k.sys.out(&w.finish());
    0
}
