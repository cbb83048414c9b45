//! Refuses YAML nested past the deserializer's limit before libyaml parses it.
//!
//! serde_yaml parses a whole document into events before it deserializes any of it, and
//! libyaml's scanner looks at every open flow level for each token, so `[` × 100,000 costs
//! quadratic time (minutes) only to be refused afterwards with `recursion limit exceeded`.
//! [`too_deep`] finds the same refusal with one linear pass over the text: it follows flow
//! collections, quoted scalars, comments and block scalars well enough to count how deep
//! `[` and `{` nest, and answers with the error serde_yaml would have given.

use serde::Deserialize as _;

/// How deep serde_yaml deserializes sequences and mappings (its recursion limit).
pub const MAX_NESTING: usize = 128;

/// serde_yaml's refusal of `text`, if its flow collections nest deeper than
/// [`MAX_NESTING`]: `recursion limit exceeded` where serde_yaml would say it.
pub fn too_deep(text: &str) -> Option<serde_yaml::Error> {
    let (end, open) = deepest_opening(text, MAX_NESTING)?;
    // The text up to that opening, its collections closed, holds everything serde_yaml
    // deserializes before it gives up; it is at most a little deeper than the limit, so it
    // parses quickly and refuses with serde_yaml's own words and position.
    let mut prefix = text[..end].to_string();
    prefix.extend(open.iter().rev().map(|&c| if c == '[' { ']' } else { '}' }));
    match serde_json::Value::deserialize(serde_yaml::Deserializer::from_str(&prefix)) {
        Err(e) => Some(e),
        Ok(_) => Some(<serde_yaml::Error as serde::de::Error>::custom(
            "recursion limit exceeded",
        )),
    }
}

/// The byte just past the first flow collection opened more than `limit` levels deep,
/// and the openings (`[` or `{`) still open there, outermost first.
fn deepest_opening(text: &str, limit: usize) -> Option<(usize, Vec<char>)> {
    let mut s = Scan::default();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, c)| c);
        if s.feed(c, next, limit) {
            return Some((i + c.len_utf8(), s.open));
        }
    }
    None
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    /// After a `'` that `''` makes part of the scalar.
    SingleEscape,
    Double,
    DoubleEscape,
}

/// The scanner's state between characters.
struct Scan {
    /// 0-based column (characters) of the next character.
    col: usize,
    /// Whether only spaces came before on this line.
    line_start: bool,
    /// Leading spaces of this line.
    indent: usize,
    /// The flow collections open, outermost first.
    open: Vec<char>,
    quote: Quote,
    comment: bool,
    /// Where a node may start (a `[` there opens a flow sequence, a quote a quoted scalar).
    node_start: bool,
    /// Inside a plain scalar in block context.
    plain: bool,
    /// Inside an anchor, alias or tag token.
    property: bool,
    /// Column of the last block node (key or `-`) started on this line.
    node_col: usize,
    /// The previous character, for `: `, ` #` and `- `.
    prev: char,
    /// Skipping a block scalar's content: lines indented more than this are content.
    block_scalar: Option<isize>,
    /// A block scalar indicator was seen on this line; its content starts next line.
    pending_block: Option<isize>,
}

impl Default for Scan {
    fn default() -> Scan {
        Scan {
            col: 0,
            line_start: true,
            indent: 0,
            open: Vec::new(),
            quote: Quote::None,
            comment: false,
            node_start: true,
            plain: false,
            property: false,
            node_col: 0,
            prev: '\n',
            block_scalar: None,
            pending_block: None,
        }
    }
}

fn blank(c: Option<char>) -> bool {
    matches!(c, None | Some(' ' | '\t' | '\n' | '\r'))
}

impl Scan {
    /// Takes one character; whether it opens a collection past `limit`.
    fn feed(&mut self, c: char, next: Option<char>, limit: usize) -> bool {
        let found = self.step(c, next, limit);
        self.prev = c;
        if c == '\n' {
            self.col = 0;
            self.line_start = true;
            self.indent = 0;
            self.comment = false;
            self.plain = false;
            self.property = false;
            if self.open.is_empty() && self.quote == Quote::None {
                self.node_start = true;
                self.node_col = 0;
                if let Some(p) = self.pending_block.take() {
                    self.block_scalar = Some(p);
                }
            }
        } else {
            self.col += 1;
        }
        found
    }

