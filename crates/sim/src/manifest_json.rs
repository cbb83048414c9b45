//! Splits a JSON stream into values and reports syntax errors in Go `encoding/json` words.
//!
//! kubectl reads a file that starts with `{` with Go's `json.Decoder`, so its errors read
//! `json: offset 23: invalid character '}' looking for beginning of object key string`
//! (or `unexpected EOF`). This is a port of that scanner's state machine, just enough to
//! produce the same message and offset.

/// A JSON syntax error as Go's decoder reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GoJsonError {
    /// Byte index of the offending byte (or the end of input for `unexpected EOF`).
    pub index: usize,
    /// The message kubectl prints after `error parsing <source>: `.
    pub message: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    ObjectKey,
    ObjectValue,
    Array,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum St {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    InString,
    InStringEsc,
    InStringEscU(u8),
    Neg,
    One,
    Zero,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    Literal(&'static [u8], usize, &'static str),
}

/// Go's `quoteChar`: the byte as a Go-quoted character in single quotes.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_string(),
        b'"' => "'\"'".to_string(),
        0x07 => "'\\a'".to_string(),
        0x08 => "'\\b'".to_string(),
        0x0c => "'\\f'".to_string(),
        b'\n' => "'\\n'".to_string(),
        b'\r' => "'\\r'".to_string(),
        b'\t' => "'\\t'".to_string(),
        0x0b => "'\\v'".to_string(),
        b'\\' => "'\\\\'".to_string(),
        c if c < 0x20 || c == 0x7f => format!("'\\x{c:02x}'"),
        c if (0x80..0xa0).contains(&c) => format!("'\\u{c:04x}'"),
        c => format!("'{}'", char::from(c)),
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// Go's `maxNestingDepth`.
const MAX_DEPTH: usize = 10_000;

/// Splits `text` into the byte ranges of its top-level JSON values, stopping at the first
/// syntax error. Values before the error are returned with it, as kubectl has already
/// read them by then.
pub(crate) fn split_stream(text: &str) -> (Vec<(usize, usize)>, Option<GoJsonError>) {
    let bytes = text.as_bytes();
    let mut values = Vec::new();
    let mut i = 0;
    loop {
        while i < bytes.len() && is_space(bytes[i]) {
            i += 1;
        }
        if i >= bytes.len() {
            return (values, None);
        }
        match scan_value(bytes, i) {
            Ok(end) => {
                values.push((i, end));
                i = end;
            }
            Err(e) => return (values, Some(e)),
        }
    }
}

