//! Checks a scenario document field by field, collecting every problem with its place.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{
    NodeGroup, NodeImage, ProxyMode, Scenario, ScenarioError, ScenarioMeta, ScenarioSpec, Step,
    Taint, TaintEffect, API_VERSION, DEFAULT_SEED, KIND,
};
use crate::time::{parse_duration, Time};
use crate::yamlpos::{self, Duplicates, Pos, Target};

/// The most nodes a scenario may have in all (Kubernetes' tested scale limit).
pub const MAX_NODES: u32 = 5000;

/// The largest Go duration, in milliseconds (`math.MaxInt64` nanoseconds).
const MAX_DURATION_MS: Time = (i64::MAX / 1_000_000) as Time;

/// How many extra YAML documents are looked at before giving up.
const MAX_EXTRA_DOCUMENTS: usize = 64;

const QUANTITY_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

struct Problem {
    field: String,
    target: Target,
    message: String,
}

#[derive(Default)]
struct Checker {
    problems: Vec<Problem>,
}

pub(super) fn parse(text: &str) -> Result<Scenario, Vec<ScenarioError>> {
    let value = match yamlpos::first_document_to_json(text, Duplicates::Reject) {
        Ok(v) => v,
        Err(e) => return Err(vec![syntax_error(&e)]),
    };
    let mut ck = Checker::default();
    let scenario = ck.scenario(&value);
    let mut errors: Vec<ScenarioError> = ck
        .problems
        .into_iter()
        .map(|p| {
            let pos = yamlpos::locate_nearest(text, 0, &p.field, p.target);
            ScenarioError {
                line: pos.line,
                column: pos.column,
                message: p.message,
                field: p.field,
            }
        })
        .collect();
    if let Some(e) = extra_document(text) {
        errors.push(e);
    }
    errors.sort_by_key(|e| (e.line, e.column));
    if errors.is_empty() {
        Ok(scenario)
    } else {
        Err(errors)
    }
}

fn syntax_error(e: &serde_yaml::Error) -> ScenarioError {
    let pos = yamlpos::error_pos(e).unwrap_or(Pos::START);
    let message = match yamlpos::syntax_error(e) {
        Some(s) => match (s.context, s.context_pos) {
            (Some(c), Some(p)) => format!("yaml: {} ({c} at {p})", s.problem),
            _ => format!("yaml: {}", s.problem),
        },
        None => format!("yaml: {}", yamlpos::error_message(e)),
    };
    ScenarioError {
        line: pos.line,
        column: pos.column,
        message,
        field: String::new(),
    }
}

/// A scenario is one document; a second, non-empty one is an error.
fn extra_document(text: &str) -> Option<ScenarioError> {
    let docs = serde_yaml::Deserializer::from_str(text).take(MAX_EXTRA_DOCUMENTS);
    for (i, doc) in docs.enumerate().skip(1) {
        match yamlpos::yaml_to_json(doc, Duplicates::LastWins) {
            Ok(Value::Null) => continue,
            Ok(_) => {
                let pos = yamlpos::locate(text, i, "", Target::Value).unwrap_or(Pos::START);
                return Some(ScenarioError {
                    line: pos.line,
                    column: pos.column,
                    message: "a scenario is a single YAML document: remove the second one"
                        .to_string(),
                    field: String::new(),
                });
            }
            Err(e) => return Some(syntax_error(&e)),
        }
    }
    None
}

/// `path.key`, or `path[key]` / `path["key"]` when the key is not a plain name.
fn child(path: &str, key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    } else if !key.is_empty()
        && !key.contains([']', '"', '\'', '\\'])
        && !key.chars().all(|c| c.is_ascii_digit())
    {
        format!("{path}[{key}]")
    } else {
        format!("{path}[{}]", serde_json::Value::String(key.to_string()))
    }
}

