//! Reads the objects in a file given to `kubectl -f`, with kubectl's own error texts.
//!
//! The stream is read as kubectl reads it (`k8s.io/apimachinery/pkg/util/yaml`): a stream
//! whose first non-space character is `{` is a JSON stream; anything else is YAML, split
//! into documents at lines starting with `---`, and each document is parsed on its own.
//! So, as in kubectl, the line in `yaml: line N:` counts from the top of the failing
//! document (and has go-yaml's quirks, see [`crate::yamlpos::SyntaxError::go_line`]),
//! while [`ManifestError::pos`] is the position in the whole text, for the editor.
//! Empty documents are skipped; `List` objects are expanded into their items.

use std::fmt;

use serde_json::Value;

use crate::object::Kind;
use crate::yamlpos::{self, Duplicates, Pos, Target};

#[path = "manifest_json.rs"]
mod json;

/// Appended by kubectl to every client-side validation error.
pub const VALIDATE_HINT: &str =
    "if you choose to ignore these errors, turn validation off with --validate=false";

/// One object read from a manifest file.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// The object as JSON (YAML converted the way sigs.k8s.io/yaml converts it).
    pub value: Value,
    /// `apiVersion` as written (`apps/v1`).
    pub api_version: String,
    /// `kind` as written (`Deployment`).
    pub kind_name: String,
    /// The kind, if the simulated apiserver serves this apiVersion and kind; `None`
    /// otherwise (see [`Manifest::mapping_error`]).
    pub kind: Option<Kind>,
    /// `metadata.name`, or "" if unset.
    pub name: String,
    /// `metadata.namespace`, or "" if unset.
    pub namespace: String,
    /// Which document of the file this came from: 0-based, among the documents kubectl
    /// cuts the stream into (one holding only comments or blank lines counts; two adjacent
    /// `---` lines make none). For a JSON stream, the index of the top-level value.
    pub doc_index: usize,
    /// The index in the `items` of the `List` it came from, if it did.
    pub item_index: Option<usize>,
    /// The 1-based line in the whole text where the object starts.
    pub line: usize,
}

/// What went wrong, which decides how kubectl words and handles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ManifestErrorKind {
    /// The stream is not valid YAML or JSON. kubectl stops reading the file here.
    Syntax,
    /// Client-side validation failed (`kind not set`). kubectl stops reading the file here.
    Validation,
    /// The apiVersion and kind are not served (`no matches for kind`). kubectl reports it
    /// and goes on with the other objects.
    Mapping,
    /// The object cannot be decoded (an empty `kind`). kubectl reports it and goes on; the
    /// object is not in [`ManifestStream::manifests`].
    Decode,
}

/// A problem with a manifest file: kubectl's message plus where it is in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    /// Which kind of problem.
    pub kind: ManifestErrorKind,
    /// kubectl's text, without the leading `error: ` it prints.
    pub message: String,
    /// A short message for the editor, e.g. `mapping values are not allowed in this context`.
    pub detail: String,
    /// Where, in the whole text (1-based).
    pub pos: Pos,
    /// The document it is in (as [`Manifest::doc_index`]).
    pub doc_index: usize,
}

impl ManifestError {
    /// The editor's view: line, column and a short message.
    pub fn located(&self) -> Located {
        Located {
            line: self.pos.line,
            column: self.pos.column,
            message: self.detail.clone(),
        }
    }
}

impl fmt::Display for ManifestError {
    /// Exactly what kubectl prints: `error: <message>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.message)
    }
}

impl std::error::Error for ManifestError {}

/// A message placed in the text, for the editor's inline errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Everything kubectl gets out of a file: the objects it read, in order, and the errors.
/// When the last error is a [`ManifestErrorKind::Syntax`] or `Validation` one, kubectl
/// stopped there; the objects before it are still applied, as kubectl does.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ManifestStream {
    /// The objects read, including those whose kind is not served (`kind: None`).
    pub manifests: Vec<Manifest>,
    /// Mapping errors in document order, then the error that stopped reading, if any.
    pub errors: Vec<ManifestError>,
}

