//! Label and field selectors: parsing the kubectl syntax and matching objects.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as K8sLabelSelector;

use crate::object::Object;

/// One requirement of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// `key=value` / `key==value` / matchLabels.
    Equals(String, String),
    /// `key!=value` (also matches when the key is absent).
    NotEquals(String, String),
    /// `key in (a,b)`.
    In(String, Vec<String>),
    /// `key notin (a,b)`.
    NotIn(String, Vec<String>),
    /// `key`.
    Exists(String),
    /// `!key`.
    DoesNotExist(String),
}

/// A label selector: all requirements ANDed. Empty matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// The requirements.
    pub requirements: Vec<Requirement>,
    /// A selector that matches nothing (a nil `metav1.LabelSelector` in some contexts).
    pub nothing: bool,
}

impl LabelSelector {
    /// Everything.
    pub fn everything() -> LabelSelector {
        LabelSelector::default()
    }

    /// Whether the labels satisfy the selector.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        if self.nothing {
            return false;
        }
        let get = |k: &str| labels.and_then(|l| l.get(k));
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v),
            Requirement::NotEquals(k, v) => get(k) != Some(v),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.contains(x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.contains(x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        })
    }

    /// Whether the object's labels satisfy the selector.
    pub fn matches_object(&self, o: &Object) -> bool {
        self.matches(o.meta().labels.as_ref())
    }

    /// Whether the selector is empty (matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty() && !self.nothing
    }

    /// Converts a `metav1.LabelSelector` (`LabelSelectorAsSelector`): None matches nothing,
    /// an empty one everything.
    pub fn from_k8s(sel: Option<&K8sLabelSelector>) -> Result<LabelSelector, String> {
        let Some(sel) = sel else {
            return Ok(LabelSelector {
                requirements: vec![],
                nothing: true,
            });
        };
        let mut reqs = Vec::new();
        for (k, v) in sel.match_labels.iter().flatten() {
            reqs.push(Requirement::Equals(k.clone(), v.clone()));
        }
        for e in sel.match_expressions.iter().flatten() {
            let values = e.values.clone().unwrap_or_default();
            let r = match e.operator.as_str() {
                "In" => Requirement::In(e.key.clone(), values),
                "NotIn" => Requirement::NotIn(e.key.clone(), values),
                "Exists" => Requirement::Exists(e.key.clone()),
                "DoesNotExist" => Requirement::DoesNotExist(e.key.clone()),
                op => return Err(format!("\"{op}\" is not a valid label selector operator")),
            };
            reqs.push(r);
        }
        Ok(LabelSelector {
            requirements: reqs,
            nothing: false,
        })
    }

    /// Parses kubectl's `-l` syntax: `app=web,tier!=db,env in (a,b),!legacy,track`.
    pub fn parse(s: &str) -> Result<LabelSelector, String> {
        let mut reqs = Vec::new();
        for part in split_top_level(s) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            reqs.push(parse_requirement(part)?);
        }
        Ok(LabelSelector {
            requirements: reqs,
            nothing: false,
        })
    }
}

impl std::fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .requirements
            .iter()
            .map(|r| match r {
                Requirement::Equals(k, v) => format!("{k}={v}"),
                Requirement::NotEquals(k, v) => format!("{k}!={v}"),
                Requirement::In(k, vs) => format!("{k} in ({})", vs.join(",")),
                Requirement::NotIn(k, vs) => format!("{k} notin ({})", vs.join(",")),
                Requirement::Exists(k) => k.clone(),
                Requirement::DoesNotExist(k) => format!("!{k}"),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// Splits on commas that are not inside parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn parse_requirement(part: &str) -> Result<Requirement, String> {
    let bad = || format!("unable to parse requirement: found '{part}', expected: identifier");
    if let Some(k) = part.strip_prefix('!') {
        return valid_key(k.trim())
            .map(Requirement::DoesNotExist)
            .ok_or_else(bad);
    }
    for (op, neg) in [(" notin ", true), (" in ", false)] {
        if let Some(idx) = part.find(op) {
            let key = part[..idx].trim();
            let rest = part[idx + op.len()..].trim();
            let inner = rest
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| {
                    format!("unable to parse requirement: found '{rest}', expected: '('")
                })?;
            let values: Vec<String> = inner
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect();
            let key = valid_key(key).ok_or_else(bad)?;
            return Ok(if neg {
                Requirement::NotIn(key, values)
            } else {
                Requirement::In(key, values)
            });
        }
    }
    if let Some((k, v)) = part.split_once("!=") {
        return Ok(Requirement::NotEquals(
            valid_key(k.trim()).ok_or_else(bad)?,
            v.trim().to_string(),
        ));
    }
    if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
        return Ok(Requirement::Equals(
            valid_key(k.trim()).ok_or_else(bad)?,
            v.trim().to_string(),
        ));
    }
    valid_key(part).map(Requirement::Exists).ok_or_else(bad)
}