/// A value as field errors show it: strings quoted, collections abbreviated.
fn show(v: &Value) -> String {
    match v {
        Value::Object(_) => "{...}".to_string(),
        Value::Array(_) => "[...]".to_string(),
        other => other.to_string(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "mapping",
    }
}

impl Checker {
    fn push(&mut self, field: &str, target: Target, message: String) {
        self.problems.push(Problem {
            field: field.to_string(),
            target,
            message,
        });
    }

    fn invalid(&mut self, field: &str, v: &Value, detail: &str) {
        self.push(
            field,
            Target::Value,
            format!("{field}: Invalid value: {}: {detail}", show(v)),
        );
    }

    fn required(&mut self, field: &str, detail: &str) {
        let message = if detail.is_empty() {
            format!("{field}: Required value")
        } else {
            format!("{field}: Required value: {detail}")
        };
        self.push(field, Target::Key, message);
    }

    fn wrong_type(&mut self, field: &str, v: &Value, want: &str) {
        let detail = format!("must be {want}, not a {}", type_name(v));
        self.invalid(field, v, &detail);
    }

    fn unknown_fields(&mut self, map: &Map<String, Value>, path: &str, known: &[&str]) {
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                let field = child(path, key);
                self.push(&field, Target::Key, format!("unknown field {field:?}"));
            }
        }
    }

    fn object<'v>(&mut self, v: &'v Value, path: &str) -> Option<&'v Map<String, Value>> {
        match v {
            Value::Object(m) => Some(m),
            Value::Null => None,
            other => {
                self.wrong_type(path, other, "a mapping");
                None
            }
        }
    }

    fn list<'v>(&mut self, v: &'v Value, path: &str) -> &'v [Value] {
        match v {
            Value::Array(a) => a,
            Value::Null => &[],
            other => {
                self.wrong_type(path, other, "a list");
                &[]
            }
        }
    }

    fn string(&mut self, v: Option<&Value>, path: &str) -> Option<String> {
        match v? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => {
                self.wrong_type(path, other, "a string");
                None
            }
        }
    }

    fn boolean(&mut self, v: Option<&Value>, path: &str) -> Option<bool> {
        match v? {
            Value::Bool(b) => Some(*b),
            Value::Null => None,
            other => {
                self.wrong_type(path, other, "a boolean (true or false)");
                None
            }
        }
    }

    /// A non-negative integer.
    fn unsigned(&mut self, v: Option<&Value>, path: &str) -> Option<u64> {
        match v? {
            Value::Null => None,
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => Some(u),
                (None, Some(_)) => {
                    self.invalid(
                        path,
                        &Value::Number(n.clone()),
                        "must be greater than or equal to 0",
                    );
                    None
                }
                _ => {
                    self.invalid(path, &Value::Number(n.clone()), "must be an integer");
                    None
                }
            },
            other => {
                self.wrong_type(path, other, "an integer");
                None
            }
        }
    }

    fn string_map(&mut self, v: Option<&Value>, path: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Some(m) = v.and_then(|v| self.object(v, path)) else {
            return out;
        };
        for (k, v) in m {
            let field = child(path, k);
            if let Some(s) = self.string(Some(v), &field) {
                out.insert(k.clone(), s);
            }
        }
        out
    }

    fn duration(&mut self, v: Option<&Value>, path: &str) -> Option<(String, Time)> {
        let text = match v? {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Null => return None,
            other => {
                self.wrong_type(path, other, "a duration such as 90s or 2m30s");
                return None;
            }
        };
        let shown = Value::String(text.clone());
        match parse_duration(&text) {
            Ok(ms) if ms <= MAX_DURATION_MS => Some((text, ms)),
            Err(_) if text.trim_start_matches('+').starts_with('-') => {
                self.invalid(path, &shown, "must not be negative");
                None
            }
            _ => {
                let detail = format!("time: invalid duration {shown}");
                self.invalid(path, &shown, &detail);
                None
            }
        }
    }

    fn scenario(&mut self, v: &Value) -> Scenario {
        let mut out = Scenario::default();
        let empty = Map::new();
        let root = match v {
            Value::Null => &empty,
            Value::Object(m) => m,
            other => {
                self.invalid("", other, "a scenario must be a mapping");
                return out;
            }
        };
        self.unknown_fields(root, "", &["apiVersion", "kind", "metadata", "spec"]);
        for (field, want) in [("apiVersion", API_VERSION), ("kind", KIND)] {
            match self.string(root.get(field), field) {
                None if root.get(field).is_none_or(Value::is_null) => {
                    self.required(field, &format!("must be {want:?}"))
                }
                Some(s) if s != want => self.push(
                    field,
                    Target::Value,
                    format!("{field}: Unsupported value: {s:?}: supported values: {want:?}"),
                ),
                _ => {}
            }
        }
        if let Some(m) = root
            .get("metadata")
            .and_then(|v| self.object(v, "metadata"))
        {
            self.unknown_fields(m, "metadata", &["name", "labels", "annotations"]);
            out.metadata = ScenarioMeta {
                name: self
                    .string(m.get("name"), "metadata.name")
                    .unwrap_or_default(),
                labels: self.string_map(m.get("labels"), "metadata.labels"),
                annotations: self.string_map(m.get("annotations"), "metadata.annotations"),
            };
        }
        if let Some(m) = root.get("spec").and_then(|v| self.object(v, "spec")) {
            out.spec = self.spec(m);
        }
        out
    }

    fn spec(&mut self, m: &Map<String, Value>) -> ScenarioSpec {
        self.unknown_fields(
            m,
            "spec",
            &[
                "seed",
                "nodes",
                "schedulerConfiguration",
                "files",
                "steps",
                "proxyMode",
                "schedulingAnnotations",
                "startTime",
                "until",
            ],
        );
        let mut spec = ScenarioSpec {
            seed: self
                .unsigned(m.get("seed"), "spec.seed")
                .unwrap_or(DEFAULT_SEED),
            ..ScenarioSpec::default()
        };
        if let Some(v) = m.get("nodes") {
            spec.nodes = self.nodes(v);
        }
        match m.get("schedulerConfiguration") {
            None | Some(Value::Null) => {}
            Some(v @ Value::Object(_)) => spec.scheduler_configuration = Some(v.clone()),
            Some(other) => self.wrong_type("spec.schedulerConfiguration", other, "a mapping"),
        }
        if let Some(files) = m.get("files").and_then(|v| self.object(v, "spec.files")) {
            for (name, content) in files {
                let field = child("spec.files", name);
                if name.trim().is_empty() {
                    self.push(
                        &field,
                        Target::Key,
                        format!("{field}: Invalid value: {name:?}: a file name must not be empty"),
                    );
                }
                match content {
                    Value::String(s) => {
                        spec.files.insert(name.clone(), s.clone());
                    }
                    other => self.wrong_type(
                        &field,
                        other,
                        "a string (the file's contents: write them as a block scalar, `name: |`)",
                    ),
                }
            }
        }
        let steps = m
            .get("steps")
            .map_or(&[][..], |v| self.list(v, "spec.steps"));
        for (i, step) in steps.iter().enumerate() {
            if let Some(s) = self.step(step, &format!("spec.steps[{i}]")) {
                spec.steps.push(s);
            }
        }
        if let Some(mode) = self.string(m.get("proxyMode"), "spec.proxyMode") {
            match mode.as_str() {
                "iptables" => spec.proxy_mode = ProxyMode::Iptables,
                "ipvs" => spec.proxy_mode = ProxyMode::Ipvs,
                _ => self.push(
                    "spec.proxyMode",
                    Target::Value,
                    format!(
                        "spec.proxyMode: Unsupported value: {mode:?}: supported values: \"iptables\", \"ipvs\""
                    ),
                ),
            }
        }
        if let Some(b) = self.boolean(m.get("schedulingAnnotations"), "spec.schedulingAnnotations")
        {
            spec.scheduling_annotations = b;
        }
        if let Some(t) = self.string(m.get("startTime"), "spec.startTime") {
            if t.parse::<k8s_openapi::jiff::Timestamp>().is_ok() {
                spec.start_time = Some(t);
            } else {
                self.invalid(
                    "spec.startTime",
                    &Value::String(t),
                    "must be an RFC 3339 timestamp such as 2026-01-01T00:00:00Z",
                );
            }
        }
        if let Some((text, _)) = self.duration(m.get("until"), "spec.until") {
            spec.until = Some(text);
        }
        spec
    }

    fn step(&mut self, v: &Value, path: &str) -> Option<Step> {
        let m = match v {
            Value::Object(m) => m,
            other => {
                self.wrong_type(path, other, "a mapping with at and run");
                return None;
            }
        };
        self.unknown_fields(m, path, &["at", "run"]);
        let at_field = format!("{path}.at");
        let at = match m.get("at") {
            None | Some(Value::Null) => Some(("0s".to_string(), 0)),
            v => self.duration(v, &at_field),
        };
        let run_field = format!("{path}.run");
        let run = self.string(m.get("run"), &run_field);
        let run = match run {
            Some(r) if !r.trim().is_empty() => Some(r),
            Some(_) => {
                self.required(&run_field, "the command line to run");
                None
            }
            None => {
                if m.get("run").is_none_or(Value::is_null) {
                    self.required(&run_field, "the command line to run");
                }
                None
            }
        };
        let ((at, at_ms), run) = (at?, run?);
        Some(Step { at, at_ms, run })
    }

    fn nodes(&mut self, v: &Value) -> Vec<NodeGroup> {
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
            (None, Some(_), None) => {
                if m.get("count").is_none_or(Value::is_null) {
                    self.required(&count_field, "required when namePrefix is set")
                }
            }
            (None, None, Some(_)) => self.required(&prefix_field, "required when count is set"),
            (None, None, None) => {
                if m.get("name").is_none_or(Value::is_null)
                    && m.get("namePrefix").is_none_or(Value::is_null)
                {
                    self.required(&name_field, "set name, or namePrefix and count")
                }
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
        if let Some(prefix) = &group.name_prefix {
            if let Err(detail) = dns1123_subdomain(&format!("{prefix}1")) {
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

/// Checks a name as Kubernetes checks node names (`IsDNS1123Subdomain`).
fn dns1123_subdomain(name: &str) -> Result<(), String> {
    if name.len() > 253 {
        return Err("must be no more than 253 characters".to_string());
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase() || *c == b'-')
    };
    if name
        .split('.')
        .all(|l| label_ok(l) && !l.bytes().any(|c| c.is_ascii_uppercase()))
    {
        Ok(())
    } else {
        Err(DNS1123_SUBDOMAIN.to_string())
    }
}

/// Node resource names: the standard ones, `hugepages-<size>`, or a fully qualified
/// extended resource (`nvidia.com/gpu`).
fn resource_name(name: &str) -> Result<(), String> {
    const STANDARD: &[&str] = &["cpu", "memory", "pods", "ephemeral-storage", "storage"];
    if STANDARD.contains(&name) || name.starts_with("hugepages-") {
        return Ok(());
    }
    match name.split_once('/') {
        Some((domain, rest))
            if !domain.is_empty()
                && !rest.is_empty()
                && !rest.contains('/')
                && dns1123_subdomain(domain).is_ok() =>
        {
            Ok(())
        }
        _ => Err("must be a standard resource type or fully qualified".to_string()),
    }
}

/// Parses a Kubernetes quantity (`4`, `500m`, `8Gi`, `1e3`) into thousandths of a unit,
/// rounding up as `Quantity.MilliValue` does. Errors carry upstream's message.
pub fn parse_quantity_milli(s: &str) -> Result<i128, String> {
    let format_err = || QUANTITY_FORMAT.to_string();
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let num_len = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (number, suffix) = body.split_at(num_len);
    if number.is_empty() || !number.bytes().any(|b| b.is_ascii_digit()) {
        return Err(format_err());
    }
    let (whole, frac) = match number.split_once('.') {
        Some((w, f)) if !f.contains('.') => (w, f),
        Some(_) => return Err("unable to parse quantity's numeric part".to_string()),
        None => (number, ""),
    };
    // The regex's suffix part: letters from [eEinumkKMGTP], then an optional signed integer.
    let letters = suffix
        .find(|c: char| !"eEinumkKMGTP".contains(c))
        .unwrap_or(suffix.len());
    let (alpha, exp) = suffix.split_at(letters);
    let exp_digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
    if !exp_digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format_err());
    }
    let (pow10, pow2): (i64, u32) = match (alpha, exp) {
        ("", "") => (0, 0),
        ("n", "") => (-9, 0),
        ("u", "") => (-6, 0),
        ("m", "") => (-3, 0),
        ("k", "") => (3, 0),
        ("M", "") => (6, 0),
        ("G", "") => (9, 0),
        ("T", "") => (12, 0),
        ("P", "") => (15, 0),
        ("E", "") => (18, 0),
        ("Ki", "") => (0, 10),
        ("Mi", "") => (0, 20),
        ("Gi", "") => (0, 30),
        ("Ti", "") => (0, 40),
        ("Pi", "") => (0, 50),
        ("Ei", "") => (0, 60),
        ("e" | "E", e) if !exp_digits.is_empty() => {
            let e: i64 = e
                .parse()
                .map_err(|_| "unable to parse quantity's suffix".to_string())?;
            (e, 0)
        }
        _ => return Err("unable to parse quantity's suffix".to_string()),
    };
    let too_large = || "quantity is too large".to_string();
    let digits = format!("{whole}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 36 {
        return Err(too_large());
    }
    let mantissa: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| too_large())?
    };
    // value = mantissa × 10^(pow10 − len(frac)) × 2^pow2; milli adds 3 to the exponent.
    let exp10 = pow10 - frac.len() as i64 + 3;
    let mut v = mantissa.checked_mul(1i128 << pow2).ok_or_else(too_large)?;
    if exp10 >= 0 {
        if exp10 > 36 && v != 0 {
            return Err(too_large());
        }
        for _ in 0..exp10.min(37) {
            v = v.checked_mul(10).ok_or_else(too_large)?;
        }
    } else {
        let div = 10i128
            .checked_pow((-exp10).min(38) as u32)
            .unwrap_or(i128::MAX);
        v = v / div + i128::from(v % div != 0);
    }
    Ok(if negative { -v } else { v })
}
