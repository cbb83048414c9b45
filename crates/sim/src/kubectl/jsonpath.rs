//! kubectl's JSONPath templates (`-o jsonpath=…`) and custom columns (`-o custom-columns=…`):
//! fields, `..`, `[n]`, `[a:b]`, `[*]`, `[?(@.k=="v")]`, `range`/`end`, quoted literals.

use serde_json::Value;

use super::output::{to_json, to_json_compact};
use super::tabwriter::{TabConfig, TabWriter};

/// A parsed template.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPath {
    nodes: Vec<Node>,
    raw: String,
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Text(String),
    Path(Vec<Step>),
    Range(Vec<Step>, Vec<Node>),
}

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Field(String),
    Recursive,
    Wildcard,
    Index(Option<i64>, Option<i64>, bool),
    Filter(Vec<Step>, Option<(String, Operand)>),
}

#[derive(Clone, Debug, PartialEq)]
enum Operand {
    Path(Vec<Step>),
    Literal(Value),
}

impl JsonPath {
    /// Parses a template; errors read as kubectl's (`error parsing jsonpath T, unclosed action`).
    pub fn parse(template: &str) -> Result<JsonPath, String> {
        let err = |e: String| format!("error parsing jsonpath {template}, {e}");
        let mut flat = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                None => {
                    flat.push(Flat::Text(rest.to_string()));
                    break;
                }
                Some(p) => {
                    if p > 0 {
                        flat.push(Flat::Text(rest[..p].to_string()));
                    }
                    let end =
                        find_action_end(&rest[p..]).ok_or_else(|| err("unclosed action".into()))?;
                    let action = rest[p + 1..p + end].trim();
                    flat.push(parse_action(action).map_err(err)?);
                    rest = &rest[p + end + 1..];
                }
            }
        }
        let mut it = flat.into_iter();
        let nodes = nest(&mut it, false).map_err(err)?;
        Ok(JsonPath {
            nodes,
            raw: template.to_string(),
        })
    }

    /// Runs the template over `data`. Missing keys print nothing, as kubectl allows them.
    pub fn execute(&self, data: &Value, as_json: bool) -> Result<String, String> {
        let mut out = String::new();
        let mut results = Vec::new();
        self.run(&self.nodes, data, &mut out, &mut results, as_json)
            .map_err(|e| {
                format!(
                    "error executing jsonpath \"{}\": Error executing template: {e}.",
                    self.raw
                )
            })?;
        if as_json {
            return Ok(to_json(&Value::Array(results)));
        }
        Ok(out)
    }

    /// The values each top-level `{…}` selects (Go's `FindResults`), text skipped.
    pub fn find_results(&self, data: &Value) -> Result<Vec<Vec<Value>>, String> {
        let mut out = Vec::new();
        for node in &self.nodes {
            match node {
                Node::Path(steps) | Node::Range(steps, _) => out.push(eval(steps, data)?),
                Node::Text(_) => {}
            }
        }
        Ok(out)
    }

    fn run(
        &self,
        nodes: &[Node],
        cur: &Value,
        out: &mut String,
        all: &mut Vec<Value>,
        as_json: bool,
    ) -> Result<(), String> {
        for node in nodes {
            match node {
                Node::Text(t) => out.push_str(t),
                Node::Path(steps) => {
                    let vals = eval(steps, cur)?;
                    for (i, v) in vals.iter().enumerate() {
                        out.push_str(&to_text(v));
                        if i + 1 != vals.len() {
                            out.push(' ');
                        }
                    }
                    all.extend(vals);
                }
                Node::Range(steps, body) => {
                    for v in eval(steps, cur)? {
                        let items = match v {
                            Value::Array(a) => a,
                            other => vec![other],
                        };
                        for item in &items {
                            self.run(body, item, out, all, as_json)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

enum Flat {
    Text(String),
    Path(Vec<Step>),
    Range(Vec<Step>),
    End,
}

fn nest(it: &mut impl Iterator<Item = Flat>, in_range: bool) -> Result<Vec<Node>, String> {
    let mut nodes = Vec::new();
    while let Some(f) = it.next() {
        match f {
            Flat::Text(t) => nodes.push(Node::Text(t)),
            Flat::Path(p) => nodes.push(Node::Path(p)),
            Flat::Range(p) => nodes.push(Node::Range(p, nest(it, true)?)),
            Flat::End if in_range => return Ok(nodes),
            Flat::End => return Err("not in range, nothing to end".into()),
        }
    }
    if in_range {
        return Err("unclosed range".into());
    }
    Ok(nodes)
}

/// Length of `{…}` at the start of `s` up to its closing brace, honouring quotes.
fn find_action_end(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '}' => return Some(i),
            None => {}
        }
    }
    None
}

fn parse_action(a: &str) -> Result<Flat, String> {
    if a == "end" {
        return Ok(Flat::End);
    }
    if let Some(p) = a.strip_prefix("range ") {
        return Ok(Flat::Range(parse_path(p.trim())?));
    }
    if a.starts_with('"') {
        return Ok(Flat::Text(unquote(a)?));
    }
    Ok(Flat::Path(parse_path(a)?))
}

fn unquote(s: &str) -> Result<String, String> {
    let inner = s
        .strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .ok_or_else(|| format!("unterminated string: {s}"))?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(o) => out.push(o),
            None => return Err(format!("invalid string: {s}")),
        }
    }
    Ok(out)
}

fn parse_path(p: &str) -> Result<Vec<Step>, String> {
    let b: Vec<char> = p.chars().collect();
    let mut i = 0;
    let mut steps = Vec::new();
    if b.first().is_some_and(|&c| c == '@' || c == '$') {
        i = 1;
    }
    while i < b.len() {
        match b[i] {
            '.' if b.get(i + 1) == Some(&'.') => {
                steps.push(Step::Recursive);
                i += 2;
                i = field(&b, i, &mut steps);
            }
            '.' => {
                i += 1;
                i = field(&b, i, &mut steps);
            }
            '[' => {
                let close = matching_bracket(&b, i).ok_or("unterminated array")?;
                let inner: String = b[i + 1..close].iter().collect();
                steps.push(parse_bracket(inner.trim())?);
                i = close + 1;
            }
            _ if steps.is_empty() && i == 0 => i = field(&b, i, &mut steps),
            c => {
                return Err(format!(
                    "unrecognized character in action: U+{:04X} '{c}'",
                    c as u32
                ))
            }
        }
    }
    Ok(steps)
}

fn field(b: &[char], mut i: usize, steps: &mut Vec<Step>) -> usize {
    let start = i;
    while i < b.len() && b[i] != '.' && b[i] != '[' {
        // A backslash escapes the next character (`deployment\.kubernetes\.io/revision`);
        // client-go's parser then drops every backslash from the field name.
        i += if b[i] == '\\' { 2 } else { 1 };
    }
    let i = i.min(b.len());
    let name: String = b[start..i].iter().filter(|c| **c != '\\').collect();
    match name.as_str() {
        "" => {}
        "*" => steps.push(Step::Wildcard),
        _ => steps.push(Step::Field(name)),
    }
    i
}

fn matching_bracket(b: &[char], open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut quote: Option<char> = None;
    for (j, &c) in b.iter().enumerate().skip(open) {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '[' => depth += 1,
            None if c == ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            None => {}
        }
    }
    None
}

fn parse_bracket(inner: &str) -> Result<Step, String> {
    if inner == "*" {
        return Ok(Step::Wildcard);
    }
    if let Some(q) = inner.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
        return Ok(Step::Field(q.to_string()));
    }
    if let Some(f) = inner.strip_prefix("?(").and_then(|x| x.strip_suffix(')')) {
        return parse_filter(f.trim());
    }
    let parts: Vec<&str> = inner.split(':').collect();
    let num = |s: &str| -> Result<Option<i64>, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(None);
        }
        s.parse()
            .map(Some)
            .map_err(|_| format!("invalid array index {s}"))
    };
    match parts.as_slice() {
        [one] => Ok(Step::Index(num(one)?, None, false)),
        [a, b] | [a, b, _] => Ok(Step::Index(num(a)?, num(b)?, true)),
        _ => Err(format!("invalid array index {inner}")),
    }
}