fn valid_key(k: &str) -> Option<String> {
    let ok = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    ok.then(|| k.to_string())
}

/// A field selector: `spec.nodeName=node-1,status.phase!=Running`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// (field, value, negated)
    pub terms: Vec<(String, String, bool)>,
}

impl FieldSelector {
    /// `field=value`.
    pub fn eq(field: &str, value: &str) -> FieldSelector {
        FieldSelector {
            terms: vec![(field.to_string(), value.to_string(), false)],
        }
    }

    /// Parses kubectl's `--field-selector` syntax.
    pub fn parse(s: &str) -> Result<FieldSelector, String> {
        let mut terms = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (f, v, neg) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                (f, v, false)
            } else {
                return Err(format!(
                    "invalid selector: '{part}'; can't understand '{part}'"
                ));
            };
            terms.push((f.trim().to_string(), v.trim().to_string(), neg));
        }
        Ok(FieldSelector { terms })
    }

    /// The value required for `field`, if the selector has an equality term on it.
    pub fn required_value(&self, field: &str) -> Option<&str> {
        self.terms
            .iter()
            .find(|(f, _, neg)| f == field && !neg)
            .map(|(_, v, _)| v.as_str())
    }

    /// Whether the object satisfies every term. Unsupported fields match nothing.
    pub fn matches(&self, o: &Object) -> bool {
        self.terms
            .iter()
            .all(|(f, v, neg)| match field_value(o, f) {
                Some(actual) => (actual == *v) != *neg,
                None => false,
            })
    }
}

/// The value of a selectable field, as upstream's field label conversion functions expose.
fn field_value(o: &Object, field: &str) -> Option<String> {
    let m = o.meta();
    match field {
        "metadata.name" => return Some(m.name.clone().unwrap_or_default()),
        "metadata.namespace" => return Some(m.namespace.clone().unwrap_or_default()),
        _ => {}
    }
    match o {
        Object::Pod(p) => {
            let spec = p.spec.as_ref();
            let status = p.status.as_ref();
            match field {
                "spec.nodeName" => Some(spec.and_then(|s| s.node_name.clone()).unwrap_or_default()),
                "spec.schedulerName" => Some(
                    spec.and_then(|s| s.scheduler_name.clone())
                        .unwrap_or_default(),
                ),
                "spec.serviceAccountName" => Some(
                    spec.and_then(|s| s.service_account_name.clone())
                        .unwrap_or_default(),
                ),
                "spec.restartPolicy" => Some(
                    spec.and_then(|s| s.restart_policy.clone())
                        .unwrap_or_default(),
                ),
                "status.phase" => Some(status.and_then(|s| s.phase.clone()).unwrap_or_default()),
                "status.podIP" => Some(status.and_then(|s| s.pod_ip.clone()).unwrap_or_default()),
                "status.nominatedNodeName" => Some(
                    status
                        .and_then(|s| s.nominated_node_name.clone())
                        .unwrap_or_default(),
                ),
                _ => None,
            }
        }
        Object::Node(n) => match field {
            "spec.unschedulable" => Some(
                n.spec
                    .as_ref()
                    .and_then(|s| s.unschedulable)
                    .unwrap_or(false)
                    .to_string(),
            ),
            _ => None,
        },
        Object::Event(e) => match field {
            "involvedObject.kind" => e.involved_object.kind.clone(),
            "involvedObject.name" => e.involved_object.name.clone(),
            "involvedObject.namespace" => e.involved_object.namespace.clone(),
            "involvedObject.uid" => e.involved_object.uid.clone(),
            "reason" => e.reason.clone(),
            "type" => e.type_.clone(),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn kubectl_label_syntax_parses_and_matches() {
        let s =
            LabelSelector::parse("app=web,tier!=db,env in (prod, staging),!legacy,track").unwrap();
        assert_eq!(s.requirements.len(), 5);
        assert!(s.matches(Some(&labels(&[
            ("app", "web"),
            ("env", "prod"),
            ("track", "x")
        ]))));
        assert!(!s.matches(Some(&labels(&[
            ("app", "web"),
            ("env", "dev"),
            ("track", "x")
        ]))));
        assert!(!s.matches(Some(&labels(&[
            ("app", "web"),
            ("env", "prod"),
            ("track", "x"),
            ("legacy", "1")
        ]))));
        assert!(!s.matches(None));
        assert!(LabelSelector::parse("").unwrap().matches(None));
        assert!(LabelSelector::parse("a b").is_err());
    }

    #[test]
    fn nil_k8s_selector_matches_nothing_and_empty_matches_everything() {
        assert!(!LabelSelector::from_k8s(None).unwrap().matches(None));
        assert!(LabelSelector::from_k8s(Some(&K8sLabelSelector::default()))
            .unwrap()
            .matches(None));
    }
}
