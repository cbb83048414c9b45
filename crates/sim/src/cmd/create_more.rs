//! More `kubectl create` generators: `cronjob` (`create_cronjob.go`), `quota`
//! (`create_quota.go`) and `poddisruptionbudget` (`create_pdb.go`), built as kubectl
//! builds them.

use serde_json::{json, Map, Value};

use crate::apiserver::quantity::parse_quantity;
use crate::cmd::kubectl::Kubectl;
use crate::object::Kind;

/// The NAME of a generator, counted as cobra's `NameFromCommandArgs` counts it (only
/// the arguments before `--`).
pub fn name_before_dash(k: &Kubectl, sub: &str, args: &[String]) -> Result<String, i32> {
    let n = k.flags.dash.map_or(args.len(), |d| d.saturating_sub(1));
    if n != 1 || args.is_empty() {
        return Err(k.error(&format!(
            "exactly one NAME is required, got {n}\nSee 'kubectl create {sub} -h' for help and examples"
        )));
    }
    Ok(args[0].clone())
}

/// `kubectl create cronjob NAME --image=IMAGE --schedule='0/5 * * * ?' [--restart=…]
/// [-- COMMAND [ARGS]]`.
pub fn cronjob(k: &Kubectl, args: &[String]) -> Result<(Kind, Value), i32> {
    let name = name_before_dash(k, "cronjob", args)?;
    let (image, schedule) = match (k.flags.get("image"), k.flags.get("schedule")) {
        (Some(i), Some(s)) => (i, s),
        (None, None) => return Err(k.error("required flag(s) \"image\", \"schedule\" not set")),
        (None, _) => return Err(k.error("required flag(s) \"image\" not set")),
        (_, None) => return Err(k.error("required flag(s) \"schedule\" not set")),
    };
    let restart = k.flags.get("restart").unwrap_or("OnFailure");
    if restart != "OnFailure" && restart != "Never" {
        return Err(k.error(&format!("invalid restart policy: {restart}")));
    }
    let mut c = json!({"name": name, "image": image, "resources": {}});
    if args.len() > 1 {
        c["command"] = json!(args[1..]);
    }
    Ok((
        Kind::CronJob,
        json!({
            "metadata": {"name": name},
            "spec": {
                "schedule": schedule,
                "jobTemplate": {
                    "metadata": {"name": name},
                    "spec": {"template": {"metadata": {}, "spec": {
                        "containers": [c], "restartPolicy": restart
                    }}}
                }
            }
        }),
    ))
}

/// `kubectl create quota NAME [--hard=key1=value1] [--scopes=Scope1,Scope2]`.
pub fn quota(k: &Kubectl, args: &[String]) -> Result<(Kind, Value), i32> {
    let name = name_before_dash(k, "quota", args)?;
    let mut spec = Map::new();
    if let Some(hard) = k.flags.get("hard").filter(|h| !h.is_empty()) {
        let mut list = Map::new();
        for stmt in hard.split(',') {
            let parts: Vec<&str> = stmt.split('=').collect();
            if parts.len() != 2 {
                return Err(k.error(&format!(
                    "Invalid argument syntax {stmt}, expected <resource>=<value>"
                )));
            }
            let q = parse_quantity(parts[1]).map_err(|e| k.error(&e))?;
            list.insert(parts[0].to_string(), json!(q.canonical()));
        }
        spec.insert("hard".into(), Value::Object(list));
    }
    if let Some(scopes) = k.flags.get("scopes").filter(|s| !s.is_empty()) {
        let scopes: Vec<&str> = scopes.split(',').collect();
        if scopes.iter().any(|s| s.is_empty()) {
            return Err(k.error("invalid resource quota scope \"\""));
        }
        spec.insert("scopes".into(), json!(scopes));
    }
    Ok((
        Kind::ResourceQuota,
        json!({"metadata": {"name": name}, "spec": spec}),
    ))
}

/// `kubectl create poddisruptionbudget NAME --selector=SELECTOR
/// --min-available=N|--max-unavailable=N`.
pub fn pdb(k: &Kubectl, args: &[String]) -> Result<(Kind, Value), i32> {
    let name = name_before_dash(k, "poddisruptionbudget", args)?;
    let min = k.flags.get("min-available").filter(|v| !v.is_empty());
    let max = k.flags.get("max-unavailable").filter(|v| !v.is_empty());
    let selector = k.flags.get("selector").unwrap_or("");
    if selector.is_empty() {
        return Err(k.error("a selector must be specified"));
    }
    let budget = match (min, max) {
        (None, None) => {
            return Err(k.error("one of min-available or max-unavailable must be specified"))
        }
        (Some(_), Some(_)) => {
            return Err(k.error("min-available and max-unavailable cannot be both specified"))
        }
        (Some(v), None) => ("minAvailable", v),
        (None, Some(v)) => ("maxUnavailable", v),
    };
    let sel = crate::selector::LabelSelector::parse(selector).map_err(|e| k.error(&e))?;
    let int_or_percent = match budget.1.parse::<i64>() {
        Ok(n) => json!(n),
        Err(_) if budget.1.ends_with('%') => json!(budget.1),
        Err(_) => {
            return Err(k.error(&format!(
                "invalid format specified for {}",
                if budget.0 == "minAvailable" {
                    "min-available"
                } else {
                    "max-unavailable"
                }
            )))
        }
    };
    let mut spec = Map::new();
    spec.insert(budget.0.into(), int_or_percent);
    spec.insert("selector".into(), api_selector(&sel));
    Ok((
        Kind::PodDisruptionBudget,
        json!({"metadata": {"name": name}, "spec": spec}),
    ))
}

/// `metav1.ParseToLabelSelector`: equalities become matchLabels, the rest expressions.
fn api_selector(sel: &crate::selector::LabelSelector) -> Value {
    use crate::selector::Requirement as R;
    let mut labels = Map::new();
    let mut exprs = Vec::new();
    for r in &sel.requirements {
        match r {
            R::Equals(k, v) => {
                labels.insert(k.clone(), json!(v));
            }
            R::In(k, v) => exprs.push(json!({"key": k, "operator": "In", "values": v})),
            R::NotIn(k, v) => exprs.push(json!({"key": k, "operator": "NotIn", "values": v})),
            R::Exists(k) => exprs.push(json!({"key": k, "operator": "Exists"})),
            R::DoesNotExist(k) => exprs.push(json!({"key": k, "operator": "DoesNotExist"})),
            R::NotEquals(k, v) => exprs.push(json!({"key": k, "operator": "NotIn", "values": [v]})),
        }
    }
    let mut out = Map::new();
    if !labels.is_empty() {
        out.insert("matchLabels".into(), Value::Object(labels));
    }
    if !exprs.is_empty() {
        out.insert("matchExpressions".into(), Value::Array(exprs));
    }
    Value::Object(out)
}
