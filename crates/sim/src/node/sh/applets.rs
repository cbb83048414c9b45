//! The built-ins and busybox applets a learner meets, with busybox's messages. Programs
//! that need the network or an image's own binaries go to [`Host::program`]; anything
//! else is `sh: NAME: not found` (exit 127), never a silent success.

use super::interp::Shell;
use super::{FsError, Host, RunResult};
use crate::time::{Time, SECOND};

/// How long `sleep infinity` sleeps: ten years of virtual time.
const FOREVER: Time = 10 * 365 * 24 * 3600 * SECOND;

/// The applets and built-ins the shell runs itself (the rest are the image's programs).
pub const APPLETS: &[&str] = &[
    "echo", "printf", "env", "printenv", "cat", "ls", "head", "tail", "grep", "wc", "sleep",
    "date", "hostname", "touch", "mkdir", "true", "false", ":", "seq", "basename", "dirname", "id",
    "whoami", "sh", "ash", "bash", "exit", "export", "unset", "cd", "pwd", "test", "[",
];

fn ok(s: impl Into<String>) -> RunResult {
    RunResult::out(s)
}

fn fail(code: i32, s: impl Into<String>) -> RunResult {
    RunResult::err(code, s)
}

impl Shell {
    /// Runs one command with its expanded fields.
    pub(super) fn dispatch(
        &mut self,
        argv: &[String],
        local: &[(String, String)],
        stdin: &str,
        host: &mut dyn Host,
    ) -> RunResult {
        let name = argv[0].rsplit('/').next().unwrap_or("").to_string();
        let args = &argv[1..];
        if let Some(r) = self.builtin(&name, args, host) {
            return r;
        }
        match name.as_str() {
            "echo" => echo(args),
            "printf" => printf(args),
            "env" | "printenv" => self.env(&name, args, local),
            "cat" => self.cat(args, stdin, host),
            "ls" => self.ls(args, host),
            "head" | "tail" => self.head_tail(&name, args, stdin, host),
            "grep" => self.grep(args, stdin, host),
            "wc" => wc(args, stdin),
            "sleep" => sleep(args),
            "date" => date(args, host.now()),
            "hostname" => ok(format!("{}\n", host.hostname())),
            "touch" => self.touch(args, host),
            "mkdir" => self.mkdir(args, host),
            "true" | ":" => RunResult::default(),
            "false" => fail(1, ""),
            "seq" => seq(args),
            "basename" => ok(format!(
                "{}\n",
                args.first().map_or("", |a| a
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .unwrap_or(""))
            )),
            "dirname" => ok(format!(
                "{}\n",
                args.first()
                    .map_or(".", |a| a.rsplit_once('/').map_or(".", |(d, _)| {
                        if d.is_empty() {
                            "/"
                        } else {
                            d
                        }
                    }))
            )),
            "id" => ok("uid=0(root) gid=0(root) groups=0(root),10(wheel)\n"),
            "whoami" => ok("root\n"),
            "sh" | "ash" | "bash" => self.nested(args, host),
            _ => match host.program(argv, stdin) {
                Some(r) => r,
                None => fail(127, format!("sh: {}: not found\n", argv[0])),
            },
        }
    }

    /// Built-ins that change the shell itself.
    fn builtin(&mut self, name: &str, args: &[String], host: &mut dyn Host) -> Option<RunResult> {
        Some(match name {
            "exit" => {
                // The process's exit status keeps the low 8 bits (`exit 300` is 44).
                let code = args
                    .first()
                    .and_then(|a| a.parse::<u32>().ok())
                    .map_or(self.status, |n| (n & 0xff) as i32);
                self.exit(code);
                RunResult {
                    code,
                    ..RunResult::default()
                }
            }
            "export" | "readonly" | "local" => {
                for a in args {
                    if let Some((k, v)) = a.split_once('=') {
                        self.vars.insert(k.to_string(), v.to_string());
                    }
                }
                RunResult::default()
            }
            "unset" => {
                for a in args {
                    self.vars.remove(a);
                }
                RunResult::default()
            }
            "cd" => {
                let to = self.absolute(args.first().map_or("/root", String::as_str));
                match host.list(&to) {
                    Ok(_) => {
                        self.vars.insert("PWD".into(), to);
                        RunResult::default()
                    }
                    Err(_) => fail(
                        2,
                        format!(
                            "sh: cd: can't cd to {}: No such file or directory\n",
                            args[0]
                        ),
                    ),
                }
            }
            "pwd" => ok(format!("{}\n", self.cwd())),
            "break" | "continue" => {
                self.unwind(name == "break");
                RunResult::default()
            }
            "shift" => {
                if self.args.len() > 1 {
                    self.args.remove(1);
                }
                RunResult::default()
            }
            "test" | "[" => {
                let a: Vec<&str> = args.iter().map(String::as_str).collect();
                let a = if name == "[" {
                    match a.split_last() {
                        Some((&"]", rest)) => rest.to_vec(),
                        _ => return Some(fail(2, "sh: missing ]\n")),
                    }
                } else {
                    a
                };
                let (v, err) = self.test(&a, host);
                RunResult {
                    code: if err { 2 } else { i32::from(!v) },
                    ..RunResult::default()
                }
            }
            "exec" | "command" if !args.is_empty() => {
                return Some(self.dispatch(args, &[], "", host));
            }
            _ => return None,
        })
    }

