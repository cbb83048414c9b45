//! `kubeloop export` and `kubeloop import`: a scenario to a kind directory, a real
//! cluster's objects to a scenario (design §6.21).

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use kubeloop_sim::scenario::{parse_scenario, Scenario};
use kubeloop_sim::{envelope, export, import};

fn usage_error(e: &str) -> ExitCode {
    eprint!("kubeloop: {e}\n{}", crate::USAGE);
    ExitCode::from(2)
}

/// Reads `path` (`-` is standard input), at most `max` bytes, as UTF-8.
pub fn read_input(path: &str, max: usize) -> Result<String, String> {
    let limit = max as u64 + 1;
    let read = |r: &mut dyn Read| -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        r.take(limit).read_to_end(&mut bytes)?;
        Ok(bytes)
    };
    let bytes = if path == "-" {
        read(&mut std::io::stdin()).map_err(|e| format!("reading standard input: {e}"))?
    } else {
        std::fs::File::open(path)
            .and_then(|mut f| read(&mut f))
            .map_err(|e| format!("{path}: {e}"))?
    };
    if bytes.len() > max {
        return Err(format!(
            "{path}: more than {max} bytes (kubeloop's envelope)"
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{path}: stream did not contain valid UTF-8"))
}

/// Reads and parses a scenario, printing its located errors (`FILE:LINE:COL: message`).
fn load_scenario(path: &str) -> Result<Scenario, ExitCode> {
    let text = read_input(path, envelope::MAX_SCENARIO_BYTES).map_err(|e| {
        eprintln!("kubeloop: {e}");
        ExitCode::from(2)
    })?;
    parse_scenario(&text).map_err(|errors| {
        let name = if path == "-" { "<stdin>" } else { path };
        for e in errors {
            eprintln!("{name}:{e}");
        }
        ExitCode::from(2)
    })
}

struct ExportArgs {
    scenario: String,
    dir: String,
    force: bool,
}

fn parse_export(args: &[String]) -> Result<ExportArgs, String> {
    let (mut scenario, mut to, mut dir, mut force) = (None, None, None, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.split_once('=') {
            Some(("--to", v)) => to = Some(v.to_string()),
            _ if a == "--to" => to = Some(it.next().cloned().ok_or("--to needs a target: kind")?),
            _ if a == "--force" || a == "-f" => force = true,
            _ if a.starts_with('-') && a != "-" => return Err(format!("unknown flag {a}")),
            _ if scenario.is_none() => scenario = Some(a.clone()),
            _ if dir.is_none() => dir = Some(a.clone()),
            _ => return Err(format!("unexpected argument \"{a}\"")),
        }
    }
    match to.as_deref() {
        Some("kind") => {}
        Some(other) => {
            return Err(format!(
                "--to: unsupported target \"{other}\": supported targets: \"kind\""
            ))
        }
        None => return Err("--to kind is required".into()),
    }
    Ok(ExportArgs {
        scenario: scenario.ok_or("a SCENARIO is required")?,
        dir: dir.ok_or("a DIR to write the kind directory to is required")?,
        force,
    })
}

/// `kubeloop export SCENARIO --to kind DIR [--force]`.
pub fn export_main(args: &[String]) -> ExitCode {
    let a = match parse_export(args) {
        Ok(a) => a,
        Err(e) => return usage_error(&format!("export: {e}")),
    };
    let sc = match load_scenario(&a.scenario) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let dir = Path::new(&a.dir);
    if let Err(e) = check_dir(dir, a.force) {
        eprintln!("kubeloop: export: {e}");
        return ExitCode::from(2);
    }
    for (path, contents) in export::to_kind(&sc) {
        let target = dir.join(&path);
        if let Err(e) = write_file(&target, &contents, path == export::RUN_SH) {
            eprintln!("kubeloop: export: {}: {e}", target.display());
            return ExitCode::from(1);
        }
        println!("{}", target.display());
    }
    let shown = dir.display();
    eprintln!(
        "kubeloop: next: kind create cluster --config {shown}/kind-config.yaml && {shown}/run.sh"
    );
    ExitCode::SUCCESS
}

/// DIR must be absent, an empty directory, or (with --force) any directory.
fn check_dir(dir: &Path, force: bool) -> Result<(), String> {
    let shown = dir.display();
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() && !force {
                return Err(format!(
                    "{shown} is not empty (use --force to write into it; files kubeloop writes are replaced)"
                ));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) if dir.exists() => Err(format!("{shown} exists and is not a directory")),
        Err(e) => Err(format!("{shown}: {e}")),
    }
}

fn write_file(path: &Path, contents: &str, executable: bool) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, contents)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// `kubeloop import FILE [-o OUT]`: the scenario on stdout (or OUT); skipped objects,
/// notices and refused objects on stderr. Exit 0, or 1 when some objects were refused
/// (the scenario is still written), or 2 when FILE is not a list of objects.
pub fn import_main(args: &[String]) -> ExitCode {
    let (mut file, mut out) = (None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" | "--output" => match it.next() {
                Some(o) => out = Some(o.clone()),
                None => return usage_error("import: -o needs a file name"),
            },
            s if s.starts_with("--output=") => out = Some(s["--output=".len()..].to_string()),
            s if s.starts_with('-') && s != "-" => {
                return usage_error(&format!("import: unknown flag {s}"))
            }
            _ if file.is_none() => file = Some(a.clone()),
            _ => return usage_error(&format!("import: unexpected argument \"{a}\"")),
        }
    }
    let Some(file) = file else {
        return usage_error("import: a FILE (kubectl get … -A -o yaml) is required");
    };
    let text = match read_input(&file, import::MAX_INPUT_BYTES) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("kubeloop: import: {e}");
            return ExitCode::from(2);
        }
    };
    let r = match import::from_cluster(&text) {
        Ok(r) => r,
        Err(e) => {
            let name = if file == "-" { "<stdin>" } else { &file };
            eprintln!("{name}:{e}");
            return ExitCode::from(2);
        }
    };
    for s in &r.skipped {
        eprintln!("kubeloop: import: skipped (kind not imported): {s}");
    }
    for n in &r.notices {
        eprintln!("kubeloop: import: notice: {n}");
    }
    for e in &r.errors {
        eprintln!("kubeloop: import: error: {e}");
    }
    let yaml = r.scenario.to_yaml();
    match out {
        Some(path) => {
            if let Err(e) = std::fs::write(&path, &yaml) {
                eprintln!("kubeloop: import: {path}: {e}");
                return ExitCode::from(1);
            }
            eprintln!(
                "kubeloop: import: wrote {path} ({} nodes, {} files); run it with: kubeloop run {path}",
                r.scenario.nodes().len(),
                r.scenario.spec.files.len()
            );
        }
        None => print!("{yaml}"),
    }
    if r.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
