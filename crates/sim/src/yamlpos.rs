//! Where things are in YAML text: field positions, syntax error positions, and YAML → JSON.
//!
//! serde_yaml keeps no positions in its values, but it stamps every error raised by a
//! visitor with the position of the event being visited. [`locate`] uses that: it walks a
//! document towards a field path and raises a marker error at the wanted key or value, so
//! the positions are libyaml's own (block and flow style, quoted keys, anchors alike).

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess};
use serde::Deserialize as _;

/// A 1-based line and column (columns count characters, as libyaml does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl Pos {
    /// The first character of the text.
    pub const START: Pos = Pos { line: 1, column: 1 };

    /// A position from 1-based line and column.
    pub fn new(line: usize, column: usize) -> Pos {
        Pos { line, column }
    }

    /// The same position in a text where this one's text starts at line `first_line`.
    pub fn offset_lines(self, first_line: usize) -> Pos {
        Pos {
            line: self.line + first_line.saturating_sub(1),
            column: self.column,
        }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// A dotted name (`spec`); consecutive fields may also match one key containing dots
    /// (`metadata.labels.app.kubernetes.io/name`).
    Field(String),
    /// A bracketed, quoted key (`files["a.yaml"]`) that matches exactly.
    Key(String),
    /// A sequence index (`containers[0]`).
    Index(usize),
}

/// Parses a field path as upstream prints them: `spec.template.spec.containers[0].imagee`.
/// Bracketed keys may be quoted (`files["nginx.yaml"]`); a bare number in brackets is an
/// index. A leading `.` is ignored.
pub fn parse_path(path: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut chars = path.chars().peekable();
    let mut field = String::new();
    let flush = |field: &mut String, out: &mut Vec<Segment>| {
        if !field.is_empty() {
            out.push(Segment::Field(std::mem::take(field)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '.' => flush(&mut field, &mut out),
            '[' => {
                flush(&mut field, &mut out);
                let mut inner = String::new();
                let mut quote = None;
                if let Some(&q) = chars.peek() {
                    if q == '"' || q == '\'' {
                        quote = Some(q);
                        chars.next();
                    }
                }
                while let Some(c) = chars.next() {
                    match quote {
                        Some(q) if c == q => {
                            // Skip to the closing bracket.
                            for c in chars.by_ref() {
                                if c == ']' {
                                    break;
                                }
                            }
                            break;
                        }
                        Some(_) if c == '\\' => {
                            if let Some(n) = chars.next() {
                                inner.push(n);
                            }
                        }
                        None if c == ']' => break,
                        _ => inner.push(c),
                    }
                }
                match (quote, inner.parse::<usize>()) {
                    (None, Ok(i)) => out.push(Segment::Index(i)),
                    _ => out.push(Segment::Key(inner)),
                }
            }
            _ => field.push(c),
        }
    }
    flush(&mut field, &mut out);
    out
}

/// Which part of a mapping entry to point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The key (`imagee` in `imagee: nginx`): where unknown fields are reported.
    Key,
    /// The value (`nginx`): where wrong types and invalid values are reported.
    Value,
}

/// Marker raised by the seeking visitors; never shown to anyone.
const FOUND: &str = "\u{1}kubeloop-yamlpos-found\u{1}";

/// The most YAML documents [`locate`] walks past, so a hostile stream cannot make it spin.
const MAX_DOCUMENTS: usize = 10_000;

/// Finds the key or value at `path` in document `doc` (0-based, YAML documents as the YAML
/// spec counts them) of `text`. `None` when the path is not there or the text does not
/// parse up to it. An empty path is the document's root value.
pub fn locate(text: &str, doc: usize, path: &str, target: Target) -> Option<Pos> {
    locate_segments(text, doc, &parse_path(path), target)
}

/// [`locate`] with an already parsed path.
pub fn locate_segments(text: &str, doc: usize, path: &[Segment], target: Target) -> Option<Pos> {
    if doc >= MAX_DOCUMENTS || too_deep(text).is_some() {
        return None;
    }
    let mut docs = serde_yaml::Deserializer::from_str(text);
    let mut current = None;
    for _ in 0..=doc {
        current = Some(docs.next()?);
    }
    let de = current?;
    let seek = Seek { path, target };
    match seek.deserialize(de) {
        Ok(()) => None,
        Err(e) if e.to_string().contains(FOUND) => e.location().map(|l| Pos {
            line: l.line(),
            column: l.column(),
        }),
        Err(_) => None,
    }
}

/// The position of `path` or, when it is missing, of its longest existing prefix (the key
/// of the nearest existing parent), falling back to the document root and then 1:1.
/// For a missing field this points at the object that should contain it.
pub fn locate_nearest(text: &str, doc: usize, path: &str, target: Target) -> Pos {
    let segments = parse_path(path);
    if let Some(p) = locate_segments(text, doc, &segments, target) {
        return p;
    }
    for len in (0..segments.len()).rev() {
        if let Some(p) = locate_segments(text, doc, &segments[..len], Target::Key) {
            return p;
        }
    }
    Pos::START
}

struct Seek<'p> {
    path: &'p [Segment],
    target: Target,
}

