//! `kubectl auth can-i VERB RESOURCE[/NAME]` through a SelfSubjectAccessReview, and
//! `kubectl auth whoami`.

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};

use crate::api::{ApiRequest, ApiResult, Body, Verb};
use crate::cmd::kubectl::Kubectl;
use crate::object::{Kind, Object};

/// Verbs `kubectl auth can-i` knows for resources (`resourceVerbs` in cani.go).
const RESOURCE_VERBS: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "use",
    "bind",
    "impersonate",
    "*",
    "approve",
    "sign",
    "escalate",
    "attest",
];

/// `kubectl auth SUBCOMMAND`.
pub async fn auth(k: Kubectl) -> i32 {
    match k.flags.args.first().map(String::as_str) {
        Some("can-i") => can_i(&k).await,
        Some("whoami") => whoami(&k),
        Some(other) => k.error(&format!("unknown command \"{other}\" for \"kubectl auth\"")),
        None => k.error("you must specify a subcommand: can-i, whoami"),
    }
}

fn warn(k: &Kubectl, msg: &str) {
    k.sys.err(&format!("Warning: {msg}\n"));
}

async fn can_i(k: &Kubectl) -> i32 {
    let args = &k.flags.args[1..];
    if args.len() != 2 {
        return k.error("you must specify two arguments: verb resource or verb resource/resourceName.\nSee 'kubectl auth can-i -h' for help and examples.");
    }
    let verb = args[0].clone();
    let (res_arg, name) = match args[1].split_once('/') {
        Some((r, n)) => (r.to_string(), n.to_string()),
        None => (args[1].clone(), String::new()),
    };
    let all_ns = k.flags.bool("all-namespaces");
    let namespace = if all_ns { String::new() } else { k.namespace() };
    let (group, resource, namespaced) = if res_arg == "*" {
        ("*".to_string(), "*".to_string(), true)
    } else {
        match Kind::from_resource_arg(&res_arg) {
            Some(kind) => {
                let i = kind.info();
                (i.group.to_string(), i.plural.to_string(), i.namespaced)
            }
            None => {
                let lower = res_arg.to_ascii_lowercase();
                let (r, g) = lower.split_once('.').unwrap_or((&lower, ""));
                if g.is_empty() {
                    warn(k, &format!("the server doesn't have a resource type '{r}'"));
                } else {
                    warn(
                        k,
                        &format!("the server doesn't have a resource type '{r}' in group '{g}'"),
                    );
                }
                (g.to_string(), res_arg.clone(), true)
            }
        }
    };
    if !namespaced && !all_ns {
        if group.is_empty() {
            warn(k, &format!("resource '{resource}' is not namespace scoped"));
        } else {
            warn(
                k,
                &format!("resource '{resource}' is not namespace scoped in group '{group}'"),
            );
        }
    }
    if !RESOURCE_VERBS.contains(&verb.as_str()) {
        warn(k, &format!("verb '{verb}' is not a known verb"));
    }
    let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: opt(&namespace),
                verb: Some(verb),
                group: Some(if group == "*" && resource != "*" {
                    String::new()
                } else {
                    group
                }),
                resource: Some(resource),
                subresource: k.flags.get("subresource").and_then(opt),
                name: opt(&name),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let req = ApiRequest::new(Verb::Create, Kind::SelfSubjectAccessReview, "", "")
        .with_body(Body::Object(Object::from(review)));
    let allowed = match k.sys.api(req).await {
        Ok(ApiResult::Object(o)) => match &*o {
            Object::SelfSubjectAccessReview(r) => r.status.as_ref().is_some_and(|s| s.allowed),
            _ => false,
        },
        Ok(_) => false,
        Err(s) => return k.status_error(&s),
    };
    if !k.flags.bool("quiet") {
        k.sys.out(if allowed { "yes\n" } else { "no\n" });
    }
    i32::from(!allowed)
}

/// `kubectl auth whoami`: the identity the apiserver sees (a SelfSubjectReview).
fn whoami(k: &Kubectl) -> i32 {
    let (user, groups) = match (&k.sys.impersonate, k.sys.user.as_str()) {
        (Some(u), _) => (u.clone(), vec!["system:authenticated".to_string()]),
        (None, "") => {
            k.sys
                .err("error: You must be logged in to the server (Unauthorized)\n");
            return 1;
        }
        (None, u) => {
            let mut g = k.sys.groups.clone();
            g.push("system:authenticated".into());
            (u.to_string(), g)
        }
    };
    let rows = vec![
        vec!["ATTRIBUTE".to_string(), "VALUE".to_string()],
        vec!["Username".to_string(), user],
        vec!["Groups".to_string(), format!("[{}]", groups.join(" "))],
    ];
    let w = rows.iter().map(|r| r[0].len()).max().unwrap_or(0);
    for r in rows {
        k.sys.out(&format!("{:<w$}   {}\n", r[0], r[1]));
    }
    0
}