impl ManifestStream {
    /// Resolves the objects whose kind no built-in serves against the custom kinds
    /// discovery serves, dropping their mapping errors.
    pub fn resolve_custom(&mut self, custom: &crate::object::CustomKinds) {
        for m in self.manifests.iter_mut().filter(|m| m.kind.is_none()) {
            let Some(kind) = custom.api_version_kind(&m.api_version, &m.kind_name) else {
                continue;
            };
            let detail = format!(
                "no matches for kind {:?} in version {:?}",
                m.kind_name,
                group_version_string(&m.api_version)
            );
            let name = format!("name: {:?} namespace: {:?}", m.name, m.namespace);
            if let Some(i) = self.errors.iter().position(|e| {
                e.kind == ManifestErrorKind::Mapping
                    && e.doc_index == m.doc_index
                    && e.detail == detail
                    && e.message.contains(&name)
            }) {
                self.errors.remove(i);
            }
            m.kind = Some(kind);
        }
    }
}

impl Manifest {
    /// kubectl's error for an object whose apiVersion/kind the apiserver does not serve,
    /// or `None` when it is served.
    pub fn mapping_error(&self, source: &str, text: &str) -> Option<ManifestError> {
        self.mapping_error_at(source, locate_field(text, self, "kind", Target::Value))
    }

    fn mapping_error_at(&self, source: &str, pos: Pos) -> Option<ManifestError> {
        if self.kind.is_some() {
            return None;
        }
        let version = group_version_string(&self.api_version);
        let detail = format!(
            "no matches for kind {:?} in version {:?}",
            self.kind_name, version
        );
        let message = format!(
            "resource mapping not found for name: {:?} namespace: {:?} from {:?}: {detail}\nensure CRDs are installed first",
            self.name, self.namespace, source
        );
        Some(ManifestError {
            kind: ManifestErrorKind::Mapping,
            message,
            detail,
            pos,
            doc_index: self.doc_index,
        })
    }
}

/// How Go prints a parsed `schema.GroupVersion`: `v1`, `apps/v1`.
fn group_version_string(api_version: &str) -> String {
    match api_version.split_once('/') {
        Some(("", v)) => v.to_string(),
        _ => api_version.to_string(),
    }
}

/// Reads every object in `text` (the contents of the file named `source`), failing on the
/// first problem of any kind, unserved kinds included. See [`parse_manifest_stream`] for
/// kubectl's partial behaviour.
pub fn parse_manifests(text: &str, source: &str) -> Result<Vec<Manifest>, ManifestError> {
    let stream = parse_manifest_stream(text, source);
    match stream.errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(stream.manifests),
    }
}

/// Reads `text` as kubectl does: objects up to the first syntax or validation error, and
/// a mapping error for each object whose kind is not served.
pub fn parse_manifest_stream(text: &str, source: &str) -> ManifestStream {
    // kubectl's FileVisitor reads files through unicode.BOMOverride: a UTF-8 byte order
    // mark is dropped before decoding.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = ManifestStream::default();
    let is_json = text
        .trim_start_matches(|c: char| c.is_whitespace())
        .starts_with('{');
    if is_json {
        read_json_stream(text, source, &mut out);
    } else {
        read_yaml_stream(text, source, &mut out);
    }
    out
}

/// A piece of the text holding one document: where it starts, to place positions.
struct Doc<'t> {
    text: &'t str,
    first_line: usize,
    first_column: usize,
    index: usize,
}

impl Doc<'_> {
    fn absolute(&self, p: Pos) -> Pos {
        if p.line == 1 {
            Pos::new(self.first_line, p.column + self.first_column - 1)
        } else {
            p.offset_lines(self.first_line)
        }
    }

    fn locate(&self, path: &str, target: Target) -> Pos {
        self.absolute(yamlpos::locate_nearest(self.text, 0, path, target))
    }
}

/// One piece of a YAML stream as kubectl's `YAMLReader` cuts it.
enum Piece {
    Doc {
        text: String,
        first_line: usize,
    },
    BadSeparator {
        rest: String,
        line: usize,
        column: usize,
    },
}

