//! A check of kind's v1alpha4 Cluster config: the field names and values kind's types
//! accept (kind decodes its config strictly, so an unknown field is an error there).

use serde_yaml::Value;

// From kind.x-k8s.io/v1alpha4 (pkg/apis/config/v1alpha4/types.go).

const CLUSTER_FIELDS: &[&str] = &[
    "kind",
    "apiVersion",
    "name",
    "nodes",
    "networking",
    "featureGates",
    "runtimeConfig",
    "kubeadmConfigPatches",
    "kubeadmConfigPatchesJSON6902",
    "containerdConfigPatches",
    "containerdConfigPatchesJSON6902",
];
const NODE_FIELDS: &[&str] = &[
    "role",
    "image",
    "labels",
    "extraMounts",
    "extraPortMappings",
    "gpus",
    "kubeadmConfigPatches",
    "kubeadmConfigPatchesJSON6902",
];
const NETWORKING_FIELDS: &[&str] = &[
    "ipFamily",
    "apiServerAddress",
    "apiServerPort",
    "podSubnet",
    "serviceSubnet",
    "disableDefaultCNI",
    "kubeProxyMode",
    "dnsSearch",
];
const PORT_MAPPING_FIELDS: &[&str] = &["containerPort", "hostPort", "listenAddress", "protocol"];
const KUBEADM_KINDS: &[&str] = &[
    "InitConfiguration",
    "JoinConfiguration",
    "ClusterConfiguration",
    "KubeletConfiguration",
    "KubeProxyConfiguration",
];

fn keys(v: &Value, allowed: &[&str], at: &str) -> Vec<String> {
    let Some(m) = v.as_mapping() else {
        return vec![format!("{at}: not a mapping")];
    };
    m.keys()
        .filter_map(|k| {
            let k = k.as_str().unwrap_or("<non-string key>");
            (!allowed.contains(&k)).then(|| format!("{at}.{k}: unknown field"))
        })
        .collect()
}

/// Every way `text` breaks kind's v1alpha4 Cluster config (kind decodes it strictly).
pub(super) fn kind_schema_problems(text: &str) -> Vec<String> {
    let v: Value = match serde_yaml::from_str(text) {
        Ok(v) => v,
        Err(e) => return vec![format!("not YAML: {e}")],
    };
    let mut p = keys(&v, CLUSTER_FIELDS, "");
    if v["kind"].as_str() != Some("Cluster") {
        p.push("kind must be Cluster".into());
    }
    if v["apiVersion"].as_str() != Some("kind.x-k8s.io/v1alpha4") {
        p.push("apiVersion must be kind.x-k8s.io/v1alpha4".into());
    }
    if !v["networking"].is_null() {
        p.extend(keys(&v["networking"], NETWORKING_FIELDS, "networking"));
        let mode = &v["networking"]["kubeProxyMode"];
        if !mode.is_null()
            && !matches!(
                mode.as_str(),
                Some("iptables" | "ipvs" | "nftables" | "none")
            )
        {
            p.push(format!("networking.kubeProxyMode: {mode:?}"));
        }
    }
    let Some(nodes) = v["nodes"].as_sequence() else {
        p.push("nodes: not a list".into());
        return p;
    };
    for (i, n) in nodes.iter().enumerate() {
        let at = format!("nodes[{i}]");
        p.extend(keys(n, NODE_FIELDS, &at));
        if !matches!(n["role"].as_str(), Some("control-plane" | "worker")) {
            p.push(format!("{at}.role: {:?}", n["role"]));
        }
        if let Some(l) = n["labels"].as_mapping() {
            for (k, v) in l {
                if !k.is_string() || !v.is_string() {
                    p.push(format!("{at}.labels: {k:?}: {v:?} is not string: string"));
                }
            }
        } else if !n["labels"].is_null() {
            p.push(format!("{at}.labels: not a mapping"));
        }
        for (j, m) in n["extraPortMappings"]
            .as_sequence()
            .into_iter()
            .flatten()
            .enumerate()
        {
            p.extend(keys(
                m,
                PORT_MAPPING_FIELDS,
                &format!("{at}.extraPortMappings[{j}]"),
            ));
            if !m["protocol"].is_null()
                && !matches!(m["protocol"].as_str(), Some("TCP" | "UDP" | "SCTP"))
            {
                p.push(format!("{at}.extraPortMappings[{j}].protocol"));
            }
            if m["containerPort"].as_i64().is_none() {
                p.push(format!(
                    "{at}.extraPortMappings[{j}].containerPort: not an integer"
                ));
            }
        }
        for (j, patch) in n["kubeadmConfigPatches"]
            .as_sequence()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("{at}.kubeadmConfigPatches[{j}]");
            let Some(s) = patch.as_str() else {
                p.push(format!("{at}: not a string"));
                continue;
            };
            let doc: Value = match serde_yaml::from_str(s) {
                Ok(d) => d,
                Err(e) => {
                    p.push(format!("{at}: not YAML: {e}"));
                    continue;
                }
            };
            if !KUBEADM_KINDS.contains(&doc["kind"].as_str().unwrap_or("")) {
                p.push(format!("{at}.kind: {:?}", doc["kind"]));
            }
            for t in doc["nodeRegistration"]["taints"]
                .as_sequence()
                .into_iter()
                .flatten()
            {
                p.extend(keys(
                    t,
                    &["key", "value", "effect", "timeAdded"],
                    &format!("{at} taint"),
                ));
                if !matches!(
                    t["effect"].as_str(),
                    Some("NoSchedule" | "PreferNoSchedule" | "NoExecute")
                ) {
                    p.push(format!("{at}: taint effect {:?}", t["effect"]));
                }
            }
        }
    }
    if nodes
        .iter()
        .filter(|n| n["role"].as_str() == Some("control-plane"))
        .count()
        != 1
    {
        p.push("exactly one control-plane node expected".into());
    }
    p
}
