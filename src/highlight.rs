//! YAML syntax highlighting for the editor's overlay: the text as HTML spans (keys,
//! strings, numbers, comments…), with a wavy mark at each error's line:column and the
//! error's message after the line.

use kubeloop_sim::manifest::Located;

/// A token class; its CSS class is `t-<letter>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    /// Nothing special (indentation, spaces).
    Plain,
    /// A mapping key.
    Key,
    /// A quoted string or block scalar content.
    Str,
    /// A number.
    Num,
    /// true, false, null, ~.
    Bool,
    /// A comment.
    Comment,
    /// `-`, `:`, `|`, `>`, `{`, `}`, `[`, `]`, `,`.
    Punct,
    /// An anchor, alias or tag.
    Anchor,
    /// A document marker (`---`).
    Marker,
    /// A plain scalar value.
    Value,
}

impl Tok {
    fn class(self) -> &'static str {
        match self {
            Tok::Plain => "",
            Tok::Key => "t-k",
            Tok::Str => "t-s",
            Tok::Num => "t-n",
            Tok::Bool => "t-b",
            Tok::Comment => "t-c",
            Tok::Punct => "t-p",
            Tok::Anchor => "t-a",
            Tok::Marker => "t-m",
            Tok::Value => "t-v",
        }
    }
}

/// Escapes text for HTML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn scalar_class(s: &str) -> Tok {
    let s = s.trim();
    if matches!(
        s,
        "true"
            | "false"
            | "True"
            | "False"
            | "TRUE"
            | "FALSE"
            | "null"
            | "Null"
            | "NULL"
            | "~"
            | "yes"
            | "no"
    ) {
        Tok::Bool
    } else if !s.is_empty() && s.parse::<f64>().is_ok() && !s.starts_with('+') {
        Tok::Num
    } else {
        Tok::Value
    }
}

/// Where a value's comment starts (`#` after a space), if any.
fn comment_start(chars: &[char], from: usize) -> Option<usize> {
    (from..chars.len()).find(|&i| chars[i] == '#' && (i == 0 || chars[i - 1].is_whitespace()))
}

