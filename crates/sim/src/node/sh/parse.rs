//! The shell's grammar (a POSIX subset): lists with `;` and newlines, `&&`/`||`,
//! pipelines with `!`, simple commands with assignments and redirections, `if`/`elif`/
//! `else`, `while`, `until` and `for`. Anything else is a syntax error as sh reports it.

use super::lex::{plain, Part, Tok, Word};

/// A redirection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redir {
    /// File descriptor (0, 1, 2).
    pub fd: u8,
    /// `>`, `>>`, `<`, `>&`.
    pub op: &'static str,
    /// The file (or the descriptor, for `>&`).
    pub target: Word,
}

/// A command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// `A=b cmd args > file`.
    Simple {
        /// Assignments before the command name.
        assigns: Vec<(String, Word)>,
        /// Command name and arguments.
        words: Vec<Word>,
        /// Redirections.
        redirs: Vec<Redir>,
    },
    /// `if c; then a; elif c2; then b; else d; fi`.
    If {
        /// (condition, body) pairs, in order.
        arms: Vec<(List, List)>,
        /// The `else` body.
        otherwise: Option<List>,
    },
    /// `while c; do b; done` (or `until`).
    Loop {
        /// `until` rather than `while`.
        until: bool,
        /// Condition.
        cond: List,
        /// Body.
        body: List,
    },
    /// `for v in words; do b; done`.
    For {
        /// Variable.
        var: String,
        /// Words (None: the positional parameters).
        words: Option<Vec<Word>>,
        /// Body.
        body: List,
    },
}

/// A pipeline: commands joined by `|`, optionally negated with `!`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipeline {
    /// `!`.
    pub negate: bool,
    /// Commands.
    pub cmds: Vec<Cmd>,
}

/// `a && b || c`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AndOr {
    /// The first pipeline.
    pub first: Pipeline,
    /// Each following pipeline with whether it runs on success (`&&`) or failure (`||`).
    pub rest: Vec<(bool, Pipeline)>,
}

/// Commands run in order.
pub type List = Vec<AndOr>;

const RESERVED: [&str; 10] = [
    "then", "elif", "else", "fi", "do", "done", "in", "if", "while", "until",
];

/// Parses tokens into a list, or gives `syntax error: ...` as busybox sh words it.
pub fn parse(toks: &[Tok]) -> Result<List, String> {
    let mut p = Parser { t: toks, i: 0 };
    let list = p.list(&[])?;
    match p.t.get(p.i) {
        None => Ok(list),
        Some(t) => Err(p.unexpected(t)),
    }
}

struct Parser<'a> {
    t: &'a [Tok],
    i: usize,
}

