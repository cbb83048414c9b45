//! Label selectors (metav1.LabelSelector) and node selectors (core NodeSelector), compiled
//! once per pod so matching on the hot path does no parsing.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// Labels of an object.
pub type Labels = BTreeMap<String, String>;

/// One requirement of a compiled selector.
#[derive(Clone, Debug, PartialEq)]
pub enum Requirement {
    /// `key in (values)`.
    In(String, Vec<String>),
    /// `key notin (values)`: true when the key is absent too.
    NotIn(String, Vec<String>),
    /// `key` exists.
    Exists(String),
    /// `!key`.
    DoesNotExist(String),
    /// Integer greater-than (node selectors only).
    Gt(String, i64),
    /// Integer less-than (node selectors only).
    Lt(String, i64),
}

impl Requirement {
    /// Whether `labels` satisfy the requirement.
    pub fn matches(&self, labels: &Labels) -> bool {
        match self {
            Requirement::In(k, vs) => labels.get(k).is_some_and(|v| vs.iter().any(|x| x == v)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|v| !vs.iter().any(|x| x == v)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
            Requirement::Gt(k, n) => labels
                .get(k)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v > *n),
            Requirement::Lt(k, n) => labels
                .get(k)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v < *n),
        }
    }
}

/// A compiled label selector. `Nothing` is what a nil selector becomes.
#[derive(Clone, Debug, PartialEq)]
pub enum Selector {
    /// Matches no object (nil selector, or an invalid one).
    Nothing,
    /// Matches objects satisfying every requirement (empty = everything).
    Reqs(Vec<Requirement>),
}

impl Selector {
    /// `metav1.LabelSelectorAsSelector`: nil → Nothing, `{}` → everything. An invalid
    /// operator makes the selector match nothing.
    pub fn from_label_selector(sel: Option<&LabelSelector>) -> Selector {
        let Some(sel) = sel else {
            return Selector::Nothing;
        };
        let mut reqs = Vec::new();
        for (k, v) in sel.match_labels.iter().flatten() {
            reqs.push(Requirement::In(k.clone(), vec![v.clone()]));
        }
        for e in sel.match_expressions.iter().flatten() {
            let vals = e.values.clone().unwrap_or_default();
            let r = match e.operator.as_str() {
                "In" => Requirement::In(e.key.clone(), vals),
                "NotIn" => Requirement::NotIn(e.key.clone(), vals),
                "Exists" => Requirement::Exists(e.key.clone()),
                "DoesNotExist" => Requirement::DoesNotExist(e.key.clone()),
                _ => return Selector::Nothing,
            };
            reqs.push(r);
        }
        Selector::Reqs(reqs)
    }

    /// A selector requiring every `key=value` of `labels` (`labels.SelectorFromSet`).
    pub fn from_set(labels: &Labels) -> Selector {
        Selector::Reqs(
            labels
                .iter()
                .map(|(k, v)| Requirement::In(k.clone(), vec![v.clone()]))
                .collect(),
        )
    }

    /// Whether the selector matches `labels`.
    pub fn matches(&self, labels: &Labels) -> bool {
        match self {
            Selector::Nothing => false,
            Selector::Reqs(r) => r.iter().all(|r| r.matches(labels)),
        }
    }

    /// Whether this selector matches everything (`labels.Everything()`).
    pub fn is_empty(&self) -> bool {
        matches!(self, Selector::Reqs(r) if r.is_empty())
    }
}

fn compile_node_req(r: &NodeSelectorRequirement) -> Option<Requirement> {
    let vals = r.values.clone().unwrap_or_default();
    let one_int = || -> Option<i64> {
        if vals.len() != 1 {
            return None;
        }
        vals[0].parse().ok()
    };
    Some(match r.operator.as_str() {
        "In" => Requirement::In(r.key.clone(), vals),
        "NotIn" => Requirement::NotIn(r.key.clone(), vals),
        "Exists" => Requirement::Exists(r.key.clone()),
        "DoesNotExist" => Requirement::DoesNotExist(r.key.clone()),
        "Gt" => Requirement::Gt(r.key.clone(), one_int()?),
        "Lt" => Requirement::Lt(r.key.clone(), one_int()?),
        _ => return None,
    })
}