fn parse_filter(f: &str) -> Result<Step, String> {
    for op in ["==", "!=", "<=", ">=", "<", ">"] {
        if let Some((l, r)) = f.split_once(op) {
            let right = r.trim();
            let operand = if right.starts_with('@') || right.starts_with('.') {
                Operand::Path(parse_path(right)?)
            } else if let Some(s) = right.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
                Operand::Literal(Value::String(s.to_string()))
            } else if right.starts_with('"') {
                Operand::Literal(Value::String(unquote(right)?))
            } else {
                Operand::Literal(serde_json::from_str(right).unwrap_or(Value::String(right.into())))
            };
            return Ok(Step::Filter(
                parse_path(l.trim())?,
                Some((op.to_string(), operand)),
            ));
        }
    }
    Ok(Step::Filter(parse_path(f)?, None))
}

fn eval(steps: &[Step], root: &Value) -> Result<Vec<Value>, String> {
    let mut cur = vec![root.clone()];
    for step in steps {
        let mut next = Vec::new();
        for v in &cur {
            match step {
                Step::Field(name) => {
                    if let Some(x) = v.as_object().and_then(|m| m.get(name)) {
                        next.push(x.clone());
                    }
                }
                Step::Wildcard => match v {
                    Value::Array(a) => next.extend(a.iter().cloned()),
                    Value::Object(m) => {
                        let mut keys: Vec<&String> = m.keys().collect();
                        keys.sort();
                        next.extend(keys.into_iter().map(|k| m[k.as_str()].clone()));
                    }
                    _ => {}
                },
                Step::Recursive => descendants(v, &mut next),
                Step::Index(a, b, slice) => {
                    let Value::Array(arr) = v else { continue };
                    let len = arr.len() as i64;
                    let norm = |x: i64| if x < 0 { x + len } else { x };
                    let start = norm(a.unwrap_or(0));
                    let end = if *slice {
                        b.map(norm).unwrap_or(len)
                    } else {
                        start + 1
                    };
                    if start == end {
                        continue;
                    }
                    if start < 0 || start >= len {
                        return Err(format!(
                            "array index out of bounds: index {start}, length {len}"
                        ));
                    }
                    if end < 0 || end > len {
                        return Err(format!(
                            "array index out of bounds: index {}, length {len}",
                            end - 1
                        ));
                    }
                    if start > end {
                        return Err(format!(
                            "starting index {start} is greater than ending index {end}"
                        ));
                    }
                    next.extend(arr[start as usize..end as usize].iter().cloned());
                }
                Step::Filter(left, cond) => {
                    let items = match v {
                        Value::Array(a) => a.clone(),
                        other => vec![other.clone()],
                    };
                    for item in items {
                        let l = eval(left, &item)?;
                        let keep = match cond {
                            None => !l.is_empty(),
                            Some((op, operand)) => {
                                let r = match operand {
                                    Operand::Path(p) => eval(p, &item)?,
                                    Operand::Literal(x) => vec![x.clone()],
                                };
                                match (l.first(), r.first()) {
                                    (Some(a), Some(b)) => compare(a, op, b),
                                    _ => false,
                                }
                            }
                        };
                        if keep {
                            next.push(item);
                        }
                    }
                }
            }
        }
        cur = next;
    }
    Ok(cur)
}

