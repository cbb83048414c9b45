//! The Markdown subset lesson texts are written in (design §6.20): paragraphs, fenced code
//! blocks, `-`/`*` and `1.` lists, `inline code`, **bold**, *emphasis* and
//! [links](https://…). Anything else is text: nothing a lesson says becomes HTML.

/// A block of a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// A paragraph (its lines joined by spaces).
    Para(Vec<Inline>),
    /// A fenced code block, lines as written.
    Code(String),
    /// A list; `ordered` for `1.` items.
    List {
        ordered: bool,
        items: Vec<Vec<Inline>>,
    },
}

/// A run of text inside a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inline {
    /// Plain text.
    Text(String),
    /// `code`.
    Code(String),
    /// **bold**.
    Strong(String),
    /// *emphasis*.
    Em(String),
    /// [text](url), only for `http://` and `https://` targets.
    Link { text: String, url: String },
}

/// Parses a text into blocks.
pub fn parse(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut para: Vec<&str> = Vec::new();
    let mut list: Option<(bool, Vec<String>)> = None;
    let mut code: Option<Vec<&str>> = None;
    for line in text.lines() {
        if let Some(lines) = code.as_mut() {
            if line.trim_start().starts_with("```") {
                blocks.push(Block::Code(lines.join("\n")));
                code = None;
            } else {
                lines.push(line);
            }
            continue;
        }
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            flush(&mut blocks, &mut para, &mut list);
            code = Some(Vec::new());
        } else if trimmed.is_empty() {
            flush(&mut blocks, &mut para, &mut list);
        } else if let Some((ordered, item)) = list_item(trimmed) {
            flush_para(&mut blocks, &mut para);
            match list.as_mut() {
                Some((o, items)) if *o == ordered => items.push(item.to_string()),
                _ => {
                    flush_list(&mut blocks, &mut list);
                    list = Some((ordered, vec![item.to_string()]));
                }
            }
        } else if let Some((_, items)) = list.as_mut().filter(|_| line.starts_with(' ')) {
            // An indented line continues the list item above it.
            if let Some(last) = items.last_mut() {
                last.push(' ');
                last.push_str(trimmed);
            }
        } else {
            flush_list(&mut blocks, &mut list);
            para.push(trimmed);
        }
    }
    if let Some(lines) = code {
        // An unclosed fence runs to the end, as CommonMark reads it.
        blocks.push(Block::Code(lines.join("\n")));
    }
    flush(&mut blocks, &mut para, &mut list);
    blocks
}

fn flush(blocks: &mut Vec<Block>, para: &mut Vec<&str>, list: &mut Option<(bool, Vec<String>)>) {
    flush_para(blocks, para);
    flush_list(blocks, list);
}

fn flush_para(blocks: &mut Vec<Block>, para: &mut Vec<&str>) {
    if !para.is_empty() {
        blocks.push(Block::Para(inlines(&para.join(" "))));
        para.clear();
    }
}

fn flush_list(blocks: &mut Vec<Block>, list: &mut Option<(bool, Vec<String>)>) {
    if let Some((ordered, items)) = list.take() {
        let items = items.iter().map(|i| inlines(i)).collect();
        blocks.push(Block::List { ordered, items });
    }
}

/// `- item`, `* item` or `12. item`.
fn list_item(line: &str) -> Option<(bool, &str)> {
    if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return Some((false, rest.trim_start()));
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && digits < 10 {
        if let Some(rest) = line[digits..].strip_prefix(". ") {
            return Some((true, rest.trim_start()));
        }
    }
    None
}

/// Splits a paragraph into runs.
pub fn inlines(text: &str) -> Vec<Inline> {
    let mut out = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some((run, after)) = styled(rest) {
            if !plain.is_empty() {
                out.push(Inline::Text(std::mem::take(&mut plain)));
            }
            out.push(run);
            rest = after;
        } else {
            plain.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if !plain.is_empty() {
        out.push(Inline::Text(plain));
    }
    out
}

/// A styled run at the start of `s`, and what follows it.
fn styled(s: &str) -> Option<(Inline, &str)> {
    if let Some((inner, after)) = delimited(s, "`") {
        return Some((Inline::Code(inner.to_string()), after));
    }
    if let Some((inner, after)) = delimited(s, "**") {
        return Some((Inline::Strong(inner.to_string()), after));
    }
    if let Some((inner, after)) = delimited(s, "*") {
        return Some((Inline::Em(inner.to_string()), after));
    }
    link(s)
}

/// `<d>inner<d>` at the start of `s`, with a non-empty inner that does not start with a space.
fn delimited<'a>(s: &'a str, d: &str) -> Option<(&'a str, &'a str)> {
    let body = s.strip_prefix(d)?;
    let end = body.find(d)?;
    let inner = &body[..end];
    (!inner.is_empty() && !inner.starts_with(' ')).then(|| (inner, &body[end + d.len()..]))
}

/// `[text](http…)` at the start of `s`.
fn link(s: &str) -> Option<(Inline, &str)> {
    let body = s.strip_prefix('[')?;
    let close = body.find("](")?;
    let text = &body[..close];
    let target = &body[close + 2..];
    let end = target.find(')')?;
    let url = &target[..end];
    let safe = url.starts_with("https://") || url.starts_with("http://");
    (safe && !text.is_empty()).then(|| {
        let link = Inline::Link {
            text: text.to_string(),
            url: url.to_string(),
        };
        (link, &target[end + 1..])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn text(s: &str) -> Inline {
        Inline::Text(s.to_string())
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_read_paragraphs_lists_and_code() {
        let md = "Apply the **Deployment**:\nthen watch.\n\n```\nkubectl apply -f web.yaml\nkubectl get pods\n```\n- one `pod`\n- two\n  continued\n\n1. first\n2. second";
        let blocks = parse(md);
        assert_eq!(
            blocks[0],
            Block::Para(vec![
                text("Apply the "),
                Inline::Strong("Deployment".into()),
                text(": then watch."),
            ])
        );
        assert_eq!(
            blocks[1],
            Block::Code("kubectl apply -f web.yaml\nkubectl get pods".into())
        );
        assert_eq!(
            blocks[2],
            Block::List {
                ordered: false,
                items: vec![
                    vec![text("one "), Inline::Code("pod".into())],
                    vec![text("two continued")],
                ],
            }
        );
        assert_eq!(
            blocks[3],
            Block::List {
                ordered: true,
                items: vec![vec![text("first")], vec![text("second")]],
            }
        );
        assert_eq!(blocks.len(), 4);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_keep_unsafe_links_and_stray_marks_as_text() {
        assert_eq!(
            inlines("see [docs](https://kubernetes.io/docs/) or [x](javascript:alert(1))"),
            vec![
                text("see "),
                Inline::Link {
                    text: "docs".into(),
                    url: "https://kubernetes.io/docs/".into()
                },
                text(" or [x](javascript:alert(1))"),
            ]
        );
        assert_eq!(inlines("2 * 3 * 4"), vec![text("2 * 3 * 4")]);
        assert_eq!(inlines("a ` b"), vec![text("a ` b")]);
        assert_eq!(
            inlines("删除 *一个* Pod"),
            vec![text("删除 "), Inline::Em("一个".into()), text(" Pod")]
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_run_an_unclosed_fence_to_the_end() {
        assert_eq!(
            parse("text\n```\nkubectl get pods"),
            vec![
                Block::Para(vec![text("text")]),
                Block::Code("kubectl get pods".into())
            ]
        );
    }
}
