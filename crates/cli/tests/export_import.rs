//! `kubeloop export` and `kubeloop import` as a user runs them: files written, messages
//! and exit codes (design §6.21).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kubeloop(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubeloop"))
        .args(args)
        .output()
        .expect("kubeloop runs")
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

/// A fresh, absent directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kubeloop-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn export_writes_the_kind_directory() {
    let dir = scratch("export");
    let d = dir.to_str().unwrap();
    let o = kubeloop(&[
        "export",
        &repo("public/scenarios/nginx-basic.yaml"),
        "--to",
        "kind",
        d,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let listed: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(
        listed,
        [
            "README.md",
            "kind-config.yaml",
            "manifests/nginx-deploy.yaml",
            "run.sh"
        ]
        .map(|p| format!("{d}/{p}"))
    );
    let run = std::fs::read_to_string(dir.join("run.sh")).unwrap();
    assert!(run.contains("step 0 kubectl apply -f nginx-deploy.yaml\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        let mode = std::fs::metadata(dir.join("kind-config.yaml"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
    }
    assert!(stderr(&o).contains(&format!(
        "kind create cluster --config {d}/kind-config.yaml"
    )));

    // A second export into the same directory is refused unless forced.
    let again = kubeloop(&[
        "export",
        &repo("public/scenarios/nginx-basic.yaml"),
        "--to=kind",
        d,
    ]);
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(
        stderr(&again),
        format!("kubeloop: export: {d} is not empty (use --force to write into it; files kubeloop writes are replaced)\n")
    );
    std::fs::write(dir.join("run.sh"), "stale").unwrap();
    let forced = kubeloop(&[
        "export",
        &repo("public/scenarios/nginx-basic.yaml"),
        "--to",
        "kind",
        d,
        "--force",
    ]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_eq!(std::fs::read_to_string(dir.join("run.sh")).unwrap(), run);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn export_errors_are_located_and_change_nothing() {
    let dir = scratch("export-bad");
    let d = dir.to_str().unwrap();
    let bad = dir.with_extension("yaml");
    std::fs::write(
        &bad,
        "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nspec:\n  seed: many\n",
    )
    .unwrap();
    let o = kubeloop(&["export", bad.to_str().unwrap(), "--to", "kind", d]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("{}:4:9: spec.seed", bad.display())),
        "{err}"
    );
    assert!(!dir.exists(), "nothing written for an invalid scenario");
    let _ = std::fs::remove_file(&bad);

    let o = kubeloop(&[
        "export",
        &repo("public/scenarios/nginx-basic.yaml"),
        "--to",
        "minikube",
        d,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with(
        "kubeloop: export: --to: unsupported target \"minikube\": supported targets: \"kind\"\n"
    ));
    let o = kubeloop(&["export", &repo("public/scenarios/nginx-basic.yaml"), d]);
    assert!(stderr(&o).starts_with("kubeloop: export: --to kind is required\n"));
    let o = kubeloop(&["export", "/nonexistent/scenario.yaml", "--to", "kind", d]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("kubeloop: /nonexistent/scenario.yaml: No such file"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.exists());
}

#[test]
fn import_writes_a_scenario_that_runs() {
    let out = scratch("import").with_extension("yaml");
    let o = kubeloop(&[
        "import",
        &repo("crates/sim/src/import/testdata/cluster-list.yaml"),
        "-o",
        out.to_str().unwrap(),
    ]);
    // One object of the list is invalid: reported, the rest imported, exit 1.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(
        "kubeloop: import: skipped (kind not imported): Widget default/w-1 (example.com/v1)\n"
    ));
    assert!(err.contains("kubeloop: import: notice: Secret default/db-credentials: data dropped"));
    assert!(err.contains("kubeloop: import: error: Deployment default/broken: The Deployment \"broken\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0\n"));
    assert!(o.stdout.is_empty(), "the scenario went to the file");
    let run = kubeloop(&["run", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    let text = String::from_utf8_lossy(&run.stdout);
    let bare = text
        .lines()
        .find(|l| l.contains(" db-debug "))
        .expect("db-debug listed");
    assert!(
        bare.contains(" Running ") && bare.contains(" kind-worker2 "),
        "{bare}"
    );
    let _ = std::fs::remove_file(&out);
}

#[test]
fn import_prints_the_scenario_and_refuses_what_is_not_a_list() {
    let o = kubeloop(&[
        "import",
        &repo("crates/sim/src/import/testdata/cluster-list.yaml"),
    ]);
    let yaml = String::from_utf8_lossy(&o.stdout);
    assert!(
        yaml.starts_with("apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\n"),
        "{yaml}"
    );
    let bad = scratch("import-bad").with_extension("yaml");
    std::fs::write(&bad, "kind: List\nitems: [\n").unwrap();
    let o = kubeloop(&["import", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(&format!("{}:3:1: ", bad.display())),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    let _ = std::fs::remove_file(&bad);
    let o = kubeloop(&["import"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("kubeloop: import: a FILE (kubectl get … -A -o yaml) is required\n")
    );
    let o = kubeloop(&["import", "x.yaml", "--kubeconfig", "y"]);
    assert!(stderr(&o).starts_with("kubeloop: import: unknown flag --kubeconfig\n"));
}

#[test]
fn import_reads_standard_input() {
    use std::io::Write;
    let list =
        std::fs::read_to_string(repo("crates/sim/src/import/testdata/cluster-list.yaml")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubeloop"))
        .args(["import", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubeloop runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(list.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "one object is refused");
    let yaml = String::from_utf8_lossy(&o.stdout);
    assert!(yaml.contains("  - name: kind-worker2\n"), "{yaml}");
}
