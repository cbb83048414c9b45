//! Checks `spec.lesson` (design §6.20): its title, steps, texts and checks.

use serde_json::{Map, Value};

use super::{child, Checker};
use crate::lesson::{
    Check, CommandCheck, ComponentCheck, CurlCheck, EventCheck, Lesson, LessonStep, ObjectCheck,
    PodsCheck, Text,
};
use crate::yamlpos::Target;

/// At most this many steps in a lesson.
const MAX_LESSON_STEPS: usize = 100;
/// `all`/`any`/`not` nest at most this deep.
const MAX_CHECK_DEPTH: usize = 8;

const CHECKS: &[&str] = &[
    "exists",
    "podsReady",
    "event",
    "component",
    "command",
    "curl",
    "all",
    "any",
    "not",
];

const COMPONENTS: &[&str] = &[
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "cloud-provider-kind",
    "kubelet",
    "containerd",
    "kube-proxy",
];

/// The components that run on a node and need `node`.
const NODE_COMPONENTS: &[&str] = &["kubelet", "containerd", "kube-proxy"];

impl Checker {
    pub(super) fn lesson(&mut self, v: &Value) -> Option<Lesson> {
        let m = self.object(v, "spec.lesson")?;
        self.unknown_fields(m, "spec.lesson", &["title", "steps"]);
        let title = self.text(m.get("title"), "spec.lesson.title", true);
        let steps = m
            .get("steps")
            .map_or(&[][..], |v| self.list(v, "spec.lesson.steps"));
        if steps.is_empty() {
            self.required("spec.lesson.steps", "a lesson has at least one step");
        }
        if steps.len() > MAX_LESSON_STEPS {
            self.push(
                "spec.lesson.steps",
                Target::Key,
                format!(
                    "spec.lesson.steps: Too many: {}: must have at most {MAX_LESSON_STEPS} steps",
                    steps.len()
                ),
            );
        }
        let mut out = Vec::new();
        for (i, s) in steps.iter().enumerate().take(MAX_LESSON_STEPS) {
            if let Some(step) = self.lesson_step(s, &format!("spec.lesson.steps[{i}]")) {
                out.push(step);
            }
        }
        Some(Lesson {
            title: title?,
            steps: out,
        })
    }

    fn lesson_step(&mut self, v: &Value, path: &str) -> Option<LessonStep> {
        let Value::Object(m) = v else {
            self.wrong_type(path, v, "a mapping with title, text and check");
            return None;
        };
        self.unknown_fields(m, path, &["title", "text", "hints", "solution", "check"]);
        let title = self.text(m.get("title"), &child(path, "title"), true);
        let text = self.text(m.get("text"), &child(path, "text"), true);
        let hints_path = child(path, "hints");
        let hints = m
            .get("hints")
            .map_or(&[][..], |v| self.list(v, &hints_path))
            .iter()
            .enumerate()
            .filter_map(|(i, h)| self.text(Some(h), &format!("{hints_path}[{i}]"), true))
            .collect();
        let solution = self.text(m.get("solution"), &child(path, "solution"), false);
        let check_path = child(path, "check");
        let check = match m.get("check") {
            None | Some(Value::Null) => {
                self.required(&check_path, "what must hold for the step to be done");
                None
            }
            Some(c) => self.check(c, &check_path, 0),
        };
        Some(LessonStep {
            title: title?,
            text: text?,
            hints,
            solution,
            check: check?,
        })
    }

    /// A text: a string for both languages, or `{en: ..., zh: ...}` (`zh` defaults to `en`).
    fn text(&mut self, v: Option<&Value>, path: &str, required: bool) -> Option<Text> {
        let t = match v {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(Text::both(s)),
            Some(Value::Object(m)) => {
                self.unknown_fields(m, path, &["en", "zh"]);
                let en = self.string(m.get("en"), &child(path, "en"));
                let zh = self.string(m.get("zh"), &child(path, "zh"));
                match en {
                    Some(en) => Some(Text {
                        zh: zh.unwrap_or_else(|| en.clone()),
                        en,
                    }),
                    None => {
                        if m.get("en").is_none() {
                            self.required(&child(path, "en"), "the English text");
                        }
                        return None;
                    }
                }
            }
            Some(other) => {
                self.wrong_type(path, other, "a string or a mapping with en and zh");
                return None;
            }
        };
        match t {
            Some(t) if t.en.trim().is_empty() => {
                self.required(path, "");
                None
            }
            None if required => {
                self.required(path, "");
                None
            }
            t => t,
        }
    }