fn descendants(v: &Value, out: &mut Vec<Value>) {
    out.push(v.clone());
    match v {
        Value::Array(a) => a.iter().for_each(|x| descendants(x, out)),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            keys.into_iter()
                .for_each(|k| descendants(&m[k.as_str()], out));
        }
        _ => {}
    }
}

fn compare(a: &Value, op: &str, b: &Value) -> bool {
    let ord = match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64().partial_cmp(&y.as_f64()),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    };
    match op {
        "==" => a == b || ord == Some(std::cmp::Ordering::Equal),
        "!=" => !(a == b || ord == Some(std::cmp::Ordering::Equal)),
        "<" => ord == Some(std::cmp::Ordering::Less),
        ">" => ord == Some(std::cmp::Ordering::Greater),
        "<=" => matches!(ord, Some(o) if o != std::cmp::Ordering::Greater),
        ">=" => matches!(ord, Some(o) if o != std::cmp::Ordering::Less),
        _ => false,
    }
}

/// How JSONPath prints one result: maps and lists as compact JSON, scalars as Go's `fmt.Print`.
fn to_text(v: &Value) -> String {
    match v {
        Value::Object(_) | Value::Array(_) => to_json_compact(v),
        other => go_sprint(other),
    }
}

/// Go's `fmt.Sprint` of a decoded JSON value (`map[k:v]`, `[a b]`).
pub fn go_sprint(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) if n.is_f64() => {
            super::yaml_resolve::go_format_g(n.as_f64().unwrap_or(0.0))
        }
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(go_sprint).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_sprint(&m[k.as_str()])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// One custom column: its header and the path of its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Header as given.
    pub header: String,
    path: JsonPath,
}

/// Parses `HEADER:PATH,...` as kubectl does (paths may omit the braces and the leading dot).
pub fn parse_custom_columns(spec: &str) -> Result<Vec<Column>, String> {
    if spec.is_empty() {
        return Err("custom-columns format specified but no custom columns given".into());
    }
    spec.split(',')
        .map(|part| {
            let (header, expr) = part.split_once(':').ok_or_else(|| {
                format!("unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
            })?;
            let inner = expr.strip_prefix('{').and_then(|x| x.strip_suffix('}')).unwrap_or(expr);
            let inner = inner.strip_prefix('.').unwrap_or(inner);
            if inner.is_empty() || inner.contains(['{', '}']) {
                return Err("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'".to_string());
            }
            Ok(Column {
                header: header.to_string(),
                path: JsonPath::parse(&format!("{{.{inner}}}"))?,
            })
        })
        .collect()
}

/// Prints objects as custom columns (tab-aligned like `kubectl get`).
pub fn print_custom_columns(columns: &[Column], objects: &[Value], no_headers: bool) -> String {
    let mut w = TabWriter::new(TabConfig::KUBECTL_GET);
    if !no_headers {
        let headers: Vec<&str> = columns.iter().map(|c| c.header.as_str()).collect();
        w.write_str(&headers.join("\t"));
        w.write_str("\n");
    }
    for obj in objects {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| {
                let vals = match c.path.nodes.first() {
                    Some(Node::Path(steps)) => eval(steps, obj).unwrap_or_default(),
                    _ => Vec::new(),
                };
                if vals.is_empty() {
                    "<none>".to_string()
                } else {
                    vals.iter().map(go_sprint).collect::<Vec<_>>().join(",")
                }
            })
            .collect();
        w.write_str(&cells.join("\t"));
        w.write_str("\n");
    }
    w.finish()
}