/// One compiled NodeSelectorTerm: label expressions and `metadata.name` field expressions.
#[derive(Clone, Debug, PartialEq)]
pub struct CompiledTerm {
    labels: Vec<Requirement>,
    fields: Vec<Requirement>,
    valid: bool,
}

impl CompiledTerm {
    /// Compiles a term; an invalid expression makes the term match nothing, as upstream
    /// (`nodeaffinity.NewNodeSelector` parse errors turn the term into a non-match).
    pub fn new(t: &NodeSelectorTerm) -> CompiledTerm {
        let mut valid = true;
        let mut labels = Vec::new();
        for r in t.match_expressions.iter().flatten() {
            match compile_node_req(r) {
                Some(x) => labels.push(x),
                None => valid = false,
            }
        }
        let mut fields = Vec::new();
        for r in t.match_fields.iter().flatten() {
            let ok = r.key == "metadata.name"
                && matches!(r.operator.as_str(), "In" | "NotIn")
                && r.values.as_ref().is_some_and(|v| v.len() == 1);
            match (ok, compile_node_req(r)) {
                (true, Some(x)) => fields.push(x),
                _ => valid = false,
            }
        }
        CompiledTerm {
            labels,
            fields,
            valid,
        }
    }

    /// Whether the term matches the node; an empty term matches nothing.
    pub fn matches(&self, node_labels: &Labels, node_name: &str) -> bool {
        if !self.valid || (self.labels.is_empty() && self.fields.is_empty()) {
            return false;
        }
        if !self.labels.iter().all(|r| r.matches(node_labels)) {
            return false;
        }
        if self.fields.is_empty() {
            return true;
        }
        let mut f = Labels::new();
        f.insert("metadata.name".to_string(), node_name.to_string());
        self.fields.iter().all(|r| r.matches(&f))
    }

    /// Node names this term pins with `metadata.name In [x]`, if any.
    pub fn pinned_node_names(&self) -> Option<Vec<String>> {
        let mut out: Option<Vec<String>> = None;
        for r in &self.fields {
            if let Requirement::In(_, vs) = r {
                out = Some(match out {
                    None => vs.clone(),
                    Some(prev) => prev.into_iter().filter(|x| vs.contains(x)).collect(),
                });
            }
        }
        out
    }
}

/// A compiled NodeSelector: terms are ORed.
#[derive(Clone, Debug, PartialEq)]
pub struct CompiledNodeSelector {
    /// The terms.
    pub terms: Vec<CompiledTerm>,
}

impl CompiledNodeSelector {
    /// Compiles a NodeSelector.
    pub fn new(ns: &NodeSelector) -> CompiledNodeSelector {
        CompiledNodeSelector {
            terms: ns
                .node_selector_terms
                .iter()
                .map(CompiledTerm::new)
                .collect(),
        }
    }

    /// Whether any term matches.
    pub fn matches(&self, labels: &Labels, name: &str) -> bool {
        self.terms.iter().any(|t| t.matches(labels, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(kv: &[(&str, &str)]) -> Labels {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn label_selectors_match_like_apimachinery() {
        let sel: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]
        }))
        .unwrap();
        let s = Selector::from_label_selector(Some(&sel));
        assert!(s.matches(&labels(&[("app", "web")])));
        assert!(s.matches(&labels(&[("app", "web"), ("tier", "fe")])));
        assert!(!s.matches(&labels(&[("app", "web"), ("tier", "db")])));
        assert!(!Selector::from_label_selector(None).matches(&labels(&[])));
        let empty = LabelSelector::default();
        assert!(Selector::from_label_selector(Some(&empty)).matches(&labels(&[])));
    }

    #[test]
    fn node_selector_terms_are_ored_and_empty_terms_match_nothing() {
        let ns: NodeSelector = serde_json::from_value(serde_json::json!({"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["4"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n9"]}]},
            {}
        ]}))
        .unwrap();
        let c = CompiledNodeSelector::new(&ns);
        assert!(c.matches(&labels(&[("cores", "8")]), "n1"));
        assert!(!c.matches(&labels(&[("cores", "4")]), "n1"));
        assert!(c.matches(&labels(&[]), "n9"));
        assert_eq!(c.terms[1].pinned_node_names(), Some(vec!["n9".to_string()]));
    }
}
