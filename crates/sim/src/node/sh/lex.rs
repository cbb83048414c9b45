//! The shell's lexer: words (with their quoted and unquoted parts, `$VAR`, `${VAR}`,
//! `$?`, `$(...)` and backquotes kept apart for expansion) and operators.

/// A piece of a word, before expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Literal text; `true` when quoted (no field splitting or globbing).
    Lit(String, bool),
    /// `$NAME`, `${NAME}`, `$?`, `$#`, `$1`; `true` when inside double quotes.
    Var(String, bool),
    /// `$(...)` or `` `...` ``: the script inside; `true` when inside double quotes.
    Sub(String, bool),
}

/// A word: the parts it was written with.
pub type Word = Vec<Part>;

/// A token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A word.
    Word(Word),
    /// `;` or a newline.
    Semi,
    /// `&&`.
    And,
    /// `||`.
    Or,
    /// `|`.
    Pipe,
    /// `&` (background: refused by the parser).
    Amp,
    /// A redirection: file descriptor and operator (`>`, `>>`, `<`, `>&`).
    Redir(u8, &'static str),
    /// `(` or `)` (subshells: refused by the parser).
    Paren(char),
}

/// The literal text of a word when it is one unquoted literal (keywords, names).
pub fn plain(w: &Word) -> Option<&str> {
    match w.as_slice() {
        [Part::Lit(s, false)] => Some(s),
        _ => None,
    }
}

/// Splits a script into tokens, or gives the shell's syntax error.
pub fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let mut l = Lexer {
        c: src.chars().collect(),
        i: 0,
        out: Vec::new(),
    };
    l.run()?;
    Ok(l.out)
}

struct Lexer {
    c: Vec<char>,
    i: usize,
    out: Vec<Tok>,
}

impl Lexer {
    fn peek(&self, k: usize) -> Option<char> {
        self.c.get(self.i + k).copied()
    }

    fn run(&mut self) -> Result<(), String> {
        while let Some(ch) = self.peek(0) {
            match ch {
                ' ' | '\t' => self.i += 1,
                '\\' if self.peek(1) == Some('\n') => self.i += 2,
                '#' => self.skip_comment(),
                '\n' | ';' => {
                    self.i += 1;
                    self.out.push(Tok::Semi);
                }
                '&' | '|' => self.op2(ch),
                '(' | ')' => {
                    self.i += 1;
                    self.out.push(Tok::Paren(ch));
                }
                '>' | '<' => self.redir(0),
                d @ '0'..='9' if matches!(self.peek(1), Some('>' | '<')) => {
                    self.i += 1;
                    self.redir(d as u8 - b'0');
                }
                _ => {
                    let w = self.word()?;
                    self.out.push(Tok::Word(w));
                }
            }
        }
        Ok(())
    }

