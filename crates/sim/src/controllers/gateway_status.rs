//! The statuses Envoy Gateway writes, computed from what its informers hold: the
//! GatewayClass `Accepted` condition, a Gateway's `Accepted`/`Programmed` conditions,
//! addresses and listener statuses (with `attachedRoutes`), and an HTTPRoute's
//! `status.parents[]` (`Accepted`, `ResolvedRefs`) — with Envoy Gateway's reasons and
//! messages. `lastTransitionTime` moves only when a condition's status changes.

use serde_json::{json, Map, Value};

use crate::node::gateway_model::{self as gm, Gateway, Grant, Route, CONTROLLER_NAME};
use crate::node::gateway_tls::Problem;
use crate::time::{k8s_time, Time};

/// What a condition is computed against.
pub struct Stamp<'a> {
    /// Now, for new transitions.
    pub now: Time,
    /// The object's `metadata.generation`.
    pub generation: i64,
    /// The conditions it has now.
    pub old: &'a [Value],
}

/// One condition; the old `lastTransitionTime` is kept when the status is unchanged.
pub fn condition(st: &Stamp, type_: &str, ok: bool, reason: &str, message: &str) -> Value {
    let status = if ok { "True" } else { "False" };
    let since = st
        .old
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
        .filter(|c| c.get("status").and_then(Value::as_str) == Some(status))
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| serde_json::to_value(k8s_time(st.now)).unwrap_or(Value::Null));
    json!({
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": st.generation,
        "lastTransitionTime": since,
    })
}

/// The conditions an object's status holds now.
pub fn conditions_of(status: Option<&Value>) -> Vec<Value> {
    status
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The GatewayClass status: accepted, unless it names parameters kubeloop's Envoy
/// Gateway cannot resolve (no EnvoyProxy CRD is installed).
pub fn gateway_class(st: &Stamp, spec: &Value) -> (bool, Value) {
    let cond = match spec.get("parametersRef") {
        None => condition(st, "Accepted", true, "Accepted", "Valid GatewayClass"),
        Some(p) => condition(
            st,
            "Accepted",
            false,
            "InvalidParameters",
            &format!(
                "Invalid parametersRef: unable to find {} {}/{}",
                p.get("kind").and_then(Value::as_str).unwrap_or(""),
                p.get("namespace").and_then(Value::as_str).unwrap_or(""),
                p.get("name").and_then(Value::as_str).unwrap_or("")
            ),
        ),
    };
    let ok = spec.get("parametersRef").is_none();
    (ok, json!({ "conditions": [cond] }))
}

/// What the proxy's Service and Deployment say.
pub struct Infra {
    /// The Service's load-balancer addresses (IPs, then hostnames).
    pub addresses: Vec<(String, String)>,
    /// The Deployment's (available, replicas).
    pub replicas: Option<(i32, i32)>,
}

fn listener_problem(gw: &Gateway, i: usize) -> Option<(&'static str, &'static str, String)> {
    let l = &gw.listeners[i];
    if l.protocol != "HTTP" && l.protocol != "HTTPS" {
        return Some((
            "Accepted",
            "UnsupportedProtocol",
            format!("Protocol {} is not supported by kubeloop's Envoy Gateway, which serves HTTP and HTTPS listeners only.", l.protocol),
        ));
    }
    let same_port = gw
        .listeners
        .iter()
        .enumerate()
        .filter(|(j, o)| *j != i && o.port == l.port);
    for (_, o) in same_port {
        if o.protocol != l.protocol {
            return Some((
                "Conflicted",
                "ProtocolConflict",
                "All listeners for a given port must use a compatible protocol".into(),
            ));
        }
        if o.hostname == l.hostname {
            return Some((
                "Conflicted",
                "HostnameConflict",
                "All listeners for a given port must use a unique hostname".into(),
            ));
        }
    }
    None
}

/// Whether listener `i` is valid (HTTP or HTTPS, no conflict).
pub fn listener_ok(gw: &Gateway, i: usize) -> bool {
    listener_problem(gw, i).is_none()
}

/// The Gateway status.
pub fn gateway(
    st: &Stamp,
    gw: &Gateway,
    infra: &Infra,
    attached: &[usize],
    old_listeners: &[Value],
    tls: &[Option<Problem>],
) -> Value {
    let accepted = condition(
        st,
        "Accepted",
        true,
        "Accepted",
        "The Gateway has been scheduled by Envoy Gateway",
    );
    let programmed = if infra.addresses.is_empty() {
        condition(
            st,
            "Programmed",
            false,
            "AddressNotAssigned",
            "No addresses have been assigned to the Gateway",
        )
    } else {
        match infra.replicas {
            Some((avail, want)) if avail > 0 => condition(
                st,
                "Programmed",
                true,
                "Programmed",
                &format!("Address assigned to the Gateway, {avail}/{want} envoy Deployment replicas available"),
            ),
            _ => condition(st, "Programmed", false, "NoResources", "Deployment replicas unavailable"),
        }
    };
    let listeners: Vec<Value> = gw
        .listeners
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let old: Vec<Value> = old_listeners
                .iter()
                .find(|o| o.get("name").and_then(Value::as_str) == Some(&l.name))
                .map(|o| conditions_of(Some(o)))
                .unwrap_or_default();
            let ls = Stamp {
                now: st.now,
                generation: st.generation,
                old: &old,
            };
            let conds = match (listener_problem(gw, i), tls.get(i).cloned().flatten()) {
                (None, Some(p)) => tls_conditions(&ls, &p),
                (None, None) => vec![
                    condition(&ls, "Programmed", true, "Programmed", "Sending translated listener configuration to the data plane"),
                    condition(&ls, "Accepted", true, "Accepted", "Listener has been successfully translated"),
                    condition(&ls, "ResolvedRefs", true, "ResolvedRefs", "Listener has been successfully translated"),
                ],
                (Some((type_, reason, msg)), _) => {
                    let mut v = vec![condition(&ls, "Programmed", false, "Invalid", "Listener is invalid, see other Conditions for details.")];
                    if type_ == "Conflicted" {
                        v.push(condition(&ls, "Conflicted", true, reason, &msg));
                    } else {
                        v.push(condition(&ls, "Accepted", false, reason, &msg));
                    }
                    v
                }
            };
            let kinds = if l.protocol == "HTTP" || l.protocol == "HTTPS" {
                json!([{"group": gm::GROUP, "kind": "HTTPRoute"}, {"group": gm::GROUP, "kind": "GRPCRoute"}])
            } else {
                json!([])
            };
            json!({
                "name": l.name,
                "supportedKinds": kinds,
                "attachedRoutes": attached.get(i).copied().unwrap_or(0),
                "conditions": conds,
            })
        })
        .collect();
    let mut m = Map::new();
    if !infra.addresses.is_empty() {
        let a: Vec<Value> = infra
            .addresses
            .iter()
            .map(|(t, v)| json!({"type": t, "value": v}))
            .collect();
        m.insert("addresses".into(), Value::Array(a));
    }
    m.insert("conditions".into(), json!([accepted, programmed]));
    m.insert("listeners".into(), Value::Array(listeners));
    Value::Object(m)
}

