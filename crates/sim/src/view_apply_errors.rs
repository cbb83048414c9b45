//! Where the errors of `kubectl apply -f FILE` sit in that file, for the editor.

/// Places the errors `kubectl apply|create|replace -f <source>` printed on stderr in that
/// file's `text`, for the editor: unknown fields (strict decoding) at their keys, validation
/// causes at their fields, other decoding errors at the object. Syntax errors are left out:
/// the editor finds those itself with [`crate::manifest::parse_manifest_stream`].
pub fn locate_apply_errors(
    text: &str,
    source: &str,
    stderr: &str,
) -> Vec<crate::manifest::Located> {
    use crate::manifest::{locate_field, parse_manifest_stream, Located, Manifest};
    use crate::yamlpos::Target;
    let manifests = parse_manifest_stream(text, source).manifests;
    fn of_kind<'m>(ms: &'m [Manifest], kind: &str) -> Vec<&'m Manifest> {
        ms.iter().filter(|m| m.kind_name == kind).collect()
    }
    let place = |m: &Manifest, path: &str, target: Target, message: String| {
        let pos = locate_field(text, m, path, target);
        Located {
            line: pos.line,
            column: pos.column,
            message,
        }
    };
    let mut out = Vec::new();
    let lines: Vec<&str> = stderr.lines().collect();
    let about_this_file =
        |line: &str| !line.contains("error when ") || line.contains(&format!("\"{source}\""));
    for (i, line) in lines.iter().enumerate() {
        if let Some(at) = line.find(" is invalid: ") {
            let (kind, name) = kind_and_name(&line[..at]);
            let Some(m) = of_kind(&manifests, &kind)
                .into_iter()
                .find(|m| m.name == name)
            else {
                continue;
            };
            let rest = line[at + " is invalid: ".len()..].trim();
            let causes: Vec<&str> = if rest.is_empty() {
                lines[i + 1..]
                    .iter()
                    .map_while(|l| l.strip_prefix("* "))
                    .collect()
            } else {
                vec![rest]
            };
            for cause in causes {
                let field = cause.split(": ").next().unwrap_or("");
                let target = if cause.contains(": Required value") {
                    Target::Key
                } else {
                    Target::Value
                };
                out.push(place(m, field, target, cause.to_string()));
            }
        } else if let Some(at) = line.find(" cannot be handled as a ") {
            if !about_this_file(line) {
                continue;
            }
            let after = &line[at + " cannot be handled as a ".len()..];
            let (kind, detail) = after.split_once(": ").unwrap_or((after, ""));
            let candidates = of_kind(&manifests, kind);
            let Some(&first) = candidates.first() else {
                continue;
            };
            if let Some(list) = detail.strip_prefix("strict decoding error: ") {
                for path in list
                    .split(", ")
                    .filter_map(|f| f.strip_prefix("unknown field "))
                {
                    let path = path.trim_matches('"');
                    let m = candidates
                        .iter()
                        .find(|m| has_path(&m.value, path))
                        .copied()
                        .unwrap_or(first);
                    out.push(place(
                        m,
                        path,
                        Target::Key,
                        format!("unknown field \"{path}\""),
                    ));
                }
            } else if let Some(path) = go_struct_field(detail) {
                out.push(place(first, &path, Target::Value, detail.to_string()));
            } else {
                out.push(Located {
                    line: first.line.max(1),
                    column: 1,
                    message: detail.to_string(),
                });
            }
        }
    }
    out
}

/// `Deployment` and `nginx` from `The Deployment "nginx"` (or `Error from server (Invalid):
/// Deployment.apps "nginx"`).
fn kind_and_name(head: &str) -> (String, String) {
    let Some(end) = head.rfind('"') else {
        return Default::default();
    };
    let Some(start) = head[..end].rfind('"') else {
        return Default::default();
    };
    let name = head[start + 1..end].to_string();
    let kind = head[..start].split_whitespace().last().unwrap_or("");
    let kind = kind.split('.').next().unwrap_or(kind).to_string();
    (kind, name)
}

/// `spec.replicas` from Go's `json: cannot unmarshal string into Go struct field
/// DeploymentSpec.spec.replicas of type int32`.
fn go_struct_field(detail: &str) -> Option<String> {
    let after = detail.split("Go struct field ").nth(1)?;
    let field = after.split(" of type").next()?;
    let (_, path) = field.split_once('.')?;
    Some(path.to_string())
}

/// Whether the JSON `value` has the field at `path` (`spec.template.spec.containers[0].x`).
fn has_path(value: &serde_json::Value, path: &str) -> bool {
    use crate::yamlpos::{parse_path, Segment};
    let mut v = value;
    for segment in parse_path(path) {
        let next = match &segment {
            Segment::Index(n) => v.get(*n),
            Segment::Key(k) | Segment::Field(k) => v.get(k.as_str()),
        };
        match next {
            Some(n) => v = n,
            None => return false,
        }
    }
    true
}
