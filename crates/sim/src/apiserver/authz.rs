//! Authentication and authorization: the Node authorizer (simplified) and RBAC over the
//! Roles, ClusterRoles and bindings in the watch cache.

use k8s_openapi::api::rbac::v1::{PolicyRule, RoleRef, Subject};

use crate::api::{ApiRequest, Status, StatusReason};
use crate::apiserver::watch::WatchCache;
use crate::object::{Kind, Object};

/// Who a request acts as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserInfo {
    /// User name.
    pub name: String,
    /// Groups.
    pub groups: Vec<String>,
}

/// What a request wants to do, in RBAC terms.
#[derive(Clone, Debug)]
pub struct Attributes {
    /// Verb (`get`, `list`, `create`, …).
    pub verb: String,
    /// API group.
    pub group: String,
    /// Resource (plural).
    pub resource: String,
    /// Subresource, or "".
    pub subresource: String,
    /// Namespace, or "" for cluster scope.
    pub namespace: String,
    /// Object name, or "".
    pub name: String,
}

impl Attributes {
    /// The attributes of an API request.
    pub fn of(req: &ApiRequest) -> Attributes {
        let info = req.kind.info();
        Attributes {
            verb: req.verb.as_str().to_string(),
            group: info.group.to_string(),
            resource: info.plural.to_string(),
            subresource: req
                .subresource
                .map(|s| s.as_str().to_string())
                .unwrap_or_default(),
            namespace: if info.namespaced {
                req.namespace.clone()
            } else {
                String::new()
            },
            name: req.name.clone(),
        }
    }

    fn resource_path(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }
}

/// Authenticates: no identity ⇒ 401. Applies `Impersonate-User` when the requester may.
pub fn authenticate(req: &ApiRequest, cache: &WatchCache) -> Result<UserInfo, Status> {
    let Some(name) = &req.user else {
        return Err(Status::new(401, StatusReason::Unauthorized, "Unauthorized"));
    };
    let mut groups = req.groups.clone();
    groups.push("system:authenticated".to_string());
    let user = UserInfo {
        name: name.clone(),
        groups,
    };
    let Some(target) = &req.impersonate else {
        return Ok(user);
    };
    let attrs = Attributes {
        verb: "impersonate".into(),
        group: String::new(),
        resource: "users".into(),
        subresource: String::new(),
        namespace: String::new(),
        name: target.clone(),
    };
    if !authorize(&user, &attrs, cache) {
        return Err(Status::new(
            403,
            StatusReason::Forbidden,
            format!("users \"{target}\" is forbidden: User \"{}\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope", user.name),
        ));
    }
    Ok(UserInfo {
        name: target.clone(),
        groups: vec!["system:authenticated".to_string()],
    })
}

/// Whether `user` may do `attrs`.
pub fn authorize(user: &UserInfo, attrs: &Attributes, cache: &WatchCache) -> bool {
    if user.groups.iter().any(|g| g == "system:masters") {
        return true;
    }
    // The Node authorizer, simplified: kubelets may act on what their node needs.
    if user.name.starts_with("system:node:") && user.groups.iter().any(|g| g == "system:nodes") {
        return true;
    }
    let subject_matches = |s: &Subject, binding_ns: &str| match s.kind.as_str() {
        "User" => s.name == user.name,
        "Group" => user.groups.contains(&s.name),
        "ServiceAccount" => {
            let ns = s.namespace.as_deref().unwrap_or(binding_ns);
            user.name
                .strip_prefix("system:serviceaccount:")
                .and_then(|rest| rest.strip_prefix(ns))
                .and_then(|rest| rest.strip_prefix(':'))
                == Some(s.name.as_str())
        }
        _ => false,
    };
    for o in cache.iter(Kind::ClusterRoleBinding) {
        let Object::ClusterRoleBinding(b) = &**o else {
            continue;
        };
        if b.subjects.iter().flatten().any(|s| subject_matches(s, ""))
            && role_allows(&b.role_ref, "", attrs, cache)
        {
            return true;
        }
    }
    if attrs.namespace.is_empty() {
        return false;
    }
    for o in cache.list(Kind::RoleBinding, &attrs.namespace) {
        let Object::RoleBinding(b) = &*o else {
            continue;
        };
        if b.subjects
            .iter()
            .flatten()
            .any(|s| subject_matches(s, &attrs.namespace))
            && role_allows(&b.role_ref, &attrs.namespace, attrs, cache)
        {
            return true;
        }
    }
    false
}