/// Cuts a YAML stream at lines starting with `---`, as `YAMLReader.Read` does: the
/// separator line belongs to no document, only a comment may follow it, and empty
/// stretches between separators are not documents. Line ends are normalized to `\n`.
fn split_yaml(text: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut buf = String::new();
    let mut first_line = 1;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line_no = i + 1;
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(after) = line.strip_prefix("---") {
            let trimmed = after.trim();
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                if !buf.is_empty() {
                    pieces.push(Piece::Doc {
                        text: std::mem::take(&mut buf),
                        first_line,
                    });
                }
                let spaces = after.len() - after.trim_start().len();
                pieces.push(Piece::BadSeparator {
                    rest: trimmed.to_string(),
                    line: line_no,
                    column: 4 + after[..spaces].chars().count(),
                });
                return pieces;
            }
            if !buf.is_empty() {
                pieces.push(Piece::Doc {
                    text: std::mem::take(&mut buf),
                    first_line,
                });
            }
            first_line = line_no + 1;
            continue;
        }
        if buf.is_empty() {
            first_line = line_no;
        }
        buf.push_str(line);
        buf.push('\n');
    }
    if !buf.is_empty() {
        pieces.push(Piece::Doc {
            text: buf,
            first_line,
        });
    }
    pieces
}

fn read_yaml_stream(text: &str, source: &str, out: &mut ManifestStream) {
    for (index, piece) in split_yaml(text).into_iter().enumerate() {
        match piece {
            Piece::BadSeparator { rest, line, column } => {
                out.errors.push(ManifestError {
                    kind: ManifestErrorKind::Syntax,
                    message: format!(
                        "error parsing {source}: invalid Yaml document separator: {rest}"
                    ),
                    detail: format!("invalid Yaml document separator: {rest}"),
                    pos: Pos::new(line, column),
                    doc_index: index,
                });
                return;
            }
            Piece::Doc {
                text: doc_text,
                first_line,
            } => {
                let doc = Doc {
                    text: &doc_text,
                    first_line,
                    first_column: 1,
                    index,
                };
                let value = match yamlpos::first_document_to_json(&doc_text, Duplicates::LastWins) {
                    Ok(v) => v,
                    Err(e) => {
                        let pos = yamlpos::error_pos(&e).unwrap_or(Pos::START);
                        out.errors.push(ManifestError {
                            kind: ManifestErrorKind::Syntax,
                            message: format!(
                                "error parsing {source}: error converting YAML to JSON: {}",
                                yamlpos::go_yaml_message(&e)
                            ),
                            detail: yamlpos::syntax_error(&e)
                                .map(|s| s.problem)
                                .unwrap_or_else(|| yamlpos::error_message(&e)),
                            pos: doc.absolute(pos),
                            doc_index: index,
                        });
                        return;
                    }
                };
                if !read_object(value, &doc, source, out) {
                    return;
                }
            }
        }
    }
}

fn read_json_stream(text: &str, source: &str, out: &mut ManifestStream) {
    let (values, error) = json::split_stream(text);
    let read = values.len();
    let mut counter = LineCounter::default();
    for (index, (start, end)) in values.into_iter().enumerate() {
        let slice = &text[start..end];
        let (line, column) = counter.advance(text, start);
        let doc = Doc {
            text: slice,
            first_line: line,
            first_column: column,
            index,
        };
        let value = match serde_json::from_str::<Value>(slice) {
            Ok(v) => v,
            Err(e) => {
                // Go accepts what serde_json rejects only at the edges (lone surrogates,
                // nesting past 128): report serde_json's words at its position.
                let pos = doc.absolute(Pos::new(e.line().max(1), e.column().max(1)));
                out.errors.push(ManifestError {
                    kind: ManifestErrorKind::Syntax,
                    message: format!("error parsing {source}: {e}"),
                    detail: e.to_string(),
                    pos,
                    doc_index: index,
                });
                return;
            }
        };
        if !read_object(value, &doc, source, out) {
            return;
        }
    }
    if let Some(e) = error {
        let (line, column) = line_column(text, e.index);
        let detail = e
            .message
            .strip_prefix("json: offset ")
            .and_then(|rest| rest.split_once(": "))
            .map_or(e.message.clone(), |(_, d)| d.to_string());
        out.errors.push(ManifestError {
            kind: ManifestErrorKind::Syntax,
            message: format!("error parsing {source}: {}", e.message),
            detail,
            pos: Pos::new(line, column),
            doc_index: read,
        });
    }
}

