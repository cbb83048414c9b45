//! Tests of the files as tabs: add, rename, delete and undo, and what kubectl -f reads.

use super::*;
use crate::examples::default_scenario;
use kubeloop_sim::scenario::parse_scenario;
use wasm_bindgen_test::wasm_bindgen_test;

fn text(s: &Session) -> String {
    s.terminal()
        .lines()
        .map(|l| l.text.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

const POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: solo
spec:
  containers:
  - name: web
    image: nginx:1.27
";

#[wasm_bindgen_test(unsupported = test)]
fn should_apply_a_new_file_by_its_name() {
    let mut s = Session::new(default_scenario());
    s.add_file("pod.yaml", "").unwrap();
    assert!(s.file_names().contains(&"pod.yaml".to_string()));
    assert_eq!(s.file("pod.yaml"), Some(""));
    s.set_file("pod.yaml", POD);
    s.submit("kubectl apply -f pod.yaml");
    s.advance(2 * SECOND);
    assert!(text(&s).contains("pod/solo created"), "{}", text(&s));
}

#[wasm_bindgen_test(unsupported = test)]
fn should_refuse_names_that_are_not_file_names() {
    let mut s = Session::new(default_scenario());
    let cases = [
        ("", FileError::Empty),
        ("   ", FileError::Empty),
        ("dir/pod.yaml", FileError::Slash),
        (".", FileError::Dots),
        ("..", FileError::Dots),
        ("a\nb.yaml", FileError::Control),
        ("a\tb.yaml", FileError::Control),
        (
            "nginx-deploy.yaml",
            FileError::Exists("nginx-deploy.yaml".into()),
        ),
    ];
    for (name, want) in cases {
        assert_eq!(s.add_file(name, "").unwrap_err(), want, "{name:?}");
    }
    let long = "a".repeat(256);
    assert_eq!(s.add_file(&long, ""), Err(FileError::TooLong));
    assert_eq!(s.file_names(), ["nginx-deploy.yaml"], "nothing was added");
    assert_eq!(
        FileError::Slash.message(Lang::En),
        "A file name cannot contain /."
    );
    assert_eq!(
        FileError::Exists("a.yaml".into()).message(Lang::Zh),
        "已有同名文件： a.yaml"
    );
    // Names kubectl reads with quoting are fine.
    s.add_file("my pod.yaml", POD).unwrap();
    s.submit("kubectl apply -f 'my pod.yaml'");
    s.advance(2 * SECOND);
    assert!(text(&s).contains("pod/solo created"), "{}", text(&s));
}

#[wasm_bindgen_test(unsupported = test)]
fn should_rename_a_file_so_kubectl_reads_the_new_name_only() {
    let mut s = Session::new(default_scenario());
    let before = s.file("nginx-deploy.yaml").unwrap().to_string();
    s.rename_file("nginx-deploy.yaml", "web.yaml").unwrap();
    assert_eq!(s.file_names(), ["web.yaml"]);
    assert_eq!(s.file("web.yaml"), Some(before.as_str()));
    s.submit("kubectl apply -f nginx-deploy.yaml");
    s.advance(SECOND);
    assert!(
        text(&s).contains("error: the path \"nginx-deploy.yaml\" does not exist"),
        "{}",
        text(&s)
    );
    s.submit("kubectl apply -f web.yaml");
    s.advance(SECOND);
    assert!(
        text(&s).contains("deployment.apps/nginx created"),
        "{}",
        text(&s)
    );
    assert_eq!(
        s.rename_file("gone.yaml", "x.yaml"),
        Err(FileError::Missing("gone.yaml".into()))
    );
    assert_eq!(s.rename_file("web.yaml", "a/b"), Err(FileError::Slash));
    assert_eq!(s.rename_file("web.yaml", "web.yaml"), Ok(()));
}

#[wasm_bindgen_test(unsupported = test)]
fn should_move_apply_errors_with_a_renamed_file() {
    let mut s = Session::new(default_scenario());
    let bad = s
        .file("nginx-deploy.yaml")
        .unwrap()
        .replace("replicas: 3", "replica: 3");
    s.set_file("nginx-deploy.yaml", &bad);
    s.run_button("kubectl apply -f nginx-deploy.yaml");
    s.advance(SECOND);
    let errors = s.editor_errors("nginx-deploy.yaml");
    assert_eq!(errors.len(), 1, "{errors:?}");
    s.rename_file("nginx-deploy.yaml", "web.yaml").unwrap();
    assert_eq!(s.editor_errors("web.yaml"), errors);
    assert!(s.editor_errors("nginx-deploy.yaml").is_empty());
}

#[wasm_bindgen_test(unsupported = test)]
fn should_delete_a_file_and_undo_the_delete() {
    let mut s = Session::new(default_scenario());
    s.add_file("pod.yaml", POD).unwrap();
    let gone = s.delete_file("pod.yaml").unwrap();
    assert_eq!(
        gone,
        DeletedFile {
            name: "pod.yaml".into(),
            text: POD.into()
        }
    );
    assert_eq!(s.file_names(), ["nginx-deploy.yaml"]);
    s.submit("kubectl apply -f pod.yaml");
    s.advance(SECOND);
    assert!(
        text(&s).contains("error: the path \"pod.yaml\" does not exist"),
        "{}",
        text(&s)
    );
    assert_eq!(
        s.delete_file("nginx-deploy.yaml"),
        Err(FileError::Last),
        "the editor always has a file"
    );
    s.restore_file(&gone).unwrap();
    assert_eq!(s.file("pod.yaml"), Some(POD));
    // A new file took the name meanwhile: the undo says so instead of overwriting it.
    let gone = s.delete_file("pod.yaml").unwrap();
    s.add_file("pod.yaml", "# mine\n").unwrap();
    assert_eq!(
        s.restore_file(&gone),
        Err(FileError::Exists("pod.yaml".into()))
    );
    assert_eq!(s.file("pod.yaml"), Some("# mine\n"));
}

#[wasm_bindgen_test(unsupported = test)]
fn should_save_added_renamed_and_deleted_files_with_the_scenario() {
    let mut s = Session::new(default_scenario());
    let rev = s.scenario_revision;
    s.add_file("pod.yaml", POD).unwrap();
    s.add_file("extra.yaml", "# x\n").unwrap();
    s.rename_file("pod.yaml", "solo.yaml").unwrap();
    s.delete_file("extra.yaml").unwrap();
    assert!(s.scenario_revision >= rev + 4, "each change is saved");
    let saved = parse_scenario(&s.saved_yaml()).unwrap();
    let names: Vec<&String> = saved.spec.files.keys().collect();
    assert_eq!(names, ["nginx-deploy.yaml", "solo.yaml"]);
    assert_eq!(saved.spec.files["solo.yaml"], POD);
}

#[wasm_bindgen_test(unsupported = test)]
fn should_apply_a_new_empty_file_as_kubectl_does() {
    let mut s = Session::new(default_scenario());
    s.add_file("new.yaml", "").unwrap();
    s.run_button("kubectl apply -f new.yaml");
    s.advance(5 * SECOND);
    assert!(
        text(&s).contains("error: no objects passed to apply"),
        "{}",
        text(&s)
    );
}
