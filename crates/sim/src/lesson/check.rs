//! Evaluates a lesson check against what the cluster stores and what the learner ran.

use std::sync::Arc;

use regex::Regex;

use super::words;
use super::{
    Check, CheckReport, CommandCheck, ComponentCheck, CurlCheck, EventCheck, Facts, ObjectCheck,
    PodsCheck, Ran, Text,
};
use crate::controllers::util::is_pod_ready;
use crate::kubectl::jsonpath::JsonPath;
use crate::kubectl::output::object_value;
use crate::kubectl::printers::pod_status;
use crate::object::{Kind, Object};
use crate::selector::LabelSelector;
use crate::world::{Actor, World};

/// How many not-Ready pods a report names.
const NAMED: usize = 3;

/// Whether `check` holds, and why, in both languages.
pub fn explain(facts: &Facts, check: &Check) -> CheckReport {
    match check {
        Check::Exists(c) => exists(facts.world, c),
        Check::PodsReady(c) => pods_ready(facts.world, c),
        Check::Event(c) => event(facts.world, c),
        Check::Component(c) => component(facts.world, c),
        Check::Command(c) => command(facts.commands, c),
        Check::Curl(c) => curl(facts.commands, c),
        Check::All(cs) => all(facts, cs),
        Check::Any(cs) => any(facts, cs),
        Check::Not(c) => {
            let r = explain(facts, c);
            CheckReport {
                holds: !r.holds,
                why: r.why,
            }
        }
    }
}

fn report(holds: bool, why: Text) -> CheckReport {
    CheckReport { holds, why }
}

fn all(facts: &Facts, checks: &[Check]) -> CheckReport {
    let reports: Vec<CheckReport> = checks.iter().map(|c| explain(facts, c)).collect();
    match reports.iter().find(|r| !r.holds) {
        Some(failing) => failing.clone(),
        None => report(
            true,
            words::join(reports.iter().map(|r| &r.why), "; ", "；"),
        ),
    }
}

fn any(facts: &Facts, checks: &[Check]) -> CheckReport {
    let reports: Vec<CheckReport> = checks.iter().map(|c| explain(facts, c)).collect();
    match reports.iter().find(|r| r.holds) {
        Some(holding) => holding.clone(),
        None => report(
            false,
            words::join(reports.iter().map(|r| &r.why), " / ", " / "),
        ),
    }
}

/// Resolves a kind as kubectl does: built-in kinds first, then the custom kinds served.
fn resolve(world: &World, kind: &str) -> Option<Kind> {
    Kind::from_resource_arg(kind).or_else(|| world.observe().custom_kinds().resource_arg(kind))
}

/// The stored objects of `kind` in `namespace` (every namespace for cluster-scoped kinds).
fn stored(world: &World, kind: Kind, namespace: &str) -> Vec<Arc<Object>> {
    let prefix = kind.registry_prefix(namespace);
    world
        .observe()
        .etcd()
        .store
        .range_prefix(&prefix)
        .filter(|kv| kv.value.kind() == kind)
        .map(|kv| kv.value.clone())
        .collect()
}

fn selector(s: Option<&str>) -> LabelSelector {
    s.and_then(|s| LabelSelector::parse(s).ok())
        .unwrap_or_else(LabelSelector::everything)
}

fn exists(world: &World, c: &ObjectCheck) -> CheckReport {
    let Some(kind) = resolve(world, &c.kind) else {
        return report(false, words::no_resource_type(&c.kind));
    };
    let sel = selector(c.selector.as_deref());
    let candidates: Vec<Arc<Object>> = stored(world, kind, &c.namespace)
        .into_iter()
        .filter(|o| c.name.as_deref().is_none_or(|n| o.name() == n))
        .filter(|o| sel.matches_object(o))
        .collect();
    let what = words::Objects {
        kind: kind.info().kind,
        name: c.name.as_deref(),
        selector: c.selector.as_deref(),
        namespace: kind.info().namespaced.then_some(c.namespace.as_str()),
    };
    if candidates.is_empty() {
        return report(false, words::none_exist(&what));
    }
    let Some(template) = &c.jsonpath else {
        let n = candidates.len() as u64;
        return report(n >= c.count, words::exist(&what, n, c.count));
    };
    let mut matching = 0u64;
    let mut first_hit = None;
    let mut first_miss = None;
    for o in &candidates {
        let value = jsonpath_value(o, template);
        if value_matches(&value, c) {
            matching += 1;
            if first_hit.is_none() {
                first_hit = Some((o.name().to_string(), value));
            }
        } else if first_miss.is_none() {
            first_miss = Some((o.name().to_string(), value));
        }
    }
    if matching >= c.count {
        // Holding (read under `not`): name an object that matched and its value.
        let (name, value) = first_hit.unwrap_or_default();
        return report(
            true,
            words::field_is(kind.info().kind, &name, template, &value, None),
        );
    }
    let (name, value) = first_miss.unwrap_or_default();
    let wanted = c
        .equals
        .clone()
        .or_else(|| c.matches.clone().map(|m| format!("/{m}/")));
    report(
        false,
        words::field_is(kind.info().kind, &name, template, &value, wanted.as_deref()),
    )
}

fn jsonpath_value(o: &Object, template: &str) -> String {
    JsonPath::parse(template)
        .and_then(|jp| jp.execute(&object_value(o), false))
        .unwrap_or_default()
}