/// A listener whose TLS fails: Envoy Gateway's condition, then `Programmed False
/// Invalid` and `ResolvedRefs True` where the problem did not set them
/// (`validateListenerConditions`).
fn tls_conditions(ls: &Stamp, p: &Problem) -> Vec<Value> {
    let mut v = vec![condition(ls, p.type_, false, p.reason, &p.message)];
    if p.type_ != "Programmed" {
        v.push(condition(
            ls,
            "Programmed",
            false,
            "Invalid",
            "Listener is invalid, see other Conditions for details.",
        ));
    }
    if p.type_ != "ResolvedRefs" {
        v.push(condition(
            ls,
            "ResolvedRefs",
            true,
            "ResolvedRefs",
            "Listener references have been resolved",
        ));
    }
    v
}

/// One `status.parents[]` entry of a route for a parentRef to one of our Gateways, and
/// the listeners it attached to.
pub fn route_parent(
    st: &Stamp,
    route: &Route,
    p: &gm::ParentRef,
    gw: &Gateway,
    ns_labels: &dyn Fn(&str) -> Vec<(String, String)>,
    service: &dyn Fn(&str, &str) -> bool,
    grants: &[Grant],
) -> (Value, Vec<usize>) {
    let attached = gm::attach(route, p, gw, ns_labels).map(|ls| {
        ls.into_iter()
            .filter(|i| listener_ok(gw, *i))
            .collect::<Vec<_>>()
    });
    let accepted = match &attached {
        Ok(ls) if !ls.is_empty() => {
            condition(st, "Accepted", true, "Accepted", "Route is accepted")
        }
        Ok(_) => condition(
            st,
            "Accepted",
            false,
            "NoMatchingParent",
            "There are no ready listeners for this parent ref",
        ),
        Err(why) => condition(st, "Accepted", false, why.reason(), why.message()),
    };
    let mut problem = None;
    'rules: for (ri, rule) in route.rules.iter().enumerate() {
        for (bi, b) in rule.backends.iter().enumerate() {
            if let Some(p) = gm::backend_problem(&route.namespace, ri, bi, b, service, grants) {
                problem = Some(p);
                break 'rules;
            }
        }
    }
    let resolved = match problem {
        None => condition(
            st,
            "ResolvedRefs",
            true,
            "ResolvedRefs",
            "Resolved all the Object references for the Route",
        ),
        Some((reason, msg)) => condition(st, "ResolvedRefs", false, reason, &msg),
    };
    let mut parent_ref = p.raw.clone();
    if let Some(m) = parent_ref.as_object_mut() {
        m.entry("group").or_insert(json!(gm::GROUP));
        m.entry("kind").or_insert(json!("Gateway"));
        m.entry("namespace").or_insert(json!(route.namespace));
    }
    (
        json!({
            "parentRef": parent_ref,
            "controllerName": CONTROLLER_NAME,
            "conditions": [accepted, resolved],
        }),
        attached.unwrap_or_default(),
    )
}