fn role_allows(r: &RoleRef, ns: &str, attrs: &Attributes, cache: &WatchCache) -> bool {
    // The role is read in place from the cache: no copy of its rules per request.
    let role = match r.kind.as_str() {
        "ClusterRole" => cache.get(Kind::ClusterRole, "", &r.name),
        "Role" => cache.get(Kind::Role, ns, &r.name),
        _ => return false,
    };
    let rules = match role.map(|o| &**o) {
        Some(Object::ClusterRole(c)) if r.kind == "ClusterRole" => c.rules.as_deref(),
        Some(Object::Role(c)) if r.kind == "Role" => c.rules.as_deref(),
        _ => return false,
    };
    let res = attrs.resource_path();
    rules
        .unwrap_or_default()
        .iter()
        .any(|rule| rule_allows_resource(rule, attrs, &res))
}

/// Whether one PolicyRule covers the request.
pub fn rule_allows(rule: &PolicyRule, a: &Attributes) -> bool {
    rule_allows_resource(rule, a, &a.resource_path())
}

/// [`rule_allows`] with the request's `resource[/subresource]` already built.
fn rule_allows_resource(rule: &PolicyRule, a: &Attributes, res: &str) -> bool {
    let has =
        |list: &Option<Vec<String>>, v: &str| list.iter().flatten().any(|x| x == "*" || x == v);
    let has_any_subresource = |list: &Option<Vec<String>>| {
        list.iter()
            .flatten()
            .any(|x| x.strip_prefix("*/") == Some(a.subresource.as_str()))
    };
    let verb_ok = rule.verbs.iter().any(|v| v == "*" || *v == a.verb);
    let group_ok = has(&rule.api_groups, &a.group);
    let resource_ok = has(&rule.resources, res)
        || (!a.subresource.is_empty() && has_any_subresource(&rule.resources));
    let name_ok = rule
        .resource_names
        .as_ref()
        .is_none_or(|n| n.is_empty() || n.contains(&a.name));
    verb_ok && group_ok && resource_ok && name_ok
}

/// Whether `user` may do what a SelfSubjectAccessReview's spec asks about. Non-resource
/// URLs are allowed to those bound to a rule naming them (only `cluster-admin`'s `*`
/// here) and denied otherwise.
pub fn review(
    user: &UserInfo,
    spec: &k8s_openapi::api::authorization::v1::SelfSubjectAccessReviewSpec,
    cache: &WatchCache,
) -> bool {
    if let Some(ra) = &spec.resource_attributes {
        let attrs = Attributes {
            verb: ra.verb.clone().unwrap_or_default(),
            group: ra.group.clone().unwrap_or_default(),
            resource: ra.resource.clone().unwrap_or_default(),
            subresource: ra.subresource.clone().unwrap_or_default(),
            namespace: ra.namespace.clone().unwrap_or_default(),
            name: ra.name.clone().unwrap_or_default(),
        };
        return authorize(user, &attrs, cache);
    }
    // Non-resource URLs: only a superuser's wildcard rule covers them here.
    let attrs = Attributes {
        verb: "*".into(),
        group: "*".into(),
        resource: "*".into(),
        subresource: String::new(),
        namespace: String::new(),
        name: String::new(),
    };
    authorize(user, &attrs, cache)
}

/// The 403 upstream returns when RBAC denies.
pub fn forbidden(user: &UserInfo, a: &Attributes) -> Status {
    let res = a.resource_path();
    let target = if a.name.is_empty() {
        res.clone()
    } else {
        format!("{} \"{}\"", group_resource(a), a.name)
    };
    let target = if a.name.is_empty() && !a.group.is_empty() {
        format!("{}.{}", res, a.group)
    } else {
        target
    };
    let scope = if a.namespace.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace \"{}\"", a.namespace)
    };
    Status::new(
        403,
        StatusReason::Forbidden,
        format!(
            "{target} is forbidden: User \"{}\" cannot {} resource \"{res}\" in API group \"{}\" {scope}",
            user.name, a.verb, a.group
        ),
    )
}

fn group_resource(a: &Attributes) -> String {
    if a.group.is_empty() {
        a.resource.clone()
    } else {
        format!("{}.{}", a.resource, a.group)
    }
}