fn value_matches(value: &str, c: &ObjectCheck) -> bool {
    let equals = c.equals.as_deref().is_none_or(|e| value == e);
    let matches = c
        .matches
        .as_deref()
        .is_none_or(|m| Regex::new(m).is_ok_and(|re| re.is_match(value)));
    let present = c.equals.is_some() || c.matches.is_some() || !value.is_empty();
    equals && matches && present
}

fn pods_ready(world: &World, c: &PodsCheck) -> CheckReport {
    let sel = selector(Some(&c.selector));
    let mut ready = 0u64;
    let mut waiting = Vec::new();
    for o in stored(world, Kind::Pod, &c.namespace) {
        let Object::Pod(p) = o.as_ref() else {
            continue;
        };
        if !sel.matches_object(&o) || p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if is_pod_ready(p) {
            ready += 1;
        } else if waiting.len() < NAMED {
            waiting.push((o.name().to_string(), pod_status(p)));
        }
    }
    let holds = ready >= c.count;
    let waiting = if holds { Vec::new() } else { waiting };
    report(
        holds,
        words::pods_ready(&c.selector, ready, c.count, &waiting),
    )
}

fn event(world: &World, c: &EventCheck) -> CheckReport {
    let prefix = "/registry/events/".to_string();
    let prefix = match &c.namespace {
        Some(ns) => format!("{prefix}{ns}/"),
        None => prefix,
    };
    let store = &world.observe().etcd().store;
    let found = store
        .range_prefix(&prefix)
        .find_map(|kv| match kv.value.as_ref() {
            Object::Event(e) if e.reason.as_deref() == Some(c.reason.as_str()) => {
                let io = &e.involved_object;
                let kind_ok = c.kind.as_deref().is_none_or(|k| {
                    io.kind.as_deref().is_some_and(|ik| {
                        Kind::from_resource_arg(k).map_or(k, |k| k.info().kind) == ik
                    })
                });
                let name = io.name.as_deref().unwrap_or("");
                let name_ok = c
                    .name
                    .as_deref()
                    .is_none_or(|n| name == n || name.starts_with(&format!("{n}-")));
                (kind_ok && name_ok).then(|| {
                    (
                        io.kind.clone().unwrap_or_default(),
                        name.to_string(),
                        e.message.clone().unwrap_or_default(),
                    )
                })
            }
            _ => None,
        });
    match found {
        Some((kind, name, message)) => {
            report(true, words::event_seen(&c.reason, &kind, &name, &message))
        }
        None => report(false, words::no_event(&c.reason, c.name.as_deref())),
    }
}

fn component(world: &World, c: &ComponentCheck) -> CheckReport {
    let node = c.node.as_deref().and_then(|n| world.node_index(n));
    let actor = match (c.name.as_str(), node) {
        ("etcd", _) => Some(Actor::Etcd),
        ("kube-apiserver", _) => Some(Actor::ApiServer),
        ("kube-controller-manager", _) => Some(Actor::ControllerManager),
        ("kube-scheduler", _) => Some(Actor::Scheduler),
        ("cloud-provider-kind", _) => Some(Actor::CloudProvider),
        ("kubelet", Some(n)) => Some(Actor::Kubelet(n)),
        ("containerd", Some(n)) => Some(Actor::Runtime(n)),
        ("kube-proxy", Some(n)) => Some(Actor::KubeProxy(n)),
        _ => None,
    };
    let Some(actor) = actor else {
        return report(false, words::no_component(&c.name, c.node.as_deref()));
    };
    let running = world.is_running(actor);
    report(
        running == c.running,
        words::component(&c.name, c.node.as_deref(), running),
    )
}

/// Whether `words` appear in `line`'s words in order (`k` standing for `kubectl`).
fn runs(line: &str, words: &str) -> bool {
    let norm = |w: &str| {
        if w == "k" {
            "kubectl".to_string()
        } else {
            w.to_string()
        }
    };
    let have: Vec<String> = crate::cmd::tokenize(line)
        .unwrap_or_default()
        .iter()
        .map(|w| norm(w))
        .collect();
    let mut have = have.iter();
    words
        .split_whitespace()
        .all(|w| have.any(|h| *h == norm(w)))
}

fn command(commands: &[Ran], c: &CommandCheck) -> CheckReport {
    let Some(ran) = commands.iter().rev().find(|r| runs(&r.line, &c.run)) else {
        return report(false, words::not_run(&c.run));
    };
    let output_ok = c
        .output
        .as_deref()
        .is_none_or(|o| Regex::new(o).is_ok_and(|re| re.is_match(&ran.output)));
    let exit_ok = c.exit_code.is_none_or(|e| e == ran.exit_code);
    let holds = output_ok && exit_ok;
    let why = match (output_ok, exit_ok) {
        (true, true) => words::ran_ok(&ran.line),
        (false, _) => words::output_mismatch(&ran.line, c.output.as_deref().unwrap_or("")),
        (true, false) => words::exit_mismatch(&ran.line, ran.exit_code, c.exit_code.unwrap_or(0)),
    };
    report(holds, why)
}

fn curl(commands: &[Ran], c: &CurlCheck) -> CheckReport {
    let last = commands
        .iter()
        .rev()
        .find(|r| runs(&r.line, "curl") && c.url.as_deref().is_none_or(|u| r.line.contains(u)));
    let Some(ran) = last else {
        return report(false, words::no_curl(c.url.as_deref()));
    };
    let succeeded = ran.exit_code == 0;
    let first_line = ran
        .output
        .lines()
        .find(|l| l.starts_with("curl:"))
        .unwrap_or("");
    report(
        succeeded == c.succeeds,
        words::curl(&ran.line, ran.exit_code, first_line),
    )
}
