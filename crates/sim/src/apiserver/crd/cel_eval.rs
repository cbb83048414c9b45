//! Evaluating the CEL subset of [`super::cel`] over JSON values.

use serde_json::Value;

use crate::apiserver::crd::cel::Expr;

/// Variables in scope while evaluating.
pub struct Env {
    vars: Vec<(String, Value)>,
}

impl Env {
    /// `self` (and `oldSelf` when given).
    pub fn new(this: &Value, old: Option<&Value>) -> Env {
        let mut vars = vec![("self".to_string(), this.clone())];
        if let Some(o) = old {
            vars.push(("oldSelf".to_string(), o.clone()));
        }
        Env { vars }
    }

    fn get(&self, name: &str) -> Result<Value, String> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("no such attribute: {name}"))
    }
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn truth(v: Value) -> Result<bool, String> {
    v.as_bool().ok_or_else(|| "no such overload".to_string())
}

/// Evaluates an expression.
pub fn eval(e: &Expr, env: &mut Env) -> Result<Value, String> {
    match e {
        Expr::Lit(v) => Ok(v.clone()),
        Expr::Var(v) => env.get(v),
        Expr::Select(x, f) => {
            let base = eval(x, env)?;
            base.get(f)
                .cloned()
                .ok_or_else(|| format!("no such key: {f}"))
        }
        Expr::Has(x, f) => Ok(Value::Bool(eval(x, env)?.get(f).is_some())),
        Expr::Index(x, i) => {
            let base = eval(x, env)?;
            let i = eval(i, env)?;
            let found = match (&base, &i) {
                (Value::Array(a), Value::Number(n)) => n.as_u64().and_then(|n| a.get(n as usize)),
                (Value::Object(m), Value::String(k)) => m.get(k),
                _ => None,
            };
            found.cloned().ok_or_else(|| format!("no such key: {i}"))
        }
        Expr::Unary('!', x) => Ok(Value::Bool(!truth(eval(x, env)?)?)),
        Expr::Unary(_, x) => match eval(x, env)? {
            Value::Number(n) if n.is_i64() => Ok(Value::from(-n.as_i64().unwrap_or(0))),
            Value::Number(n) => Ok(Value::from(-n.as_f64().unwrap_or(0.0))),
            _ => Err("no such overload".into()),
        },
        Expr::Binary(op, a, b) => binary(op, a, b, env),
        Expr::Cond(c, a, b) => {
            if truth(eval(c, env)?)? {
                eval(a, env)
            } else {
                eval(b, env)
            }
        }
        Expr::List(items) => Ok(Value::Array(
            items
                .iter()
                .map(|x| eval(x, env))
                .collect::<Result<_, _>>()?,
        )),
        Expr::Call(f, args) => {
            let vals: Vec<Value> = args
                .iter()
                .map(|x| eval(x, env))
                .collect::<Result<_, _>>()?;
            call(f, &vals)
        }
        Expr::Macro(m, list, var, pred) => {
            let items: Vec<Value> = match eval(list, env)? {
                Value::Array(a) => a,
                Value::Object(o) => o.keys().map(|k| Value::String(k.clone())).collect(),
                _ => return Err("no such overload".into()),
            };
            let mut found_any = false;
            for x in items {
                env.vars.push((var.clone(), x));
                let r = eval(pred, env).and_then(truth);
                env.vars.pop();
                let r = r?;
                if m == "all" && !r {
                    return Ok(Value::Bool(false));
                }
                found_any |= r;
            }
            Ok(Value::Bool(m == "all" || found_any))
        }
    }
}