    fn step(&mut self, c: char, next: Option<char>, limit: usize) -> bool {
        if c == '\n' || c == '\r' {
            return false;
        }
        if let Some(parent) = self.block_scalar {
            if self.line_start {
                if c == ' ' {
                    self.indent += 1;
                    return false;
                }
                if self.indent as isize > parent || c == '\t' {
                    // Content: skip the rest of the line.
                    self.line_start = false;
                    self.comment = true;
                    return false;
                }
                self.block_scalar = None;
            } else {
                return false;
            }
        }
        if self.comment {
            return false;
        }
        if self.line_start {
            if c == ' ' {
                self.indent += 1;
                return false;
            }
            self.line_start = false;
        }
        match self.quote {
            Quote::Single => {
                if c == '\'' {
                    if next == Some('\'') {
                        self.quote = Quote::SingleEscape;
                    } else {
                        self.quote = Quote::None;
                        self.node_start = false;
                    }
                }
                return false;
            }
            Quote::SingleEscape => {
                self.quote = Quote::Single;
                return false;
            }
            Quote::Double => {
                match c {
                    '\\' => self.quote = Quote::DoubleEscape,
                    '"' => {
                        self.quote = Quote::None;
                        self.node_start = false;
                    }
                    _ => {}
                }
                return false;
            }
            Quote::DoubleEscape => {
                self.quote = Quote::Double;
                return false;
            }
            Quote::None => {}
        }
        if c == '#' && blank(Some(self.prev)) {
            self.comment = true;
            return false;
        }
        if c == ' ' || c == '\t' {
            self.property = false;
            return false;
        }
        if !self.open.is_empty() {
            return self.flow(c, limit);
        }
        if self.plain {
            if c == ':' && blank(next) {
                self.plain = false;
                self.node_start = true;
            }
            return false;
        }
        if self.property {
            return false;
        }
        if !self.node_start {
            if c == ':' && blank(next) {
                self.node_start = true;
            }
            return false;
        }
        match c {
            '-' | '?' | ':' if blank(next) => {
                if c != ':' {
                    self.node_col = self.col;
                }
                false
            }
            '[' | '{' => {
                self.node_start = true;
                self.open(c, limit)
            }
            '\'' => {
                self.node_col = self.col;
                self.quote = Quote::Single;
                false
            }
            '"' => {
                self.node_col = self.col;
                self.quote = Quote::Double;
                false
            }
            '&' | '*' | '!' => {
                self.property = true;
                false
            }
            '|' | '>' => {
                let parent = if self.col == self.indent {
                    self.col as isize - 1
                } else {
                    self.node_col as isize
                };
                self.pending_block = Some(parent);
                self.comment = true; // the indicator's line holds only its header
                false
            }
            _ => {
                self.node_col = self.col;
                self.node_start = false;
                self.plain = true;
                false
            }
        }
    }

    fn open(&mut self, c: char, limit: usize) -> bool {
        self.open.push(c);
        self.open.len() > limit
    }

    /// One character inside a flow collection (not in a quote, comment or blank).
    fn flow(&mut self, c: char, limit: usize) -> bool {
        match c {
            '[' | '{' => {
                self.node_start = true;
                self.open(c, limit)
            }
            ']' | '}' => {
                self.open.pop();
                self.node_start = false;
                false
            }
            ',' | '?' | ':' => {
                self.node_start = true;
                false
            }
            '\'' if self.node_start => {
                self.quote = Quote::Single;
                false
            }
            '"' if self.node_start => {
                self.quote = Quote::Double;
                false
            }
            _ => {
                self.node_start = false;
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yamlpos::{self, Pos};

    fn serde_says(text: &str) -> Option<(String, Option<Pos>)> {
        let err = serde_json::Value::deserialize(serde_yaml::Deserializer::from_str(text)).err()?;
        Some((yamlpos::error_message(&err), yamlpos::error_pos(&err)))
    }

    fn we_say(text: &str) -> Option<(String, Option<Pos>)> {
        let err = too_deep(text)?;
        Some((yamlpos::error_message(&err), yamlpos::error_pos(&err)))
    }

    #[test]
    fn a_deep_flow_sequence_is_refused_where_serde_yaml_refuses_it() {
        for text in [
            "[".repeat(129) + &"]".repeat(129),
            "[".repeat(100_000),
            "{".repeat(300),
            format!("a:\n  b: {}", "[".repeat(200)),
            format!("a: [\n{}\n]", "[\n".repeat(150)),
        ] {
            let ours = we_say(&text).expect("refused");
            if text.len() < 2000 {
                assert_eq!(Some(ours), serde_says(&text), "{text:?}");
            } else {
                assert_eq!(
                    ours,
                    ("recursion limit exceeded".into(), Some(Pos::new(1, 129)))
                );
            }
        }
    }

    #[test]
    fn brackets_that_open_nothing_are_not_counted() {
        let deep = "[".repeat(300);
        for text in [
            format!("a: '{deep}'\n"),
            format!("a: \"{deep}\\\"\"\n"),
            format!("a: x{deep}\n"),
            format!("# {deep}\na: 1\n"),
            format!("a: 1 # {deep}\n"),
            format!("a: |\n  {deep}\n  {deep}\nb: 2\n"),
            format!("- key: >-\n    {deep}\n  other: 1\n"),
            format!("a: [x{}]\n", "y".repeat(10)),
            format!("a: ['it''s {deep}']\n"),
            format!("f:\n  x.yaml: |\n    k: {deep}\n"),
        ] {
            assert!(too_deep(&text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn a_block_scalar_ends_where_its_indentation_does() {
        let deep = "[".repeat(300);
        let text = format!("- key: |\n    text\n  other: {deep}\n");
        assert!(too_deep(&text).is_some());
    }

    #[test]
    fn nesting_within_the_limit_passes() {
        let text = "[".repeat(MAX_NESTING) + &"]".repeat(MAX_NESTING);
        assert!(too_deep(&text).is_none());
        assert!(serde_says(&text).is_none());
    }
}
