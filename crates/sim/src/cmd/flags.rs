//! A small pflag-style parser: long and short flags, `--flag=value`, `-o wide`, `-owide`,
//! booleans, and kubectl's error messages for unknown flags.

use std::collections::BTreeMap;

/// A flag a command accepts.
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    /// Long name without dashes.
    pub long: &'static str,
    /// Shorthand.
    pub short: Option<char>,
    /// Whether it takes a value.
    pub value: bool,
}

/// Declares a flag.
pub const fn flag(long: &'static str, short: Option<char>, value: bool) -> Flag {
    Flag { long, short, value }
}

/// Parsed arguments.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    /// Positional arguments.
    pub args: Vec<String>,
    /// Flag values (booleans hold "true"/"false"), repeated flags keep every value.
    pub flags: BTreeMap<String, Vec<String>>,
    /// How many positional arguments came before `--` (cobra's `ArgsLenAtDash`), if
    /// there was one.
    pub dash: Option<usize>,
}

impl Parsed {
    /// The last value of a flag.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.flags
            .get(name)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// Every value of a flag.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.flags.get(name).cloned().unwrap_or_default()
    }

    /// Whether a boolean flag is set.
    pub fn bool(&self, name: &str) -> bool {
        matches!(self.get(name), Some("true") | Some(""))
    }

    /// The positional arguments before `--` and those after it.
    pub fn split_at_dash(&self) -> (&[String], &[String]) {
        let at = self.dash.unwrap_or(self.args.len()).min(self.args.len());
        self.args.split_at(at)
    }

    /// Whether the flag was given at all.
    pub fn has(&self, name: &str) -> bool {
        self.flags.contains_key(name)
    }
}

/// Parses `args` against `spec`; `cmd` names the command for the error hint.
pub fn parse(args: &[String], spec: &[Flag], cmd: &str) -> Result<Parsed, String> {
    let mut p = Parsed::default();
    let mut i = 0;
    let hint = format!("See '{cmd} --help' for usage.");
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            p.dash = Some(p.args.len());
            p.args.extend(args[i + 1..].iter().cloned());
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let Some(f) = spec.iter().find(|f| f.long == name) else {
                return Err(format!("error: unknown flag: --{name}\n{hint}\n"));
            };
            let v = if f.value {
                match inline {
                    Some(v) => v,
                    None => {
                        i += 1;
                        args.get(i).cloned().ok_or_else(|| {
                            format!("error: flag needs an argument: --{name}\n{hint}\n")
                        })?
                    }
                }
            } else {
                inline.unwrap_or_else(|| "true".into())
            };
            p.flags.entry(f.long.to_string()).or_default().push(v);
        } else if a.len() > 1
            && a.starts_with('-')
            && !a[1..].starts_with(|c: char| c.is_ascii_digit())
        {
            let body: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < body.len() {
                let c = body[j];
                let Some(f) = spec.iter().find(|f| f.short == Some(c)) else {
                    return Err(format!(
                        "error: unknown shorthand flag: '{c}' in {a}\n{hint}\n"
                    ));
                };
                if f.value {
                    let rest: String = body[j + 1..].iter().collect();
                    let v = if let Some(r) = rest.strip_prefix('=') {
                        r.to_string()
                    } else if !rest.is_empty() {
                        rest
                    } else {
                        i += 1;
                        args.get(i).cloned().ok_or_else(|| {
                            format!("error: flag needs an argument: '{c}' in -{c}\n{hint}\n")
                        })?
                    };
                    p.flags.entry(f.long.to_string()).or_default().push(v);
                    break;
                }
                p.flags
                    .entry(f.long.to_string())
                    .or_default()
                    .push("true".into());
                j += 1;
            }
        } else {
            p.args.push(a.clone());
        }
        i += 1;
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &[Flag] = &[
        flag("output", Some('o'), true),
        flag("all-namespaces", Some('A'), false),
        flag("namespace", Some('n'), true),
    ];

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_pflag_forms() {
        let p = parse(
            &s(&["pods", "-owide", "-A", "--namespace=x"]),
            SPEC,
            "kubectl get",
        )
        .unwrap();
        assert_eq!(p.args, ["pods"]);
        assert_eq!(p.get("output"), Some("wide"));
        assert!(p.bool("all-namespaces"));
        assert_eq!(p.get("namespace"), Some("x"));
        let e = parse(&s(&["--bogus"]), SPEC, "kubectl get").unwrap_err();
        assert_eq!(
            e,
            "error: unknown flag: --bogus\nSee 'kubectl get --help' for usage.\n"
        );
        let e = parse(&s(&["-x"]), SPEC, "kubectl get").unwrap_err();
        assert!(e.starts_with("error: unknown shorthand flag: 'x' in -x"));
    }
}
