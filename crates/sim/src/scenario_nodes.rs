//! Checks `spec.nodes`: node groups, names, resources, taints and images.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::values::{dns1123_subdomain, parse_quantity_milli, resource_name};
use super::{child, Checker, MAX_NODES};
use crate::scenario::{NodeGroup, NodeImage, Taint, TaintEffect};
use crate::yamlpos::Target;

impl Checker {
    pub(super) fn nodes(&mut self, v: &Value) -> Vec<NodeGroup> {
        let entries = self.list(v, "spec.nodes");
        let mut groups = Vec::new();
        let mut total: u64 = 0;
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for (i, entry) in entries.iter().enumerate() {
            let path = format!("spec.nodes[{i}]");
            let Some(group) = self.node_group(entry, &path) else {
                continue;
            };
            let count = if group.name.is_some() {
                1
            } else {
                u64::from(group.count.unwrap_or(0))
            };
            total += count;
            if total <= u64::from(MAX_NODES) {
                let (field, names): (String, Vec<String>) = match (&group.name, &group.name_prefix)
                {
                    (Some(n), _) => (format!("{path}.name"), vec![n.clone()]),
                    (None, Some(p)) => (
                        format!("{path}.namePrefix"),
                        (1..=count).map(|k| format!("{p}{k}")).collect(),
                    ),
                    (None, None) => (String::new(), Vec::new()),
                };
                // One report per entry is enough: a clashing group clashes many times.
                if let Some(dup) = names.into_iter().find(|n| !seen.insert(n.clone())) {
                    self.push(
                        &field,
                        Target::Value,
                        format!("{field}: Duplicate value: {dup:?}"),
                    );
                }
            }
            groups.push(group);
        }
        if total > u64::from(MAX_NODES) {
            self.push(
                "spec.nodes",
                Target::Key,
                format!("spec.nodes: Too many: {total}: must have at most {MAX_NODES} nodes"),
            );
        }
        groups
    }

    fn node_group(&mut self, v: &Value, path: &str) -> Option<NodeGroup> {
        let m = match v {
            Value::Object(m) => m,
            other => {
                self.wrong_type(path, other, "a mapping");
                return None;
            }
        };
        self.unknown_fields(
            m,
            path,
            &[
                "name",
                "namePrefix",
                "count",
                "capacity",
                "allocatable",
                "labels",
                "taints",
                "images",
                "unschedulable",
            ],
        );
        let name_field = format!("{path}.name");
        let prefix_field = format!("{path}.namePrefix");
        let count_field = format!("{path}.count");
        let mut group = NodeGroup {
            name: self.string(m.get("name"), &name_field),
            name_prefix: self.string(m.get("namePrefix"), &prefix_field),
            ..NodeGroup::default()
        };
        let count = self.unsigned(m.get("count"), &count_field);
        match (&group.name, &group.name_prefix, count) {
            (Some(_), Some(_), _) => self.push(
                &prefix_field,
                Target::Key,
                format!("{prefix_field}: Forbidden: may not be set when name is set"),
            ),
            (Some(_), None, Some(_)) => self.push(
                &count_field,
                Target::Key,
                format!("{count_field}: Forbidden: may only be set with namePrefix"),
            ),
            // A count of the wrong type is reported already; only a missing one here.
            (None, Some(_), None) if m.get("count").is_none_or(Value::is_null) => {
                self.required(&count_field, "required when namePrefix is set")
            }
            (None, None, Some(_)) => self.required(&prefix_field, "required when count is set"),
            (None, None, None)
                if m.get("name").is_none_or(Value::is_null)
                    && m.get("namePrefix").is_none_or(Value::is_null) =>
            {
                self.required(&name_field, "set name, or namePrefix and count")
            }
            _ => {}
        }
        // A count next to a name is already reported as forbidden.
        if let (Some(c), None) = (count, &group.name) {
            if c < 1 {
                self.invalid(
                    &count_field,
                    &Value::from(c),
                    "must be greater than or equal to 1",
                );
            } else if c > u64::from(super::MAX_NODES) {
                let detail = format!("must be less than or equal to {MAX_NODES}");
                self.invalid(&count_field, &Value::from(c), &detail);
            } else {
                group.count = Some(c as u32);
            }
        }
        if let Some(name) = &group.name {
            if let Err(detail) = dns1123_subdomain(name) {
                self.invalid(&name_field, &Value::String(name.clone()), &detail);
            }
        }
        // Every generated name must be valid: the longest (the last) is checked.
        let longest = group
            .name_prefix
            .as_ref()
            .map(|p| format!("{p}{}", group.count.unwrap_or(1)));
        if let (Some(prefix), Some(longest)) = (&group.name_prefix, &longest) {
            if let Err(detail) = dns1123_subdomain(longest) {
                let detail = format!("the node name {longest:?} it makes {detail}");
                self.invalid(&prefix_field, &Value::String(prefix.clone()), &detail);
            }
        }
        group.capacity = self.resources(m.get("capacity"), &format!("{path}.capacity"));
        if m.get("allocatable").is_some_and(|v| !v.is_null()) {
            group.allocatable =
                Some(self.resources(m.get("allocatable"), &format!("{path}.allocatable")));
        }
        group.labels = self.string_map(m.get("labels"), &format!("{path}.labels"));
        let taints_field = format!("{path}.taints");
        let taints = m
            .get("taints")
            .map_or(&[][..], |v| self.list(v, &taints_field));
        for (i, t) in taints.iter().enumerate() {
            if let Some(t) = self.taint(t, &format!("{taints_field}[{i}]")) {
                group.taints.push(t);
            }
        }
        self.node_registers(&group, path);
        let images_field = format!("{path}.images");
        let images = m
            .get("images")
            .map_or(&[][..], |v| self.list(v, &images_field));
        for (i, img) in images.iter().enumerate() {
            if let Some(img) = self.image(img, &format!("{images_field}[{i}]")) {
                group.images.push(img);
            }
        }
        group.unschedulable = self
            .boolean(m.get("unschedulable"), &format!("{path}.unschedulable"))
            .unwrap_or(false);
        Some(group)
    }