    fn nested(&mut self, args: &[String], host: &mut dyn Host) -> RunResult {
        match args {
            [flag, script, rest @ ..] if flag == "-c" => {
                let mut argv = vec![rest.first().cloned().unwrap_or_else(|| "sh".into())];
                argv.extend(rest.iter().skip(1).cloned());
                let mut sub = self.child(argv);
                let (stdout, stderr, code, elapsed) = sub.run_to_end(script, host);
                RunResult {
                    stdout,
                    stderr,
                    code,
                    elapsed,
                }
            }
            [] => RunResult::default(),
            [file, ..] => match host.read(&self.absolute(file)) {
                Ok(script) => {
                    let mut sub = self.child(args.to_vec());
                    let (stdout, stderr, code, elapsed) = sub.run_to_end(&script, host);
                    RunResult {
                        stdout,
                        stderr,
                        code,
                        elapsed,
                    }
                }
                Err(_) => fail(
                    2,
                    format!("sh: can't open '{file}': No such file or directory\n"),
                ),
            },
        }
    }

    fn env(&self, name: &str, args: &[String], local: &[(String, String)]) -> RunResult {
        let mut vars = self.vars.clone();
        vars.extend(local.iter().cloned());
        vars.remove("PWD");
        match args.first() {
            Some(k) if name == "printenv" => match vars.get(k) {
                Some(v) => ok(format!("{v}\n")),
                None => fail(1, ""),
            },
            _ => {
                let mut names: Vec<&String> = self
                    .order
                    .iter()
                    .filter(|k| vars.contains_key(*k))
                    .collect();
                let mut rest: Vec<&String> =
                    vars.keys().filter(|k| !self.order.contains(k)).collect();
                rest.sort();
                names.extend(rest);
                ok(names
                    .iter()
                    .map(|k| format!("{k}={}\n", vars[*k]))
                    .collect::<String>())
            }
        }
    }

    fn read_file(&self, path: &str, host: &mut dyn Host) -> Result<String, FsError> {
        host.read(&self.absolute(path))
    }

    fn cat(&self, args: &[String], stdin: &str, host: &mut dyn Host) -> RunResult {
        let files: Vec<&String> = args
            .iter()
            .filter(|a| !a.starts_with('-') || *a == "-")
            .collect();
        if files.is_empty() {
            return ok(stdin);
        }
        let mut r = RunResult::default();
        for f in files {
            match (f.as_str(), self.read_file(f, host)) {
                ("-", _) => r.stdout.push_str(stdin),
                (_, Ok(t)) => r.stdout.push_str(&t),
                (_, Err(FsError::IsDir)) => {
                    r.stderr.push_str(&if self.gnu {
                        format!("cat: {f}: Is a directory\n")
                    } else {
                        "cat: read error: Is a directory\n".to_string()
                    });
                    r.code = 1;
                }
                (_, Err(_)) => {
                    r.stderr.push_str(&if self.gnu {
                        format!("cat: {f}: No such file or directory\n")
                    } else {
                        format!("cat: can't open '{f}': No such file or directory\n")
                    });
                    r.code = 1;
                }
            }
        }
        r
    }

