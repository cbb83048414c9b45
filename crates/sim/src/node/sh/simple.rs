//! One simple command: expansion, assignments, redirections, then the built-in,
//! applet or image program it names.

use super::interp::Shell;
use super::lex::Word;
use super::parse::Redir;
use super::{FsError, Host, RunResult};

/// Where a redirection sends a stream.
#[derive(Default)]
struct Routes {
    stdin: Option<String>,
    stdout: Option<(String, bool)>,
    stderr: Option<(String, bool)>,
    err_to_out: bool,
    out_to_err: bool,
}

impl Shell {
    /// Runs a simple command; with `capture`, returns its stdout instead of printing it.
    pub(super) fn simple(
        &mut self,
        assigns: &[(String, Word)],
        words: &[Word],
        redirs: &[Redir],
        host: &mut dyn Host,
        stdin: Option<&str>,
        capture: bool,
    ) -> String {
        let fields: Vec<String> = words.iter().flat_map(|w| self.expand(w, host)).collect();
        let values: Vec<(String, String)> = assigns
            .iter()
            .map(|(k, w)| (k.clone(), self.expand_one(w, host)))
            .collect();
        if fields.is_empty() {
            let sub_status = self.status;
            for (k, v) in values {
                self.vars.insert(k, v);
            }
            self.status = if assigns.is_empty() { 0 } else { sub_status };
            return String::new();
        }
        let routes = match self.routes(redirs, host) {
            Ok(r) => r,
            Err(msg) => {
                self.emit_err(&msg);
                self.status = 1;
                return String::new();
            }
        };
        let input = routes
            .stdin
            .clone()
            .or(stdin.map(String::from))
            .unwrap_or_default();
        let r = self.dispatch(&fields, &values, &input, host);
        self.pending_sleep += r.elapsed;
        self.status = r.code;
        self.route(r, &routes, host, capture)
    }

    fn routes(&mut self, redirs: &[Redir], host: &mut dyn Host) -> Result<Routes, String> {
        let mut r = Routes::default();
        for d in redirs {
            let target = self.expand_one(&d.target, host);
            let path = self.absolute(&target);
            match (d.fd, d.op) {
                (_, "<") => match host.read(&path) {
                    Ok(t) => r.stdin = Some(t),
                    Err(_) => {
                        return Err(format!(
                            "sh: can't open '{target}': No such file or directory\n"
                        ))
                    }
                },
                (2, ">&") if target == "1" => r.err_to_out = true,
                (1, ">&") if target == "2" => r.out_to_err = true,
                (fd, op @ (">" | ">>")) => {
                    if op == ">" {
                        if let Err(e) = host.write(&path, "", false) {
                            return Err(create_error(&target, e));
                        }
                    }
                    let slot = (path, true);
                    if fd == 2 {
                        r.stderr = Some(slot);
                    } else {
                        r.stdout = Some(slot);
                    }
                }
                (_, op) => return Err(format!("sh: syntax error: bad redirection {op}{target}\n")),
            }
        }
        Ok(r)
    }

    fn route(
        &mut self,
        r: RunResult,
        routes: &Routes,
        host: &mut dyn Host,
        capture: bool,
    ) -> String {
        let (mut out, mut err) = (r.stdout, r.stderr);
        if routes.err_to_out {
            out.push_str(&std::mem::take(&mut err));
        }
        if routes.out_to_err {
            err.push_str(&std::mem::take(&mut out));
        }
        if let Some((path, append)) = &routes.stdout {
            let _ = host.write(path, &std::mem::take(&mut out), *append);
        }
        if let Some((path, append)) = &routes.stderr {
            let _ = host.write(path, &std::mem::take(&mut err), *append);
        }
        self.emit_err(&err);
        if capture {
            return out;
        }
        self.emit_out(&out);
        String::new()
    }

    /// A path made absolute against `$PWD`.
    pub(super) fn absolute(&self, p: &str) -> String {
        if p.starts_with('/') {
            return p.to_string();
        }
        let cwd = self.cwd();
        format!("{}/{p}", cwd.trim_end_matches('/'))
    }
}

fn create_error(target: &str, e: FsError) -> String {
    let why = match e {
        FsError::ReadOnly => "Read-only file system",
        FsError::IsDir => "Is a directory",
        _ => "nonexistent directory",
    };
    format!("sh: can't create {target}: {why}\n")
}
