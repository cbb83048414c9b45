//! YAML exactly as kubectl prints it: `sigs.k8s.io/yaml` (JSON, re-read and re-emitted by its
//! vendored go-yaml v2), so keys sorted the way go-yaml sorts them, block style, sequences at
//! their parent key's indentation, strings quoted only when they would read back as something
//! else, and long strings folded past column 80.

use serde_json::Value;

use super::yaml_resolve::{format_number, is_base60_float, key_less, resolves_to_string};

/// go-yaml's line width: plain and quoted scalars are folded at a space past this column.
const BEST_WIDTH: usize = 80;
/// go-yaml's indentation step.
const BEST_INDENT: usize = 2;

/// Renders a JSON value as YAML, ending with a newline (what `yaml.Marshal` returns).
pub fn to_yaml(value: &Value) -> String {
    let mut e = Emitter {
        out: String::new(),
        column: 0,
        indent: -1,
        whitespace: true,
        indention: true,
    };
    e.node(value, Context::Root);
    // Document end: `write_indent` breaks the line if anything is on it.
    if e.column > 0 {
        e.put_break();
    }
    e.out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Root,
    MappingValue,
    SequenceItem,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

struct Emitter {
    out: String,
    column: usize,
    indent: isize,
    whitespace: bool,
    indention: bool,
}

impl Emitter {
    fn node(&mut self, v: &Value, ctx: Context) {
        match v {
            Value::Object(map) if !map.is_empty() => self.mapping(map),
            Value::Array(items) if !items.is_empty() => self.sequence(items, ctx),
            Value::Object(_) => self.flow_empty("{}"),
            Value::Array(_) => self.flow_empty("[]"),
            Value::String(s) => self.string(&fold_nel(s), false),
            Value::Null => self.scalar("null", Style::Plain, false),
            Value::Bool(b) => self.scalar(if *b { "true" } else { "false" }, Style::Plain, false),
            Value::Number(n) => self.scalar(&format_number(n), Style::Plain, false),
        }
    }

    fn flow_empty(&mut self, s: &str) {
        self.indicator(&s[..1], true, true, false);
        self.indicator(&s[1..], false, false, false);
    }

    fn mapping(&mut self, map: &serde_json::Map<String, Value>) {
        let saved = self.indent;
        self.increase_indent(false, false);
        let mut keys: Vec<&String> = map.keys().collect();
        keys.sort_by(|a, b| {
            if key_less(a, b) {
                std::cmp::Ordering::Less
            } else if key_less(b, a) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        for k in keys {
            self.write_indent();
            self.string(&fold_nel(k), true);
            self.indicator(":", false, false, false);
            self.node(&map[k.as_str()], Context::MappingValue);
        }
        self.indent = saved;
    }

    fn sequence(&mut self, items: &[Value], ctx: Context) {
        let saved = self.indent;
        let indentless = ctx == Context::MappingValue && !self.indention;
        self.increase_indent(false, indentless);
        for item in items {
            self.write_indent();
            self.indicator("-", true, false, true);
            self.node(item, Context::SequenceItem);
        }
        self.indent = saved;
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT as isize } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT as isize;
        }
    }

    /// `encoder.stringv`: plain unless the text would resolve to another type; literal if
    /// it spans lines.
    fn string(&mut self, s: &str, simple_key: bool) {
        let style = if s.contains('\n') {
            Style::Literal
        } else if resolves_to_string(s) && !is_base60_float(s) {
            Style::Plain
        } else {
            Style::Double
        };
        self.scalar(s, style, simple_key);
    }

    fn scalar(&mut self, value: &str, requested: Style, simple_key: bool) {
        let a = analyze(value);
        let mut style = requested;
        if simple_key && a.multiline {
            style = Style::Double;
        }
        if style == Style::Plain && (!a.block_plain_allowed || (value.is_empty() && simple_key)) {
            style = Style::Single;
        }
        if style == Style::Single && !a.single_quoted_allowed {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block_allowed || simple_key) {
            style = Style::Double;
        }
        let saved = self.indent;
        self.increase_indent(true, false);
        let allow_breaks = !simple_key;
        match style {
            Style::Plain => self.write_plain(value, allow_breaks),
            Style::Single => self.write_single(value, allow_breaks),
            Style::Double => self.write_double(value, allow_breaks),
            Style::Literal => self.write_literal(value),
        }
        self.indent = saved;
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
        self.indention = true;
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
    }

    fn indicator(&mut self, s: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        for c in s.chars() {
            self.put(c);
        }
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    fn write_plain(&mut self, value: &str, allow_breaks: bool) {
        if !value.is_empty() && !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks && !spaces && self.column > BEST_WIDTH && !next_space {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                self.indention = false;
                spaces = false;
            }
        }
        if !value.is_empty() {
            self.whitespace = false;
        }
        self.indention = false;
    }

    fn write_single(&mut self, value: &str, allow_breaks: bool) {
        self.indicator("'", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < chars.len()
                    && !next_space
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
            }
        }
        self.indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double(&mut self, value: &str, allow_breaks: bool) {
        self.indicator("\"", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\u{7}' => self.put('a'),
                    '\u{8}' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\u{b}' => self.put('v'),
                    '\u{c}' => self.put('f'),
                    '\r' => self.put('r'),
                    '\u{1b}' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{a0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    _ => {
                        let v = c as u32;
                        let (tag, digits) = if v <= 0xff {
                            ('x', 2)
                        } else if v <= 0xffff {
                            ('u', 4)
                        } else {
                            ('U', 8)
                        };
                        self.put(tag);
                        for k in (0..digits).rev() {
                            let d = (v >> (k * 4)) & 0xf;
                            self.put(
                                std::char::from_digit(d, 16)
                                    .unwrap_or('0')
                                    .to_ascii_uppercase(),
                            );
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < chars.len()
                {
                    self.write_indent();
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_literal(&mut self, value: &str) {
        self.indicator("|", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        if chars.first().is_some_and(|&c| c == ' ' || is_break(c)) {
            let hint = char::from(b'0' + BEST_INDENT as u8).to_string();
            self.indicator(&hint, false, false, false);
        }
        let chomp = match chars.len() {
            0 => Some("-"),
            n if !is_break(chars[n - 1]) => Some("-"),
            1 => Some("+"),
            n if is_break(chars[n - 2]) => Some("+"),
            _ => None,
        };
        if let Some(h) = chomp {
            self.indicator(h, false, false, false);
        }
        self.put_break();
        self.whitespace = true;
        let mut breaks = true;
        for &c in &chars {
            if is_break(c) {
                if c == '\n' {
                    self.put_break();
                } else {
                    self.put(c);
                    self.column = 0;
                    self.indention = true;
                }
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

/// Go's JSON encoder leaves U+0085 (NEL) raw, and go-yaml reads a raw NEL inside a
/// double-quoted scalar as a line break folded into a space: kubectl prints it as a space.
fn fold_nel(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\u{85}') {
        std::borrow::Cow::Owned(s.replace('\u{85}', " "))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// libyaml's `is_printable` on the character's UTF-8 encoding.
fn is_printable(c: char) -> bool {
    let v = c as u32;
    v == 0x0a
        || (0x20..=0x7e).contains(&v)
        || (0xa0..=0xd7ff).contains(&v)
        || (0xe000..=0xfffd).contains(&v) && v != 0xfeff
}

/// `yaml_emitter_analyze_scalar` for the block context (no flow collections are emitted).
fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let chars: Vec<char> = value.chars().collect();
    let mut block_indicators = value.starts_with("---") || value.starts_with("...");
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_ws = true;
    let n = chars.len();
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_ws = i + 1 >= n || is_blank(chars[i + 1]) || is_break(chars[i + 1]);
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_ws => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_ws => block_indicators = true,
                '#' if preceded_by_ws => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= i + 1 == n;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= i + 1 == n;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_ws = is_blank(c) || is_break(c);
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
}