    fn ls(&self, args: &[String], host: &mut dyn Host) -> RunResult {
        let all = args.iter().any(|a| a.starts_with('-') && a.contains('a'));
        let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        let cwd = self.cwd();
        let targets: Vec<&str> = if paths.is_empty() {
            vec![cwd.as_str()]
        } else {
            paths.iter().map(|s| s.as_str()).collect()
        };
        let mut r = RunResult::default();
        for (i, p) in targets.iter().enumerate() {
            let abs = self.absolute(p);
            match host.list(&abs) {
                Ok(mut entries) => {
                    if all {
                        entries.splice(0..0, [".".to_string(), "..".to_string()]);
                    }
                    if targets.len() > 1 {
                        r.stdout
                            .push_str(&format!("{}{p}:\n", if i > 0 { "\n" } else { "" }));
                    }
                    r.stdout.extend(entries.iter().map(|e| format!("{e}\n")));
                }
                Err(FsError::NotDir) => r.stdout.push_str(&format!("{p}\n")),
                Err(_) => {
                    r.stderr.push_str(&if self.gnu {
                        format!("ls: cannot access '{p}': No such file or directory\n")
                    } else {
                        format!("ls: {p}: No such file or directory\n")
                    });
                    r.code = if self.gnu { 2 } else { 1 };
                }
            }
        }
        r
    }

    fn head_tail(
        &self,
        name: &str,
        args: &[String],
        stdin: &str,
        host: &mut dyn Host,
    ) -> RunResult {
        let mut n = 10usize;
        let mut files = Vec::new();
        let mut follow = false;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if a == "-f" || a == "-F" {
                follow = true;
            } else if a == "-n" {
                n = it
                    .next()
                    .and_then(|v| v.trim_start_matches('+').parse().ok())
                    .unwrap_or(10);
            } else if let Some(v) = a
                .strip_prefix("-n")
                .or(a.strip_prefix('-'))
                .filter(|v| v.parse::<usize>().is_ok())
            {
                n = v.parse().unwrap_or(10);
            } else {
                files.push(a);
            }
        }
        let text = match files.first() {
            None => stdin.to_string(),
            Some(f) => match self.read_file(f, host) {
                Ok(t) => t,
                Err(_) => {
                    return fail(
                        1,
                        format!("{name}: can't open '{f}': No such file or directory\n"),
                    )
                }
            },
        };
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let pick = if name == "head" {
            &lines[..n.min(lines.len())]
        } else {
            &lines[lines.len().saturating_sub(n)..]
        };
        let mut r = ok(pick.concat());
        if follow && name == "tail" {
            // `tail -f` waits for more for ever (nothing appends while it waits here).
            r.elapsed = FOREVER;
        }
        r
    }

    fn grep(&self, args: &[String], stdin: &str, host: &mut dyn Host) -> RunResult {
        let flags: String = args
            .iter()
            .filter(|a| a.starts_with('-') && a.len() > 1)
            .map(|a| &a[1..])
            .collect();
        let rest: Vec<&String> = args
            .iter()
            .filter(|a| !a.starts_with('-') || a.len() == 1)
            .collect();
        let Some(pat) = rest.first() else {
            return fail(2, "BusyBox v1.37.0 (2024-09-26 21:31:42 UTC) multi-call binary.\n\nUsage: grep [-HhnlLoqvsrRiwFExz] [-m N] [-A|B|C N] { PATTERN | -e PATTERN... | -f FILE... } [FILE]...\n");
        };
        let ci = flags.contains('i');
        let text = match rest.get(1) {
            None => stdin.to_string(),
            Some(f) => match self.read_file(f, host) {
                Ok(t) => t,
                Err(_) => return fail(2, format!("grep: {f}: No such file or directory\n")),
            },
        };
        let hits: Vec<&str> = text
            .lines()
            .filter(|l| {
                let m = if ci {
                    regex_match(&pat.to_lowercase(), &l.to_lowercase())
                } else {
                    regex_match(pat, l)
                };
                m != flags.contains('v')
            })
            .collect();
        let code = i32::from(hits.is_empty());
        if flags.contains('q') {
            return RunResult {
                code,
                ..RunResult::default()
            };
        }
        let out = if flags.contains('c') {
            format!("{}\n", hits.len())
        } else {
            hits.iter().map(|l| format!("{l}\n")).collect()
        };
        RunResult {
            stdout: out,
            code,
            ..RunResult::default()
        }
    }

    fn touch(&self, args: &[String], host: &mut dyn Host) -> RunResult {
        for f in args.iter().filter(|a| !a.starts_with('-')) {
            let p = self.absolute(f);
            let r = match host.read(&p) {
                Ok(_) => Ok(()),
                Err(_) => host.write(&p, "", true),
            };
            if r.is_err() {
                return fail(1, format!("touch: {f}: No such file or directory\n"));
            }
        }
        RunResult::default()
    }

    fn mkdir(&self, args: &[String], host: &mut dyn Host) -> RunResult {
        let parents = args.iter().any(|a| a == "-p");
        for d in args.iter().filter(|a| !a.starts_with('-')) {
            let p = self.absolute(d);
            if host.list(&p).is_ok() {
                if parents {
                    continue;
                }
                return fail(
                    1,
                    format!("mkdir: can't create directory '{d}': File exists\n"),
                );
            }
            if host.mkdir(&p).is_err() {
                return fail(
                    1,
                    format!("mkdir: can't create directory '{d}': No such file or directory\n"),
                );
            }
        }
        RunResult::default()
    }

    /// `test` / `[`: (result, syntax error).
    fn test(&self, a: &[&str], host: &mut dyn Host) -> (bool, bool) {
        match a {
            [] => (false, false),
            ["!", rest @ ..] => {
                let (v, e) = self.test(rest, host);
                (!v, e)
            }
            [s] => (!s.is_empty(), false),
            ["-z", s] => (s.is_empty(), false),
            ["-n", s] => (!s.is_empty(), false),
            ["-e", p] => (
                host.read(&self.absolute(p)).is_ok() || host.list(&self.absolute(p)).is_ok(),
                false,
            ),
            ["-f", p] => (host.read(&self.absolute(p)).is_ok(), false),
            ["-d", p] => (host.list(&self.absolute(p)).is_ok(), false),
            [x, "=" | "==", y] => (x == y, false),
            [x, "!=", y] => (x != y, false),
            [x, op @ ("-eq" | "-ne" | "-lt" | "-gt" | "-le" | "-ge"), y] => {
                match (x.parse::<i64>(), y.parse::<i64>()) {
                    (Ok(x), Ok(y)) => (
                        match *op {
                            "-eq" => x == y,
                            "-ne" => x != y,
                            "-lt" => x < y,
                            "-gt" => x > y,
                            "-le" => x <= y,
                            _ => x >= y,
                        },
                        false,
                    ),
                    _ => (false, true),
                }
            }
            _ => (false, true),
        }
    }
}