/// Scans one value starting at `start` (not a space); returns the index just past it.
fn scan_value(b: &[u8], start: usize) -> Result<usize, GoJsonError> {
    let mut stack: Vec<Ctx> = Vec::new();
    let mut st = St::BeginValue;
    let mut i = start;
    let err = |i: usize, c: u8, what: &str| GoJsonError {
        index: i,
        message: format!(
            "json: offset {}: invalid character {} {what}",
            i + 1,
            quote_char(c)
        ),
    };
    while i < b.len() {
        let c = b[i];
        // Each arm either consumes `c` (falls through to `i += 1`) or re-dispatches it.
        match st {
            St::BeginValueOrEmpty | St::BeginValue => {
                if is_space(c) {
                } else if c == b']' && st == St::BeginValueOrEmpty {
                    stack.pop();
                    st = St::EndValue;
                } else {
                    match c {
                        b'{' | b'[' => {
                            if stack.len() >= MAX_DEPTH {
                                return Err(GoJsonError {
                                    index: i,
                                    message: format!("json: offset {}: exceeded max depth", i + 1),
                                });
                            }
                            if c == b'{' {
                                stack.push(Ctx::ObjectKey);
                                st = St::BeginStringOrEmpty;
                            } else {
                                stack.push(Ctx::Array);
                                st = St::BeginValueOrEmpty;
                            }
                        }
                        b'"' => st = St::InString,
                        b'-' => st = St::Neg,
                        b'0' => st = St::Zero,
                        b'1'..=b'9' => st = St::One,
                        b't' => st = St::Literal(b"rue", 0, "true"),
                        b'f' => st = St::Literal(b"alse", 0, "false"),
                        b'n' => st = St::Literal(b"ull", 0, "null"),
                        _ => return Err(err(i, c, "looking for beginning of value")),
                    }
                }
            }
            St::BeginStringOrEmpty | St::BeginString => {
                if is_space(c) {
                } else if c == b'}' && st == St::BeginStringOrEmpty {
                    stack.pop();
                    st = St::EndValue;
                } else if c == b'"' {
                    st = St::InString;
                } else {
                    return Err(err(i, c, "looking for beginning of object key string"));
                }
            }
            St::EndValue => {
                let Some(top) = stack.last().copied() else {
                    // The top-level value is complete.
                    return Ok(i);
                };
                if is_space(c) {
                } else {
                    match (top, c) {
                        (Ctx::ObjectKey, b':') => {
                            if let Some(t) = stack.last_mut() {
                                *t = Ctx::ObjectValue;
                            }
                            st = St::BeginValue;
                        }
                        (Ctx::ObjectKey, _) => return Err(err(i, c, "after object key")),
                        (Ctx::ObjectValue, b',') => {
                            if let Some(t) = stack.last_mut() {
                                *t = Ctx::ObjectKey;
                            }
                            st = St::BeginString;
                        }
                        (Ctx::ObjectValue, b'}') | (Ctx::Array, b']') => {
                            stack.pop();
                            if stack.is_empty() {
                                return Ok(i + 1);
                            }
                        }
                        (Ctx::ObjectValue, _) => {
                            return Err(err(i, c, "after object key:value pair"))
                        }
                        (Ctx::Array, b',') => st = St::BeginValue,
                        (Ctx::Array, _) => return Err(err(i, c, "after array element")),
                    }
                }
            }
            St::InString => match c {
                b'"' => st = St::EndValue,
                b'\\' => st = St::InStringEsc,
                c if c < 0x20 => return Err(err(i, c, "in string literal")),
                _ => {}
            },
            St::InStringEsc => match c {
                b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => st = St::InString,
                b'u' => st = St::InStringEscU(0),
                _ => return Err(err(i, c, "in string escape code")),
            },
            St::InStringEscU(n) => {
                if !c.is_ascii_hexdigit() {
                    return Err(err(i, c, "in \\u hexadecimal character escape"));
                }
                st = if n == 3 {
                    St::InString
                } else {
                    St::InStringEscU(n + 1)
                };
            }
            St::Neg => match c {
                b'0' => st = St::Zero,
                b'1'..=b'9' => st = St::One,
                _ => return Err(err(i, c, "in numeric literal")),
            },
            St::One | St::Zero | St::Dot0 | St::E0 => {
                let next = match (st, c) {
                    (St::One, b'0'..=b'9') => Some(St::One),
                    (St::One | St::Zero, b'.') => Some(St::Dot),
                    (St::One | St::Zero | St::Dot0, b'e' | b'E') => Some(St::E),
                    (St::Dot0, b'0'..=b'9') => Some(St::Dot0),
                    (St::E0, b'0'..=b'9') => Some(St::E0),
                    _ => None,
                };
                match next {
                    Some(n) => st = n,
                    None => {
                        // The number ended: this byte belongs to what follows.
                        st = St::EndValue;
                        if stack.is_empty() {
                            return Ok(i);
                        }
                        continue;
                    }
                }
            }
            St::Dot => {
                if !c.is_ascii_digit() {
                    return Err(err(i, c, "after decimal point in numeric literal"));
                }
                st = St::Dot0;
            }
            St::E => match c {
                b'+' | b'-' => st = St::ESign,
                b'0'..=b'9' => st = St::E0,
                _ => return Err(err(i, c, "in exponent of numeric literal")),
            },
            St::ESign => {
                if !c.is_ascii_digit() {
                    return Err(err(i, c, "in exponent of numeric literal"));
                }
                st = St::E0;
            }
            St::Literal(rest, n, word) => {
                let want = rest[n];
                if c != want {
                    let what = format!("in literal {word} (expecting {})", quote_char(want));
                    return Err(err(i, c, &what));
                }
                st = if n + 1 == rest.len() {
                    if stack.is_empty() {
                        return Ok(i + 1);
                    }
                    St::EndValue
                } else {
                    St::Literal(rest, n + 1, word)
                };
            }
        }
        if st == St::EndValue && stack.is_empty() && matches!(c, b'"') {
            // A top-level string just closed.
            return Ok(i + 1);
        }
        i += 1;
    }
    // End of input: a complete top-level number is fine, anything else is cut short.
    if stack.is_empty() && matches!(st, St::One | St::Zero | St::Dot0 | St::E0) {
        return Ok(b.len());
    }
    Err(GoJsonError {
        index: b.len(),
        message: "unexpected EOF".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_error(text: &str) -> Option<String> {
        split_stream(text).1.map(|e| e.message)
    }

    #[test]
    fn values_split_like_json_decoder() {
        let text = "{\"a\": 1} {\"b\": [1, 2.5e3, true, null, \"x\\u00e9\"]}\n[] 12 \"s\"";
        let (values, err) = split_stream(text);
        assert_eq!(err, None);
        let parts: Vec<&str> = values.iter().map(|(s, e)| &text[*s..*e]).collect();
        assert_eq!(
            parts,
            vec![
                "{\"a\": 1}",
                "{\"b\": [1, 2.5e3, true, null, \"x\\u00e9\"]}",
                "[]",
                "12",
                "\"s\""
            ]
        );
    }

    #[test]
    fn errors_read_like_go() {
        let cases = [
            (
                "{\"a\": 1,}",
                "json: offset 9: invalid character '}' looking for beginning of object key string",
            ),
            (
                "{\"a\" 1}",
                "json: offset 6: invalid character '1' after object key",
            ),
            (
                "{\"a\": 1 \"b\": 2}",
                "json: offset 9: invalid character '\"' after object key:value pair",
            ),
            (
                "{\"a\": [1 2]}",
                "json: offset 10: invalid character '2' after array element",
            ),
            (
                "{\"a\": tru}",
                "json: offset 10: invalid character '}' in literal true (expecting 'e')",
            ),
            (
                "{\"a\": 01}",
                "json: offset 8: invalid character '1' after object key:value pair",
            ),
            (
                "{\"a\": 1.}",
                "json: offset 9: invalid character '}' after decimal point in numeric literal",
            ),
            (
                "{\"a\": \"x\ny\"}",
                "json: offset 9: invalid character '\\n' in string literal",
            ),
            (
                "{\"a\": \"\\q\"}",
                "json: offset 9: invalid character 'q' in string escape code",
            ),
            (
                "{\"a\": 'x'}",
                "json: offset 7: invalid character '\\'' looking for beginning of value",
            ),
            ("{\"a\": 1", "unexpected EOF"),
            (
                "{\"a\": 1} x",
                "json: offset 10: invalid character 'x' looking for beginning of value",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(first_error(text).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error() {
        let text = "[".repeat(20_000);
        assert!(first_error(&text).unwrap().contains("exceeded max depth"));
    }
}