/// Finds line and column of increasing byte offsets in one pass over the text.
#[derive(Default)]
struct LineCounter {
    index: usize,
    line: usize,
    line_start: usize,
}

impl LineCounter {
    /// 1-based line and column (in characters) of byte `index` (≥ the previous one).
    fn advance(&mut self, text: &str, index: usize) -> (usize, usize) {
        let index = index.min(text.len());
        if index < self.index || !text.is_char_boundary(index) {
            return line_column(text, index);
        }
        let gap = &text[self.index..index];
        if let Some(last) = gap.rfind('\n') {
            self.line += gap.matches('\n').count();
            self.line_start = self.index + last + 1;
        }
        self.index = index;
        (
            self.line + 1,
            text[self.line_start..index].chars().count() + 1,
        )
    }
}

/// 1-based line and column (in characters) of byte `index`.
fn line_column(text: &str, index: usize) -> (usize, usize) {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    let before = &text[..index];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Validates, expands and records one decoded document. Returns false when reading stops.
fn read_object(value: Value, doc: &Doc<'_>, source: &str, out: &mut ManifestStream) -> bool {
    if value.is_null() {
        return true;
    }
    if let Err(problems) = object_kind(&value) {
        out.errors
            .push(validation_error(source, doc, &problems, String::new()));
        return false;
    }
    let kind_name = value["kind"].as_str().unwrap_or("").to_string();
    let items = match value.get("items") {
        Some(Value::Array(items)) if kind_name.ends_with("List") => Some(items.clone()),
        _ => None,
    };
    let Some(items) = items else {
        push_manifest(value, doc, None, true, source, out);
        return true;
    };
    // Items are checked before any is used, as kubectl decodes the whole List first.
    for (i, item) in items.iter().enumerate() {
        if let Err(problems) = object_kind(item) {
            out.errors.push(validation_error(
                source,
                doc,
                &problems,
                format!("items[{i}]."),
            ));
            return false;
        }
    }
    let located = LOCATE_BUDGET_BYTES / doc.text.len().max(1);
    for (i, item) in items.into_iter().enumerate() {
        push_manifest(item, doc, Some(i), i < located, source, out);
    }
    true
}

/// A client-side validation problem and the field it is about.
struct Problem {
    message: String,
    field: &'static str,
}

/// kubectl's `GetObjectKind` checks: apiVersion and kind present and strings.
fn object_kind(value: &Value) -> Result<(), Vec<Problem>> {
    let Value::Object(fields) = value else {
        return Err(vec![Problem {
            message: "invalid object to validate".into(),
            field: "",
        }]);
    };
    let mut problems = Vec::new();
    match fields.get("apiVersion") {
        None | Some(Value::Null) => problems.push(Problem {
            message: "apiVersion not set".into(),
            field: "",
        }),
        Some(Value::String(gv)) => {
            if gv.matches('/').count() > 1 {
                problems.push(Problem {
                    message: format!("unexpected GroupVersion string: {gv}"),
                    field: "apiVersion",
                });
            }
        }
        Some(_) => problems.push(Problem {
            message: "apiVersion isn't string type".into(),
            field: "apiVersion",
        }),
    }
    match fields.get("kind") {
        None | Some(Value::Null) => problems.push(Problem {
            message: "kind not set".into(),
            field: "",
        }),
        Some(Value::String(_)) => {}
        Some(_) => problems.push(Problem {
            message: "kind isn't string type".into(),
            field: "kind",
        }),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn validation_error(
    source: &str,
    doc: &Doc<'_>,
    problems: &[Problem],
    prefix: String,
) -> ManifestError {
    let joined = match problems {
        [one] => one.message.clone(),
        many => format!(
            "[{}]",
            many.iter()
                .map(|p| p.message.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let field = problems.first().map_or("", |p| p.field);
    let path = format!("{prefix}{field}");
    let path = path.trim_end_matches('.');
    ManifestError {
        kind: ManifestErrorKind::Validation,
        message: format!(
            "error validating {source:?}: error validating data: {joined}; {VALIDATE_HINT}"
        ),
        detail: joined,
        pos: doc.locate(path, Target::Value),
        doc_index: doc.index,
    }
}

/// Finding an item's position parses its whole document again, so in a big List only the
/// items within this many bytes of parsing get their own line; the rest get the List's.
const LOCATE_BUDGET_BYTES: usize = 4 << 20;

fn push_manifest(
    mut value: Value,
    doc: &Doc<'_>,
    item: Option<usize>,
    locate: bool,
    source: &str,
    out: &mut ManifestStream,
) {
    // Served versions other than the stored one are converted here (autoscaling/v1).
    crate::apiserver::autoscaling_v1::convert_to_v2(&mut value);
    let api_version = value["apiVersion"].as_str().unwrap_or("").to_string();
    let kind_name = value["kind"].as_str().unwrap_or("").to_string();
    let root = item.map_or(String::new(), |i| format!("items[{i}]"));
    let start = if locate {
        doc.locate(&root, Target::Value)
    } else {
        Pos::new(doc.first_line, doc.first_column)
    };
    if kind_name.is_empty() {
        // The decoder needs a kind; kubectl reports this object and goes on.
        let json = serde_json::to_string(&value).unwrap_or_default();
        out.errors.push(ManifestError {
            kind: ManifestErrorKind::Decode,
            message: format!("unable to decode {source:?}: Object 'Kind' is missing in '{json}'"),
            detail: "Object 'Kind' is missing".to_string(),
            pos: start,
            doc_index: doc.index,
        });
        return;
    }
    let name = value["metadata"]["name"].as_str().unwrap_or("").to_string();
    let namespace = value["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let kind = Kind::from_api_version_kind(&api_version, &kind_name);
    let manifest = Manifest {
        value,
        api_version,
        kind_name,
        kind,
        name,
        namespace,
        doc_index: doc.index,
        item_index: item,
        line: start.line,
    };
    if manifest.kind.is_none() {
        let kind_path = if root.is_empty() {
            "kind".to_string()
        } else {
            format!("{root}.kind")
        };
        let pos = if locate {
            doc.locate(&kind_path, Target::Value)
        } else {
            start
        };
        if let Some(e) = manifest.mapping_error_at(source, pos) {
            out.errors.push(e);
        }
    }
    out.manifests.push(manifest);
}

/// Where field `path` (`spec.template.spec.containers[0].imagee`) of `manifest` is in
/// `text`, the text it was read from: the key or value itself, else its nearest existing
/// parent, else the start of the object. For placing apiserver errors (strict field
/// validation, invalid values) in the editor.
pub fn locate_field(text: &str, manifest: &Manifest, path: &str, target: Target) -> Pos {
    let prefix = manifest
        .item_index
        .map_or(String::new(), |i| format!("items[{i}]."));
    let full = format!("{prefix}{path}");
    let is_json = text
        .trim_start_matches(|c: char| c.is_whitespace())
        .starts_with('{');
    if is_json {
        let (values, _) = json::split_stream(text);
        if let Some(&(start, end)) = values.get(manifest.doc_index) {
            let (line, column) = line_column(text, start);
            let doc = Doc {
                text: &text[start..end],
                first_line: line,
                first_column: column,
                index: manifest.doc_index,
            };
            return doc.locate(&full, target);
        }
    } else if let Some(Piece::Doc {
        text: doc_text,
        first_line,
    }) = split_yaml(text).into_iter().nth(manifest.doc_index)
    {
        let doc = Doc {
            text: &doc_text,
            first_line,
            first_column: 1,
            index: manifest.doc_index,
        };
        return doc.locate(&full, target);
    }
    Pos::new(manifest.line.max(1), 1)
}

#[cfg(test)]
#[path = "manifest_tests.rs"]
mod tests;