fn echo(args: &[String]) -> RunResult {
    let (mut newline, mut escapes, mut i) = (true, false, 0);
    while let Some(a) = args
        .get(i)
        .filter(|a| matches!(a.as_str(), "-n" | "-e" | "-ne" | "-en"))
    {
        newline &= !a.contains('n');
        escapes |= a.contains('e');
        i += 1;
    }
    let mut s = args[i..].join(" ");
    if escapes {
        s = unescape(&s);
    }
    if newline {
        s.push('\n');
    }
    ok(s)
}

fn unescape(s: &str) -> String {
    s.replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace("\\\\", "\\")
}

fn printf(args: &[String]) -> RunResult {
    let Some(fmt) = args.first() else {
        return fail(1, "printf: usage: printf FORMAT [ARGUMENT...]\n");
    };
    let fmt = unescape(fmt);
    let mut rest = args[1..].iter();
    let mut out = String::new();
    loop {
        let mut used = false;
        let mut chars = fmt.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let mut spec = String::new();
            while let Some(&d) = chars
                .peek()
                .filter(|d| d.is_ascii_digit() || **d == '-' || **d == '.')
            {
                spec.push(d);
                chars.next();
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some(conv @ ('s' | 'd' | 'i' | 'c' | 'x')) => {
                    used = true;
                    let v = rest.next().cloned().unwrap_or_default();
                    let v = match conv {
                        'd' | 'i' => v.parse::<i64>().unwrap_or(0).to_string(),
                        'x' => format!("{:x}", v.parse::<i64>().unwrap_or(0)),
                        'c' => v.chars().next().map(String::from).unwrap_or_default(),
                        _ => v,
                    };
                    out.push_str(&pad(&spec, &v));
                }
                Some(x) => {
                    out.push('%');
                    out.push(x);
                }
                None => out.push('%'),
            }
        }
        if !used || rest.len() == 0 {
            break;
        }
    }
    ok(out)
}

fn pad(spec: &str, v: &str) -> String {
    let left = spec.starts_with('-');
    let width: usize = spec
        .trim_start_matches('-')
        .split('.')
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or(0);
    if left {
        format!("{v:<width$}")
    } else {
        format!("{v:>width$}")
    }
}

