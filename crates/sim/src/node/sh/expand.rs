//! Word expansion: variables, `$?`, command substitution, field splitting of unquoted
//! expansions, and `*` globbing against the container's files.

use super::interp::Shell;
use super::lex::{Part, Word};
use super::Host;

impl Shell {
    /// The value of `$name`.
    pub(super) fn var(&self, name: &str) -> String {
        match name {
            "?" => self.status.to_string(),
            "#" => self.args.len().saturating_sub(1).to_string(),
            "$" => "1".into(),
            "@" | "*" => self.args.get(1..).unwrap_or(&[]).join(" "),
            n if n.chars().all(|c| c.is_ascii_digit()) => n
                .parse::<usize>()
                .ok()
                .and_then(|i| self.args.get(i).cloned())
                .unwrap_or_default(),
            n => self.expand_default(n),
        }
    }

    /// `${X:-default}`, `${X-default}`, `${#X}`, `${X}`.
    fn expand_default(&self, n: &str) -> String {
        if let Some(v) = n.strip_prefix('#') {
            return self
                .vars
                .get(v)
                .map_or(0, |s| s.chars().count())
                .to_string();
        }
        if let Some((v, d)) = n.split_once(":-") {
            return self
                .vars
                .get(v)
                .filter(|s| !s.is_empty())
                .cloned()
                .unwrap_or(d.to_string());
        }
        if let Some((v, d)) = n.split_once('-') {
            return self.vars.get(v).cloned().unwrap_or(d.to_string());
        }
        self.vars.get(n).cloned().unwrap_or_default()
    }

    /// Expands a word into fields.
    pub(super) fn expand(&mut self, w: &Word, host: &mut dyn Host) -> Vec<String> {
        let mut fields: Vec<String> = Vec::new();
        let mut cur = String::new();
        let mut have = false;
        let mut glob = false;
        for part in w {
            let (text, quoted) = match part {
                Part::Lit(s, q) => {
                    glob |= !q && s.contains('*');
                    cur.push_str(s);
                    have = true;
                    continue;
                }
                Part::Var(n, q) => (self.var(n), *q),
                Part::Sub(s, q) => (self.substitute(s, host), *q),
            };
            if quoted {
                cur.push_str(&text);
                have = true;
                continue;
            }
            let mut pieces = text.split([' ', '\t', '\n']).peekable();
            let starts_blank = text.starts_with([' ', '\t', '\n']);
            if starts_blank && have {
                fields.push(std::mem::take(&mut cur));
                have = false;
            }
            while let Some(p) = pieces.next() {
                if !p.is_empty() {
                    cur.push_str(p);
                    have = true;
                }
                if pieces.peek().is_some() && have {
                    fields.push(std::mem::take(&mut cur));
                    have = false;
                }
            }
        }
        if have {
            fields.push(cur);
        }
        if glob {
            fields = fields
                .into_iter()
                .flat_map(|f| self.glob(&f, host))
                .collect();
        }
        fields
    }

    /// A word expanded into one string (assignments, redirection targets).
    pub(super) fn expand_one(&mut self, w: &Word, host: &mut dyn Host) -> String {
        let mut s = String::new();
        for part in w {
            match part {
                Part::Lit(t, _) => s.push_str(t),
                Part::Var(n, _) => s.push_str(&self.var(n)),
                Part::Sub(t, _) => s.push_str(&self.substitute(t, host)),
            }
        }
        s
    }

    /// `$(script)`: runs it to the end and takes its output, trailing newlines removed.
    fn substitute(&mut self, script: &str, host: &mut dyn Host) -> String {
        let mut sub = self.child(self.args.clone());
        let (out, err, code, elapsed) = sub.run_to_end(script, host);
        self.pending_sleep += elapsed;
        self.emit_err(&err);
        self.status = code;
        out.trim_end_matches('\n').to_string()
    }

    /// `dir/*.txt` against the files: the matches sorted, or the pattern itself.
    fn glob(&self, pat: &str, host: &mut dyn Host) -> Vec<String> {
        let (dir, name) = match pat.rsplit_once('/') {
            Some((d, n)) => (d.to_string(), n),
            None => (self.cwd(), pat),
        };
        let Ok(entries) = host.list(if dir.is_empty() { "/" } else { &dir }) else {
            return vec![pat.to_string()];
        };
        let prefix = if pat.contains('/') {
            format!("{dir}/")
        } else {
            String::new()
        };
        let hits: Vec<String> = entries
            .into_iter()
            .filter(|e| wildcard(name, e))
            .map(|e| format!("{prefix}{e}"))
            .collect();
        if hits.is_empty() {
            vec![pat.to_string()]
        } else {
            hits
        }
    }
}

/// Whether `s` matches a pattern with `*` and `?`.
pub(super) fn wildcard(p: &str, s: &str) -> bool {
    let (p, s): (Vec<char>, Vec<char>) = (p.chars().collect(), s.chars().collect());
    let mut dp = vec![vec![false; s.len() + 1]; p.len() + 1];
    dp[0][0] = true;
    for i in 1..=p.len() {
        dp[i][0] = dp[i - 1][0] && p[i - 1] == '*';
        for j in 1..=s.len() {
            dp[i][j] = match p[i - 1] {
                '*' => dp[i - 1][j] || dp[i][j - 1],
                '?' => dp[i - 1][j - 1],
                c => dp[i - 1][j - 1] && c == s[j - 1],
            };
        }
    }
    dp[p.len()][s.len()]
}