    fn skip_comment(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.i += 1;
        }
    }

    fn op2(&mut self, ch: char) {
        let double = self.peek(1) == Some(ch);
        self.i += if double { 2 } else { 1 };
        self.out.push(match (ch, double) {
            ('&', true) => Tok::And,
            ('&', false) => Tok::Amp,
            ('|', true) => Tok::Or,
            _ => Tok::Pipe,
        });
    }

    fn redir(&mut self, fd: u8) {
        let op: &'static str = match (self.peek(0), self.peek(1)) {
            (Some('>'), Some('>')) => ">>",
            (Some('>'), Some('&')) => ">&",
            (Some('>'), _) => ">",
            _ => "<",
        };
        self.i += op.len();
        let fd = if op == "<" && fd == 0 {
            0
        } else if fd == 0 {
            1
        } else {
            fd
        };
        self.out.push(Tok::Redir(fd, op));
    }

    fn word(&mut self) -> Result<Word, String> {
        let mut parts: Word = Vec::new();
        let mut lit = String::new();
        while let Some(ch) = self.peek(0) {
            match ch {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\'' => {
                    flush(&mut parts, &mut lit, false);
                    self.i += 1;
                    let s = self.until('\'')?;
                    parts.push(Part::Lit(s, true));
                }
                '"' => {
                    flush(&mut parts, &mut lit, false);
                    self.i += 1;
                    self.double_quoted(&mut parts)?;
                }
                '\\' => {
                    self.i += 1;
                    if let Some(x) = self.peek(0) {
                        flush(&mut parts, &mut lit, false);
                        parts.push(Part::Lit(x.to_string(), true));
                        self.i += 1;
                    }
                }
                '$' | '`' => {
                    flush(&mut parts, &mut lit, false);
                    match self.dollar(false)? {
                        Some(p) => parts.push(p),
                        None => lit.push('$'),
                    }
                }
                _ => {
                    lit.push(ch);
                    self.i += 1;
                }
            }
        }
        flush(&mut parts, &mut lit, false);
        Ok(parts)
    }

    fn until(&mut self, end: char) -> Result<String, String> {
        let mut s = String::new();
        loop {
            match self.peek(0) {
                Some(c) if c == end => {
                    self.i += 1;
                    return Ok(s);
                }
                Some(c) => {
                    s.push(c);
                    self.i += 1;
                }
                None => return Err(format!("unterminated quoted string")),
            }
        }
    }

    fn double_quoted(&mut self, parts: &mut Word) -> Result<(), String> {
        let mut lit = String::new();
        loop {
            match self.peek(0) {
                None => return Err("unterminated quoted string".into()),
                Some('"') => {
                    self.i += 1;
                    // An empty "" is still a word.
                    if lit.is_empty() && parts.is_empty() {
                        parts.push(Part::Lit(String::new(), true));
                    }
                    flush(parts, &mut lit, true);
                    return Ok(());
                }
                Some('\\') if matches!(self.peek(1), Some('"' | '\\' | '$' | '`' | '\n')) => {
                    lit.push(self.peek(1).unwrap_or('\\'));
                    self.i += 2;
                }
                Some('$' | '`') => {
                    flush(parts, &mut lit, true);
                    match self.dollar(true)? {
                        Some(p) => parts.push(p),
                        None => lit.push('$'),
                    }
                }
                Some(c) => {
                    lit.push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// `$NAME`, `${NAME}`, `$?`, `$(...)`, `` `...` `` at the cursor; None for a lone `$`.
    fn dollar(&mut self, quoted: bool) -> Result<Option<Part>, String> {
        if self.peek(0) == Some('`') {
            self.i += 1;
            let s = self.until('`')?;
            return Ok(Some(Part::Sub(s, quoted)));
        }
        self.i += 1;
        match self.peek(0) {
            Some('(') => {
                self.i += 1;
                let s = self.balanced()?;
                Ok(Some(Part::Sub(s, quoted)))
            }
            Some('{') => {
                self.i += 1;
                let s = self.until('}')?;
                Ok(Some(Part::Var(s, quoted)))
            }
            Some(c @ ('?' | '#' | '$' | '@' | '*' | '0'..='9')) => {
                self.i += 1;
                Ok(Some(Part::Var(c.to_string(), quoted)))
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = self
                    .peek(0)
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    name.push(c);
                    self.i += 1;
                }
                Ok(Some(Part::Var(name, quoted)))
            }
            _ => Ok(None),
        }
    }

    /// The text up to the `)` closing a `$(`, nested parentheses and quotes included.
    fn balanced(&mut self) -> Result<String, String> {
        let mut depth = 1;
        let mut s = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (None, '\'' | '"') => quote = Some(c),
                (None, '(') => depth += 1,
                (None, ')') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(s);
                    }
                }
                _ => {}
            }
            s.push(c);
        }
        Err("unterminated $(".into())
    }
}

fn flush(parts: &mut Word, lit: &mut String, quoted: bool) {
    if !lit.is_empty() {
        parts.push(Part::Lit(std::mem::take(lit), quoted));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_variables_and_substitutions_stay_apart() {
        let t = lex(r#"echo "hi $NAME" '$x' $(date) a\ b"#).unwrap();
        assert_eq!(t.len(), 5);
        assert_eq!(
            t[1],
            Tok::Word(vec![
                Part::Lit("hi ".into(), true),
                Part::Var("NAME".into(), true)
            ])
        );
        assert_eq!(t[2], Tok::Word(vec![Part::Lit("$x".into(), true)]));
        assert_eq!(t[3], Tok::Word(vec![Part::Sub("date".into(), false)]));
    }

    #[test]
    fn operators_and_redirections() {
        let t = lex("a && b || c | d > f 2>&1; e >> g").unwrap();
        assert!(t.contains(&Tok::And) && t.contains(&Tok::Or) && t.contains(&Tok::Pipe));
        assert!(t.contains(&Tok::Redir(1, ">")) && t.contains(&Tok::Redir(2, ">&")));
        assert!(t.contains(&Tok::Redir(1, ">>")));
    }

    #[test]
    fn an_unterminated_quote_is_an_error() {
        assert!(lex("echo 'oops").is_err());
    }
}