    fn check(&mut self, v: &Value, path: &str, depth: usize) -> Option<Check> {
        let Value::Object(m) = v else {
            self.wrong_type(path, v, "a mapping with one check");
            return None;
        };
        if depth > MAX_CHECK_DEPTH {
            self.push(
                path,
                Target::Key,
                format!("{path}: Invalid value: checks nest at most {MAX_CHECK_DEPTH} deep"),
            );
            return None;
        }
        self.unknown_fields(m, path, CHECKS);
        let mut present = m.iter().filter(|(k, _)| CHECKS.contains(&k.as_str()));
        let Some((name, body)) = present.next() else {
            self.required(path, &format!("one of {}", CHECKS.join(", ")));
            return None;
        };
        if let Some((other, _)) = present.next() {
            self.push(
                &child(path, other),
                Target::Key,
                format!(
                    "{path}: Invalid value: a check has one condition, not both {name} and {other}: combine them with all"
                ),
            );
            return None;
        }
        let at = child(path, name);
        match name.as_str() {
            "exists" => self.object_check(body, &at).map(Check::Exists),
            "podsReady" => self.pods_check(body, &at).map(Check::PodsReady),
            "event" => self.event_check(body, &at).map(Check::Event),
            "component" => self.component_check(body, &at).map(Check::Component),
            "command" => self.command_check(body, &at).map(Check::Command),
            "curl" => self.curl_check(body, &at).map(Check::Curl),
            "not" => Some(Check::Not(Box::new(self.check(body, &at, depth + 1)?))),
            combinator => {
                let items = self.list(body, &at);
                if items.is_empty() {
                    self.required(&at, "at least one check");
                    return None;
                }
                let checks: Vec<Option<Check>> = items
                    .iter()
                    .enumerate()
                    .map(|(i, c)| self.check(c, &format!("{at}[{i}]"), depth + 1))
                    .collect();
                let checks: Option<Vec<Check>> = checks.into_iter().collect();
                let checks = checks?;
                Some(if combinator == "all" {
                    Check::All(checks)
                } else {
                    Check::Any(checks)
                })
            }
        }
    }