    /// Labels and taints as the apiserver validates the Node the kubelet registers (a
    /// node it refuses would never join): keys must be qualified names, label values
    /// valid, taints unique.
    fn node_registers(&mut self, group: &NodeGroup, path: &str) {
        let cfg = crate::cluster::NodeConfig {
            name: "node".into(),
            capacity: BTreeMap::new(),
            allocatable: BTreeMap::new(),
            labels: group.labels.clone(),
            taints: group
                .taints
                .iter()
                .map(|t| k8s_openapi::api::core::v1::Taint {
                    key: t.key.clone(),
                    value: (!t.value.is_empty()).then(|| t.value.clone()),
                    effect: t.effect.as_str().into(),
                    time_added: None,
                })
                .collect(),
            images: Vec::new(),
        };
        for mut e in crate::cluster::validate_node_config(&cfg) {
            let Some(rest) = e
                .field
                .strip_prefix("metadata.labels")
                .map(|r| format!("{path}.labels{r}"))
                .or_else(|| {
                    e.field
                        // Upstream validates node taints under this path.
                        .strip_prefix("metadata.taints")
                        .map(|r| format!("{path}.taints{r}"))
                })
            else {
                continue;
            };
            e.field = rest;
            let target = if e.field.ends_with(".labels") {
                Target::Key
            } else {
                Target::Value
            };
            self.push(&e.field.clone(), target, e.to_string());
        }
    }

    fn resources(&mut self, v: Option<&Value>, path: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Some(m) = v.and_then(|v| self.object(v, path)) else {
            return out;
        };
        for (name, q) in m {
            let field = child(path, name);
            if let Err(detail) = resource_name(name) {
                self.push(
                    &field,
                    Target::Key,
                    format!("{field}: Invalid value: {name:?}: {detail}"),
                );
                continue;
            }
            let text = match q {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => {
                    self.wrong_type(&field, other, "a quantity such as \"4\", 500m or 8Gi");
                    continue;
                }
            };
            match parse_quantity_milli(&text) {
                Ok(milli) if milli < 0 => {
                    self.invalid(&field, q, "must be greater than or equal to 0");
                }
                Ok(_) => {
                    out.insert(name.clone(), text);
                }
                Err(detail) => self.invalid(&field, &Value::String(text), &detail),
            }
        }
        out
    }

    fn taint(&mut self, v: &Value, path: &str) -> Option<Taint> {
        let m = match v {
            Value::Object(m) => m,
            other => {
                self.wrong_type(path, other, "a mapping with key, value and effect");
                return None;
            }
        };
        self.unknown_fields(m, path, &["key", "value", "effect"]);
        let key_field = format!("{path}.key");
        let key = self.string(m.get("key"), &key_field);
        if key.as_deref().is_none_or(str::is_empty)
            && m.get("key").is_none_or(|k| k.is_string() || k.is_null())
        {
            self.required(&key_field, "");
        }
        let value = self
            .string(m.get("value"), &format!("{path}.value"))
            .unwrap_or_default();
        let effect_field = format!("{path}.effect");
        let effect = match self.string(m.get("effect"), &effect_field).as_deref() {
            Some("NoSchedule") => Some(TaintEffect::NoSchedule),
            Some("PreferNoSchedule") => Some(TaintEffect::PreferNoSchedule),
            Some("NoExecute") => Some(TaintEffect::NoExecute),
            Some(other) => {
                self.push(
                    &effect_field,
                    Target::Value,
                    format!("{effect_field}: Unsupported value: {other:?}: supported values: \"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\""),
                );
                None
            }
            None => {
                if m.get("effect").is_none_or(Value::is_null) {
                    self.required(&effect_field, "");
                }
                None
            }
        };
        Some(Taint {
            key: key.filter(|k| !k.is_empty())?,
            value,
            effect: effect?,
        })
    }

    fn image(&mut self, v: &Value, path: &str) -> Option<NodeImage> {
        let m = match v {
            Value::Object(m) => m,
            other => {
                self.wrong_type(path, other, "a mapping with names and sizeBytes");
                return None;
            }
        };
        self.unknown_fields(m, path, &["names", "sizeBytes"]);
        let names_field = format!("{path}.names");
        let mut names = Vec::new();
        let list = m
            .get("names")
            .map_or(&[][..], |v| self.list(v, &names_field));
        for (i, n) in list.iter().enumerate() {
            if let Some(s) = self.string(Some(n), &format!("{names_field}[{i}]")) {
                names.push(s);
            }
        }
        if list.is_empty() && m.get("names").is_none_or(|v| v.is_array() || v.is_null()) {
            self.required(&names_field, "at least one image name");
        }
        let size_bytes = self
            .unsigned(m.get("sizeBytes"), &format!("{path}.sizeBytes"))
            .unwrap_or(0);
        (!names.is_empty()).then_some(NodeImage { names, size_bytes })
    }
}