fn wc(args: &[String], stdin: &str) -> RunResult {
    let lines = stdin.matches('\n').count();
    let words = stdin.split_whitespace().count();
    let bytes = stdin.len();
    let flags: String = args
        .iter()
        .filter(|a| a.starts_with('-'))
        .map(|a| &a[1..])
        .collect();
    let picked: Vec<usize> = if flags.is_empty() {
        vec![lines, words, bytes]
    } else {
        [('l', lines), ('w', words), ('c', bytes)]
            .iter()
            .filter(|(f, _)| flags.contains(*f))
            .map(|(_, n)| *n)
            .collect()
    };
    if picked.len() == 1 {
        return ok(format!("{}\n", picked[0]));
    }
    ok(format!(
        "{}\n",
        picked
            .iter()
            .map(|n| format!("{n:>7}"))
            .collect::<Vec<_>>()
            .join(" ")
    ))
}

fn sleep(args: &[String]) -> RunResult {
    let mut total: Time = 0;
    for a in args {
        let (num, mult) = match a.chars().last() {
            Some('s') => (&a[..a.len() - 1], 1.0),
            Some('m') => (&a[..a.len() - 1], 60.0),
            Some('h') => (&a[..a.len() - 1], 3600.0),
            Some('d') => (&a[..a.len() - 1], 86400.0),
            _ => (a.as_str(), 1.0),
        };
        match num.parse::<f64>() {
            Ok(f) if f.is_infinite() && f > 0.0 => total = total.saturating_add(FOREVER),
            Ok(f) if f >= 0.0 && f.is_finite() => {
                total = total.saturating_add(((f * mult * SECOND as f64) as Time).min(FOREVER))
            }
            _ => return fail(1, format!("sleep: invalid number '{a}'\n")),
        }
    }
    if args.is_empty() {
        return fail(
            1,
            "BusyBox v1.37.0 (2024-09-26 21:31:42 UTC) multi-call binary.\n\nUsage: sleep [N]...\n",
        );
    }
    RunResult {
        elapsed: total,
        ..RunResult::default()
    }
}

fn date(args: &[String], now: Time) -> RunResult {
    let ms = crate::time::EPOCH_UNIX_MS + now as i64;
    let Ok(ts) = k8s_openapi::jiff::Timestamp::from_millisecond(ms) else {
        return fail(1, "date: invalid date\n");
    };
    let fmt = args
        .iter()
        .find_map(|a| a.strip_prefix('+'))
        .unwrap_or("%a %b %e %H:%M:%S UTC %Y");
    let fmt = fmt.replace("%Z", "UTC");
    ok(format!("{}\n", ts.strftime(&fmt)))
}

fn seq(args: &[String]) -> RunResult {
    let n: Vec<i64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let (first, step, last) = match n.as_slice() {
        [l] => (1, 1, *l),
        [f, l] => (*f, 1, *l),
        [f, s, l] => (*f, *s, *l),
        _ => return fail(1, "seq: missing operand\n"),
    };
    if step == 0 {
        return fail(1, "seq: invalid increment 0\n");
    }
    let mut out = String::new();
    let mut v = first;
    while (step > 0 && v <= last) || (step < 0 && v >= last) {
        out.push_str(&format!("{v}\n"));
        v += step;
        if out.len() > super::OUTPUT_CAP {
            break;
        }
    }
    ok(out)
}

/// A basic regular expression subset: `^`, `$`, `.`, `*` and literals.
pub(super) fn regex_match(re: &str, text: &str) -> bool {
    let re: Vec<char> = re.chars().collect();
    let t: Vec<char> = text.chars().collect();
    if re.first() == Some(&'^') {
        return match_here(&re[1..], &t);
    }
    (0..=t.len()).any(|i| match_here(&re, &t[i..]))
}

fn match_here(re: &[char], t: &[char]) -> bool {
    match re {
        [] => true,
        [c, '*', rest @ ..] => {
            let mut i = 0;
            loop {
                if match_here(rest, &t[i..]) {
                    return true;
                }
                if i < t.len() && (*c == '.' || t[i] == *c) {
                    i += 1;
                } else {
                    return false;
                }
            }
        }
        ['$'] => t.is_empty(),
        [c, rest @ ..] => !t.is_empty() && (*c == '.' || *c == t[0]) && match_here(rest, &t[1..]),
    }
}