    fn fields<'v>(
        &mut self,
        v: &'v Value,
        path: &str,
        known: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let m = self.object(v, path);
        if m.is_none() {
            self.required(path, &format!("a mapping with {}", known.join(", ")));
        }
        let m = m?;
        self.unknown_fields(m, path, known);
        Some(m)
    }

    fn required_string(&mut self, m: &Map<String, Value>, path: &str, key: &str) -> Option<String> {
        let field = child(path, key);
        match self.string(m.get(key), &field) {
            Some(s) if !s.trim().is_empty() => Some(s),
            _ => {
                self.required(&field, "");
                None
            }
        }
    }

    fn selector_field(&mut self, m: &Map<String, Value>, path: &str) -> Option<String> {
        let field = child(path, "selector");
        let s = self.string(m.get("selector"), &field)?;
        if let Err(e) = crate::selector::LabelSelector::parse(&s) {
            self.invalid(&field, &Value::String(s), &e);
            return None;
        }
        Some(s)
    }

    fn regex_field(&mut self, m: &Map<String, Value>, path: &str, key: &str) -> Option<String> {
        let field = child(path, key);
        let s = self.string(m.get(key), &field)?;
        if let Some(first) = crate::pattern::compile_error(&s) {
            self.invalid(
                &field,
                &Value::String(s),
                &format!("not a regular expression: {first}"),
            );
            return None;
        }
        Some(s)
    }

    fn count(&mut self, m: &Map<String, Value>, path: &str) -> u64 {
        self.unsigned(m.get("count"), &child(path, "count"))
            .unwrap_or(1)
    }

    fn namespace(&mut self, m: &Map<String, Value>, path: &str) -> String {
        self.string(m.get("namespace"), &child(path, "namespace"))
            .unwrap_or_else(|| "default".to_string())
    }

    fn object_check(&mut self, v: &Value, path: &str) -> Option<ObjectCheck> {
        let known = [
            "kind",
            "name",
            "namespace",
            "selector",
            "jsonpath",
            "equals",
            "matches",
            "count",
        ];
        let m = self.fields(v, path, &known)?;
        let kind = self.required_string(m, path, "kind");
        let name = self.string(m.get("name"), &child(path, "name"));
        let selector = self.selector_field(m, path);
        let jp_field = child(path, "jsonpath");
        let jsonpath = self.string(m.get("jsonpath"), &jp_field);
        if let Some(jp) = &jsonpath {
            if let Err(e) = crate::kubectl::jsonpath::JsonPath::parse(jp) {
                self.invalid(&jp_field, &Value::String(jp.clone()), &e);
            }
        }
        let equals = self.string(m.get("equals"), &child(path, "equals"));
        let matches = self.regex_field(m, path, "matches");
        if jsonpath.is_none() && (equals.is_some() || matches.is_some()) {
            self.required(&jp_field, "equals and matches compare a JSONPath's output");
        }
        Some(ObjectCheck {
            kind: kind?,
            name,
            namespace: self.namespace(m, path),
            selector,
            jsonpath,
            equals,
            matches,
            count: self.count(m, path),
        })
    }

    fn pods_check(&mut self, v: &Value, path: &str) -> Option<PodsCheck> {
        let m = self.fields(v, path, &["selector", "namespace", "count"])?;
        if m.get("selector").is_none_or(Value::is_null) {
            self.required(
                &child(path, "selector"),
                "the pods' labels, such as app=web",
            );
        }
        let selector = self.selector_field(m, path);
        Some(PodsCheck {
            selector: selector?,
            namespace: self.namespace(m, path),
            count: self.count(m, path),
        })
    }

    fn event_check(&mut self, v: &Value, path: &str) -> Option<EventCheck> {
        let m = self.fields(v, path, &["reason", "kind", "name", "namespace"])?;
        Some(EventCheck {
            reason: self.required_string(m, path, "reason")?,
            kind: self.string(m.get("kind"), &child(path, "kind")),
            name: self.string(m.get("name"), &child(path, "name")),
            namespace: self.string(m.get("namespace"), &child(path, "namespace")),
        })
    }

    fn component_check(&mut self, v: &Value, path: &str) -> Option<ComponentCheck> {
        let m = self.fields(v, path, &["name", "node", "running"])?;
        let name = self.required_string(m, path, "name")?;
        let node = self.string(m.get("node"), &child(path, "node"));
        if !COMPONENTS.contains(&name.as_str()) {
            let supported: Vec<String> = COMPONENTS.iter().map(|c| format!("\"{c}\"")).collect();
            self.push(
                &child(path, "name"),
                Target::Value,
                format!(
                    "{}: Unsupported value: {name:?}: supported values: {}",
                    child(path, "name"),
                    supported.join(", ")
                ),
            );
            return None;
        }
        if NODE_COMPONENTS.contains(&name.as_str()) && node.is_none() {
            self.required(
                &child(path, "node"),
                &format!("{name} runs on a node: name it"),
            );
            return None;
        }
        let running = self.boolean(m.get("running"), &child(path, "running"));
        Some(ComponentCheck {
            name,
            node,
            running: running.unwrap_or(true),
        })
    }

    fn command_check(&mut self, v: &Value, path: &str) -> Option<CommandCheck> {
        let m = self.fields(v, path, &["run", "output", "exitCode"])?;
        let run = self.required_string(m, path, "run");
        let output = self.regex_field(m, path, "output");
        let exit_field = child(path, "exitCode");
        let exit_code = match m.get("exitCode") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_i64().is_some_and(|c| (0..=255).contains(&c)) => {
                n.as_i64().map(|c| c as i32)
            }
            Some(other) => {
                self.invalid(&exit_field, other, "must be an exit code from 0 to 255");
                None
            }
        };
        Some(CommandCheck {
            run: run?,
            output,
            exit_code,
        })
    }

    fn curl_check(&mut self, v: &Value, path: &str) -> Option<CurlCheck> {
        let m = self.fields(v, path, &["url", "succeeds"])?;
        let url = self.string(m.get("url"), &child(path, "url"));
        let succeeds = self.boolean(m.get("succeeds"), &child(path, "succeeds"));
        Some(CurlCheck {
            url,
            succeeds: succeeds.unwrap_or(true),
        })
    }
}