impl<'de> DeserializeSeed<'de> for Seek<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.path.is_empty() {
            d.deserialize_any(Found)
        } else {
            d.deserialize_any(self)
        }
    }
}

impl<'de> de::Visitor<'de> for Seek<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        loop {
            let key = KeySeed {
                path: self.path,
                target: self.target,
            };
            match map.next_key_seed(key)? {
                None => return Ok(()),
                Some(Some(consumed)) => map.next_value_seed(Seek {
                    path: &self.path[consumed..],
                    target: self.target,
                })?,
                Some(None) => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let wanted = match &self.path[0] {
            Segment::Index(i) => Some(*i),
            Segment::Field(f) => f.parse::<usize>().ok(),
            Segment::Key(_) => None,
        };
        let mut i = 0usize;
        loop {
            if Some(i) == wanted {
                let rest = &self.path[1..];
                if rest.is_empty() {
                    // Sequence items have no key: point at the item itself.
                    if seq
                        .next_element_seed(Seek {
                            path: rest,
                            target: Target::Value,
                        })?
                        .is_none()
                    {
                        return Ok(());
                    }
                } else if seq
                    .next_element_seed(Seek {
                        path: rest,
                        target: self.target,
                    })?
                    .is_none()
                {
                    return Ok(());
                }
            } else if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(());
            }
            i = i.saturating_add(1);
        }
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        // A tagged node (`!foo {a: 1}`): look inside, ignoring the tag.
        use de::VariantAccess;
        let (_, variant) = data.variant::<IgnoredAny>()?;
        variant.newtype_variant_seed(self)
    }
}

/// Raises the marker error from whatever value it is asked to visit.
struct Found;

impl<'de> de::Visitor<'de> for Found {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom(FOUND))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom(FOUND))
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom(FOUND))
    }
}

/// Reads one mapping key. Yields `Some(n)` when the key matches the next `n` path segments
/// (and the search goes on in its value), `None` otherwise; raises the marker when the key
/// is the target itself.
struct KeySeed<'p> {
    path: &'p [Segment],
    target: Target,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Option<usize>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_any(self)
    }
}

impl KeySeed<'_> {
    fn matches(&self, key: &str) -> Option<usize> {
        match self.path.first()? {
            Segment::Key(k) => (k == key).then_some(1),
            Segment::Index(_) => None,
            Segment::Field(first) => {
                if first == key {
                    return Some(1);
                }
                // `app.kubernetes.io/name` split at its dots by the path syntax.
                let mut joined = first.clone();
                for (i, seg) in self.path.iter().enumerate().skip(1) {
                    let Segment::Field(next) = seg else {
                        return None;
                    };
                    joined.push('.');
                    joined.push_str(next);
                    if joined.len() > key.len() {
                        return None;
                    }
                    if joined == key {
                        return Some(i + 1);
                    }
                }
                None
            }
        }
    }

    fn key<E: de::Error>(self, key: &str) -> Result<Option<usize>, E> {
        match self.matches(key) {
            Some(n) if n == self.path.len() && self.target == Target::Key => Err(E::custom(FOUND)),
            other => Ok(other),
        }
    }
}