/// Classes for a value starting at `from`.
fn value(chars: &[char], from: usize, classes: &mut [Tok]) {
    let mut i = from;
    while i < chars.len() && chars[i].is_whitespace() {
        i += 1;
    }
    if i >= chars.len() {
        return;
    }
    let end = match chars[i] {
        '#' => {
            classes[i..].fill(Tok::Comment);
            return;
        }
        q @ ('"' | '\'') => {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != q {
                j += if chars[j] == '\\' && q == '"' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            classes[i..end].fill(Tok::Str);
            end
        }
        '|' | '>' => {
            let end = (i..chars.len())
                .find(|&j| chars[j].is_whitespace())
                .unwrap_or(chars.len());
            classes[i..end].fill(Tok::Punct);
            end
        }
        '&' | '*' | '!' => {
            let end = (i..chars.len())
                .find(|&j| chars[j].is_whitespace())
                .unwrap_or(chars.len());
            classes[i..end].fill(Tok::Anchor);
            return value(chars, end, classes);
        }
        _ => {
            let mut end = comment_start(chars, i).unwrap_or(chars.len());
            while end > i && chars[end - 1].is_whitespace() {
                end -= 1;
            }
            let text: String = chars[i..end].iter().collect();
            let class = scalar_class(&text);
            for j in i..end {
                classes[j] = if "{}[],".contains(chars[j]) {
                    Tok::Punct
                } else {
                    class
                };
            }
            end
        }
    };
    if let Some(c) = comment_start(chars, end) {
        classes[c..].fill(Tok::Comment);
    }
}

/// Token classes for one line (not inside a block scalar), one per char.
pub fn classify_line(line: &str) -> Vec<Tok> {
    let chars: Vec<char> = line.chars().collect();
    let mut classes = vec![Tok::Plain; chars.len()];
    let mut i = chars.iter().take_while(|c| c.is_whitespace()).count();
    let rest: String = chars[i..].iter().collect();
    if rest.starts_with("---") || rest.starts_with("...") {
        classes[i..(i + 3).min(chars.len())].fill(Tok::Marker);
        if let Some(c) = comment_start(&chars, i + 3) {
            classes[c..].fill(Tok::Comment);
        }
        return classes;
    }
    while chars.get(i) == Some(&'-') && chars.get(i + 1).is_none_or(|c| c.is_whitespace()) {
        classes[i] = Tok::Punct;
        i += 1;
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
    }
    if chars.get(i) == Some(&'#') {
        classes[i..].fill(Tok::Comment);
        return classes;
    }
    // A key ends at the first `:` followed by a space or the line's end, outside quotes.
    let mut quote = None;
    let mut colon = None;
    for j in i..chars.len() {
        match (quote, chars[j]) {
            (None, q @ ('"' | '\'')) if j == i => quote = Some(q),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if j > i && chars[j - 1].is_whitespace() => break,
            (None, ':') if chars.get(j + 1).is_none_or(|c| c.is_whitespace()) => {
                colon = Some(j);
                break;
            }
            (None, '{' | '[') if j == i => break,
            _ => {}
        }
    }
    match colon {
        Some(c) => {
            classes[i..c].fill(Tok::Key);
            classes[c] = Tok::Punct;
            value(&chars, c + 1, &mut classes);
        }
        None => value(&chars, i, &mut classes),
    }
    classes
}

fn indent(line: &str) -> usize {
    line.chars().take_while(|c| *c == ' ').count()
}

/// Whether a line opens a block scalar (`key: |`, `- >-`).
fn opens_block(line: &str, classes: &[Tok]) -> bool {
    let chars: Vec<char> = line.chars().collect();
    let last = (0..chars.len())
        .rev()
        .find(|&i| !chars[i].is_whitespace() && classes[i] != Tok::Comment);
    last.is_some_and(|i| {
        classes[i] == Tok::Punct && {
            let start = (0..=i)
                .rev()
                .take_while(|&j| !chars[j].is_whitespace())
                .last()
                .unwrap_or(i);
            matches!(chars[start], '|' | '>')
        }
    })
}

/// The whole text as HTML: one line per line, spans per token, errors marked.
pub fn highlight(text: &str, errors: &[Located]) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut block: Option<usize> = None;
    for (n, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let blank = line.trim().is_empty();
        if let Some(parent) = block {
            if !blank && indent(line) <= parent {
                block = None;
            }
        }
        let classes = if block.is_some() {
            vec![Tok::Str; line.chars().count()]
        } else {
            let c = classify_line(line);
            if opens_block(line, &c) {
                block = Some(indent(line));
            }
            c
        };
        if n > 0 {
            out.push('\n');
        }
        let here: Vec<&Located> = errors.iter().filter(|e| e.line == n + 1).collect();
        let chars: Vec<char> = line.chars().collect();
        let mut marked = vec![false; chars.len()];
        let mut past_end = false;
        for e in &here {
            let start = e.column.max(1) - 1;
            if start >= chars.len() {
                past_end = true;
                continue;
            }
            let end = (start..chars.len())
                .find(|&j| chars[j].is_whitespace() || (j > start && chars[j] == ':'))
                .unwrap_or(chars.len());
            marked[start..end.max(start + 1)].fill(true);
        }
        let mut i = 0;
        while i < chars.len() {
            let (class, mark) = (classes[i], marked[i]);
            let j = (i..chars.len())
                .find(|&j| classes[j] != class || marked[j] != mark)
                .unwrap_or(chars.len());
            let piece: String = chars[i..j].iter().collect();
            let mut cls = class.class().to_string();
            if mark {
                cls.push_str(if cls.is_empty() { "err-at" } else { " err-at" });
            }
            if cls.is_empty() {
                out.push_str(&escape(&piece));
            } else {
                out.push_str(&format!("<span class=\"{cls}\">{}</span>", escape(&piece)));
            }
            i = j;
        }
        if past_end {
            out.push_str("<span class=\"err-at\"> </span>");
        }
        if let Some(first) = here.first() {
            let more = if here.len() > 1 {
                format!(" (+{})", here.len() - 1)
            } else {
                String::new()
            };
            out.push_str(&format!(
                "<span class=\"err-msg\">  ◀ {}{more}</span>",
                escape(&first.message)
            ));
        }
    }
    // A trailing newline needs a line of its own in the <pre> to match the textarea.
    if text.ends_with('\n') {
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn runs(line: &str) -> Vec<(Tok, String)> {
        let chars: Vec<char> = line.chars().collect();
        let classes = classify_line(line);
        let mut out: Vec<(Tok, String)> = Vec::new();
        for (c, t) in chars.iter().zip(classes) {
            match out.last_mut() {
                Some((last, s)) if *last == t => s.push(*c),
                _ => out.push((t, c.to_string())),
            }
        }
        out.into_iter().filter(|(t, _)| *t != Tok::Plain).collect()
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_class_keys_values_and_comments() {
        assert_eq!(
            runs("  replicas: 3 # three"),
            [
                (Tok::Key, "replicas".into()),
                (Tok::Punct, ":".into()),
                (Tok::Num, "3".into()),
                (Tok::Comment, "# three".into())
            ]
        );
        assert_eq!(
            runs("- name: nginx"),
            [
                (Tok::Punct, "-".into()),
                (Tok::Key, "name".into()),
                (Tok::Punct, ":".into()),
                (Tok::Value, "nginx".into())
            ]
        );
        assert_eq!(
            runs("image: \"nginx:1.27\""),
            [
                (Tok::Key, "image".into()),
                (Tok::Punct, ":".into()),
                (Tok::Str, "\"nginx:1.27\"".into())
            ]
        );
        assert_eq!(
            runs("image: nginx:1.27"),
            [
                (Tok::Key, "image".into()),
                (Tok::Punct, ":".into()),
                (Tok::Value, "nginx:1.27".into())
            ]
        );
        assert_eq!(runs("---"), [(Tok::Marker, "---".into())]);
        assert_eq!(runs("# note"), [(Tok::Comment, "# note".into())]);
        assert_eq!(
            runs("ready: true"),
            [
                (Tok::Key, "ready".into()),
                (Tok::Punct, ":".into()),
                (Tok::Bool, "true".into())
            ]
        );
        assert_eq!(runs("  - containerPort: 80")[0], (Tok::Punct, "-".into()));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_treat_block_scalars_as_strings() {
        let html = highlight("a: |\n  x: 1\n  y\nb: 2", &[]);
        assert!(html.contains("<span class=\"t-s\">  x: 1</span>"), "{html}");
        assert!(html.contains("<span class=\"t-k\">b</span>"), "{html}");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_keep_the_text_and_mark_errors() {
        let text = "kind: Deployment\nspec:\n  replica: 3\n<b>";
        let errors = [Located {
            line: 3,
            column: 3,
            message: "unknown field \"spec.replica\"".into(),
        }];
        let html = highlight(text, &errors);
        assert_eq!(html.matches('\n').count(), 3, "one line per line");
        assert!(
            html.contains("<span class=\"t-k err-at\">replica</span>"),
            "{html}"
        );
        assert!(
            html.contains("err-msg") && html.contains("unknown field &quot;spec.replica&quot;")
        );
        assert!(html.contains("&lt;b&gt;"), "escaped");
        let past = highlight(
            "a: 1",
            &[Located {
                line: 1,
                column: 40,
                message: "x".into(),
            }],
        );
        assert!(past.contains("<span class=\"err-at\"> </span>"));
        assert!(highlight("a: 1\n", &[]).ends_with("\n "));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_never_panic_on_odd_text() {
        for text in [
            "",
            "-",
            "- ",
            ":",
            "'unterminated",
            "\"a\\",
            "a: 'b",
            "{a: b}",
            "key: &x !!str *y",
            "\u{1F600}: é",
            "|\n|\n",
            "a:\t|",
        ] {
            let _ = highlight(
                text,
                &[Located {
                    line: 1,
                    column: 2,
                    message: String::new(),
                }],
            );
        }
    }
}