impl Parser<'_> {
    fn keyword(&self) -> Option<&str> {
        match self.t.get(self.i) {
            Some(Tok::Word(w)) => plain(w),
            _ => None,
        }
    }

    fn unexpected(&self, t: &Tok) -> String {
        let what = match t {
            Tok::Word(w) => plain(w).unwrap_or("word").to_string(),
            Tok::Semi => ";".into(),
            Tok::And => "&&".into(),
            Tok::Or => "||".into(),
            Tok::Pipe => "|".into(),
            Tok::Amp => "&".into(),
            Tok::Redir(_, op) => op.to_string(),
            Tok::Paren(c) => c.to_string(),
        };
        format!("syntax error: unexpected \"{what}\"")
    }

    fn skip_semis(&mut self) {
        while matches!(self.t.get(self.i), Some(Tok::Semi)) {
            self.i += 1;
        }
    }

    /// A list, up to (not including) one of the `stop` keywords or the end.
    fn list(&mut self, stop: &[&str]) -> Result<List, String> {
        let mut list = Vec::new();
        loop {
            self.skip_semis();
            match self.keyword() {
                Some(k) if stop.contains(&k) => return Ok(list),
                _ => {}
            }
            if self.i >= self.t.len() {
                return Ok(list);
            }
            list.push(self.and_or()?);
            match self.t.get(self.i) {
                None | Some(Tok::Semi) => {}
                Some(Tok::Amp) => {
                    return Err("syntax error: background jobs (&) are not supported".into())
                }
                Some(t) => return Err(self.unexpected(t)),
            }
        }
    }

    fn and_or(&mut self) -> Result<AndOr, String> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        while let Some(op @ (Tok::And | Tok::Or)) = self.t.get(self.i) {
            let on_success = *op == Tok::And;
            self.i += 1;
            self.skip_semis();
            rest.push((on_success, self.pipeline()?));
        }
        Ok(AndOr { first, rest })
    }

    fn pipeline(&mut self) -> Result<Pipeline, String> {
        let negate = self.keyword() == Some("!");
        if negate {
            self.i += 1;
        }
        let mut cmds = vec![self.command()?];
        while matches!(self.t.get(self.i), Some(Tok::Pipe)) {
            self.i += 1;
            self.skip_semis();
            cmds.push(self.command()?);
        }
        Ok(Pipeline { negate, cmds })
    }

    fn expect(&mut self, kw: &str) -> Result<(), String> {
        match self.t.get(self.i) {
            Some(Tok::Word(w)) if plain(w) == Some(kw) => {
                self.i += 1;
                Ok(())
            }
            Some(t) => Err(self.unexpected(t)),
            None => Err(format!(
                "syntax error: unexpected end of file (expecting \"{kw}\")"
            )),
        }
    }

    fn command(&mut self) -> Result<Cmd, String> {
        match self.keyword() {
            Some("if") => self.if_cmd(),
            Some(k @ ("while" | "until")) => {
                let until = k == "until";
                self.i += 1;
                let cond = self.list(&["do"])?;
                self.expect("do")?;
                let body = self.list(&["done"])?;
                self.expect("done")?;
                Ok(Cmd::Loop { until, cond, body })
            }
            Some("for") => self.for_cmd(),
            Some(k) if RESERVED.contains(&k) => Err(format!("syntax error: unexpected \"{k}\"")),
            _ => self.simple(),
        }
    }

    fn if_cmd(&mut self) -> Result<Cmd, String> {
        self.i += 1;
        let mut arms = Vec::new();
        let mut otherwise = None;
        loop {
            let cond = self.list(&["then"])?;
            self.expect("then")?;
            let body = self.list(&["elif", "else", "fi"])?;
            arms.push((cond, body));
            match self.keyword() {
                Some("elif") => self.i += 1,
                Some("else") => {
                    self.i += 1;
                    otherwise = Some(self.list(&["fi"])?);
                    self.expect("fi")?;
                    break;
                }
                _ => {
                    self.expect("fi")?;
                    break;
                }
            }
        }
        Ok(Cmd::If { arms, otherwise })
    }

    fn for_cmd(&mut self) -> Result<Cmd, String> {
        self.i += 1;
        let var = match self.t.get(self.i) {
            Some(Tok::Word(w)) if plain(w).is_some_and(is_name) => {
                plain(w).unwrap_or("").to_string()
            }
            Some(t) => return Err(self.unexpected(t)),
            None => return Err("syntax error: unexpected end of file".into()),
        };
        self.i += 1;
        let mut words = None;
        if self.keyword() == Some("in") {
            self.i += 1;
            let mut ws = Vec::new();
            while let Some(Tok::Word(w)) = self.t.get(self.i) {
                ws.push(w.clone());
                self.i += 1;
            }
            words = Some(ws);
        }
        self.skip_semis();
        self.expect("do")?;
        let body = self.list(&["done"])?;
        self.expect("done")?;
        Ok(Cmd::For { var, words, body })
    }

    fn simple(&mut self) -> Result<Cmd, String> {
        let mut assigns = Vec::new();
        let mut words = Vec::new();
        let mut redirs = Vec::new();
        loop {
            match self.t.get(self.i) {
                Some(Tok::Word(w)) => {
                    self.i += 1;
                    match assignment(w) {
                        Some(a) if words.is_empty() => assigns.push(a),
                        _ => words.push(w.clone()),
                    }
                }
                Some(Tok::Redir(fd, op)) => {
                    self.i += 1;
                    let Some(Tok::Word(target)) = self.t.get(self.i) else {
                        return Err("syntax error: unexpected newline".into());
                    };
                    self.i += 1;
                    redirs.push(Redir {
                        fd: *fd,
                        op,
                        target: target.clone(),
                    });
                }
                Some(Tok::Paren(_)) => {
                    return Err("syntax error: subshells ( ... ) are not supported".into())
                }
                _ => break,
            }
        }
        if assigns.is_empty() && words.is_empty() && redirs.is_empty() {
            return match self.t.get(self.i) {
                Some(t) => Err(self.unexpected(t)),
                None => Err("syntax error: unexpected end of file".into()),
            };
        }
        Ok(Cmd::Simple {
            assigns,
            words,
            redirs,
        })
    }
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// `NAME=value` as an assignment: the name and the value's parts.
fn assignment(w: &Word) -> Option<(String, Word)> {
    let Some(Part::Lit(first, false)) = w.first() else {
        return None;
    };
    let (name, value) = first.split_once('=')?;
    if !is_name(name) {
        return None;
    }
    let mut parts: Word = Vec::new();
    if !value.is_empty() {
        parts.push(Part::Lit(value.to_string(), false));
    }
    parts.extend(w[1..].iter().cloned());
    Some((name.to_string(), parts))
}

#[cfg(test)]
mod tests {
    use super::super::lex::lex;
    use super::*;

    fn p(s: &str) -> Result<List, String> {
        parse(&lex(s)?)
    }

    #[test]
    fn loops_and_conditionals_nest() {
        let l = p("until nslookup db; do echo waiting; sleep 2; done; if true; then echo a; else echo b; fi").unwrap();
        assert_eq!(l.len(), 2);
        assert!(matches!(l[0].first.cmds[0], Cmd::Loop { until: true, .. }));
        assert!(matches!(l[1].first.cmds[0], Cmd::If { .. }));
    }

    #[test]
    fn syntax_errors_name_the_token() {
        assert_eq!(p("do echo").unwrap_err(), "syntax error: unexpected \"do\"");
        assert_eq!(
            p("while true; do echo").unwrap_err(),
            "syntax error: unexpected end of file (expecting \"done\")"
        );
        assert!(p("sleep 1 &").unwrap_err().contains("background"));
    }

    #[test]
    fn assignments_only_before_the_command_name() {
        let l = p("A=1 env B=2").unwrap();
        let Cmd::Simple { assigns, words, .. } = &l[0].first.cmds[0] else {
            panic!()
        };
        assert_eq!(assigns.len(), 1);
        assert_eq!(words.len(), 2);
    }
}
