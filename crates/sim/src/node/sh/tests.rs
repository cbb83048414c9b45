//! The shell against an in-memory container: what a learner's scripts print.

use std::collections::BTreeMap;

use super::{FsError, Host, Poll, RunResult, Shell};
use crate::time::{Time, SECOND};

#[derive(Default)]
struct Fake {
    now: Time,
    files: BTreeMap<String, String>,
    dirs: Vec<String>,
    resolvable: Vec<String>,
}

impl Host for Fake {
    fn now(&self) -> Time {
        self.now
    }
    fn hostname(&self) -> String {
        "web-0".into()
    }
    fn read(&self, path: &str) -> Result<String, FsError> {
        if self.dirs.iter().any(|d| d == path) {
            return Err(FsError::IsDir);
        }
        self.files.get(path).cloned().ok_or(FsError::NotFound)
    }
    fn list(&self, path: &str) -> Result<Vec<String>, FsError> {
        if self.files.contains_key(path) {
            return Err(FsError::NotDir);
        }
        if path != "/" && !self.dirs.iter().any(|d| d == path) {
            return Err(FsError::NotFound);
        }
        let prefix = format!("{}/", path.trim_end_matches('/'));
        let mut v: Vec<String> = self
            .files
            .keys()
            .chain(self.dirs.iter())
            .filter_map(|p| p.strip_prefix(&prefix))
            .filter_map(|r| r.split('/').next().map(String::from))
            .filter(|r| !r.is_empty())
            .collect();
        v.sort();
        v.dedup();
        Ok(v)
    }
    fn write(&mut self, path: &str, text: &str, append: bool) -> Result<(), FsError> {
        let dir = path
            .rsplit_once('/')
            .map_or("/", |(d, _)| if d.is_empty() { "/" } else { d });
        if dir != "/" && !self.dirs.iter().any(|d| d == dir) {
            return Err(FsError::NotFound);
        }
        let f = self.files.entry(path.to_string()).or_default();
        if !append {
            f.clear();
        }
        f.push_str(text);
        Ok(())
    }
    fn mkdir(&mut self, path: &str) -> Result<(), FsError> {
        self.dirs.push(path.to_string());
        Ok(())
    }
    fn program(&mut self, argv: &[String], _stdin: &str) -> Option<RunResult> {
        match argv[0].as_str() {
            "nslookup" if self.resolvable.contains(&argv[1]) => Some(RunResult::out(format!(
                "Name:\t{}\nAddress: 10.96.0.20\n",
                argv[1]
            ))),
            "nslookup" => Some(RunResult {
                stdout: format!("** server can't find {}: NXDOMAIN\n", argv[1]),
                code: 1,
                ..RunResult::default()
            }),
            _ => None,
        }
    }
}

fn sh(script: &str) -> (String, String, i32, Time) {
    let mut host = Fake {
        dirs: vec!["/tmp".into(), "/etc".into()],
        ..Fake::default()
    };
    let vars = [
        ("HOME".to_string(), "/root".to_string()),
        ("GREETING".into(), "hello".into()),
    ];
    Shell::new(vars.into_iter().collect(), vec!["sh".into()]).run_to_end(script, &mut host)
}

#[test]
fn variables_substitution_and_control_flow() {
    let (out, _, code, _) = sh("X=$(echo world); echo \"$GREETING $X\"; for i in 1 2 3; do echo n$i; done; if [ \"$X\" = world ]; then echo yes; else echo no; fi");
    assert_eq!(out, "hello world\nn1\nn2\nn3\nyes\n");
    assert_eq!(code, 0);
}

#[test]
fn and_or_pipes_and_exit_codes() {
    let (out, _, code, _) = sh("false || echo rescued; true && echo chained; printf 'a\\nb\\nc\\n' | grep -v b | wc -l; exit 3");
    assert_eq!(out, "rescued\nchained\n2\n");
    assert_eq!(code, 3);
}

#[test]
fn an_exit_status_keeps_its_low_eight_bits() {
    assert_eq!(sh("exit 300").2, 44);
    assert_eq!(sh("exit 256").2, 0);
    assert_eq!(sh("exit 255").2, 255);
}

#[test]
fn redirections_write_files_that_cat_reads_back() {
    let (out, err, code, _) = sh("echo one > /tmp/f; echo two >> /tmp/f; cat /tmp/f; cat /nope 2>&1; echo x > /missing/dir/f");
    assert_eq!(
        out,
        "one\ntwo\ncat: can't open '/nope': No such file or directory\n"
    );
    assert_eq!(
        err,
        "sh: can't create /missing/dir/f: nonexistent directory\n"
    );
    assert_eq!(code, 1);
}