fn binary(op: &str, a: &Expr, b: &Expr, env: &mut Env) -> Result<Value, String> {
    match op {
        "&&" => return Ok(Value::Bool(truth(eval(a, env)?)? && truth(eval(b, env)?)?)),
        "||" => return Ok(Value::Bool(truth(eval(a, env)?)? || truth(eval(b, env)?)?)),
        _ => {}
    }
    let (x, y) = (eval(a, env)?, eval(b, env)?);
    let both_int = x.is_i64() && y.is_i64();
    match op {
        "==" => Ok(Value::Bool(equal(&x, &y))),
        "!=" => Ok(Value::Bool(!equal(&x, &y))),
        "in" => match &y {
            Value::Array(v) => Ok(Value::Bool(v.iter().any(|i| equal(i, &x)))),
            Value::Object(m) => Ok(Value::Bool(x.as_str().is_some_and(|k| m.contains_key(k)))),
            _ => Err("no such overload".into()),
        },
        "<" | "<=" | ">" | ">=" => {
            let ord = match (&x, &y) {
                (Value::String(p), Value::String(q)) => p.partial_cmp(q),
                _ => num(&x).zip(num(&y)).and_then(|(p, q)| p.partial_cmp(&q)),
            }
            .ok_or("no such overload")?;
            use std::cmp::Ordering::*;
            Ok(Value::Bool(match op {
                "<" => ord == Less,
                "<=" => ord != Greater,
                ">" => ord == Greater,
                _ => ord != Less,
            }))
        }
        "+" => match (&x, &y) {
            (Value::String(p), Value::String(q)) => Ok(Value::String(format!("{p}{q}"))),
            (Value::Array(p), Value::Array(q)) => {
                Ok(Value::Array(p.iter().chain(q).cloned().collect()))
            }
            _ => arith(op, &x, &y, both_int),
        },
        _ => arith(op, &x, &y, both_int),
    }
}

fn equal(x: &Value, y: &Value) -> bool {
    match (num(x), num(y)) {
        (Some(p), Some(q)) => p == q,
        _ => x == y,
    }
}

fn arith(op: &str, x: &Value, y: &Value, ints: bool) -> Result<Value, String> {
    if ints {
        let (p, q) = (x.as_i64().unwrap_or(0), y.as_i64().unwrap_or(0));
        if matches!(op, "/" | "%") && q == 0 {
            return Err(if op == "/" {
                "division by zero"
            } else {
                "modulus by zero"
            }
            .into());
        }
        let r = match op {
            "+" => p.checked_add(q),
            "-" => p.checked_sub(q),
            "*" => p.checked_mul(q),
            "/" => p.checked_div(q),
            _ => p.checked_rem(q),
        };
        return r.map(Value::from).ok_or_else(|| "integer overflow".into());
    }
    let (p, q) = num(x).zip(num(y)).ok_or("no such overload")?;
    Ok(Value::from(match op {
        "+" => p + q,
        "-" => p - q,
        "*" => p * q,
        "/" => p / q,
        _ => return Err("no such overload".into()),
    }))
}

fn call(f: &str, args: &[Value]) -> Result<Value, String> {
    let s = |i: usize| {
        args.get(i)
            .and_then(Value::as_str)
            .ok_or("no such overload")
    };
    match (f, args.len()) {
        ("size", 1) => Ok(Value::from(match &args[0] {
            Value::String(t) => t.chars().count(),
            Value::Array(a) => a.len(),
            Value::Object(m) => m.len(),
            _ => return Err("no such overload".into()),
        } as i64)),
        ("startsWith", 2) => Ok(Value::Bool(s(0)?.starts_with(s(1)?))),
        ("endsWith", 2) => Ok(Value::Bool(s(0)?.ends_with(s(1)?))),
        ("contains", 2) => Ok(Value::Bool(s(0)?.contains(s(1)?))),
        ("matches", 2) => {
            let re = regex::Regex::new(s(1)?).map_err(|e| e.to_string())?;
            Ok(Value::Bool(re.is_match(s(0)?)))
        }
        ("int", 1) => match &args[0] {
            Value::String(t) => t.parse::<i64>().map(Value::from).map_err(|e| e.to_string()),
            Value::Number(n) => Ok(Value::from(n.as_f64().unwrap_or(0.0) as i64)),
            _ => Err("no such overload".into()),
        },
        ("string", 1) => Ok(Value::String(match &args[0] {
            Value::String(t) => t.clone(),
            other => other.to_string(),
        })),
        _ => Err(format!("found no matching overload for '{f}'")),
    }
}
