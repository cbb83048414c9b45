//! `kubectl get --sort-by=JSONPATH` (`sorter.go`): a stable sort on one field, numbers by
//! value, strings in natural order (`sortorder.NaturalLess`), objects missing the field
//! first.

use std::cmp::Ordering;
use std::sync::Arc;

use serde_json::Value;

use crate::kubectl::jsonpath::JsonPath;
use crate::kubectl::output::object_value;
use crate::object::Object;

/// `{.a.b}` from `.a.b`, `a.b` or `{.a.b}` (`RelaxedJSONPathExpression`).
pub fn relaxed(expr: &str) -> String {
    let inner = expr.trim();
    let inner = inner.strip_prefix('{').unwrap_or(inner);
    let inner = inner.strip_suffix('}').unwrap_or(inner);
    if inner.starts_with('.') {
        format!("{{{inner}}}")
    } else {
        format!("{{.{inner}}}")
    }
}

/// Go's `sortorder.NaturalLess`: runs of digits compare as numbers.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (ca, cb) = (a[i], b[j]);
        if ca.is_ascii_digit() && cb.is_ascii_digit() {
            let si = i;
            while i < a.len() && a[i] == b'0' {
                i += 1;
            }
            let sj = j;
            while j < b.len() && b[j] == b'0' {
                j += 1;
            }
            let (ni, nj) = (i, j);
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let (da, db) = (&a[ni..i], &b[nj..j]);
            let ord = da.len().cmp(&db.len()).then_with(|| da.cmp(db));
            if ord != Ordering::Equal {
                return ord;
            }
            // Equal numbers: fewer leading zeros first.
            let z = (ni - si).cmp(&(nj - sj));
            if z != Ordering::Equal {
                return z;
            }
            continue;
        }
        if ca != cb {
            return ca.cmp(&cb);
        }
        i += 1;
        j += 1;
    }
    (a.len() - i).cmp(&(b.len() - j))
}

fn cmp_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .unwrap_or(0.0)
            .partial_cmp(&y.as_f64().unwrap_or(0.0))
            .unwrap_or(Ordering::Equal),
        (Value::String(x), Value::String(y)) => natural_cmp(x, y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}

/// Sorts `objs` by the field `expr` names, or kubectl's error.
pub fn sort_objects(objs: &mut [Arc<Object>], expr: &str) -> Result<(), String> {
    let path = JsonPath::parse(&relaxed(expr))?;
    let mut keyed: Vec<(Option<Value>, Arc<Object>)> = Vec::with_capacity(objs.len());
    for o in objs.iter() {
        let v = object_value(o);
        let first = path
            .find_results(&v)?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next());
        keyed.push((first, o.clone()));
    }
    if !keyed.is_empty() && keyed.iter().all(|(k, _)| k.is_none()) {
        return Err(format!(
            "couldn't find any field with path \"{}\" in the list of objects",
            relaxed(expr)
        ));
    }
    keyed.sort_by(|(a, _), (b, _)| match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => cmp_values(x, y),
    });
    for (slot, (_, o)) in objs.iter_mut().zip(keyed) {
        *slot = o;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_compares_digit_runs_as_numbers() {
        let mut v = vec!["web-10", "web-2", "web-1", "app"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["app", "web-1", "web-2", "web-10"]);
        assert_eq!(relaxed(".metadata.name"), "{.metadata.name}");
        assert_eq!(relaxed("{.status.phase}"), "{.status.phase}");
    }
}