impl<'de> de::Visitor<'de> for KeySeed<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<usize>, E> {
        self.key(v)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<usize>, E> {
        self.key(if v { "true" } else { "false" })
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<usize>, E> {
        self.key(&v.to_string())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<usize>, E> {
        self.key(&v.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<usize>, E> {
        self.key(&v.to_string())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<usize>, E> {
        self.key("null")
    }
    fn visit_none<E: de::Error>(self) -> Result<Option<usize>, E> {
        self.key("null")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<usize>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<usize>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Option<usize>, A::Error> {
        use de::VariantAccess;
        let (_, variant) = data.variant::<IgnoredAny>()?;
        variant.newtype_variant::<IgnoredAny>()?;
        Ok(None)
    }
}

/// A libyaml syntax error, taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// What is wrong: `mapping values are not allowed in this context`.
    pub problem: String,
    /// Where (1-based), if libyaml knows.
    pub problem_pos: Option<Pos>,
    /// What the parser was doing: `while parsing a block mapping`.
    pub context: Option<String>,
    /// Where that started.
    pub context_pos: Option<Pos>,
    /// Raised by the scanner (tokens) rather than the parser (structure). go-yaml numbers
    /// lines differently for the two.
    pub scanner: bool,
}

impl SyntaxError {
    /// The line go-yaml v2 (and so kubectl) prints in `yaml: line N: ...`, or 0 for none.
    /// Scanner errors give the 1-based line; parser errors the 0-based one, which reads as
    /// the line before the problem (upstream's long-standing quirk). A problem on the
    /// first line falls back to the context's 0-based line.
    pub fn go_line(&self) -> usize {
        let problem0 = self.problem_pos.map_or(0, |p| p.line.saturating_sub(1));
        if problem0 != 0 {
            if self.scanner {
                problem0 + 1
            } else {
                problem0
            }
        } else {
            self.context_pos.map_or(0, |p| p.line.saturating_sub(1))
        }
    }

    /// go-yaml v2's message: `yaml: line 4: did not find expected key`.
    pub fn go_message(&self) -> String {
        match self.go_line() {
            0 => format!("yaml: {}", self.problem),
            n => format!("yaml: line {n}: {}", self.problem),
        }
    }
}

/// Problems libyaml's parser (not its scanner) reports.
const PARSER_PROBLEMS: &[&str] = &[
    "did not find expected <stream-start>",
    "did not find expected <document start>",
    "did not find expected node content",
    "did not find expected key",
    "did not find expected '-' indicator",
    "did not find expected ',' or ']'",
    "did not find expected ',' or '}'",
    "found duplicate %YAML directive",
    "found incompatible YAML document",
    "found duplicate %TAG directive",
    "found undefined tag handle",
];

/// Takes a serde_yaml error apart when it is a libyaml syntax error.
pub fn syntax_error(err: &serde_yaml::Error) -> Option<SyntaxError> {
    // serde_yaml exposes the parts only through its Debug form:
    // Error { kind: PARSER, problem: "…", problem_mark: Mark { line: 3, column: 1 }, context: "…", context_mark: Mark { … } }
    let debug = format!("{err:?}");
    let rest = debug.strip_prefix("Error { ")?;
    let kind = field_after(rest, "kind: ").map(|k| {
        k.split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .unwrap_or("")
            .to_string()
    });
    let problem = quoted_after(rest, "problem: ")?;
    let problem_pos = field_after(rest, "problem_mark: ")
        .and_then(mark_pos)
        .or_else(|| {
            field_after(rest, "problem_offset: ")
                .is_none()
                .then_some(Pos::START)
        });
    let context = quoted_after(rest, "context: ");
    // serde_yaml leaves out a mark at the very start of the text.
    let context_pos = field_after(rest, "context_mark: ")
        .and_then(mark_pos)
        .or(context.as_ref().map(|_| Pos::START));
    let scanner = match kind.as_deref() {
        Some("SCANNER") => true,
        Some("PARSER") => false,
        _ => !PARSER_PROBLEMS.contains(&problem.as_str()),
    };
    Some(SyntaxError {
        problem,
        problem_pos,
        context,
        context_pos,
        scanner,
    })
}

fn field_after<'a>(s: &'a str, name: &str) -> Option<&'a str> {
    // Field names are preceded by the struct opening or ", ".
    let at = s
        .match_indices(name)
        .find(|(i, _)| *i == 0 || s[..*i].ends_with(", "))?
        .0;
    Some(&s[at + name.len()..])
}

fn quoted_after(s: &str, name: &str) -> Option<String> {
    let rest = field_after(s, name)?.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

fn mark_pos(s: &str) -> Option<Pos> {
    let s = s.strip_prefix("Mark { ")?;
    let line = field_after(s, "line: ")?;
    let line: usize = line
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    let column = field_after(s, "column: ")?;
    let column: usize = column
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    Some(Pos { line, column })
}

/// Where a serde_yaml error is (1-based), if it says.
pub fn error_pos(err: &serde_yaml::Error) -> Option<Pos> {
    err.location().map(|l| Pos {
        line: l.line(),
        column: l.column(),
    })
}

/// The error's message without serde_yaml's trailing ` at line L column C` and without
/// the field path prefix it adds to data errors.
pub fn error_message(err: &serde_yaml::Error) -> String {
    if let Some(s) = syntax_error(err) {
        return match s.context {
            Some(c) => format!("{}, {}", s.problem, c),
            None => s.problem,
        };
    }
    let mut msg = err.to_string();
    if let Some(l) = err.location() {
        let suffix = format!(" at line {} column {}", l.line(), l.column());
        if let Some(stripped) = msg.strip_suffix(&suffix) {
            msg = stripped.to_string();
        }
    }
    msg
}

/// What go-yaml v2 would print for this error (`yaml: line 4: did not find expected key`),
/// the text kubectl shows after `error converting YAML to JSON: `.
pub fn go_yaml_message(err: &serde_yaml::Error) -> String {
    match syntax_error(err) {
        Some(s) => s.go_message(),
        None => format!("yaml: {}", error_message(err)),
    }
}

#[path = "yamlpos_json.rs"]
mod json;
pub use json::{first_document_to_json, yaml_to_json, Duplicates};

#[path = "yamlpos_depth.rs"]
mod depth;
pub use depth::{too_deep, MAX_NESTING};

/// Counts the YAML documents in `text` the way serde_yaml iterates them, up to `limit`.
pub fn count_documents(text: &str, limit: usize) -> usize {
    if too_deep(text).is_some() {
        return 0;
    }
    let mut n = 0;
    for doc in serde_yaml::Deserializer::from_str(text).take(limit) {
        n += 1;
        if IgnoredAny::deserialize(doc).is_err() {
            break;
        }
    }
    n
}

#[cfg(test)]
#[path = "yamlpos_tests.rs"]
mod tests;
