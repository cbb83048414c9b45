//! Tables of custom objects: the CRD version's `additionalPrinterColumns` (the
//! apiextensions-apiserver's `tableconvertor`), or NAME and AGE when it has none.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time as K8sTime;
use serde_json::Value;

use super::{age, col, wide, Column};
use crate::kubectl::jsonpath::{go_sprint, JsonPath};
use crate::object::{Kind, Object};
use crate::time::Time;

pub(super) fn columns(kind: Kind) -> Vec<Column> {
    let defs = kind.info().printer_columns;
    if defs.is_empty() {
        return vec![col("Name"), col("Age")];
    }
    let mut out = vec![col("Name")];
    for c in defs {
        out.push(if c.priority == 0 {
            col(&c.name)
        } else {
            wide(&c.name)
        });
    }
    out
}

fn cell(type_: &str, json_path: &str, v: &Value, now: Time) -> String {
    let Ok(path) = JsonPath::parse(&format!("{{{json_path}}}")) else {
        return "<none>".into();
    };
    let found = path
        .find_results(v)
        .ok()
        .and_then(|r| r.into_iter().next())
        .unwrap_or_default();
    let Some(first) = found.first() else {
        return "<none>".into();
    };
    if type_ == "date" {
        return match crate::object::decode::<K8sTime>(first) {
            Ok(t) => age(Some(&t), now),
            Err(_) => go_sprint(first),
        };
    }
    // kubectl's JSONPath printer writes lists and maps as JSON (`["www.example.com"]`).
    let texts: Vec<String> = found
        .iter()
        .map(|v| match v {
            Value::Array(_) | Value::Object(_) => v.to_string(),
            _ => go_sprint(v),
        })
        .collect();
    texts.join(", ")
}

pub(super) fn row(kind: Kind, obj: &Object, now: Time) -> Vec<String> {
    let defs = kind.info().printer_columns;
    let mut out = vec![obj.name().to_string()];
    if defs.is_empty() {
        out.push(age(obj.meta().creation_timestamp.as_ref(), now));
        return out;
    }
    let v = obj.to_value();
    for c in defs {
        out.push(cell(&c.type_, &c.json_path, &v, now));
    }
    out
}