#[test]
fn unknown_commands_and_syntax_errors_fail_as_sh_does() {
    let (_, err, code, _) = sh("frobnicate --now");
    assert_eq!((err.as_str(), code), ("sh: frobnicate: not found\n", 127));
    let (_, err, code, _) = sh("if true; then echo");
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "sh: syntax error: unexpected end of file (expecting \"fi\")\n"
    );
}

#[test]
fn sleep_stops_the_run_and_says_for_how_long() {
    let mut host = Fake::default();
    let mut s = Shell::new(BTreeMap::new(), vec!["sh".into()]);
    s.load("echo start; sleep 2; echo end");
    assert_eq!(s.run(&mut host), Poll::Sleep(2 * SECOND));
    assert_eq!(s.take_stdout(), "start\n");
    host.now += 2 * SECOND;
    assert_eq!(s.run(&mut host), Poll::Exited(0));
    assert_eq!(s.take_stdout(), "end\n");
}

#[test]
fn an_init_container_loop_waits_until_the_service_resolves() {
    let mut host = Fake::default();
    let mut s = Shell::new(BTreeMap::new(), vec!["sh".into()]);
    s.load("until nslookup myservice; do echo waiting for myservice; sleep 2; done");
    for _ in 0..3 {
        assert_eq!(s.run(&mut host), Poll::Sleep(2 * SECOND));
    }
    assert_eq!(
        s.take_stdout().matches("waiting for myservice\n").count(),
        3
    );
    host.resolvable.push("myservice".into());
    assert_eq!(s.run(&mut host), Poll::Exited(0));
}

#[test]
fn a_loop_without_sleep_yields_instead_of_freezing() {
    let mut host = Fake::default();
    let mut s = Shell::new(BTreeMap::new(), vec!["sh".into()]);
    s.load("while true; do :; done");
    assert_eq!(s.run(&mut host), Poll::Busy);
    assert_eq!(s.run(&mut host), Poll::Busy);
}

#[test]
fn break_continue_and_test_operators() {
    let (out, _, _, _) = sh("for i in 1 2 3 4 5; do if [ $i -eq 2 ]; then continue; fi; if [ $i -gt 3 ]; then break; fi; echo $i; done");
    assert_eq!(out, "1\n3\n");
}

#[test]
fn date_follows_the_virtual_clock() {
    let (out, _, _, elapsed) = sh("date +%Y-%m-%dT%H:%M:%S; sleep 61; date +%s");
    assert_eq!(out.lines().next(), Some("2026-01-01T00:00:00"));
    assert_eq!(elapsed, 61 * SECOND);
}

#[test]
fn any_script_ends_in_a_status_never_a_panic() {
    // Random scripts built from the shell's own tokens and some noise: each parses or is
    // refused with a syntax error, and each run stops (ends, sleeps or yields).
    const PIECES: &[&str] = &[
        "echo",
        " ",
        "a",
        "$X",
        "${Y:-d}",
        "$(",
        ")",
        "`",
        "'",
        "\"",
        ";",
        "&&",
        "||",
        "|",
        ">",
        ">>",
        "<",
        "2>&1",
        "if",
        "then",
        "else",
        "fi",
        "while",
        "until",
        "do",
        "done",
        "for",
        "in",
        "break",
        "continue",
        "exit",
        "sleep 1",
        "cat /tmp/x",
        "ls",
        "[",
        "]",
        "-eq",
        "=",
        "\n",
        "(",
        "&",
        "#",
        "\\",
        "*",
        "X=1",
        "test",
        "grep",
        "wc -l",
        "true",
        "false",
        "printf %s",
        "seq 3",
        "head -n 1",
        "}",
        "{",
    ];
    let mut rng = crate::rng::Rng::new(7);
    for _ in 0..3000 {
        let n = 1 + (rng.next_u64() % 14) as usize;
        let script: String = (0..n)
            .map(|_| PIECES[(rng.next_u64() % PIECES.len() as u64) as usize])
            .collect();
        let mut host = Fake {
            dirs: vec!["/tmp".into()],
            ..Fake::default()
        };
        let mut s = Shell::new(BTreeMap::new(), vec!["sh".into()]);
        s.load(&script);
        for _ in 0..5 {
            match s.run(&mut host) {
                Poll::Exited(_) => break,
                Poll::Sleep(d) => host.now += d,
                Poll::Busy => {}
            }
        }
    }
}
