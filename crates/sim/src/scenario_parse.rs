//! Checks a scenario document field by field, collecting every problem with its place.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{
    ProxyMode, Scenario, ScenarioError, ScenarioMeta, ScenarioSpec, Step, API_VERSION,
    DEFAULT_SEED, KIND,
};
use crate::time::{parse_duration, Time};
use crate::yamlpos::{self, Duplicates, Pos, Target};

#[path = "scenario_lesson.rs"]
mod lesson;
#[path = "scenario_nodes.rs"]
mod nodes;
#[path = "scenario_values.rs"]
mod values;

pub use values::parse_quantity_milli;

pub use crate::envelope::MAX_NODES;

use crate::envelope::{MAX_DURATION, MAX_SCENARIO_BYTES, MAX_STEPS};

/// How many extra YAML documents are looked at before giving up.
const MAX_EXTRA_DOCUMENTS: usize = 64;

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
    // A UTF-8 byte order mark (editors on Windows write one) is not part of the YAML.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.len() > MAX_SCENARIO_BYTES {
        return Err(vec![ScenarioError {
            line: 1,
            column: 1,
            message: format!(
                "the scenario is {} bytes: at most {MAX_SCENARIO_BYTES} (1 MiB, kubeloop's envelope)",
                text.len()
            ),
            field: String::new(),
        }]);
    }
    let value = match yamlpos::first_document_to_json(text, Duplicates::Reject) {
        Ok(v) => v,
        Err(e) => return Err(vec![syntax_error(&e)]),
    };
    let mut ck = Checker::default();
    let scenario = ck.scenario(&value);
    // Placing a problem parses the text again; past a budget of about 8 MiB parsed, the
    // remaining problems of a hostile file are placed at 1:1 rather than taking seconds.
    let max_located = ((8usize << 20) / text.len().max(1)).max(16);
    let mut errors: Vec<ScenarioError> = ck
        .problems
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let pos = if i < max_located {
                yamlpos::locate_nearest(text, 0, &p.field, p.target)
            } else {
                Pos::START
            };
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
            Ok(ms) if ms <= MAX_DURATION => Some((text, ms)),
            Ok(_) => {
                let detail = format!(
                    "must be at most {} (the longest run kubeloop simulates)",
                    crate::time::format_duration(MAX_DURATION)
                );
                self.invalid(path, &shown, &detail);
                None
            }
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
                "addons",
                "lesson",
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
            Some(v @ Value::Object(_)) => {
                // kube-scheduler refuses to start with an invalid configuration; so does
                // the scenario.
                if let Err(errs) = crate::kube_scheduler::validate_config(v) {
                    for e in errs {
                        self.push("spec.schedulerConfiguration", Target::Key, e);
                    }
                }
                spec.scheduler_configuration = Some(v.clone());
            }
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
        if steps.len() > MAX_STEPS {
            self.push(
                "spec.steps",
                Target::Key,
                format!(
                    "spec.steps: Too many: {}: must have at most {MAX_STEPS} steps",
                    steps.len()
                ),
            );
        }
        for (i, step) in steps.iter().enumerate().take(MAX_STEPS) {
            if let Some(s) = self.step(step, &format!("spec.steps[{i}]")) {
                spec.steps.push(s);
            }
        }
        if let Some(v) = m.get("addons") {
            for (i, a) in self.list(v, "spec.addons").iter().enumerate() {
                let path = format!("spec.addons[{i}]");
                let Some(name) = self.string(Some(a), &path) else {
                    continue;
                };
                if crate::runner::ADDONS.iter().any(|(a, _)| *a == name) {
                    if !spec.addons.contains(&name) {
                        spec.addons.push(name);
                    }
                } else {
                    self.push(
                        &path,
                        Target::Value,
                        format!(
                            "{path}: Unsupported value: {name:?}: supported values: {}",
                            crate::runner::ADDONS
                                .iter()
                                .map(|(a, _)| format!("\"{a}\""))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    );
                }
            }
        }
        if let Some(mode) = self.string(m.get("proxyMode"), "spec.proxyMode") {
            match mode.as_str() {
                "iptables" => spec.proxy_mode = ProxyMode::Iptables,
                "ipvs" => spec.proxy_mode = ProxyMode::Ipvs,
                "nftables" => spec.proxy_mode = ProxyMode::Nftables,
                _ => self.push(
                    "spec.proxyMode",
                    Target::Value,
                    format!(
                        "spec.proxyMode: Unsupported value: {mode:?}: supported values: \"iptables\", \"ipvs\", \"nftables\""
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
        if let Some(v) = m.get("lesson") {
            spec.lesson = self.lesson(v);
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
}
