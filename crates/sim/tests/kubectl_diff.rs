//! `kubectl apply -f DIR` (and `-R`), `kubectl diff -f` (the live object against what
//! apply would make of it, as `diff -u -N`; exit 1 when different) and
//! `kubectl replace --force`, through the terminal.

mod common;
use common::Term as T;

const SVC: &str = "apiVersion: v1
kind: Service
metadata:
  name: nginx
spec:
  selector:
    app: nginx
  ports:
  - port: 80
";

#[test]
fn apply_a_directory_and_recursively() {
    let mut t = T::new();
    t.file("app/deploy.yaml", common::NGINX);
    t.file("app/svc.yml", SVC);
    t.file("app/README.md", "not a manifest");
    t.file(
        "app/extra/cm.json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"b"}}"#,
    );
    assert_eq!(
        t.ok("kubectl apply -f app"),
        "deployment.apps/nginx created\nservice/nginx created\n"
    );
    assert_eq!(
        t.ok("kubectl apply -f app/ -R"),
        "deployment.apps/nginx unchanged\nconfigmap/cfg created\nservice/nginx unchanged\n"
    );
    assert_eq!(
        t.err("kubectl apply -f nothing"),
        "error: the path \"nothing\" does not exist\n"
    );
    t.file("docs/a.txt", "x");
    assert_eq!(
        t.err("kubectl apply -f docs"),
        "error: error reading [docs]: recognized file extensions are [.json .yaml .yml]\n"
    );
}

#[test]
fn diff_shows_what_apply_would_change() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    let same = t.run("kubectl diff -f nginx.yaml");
    assert_eq!((same.exit_code, same.stdout.as_str()), (0, ""));
    t.file(
        "nginx.yaml",
        &common::NGINX
            .replace("replicas: 3", "replicas: 5")
            .replace("nginx:1.27", "nginx:1.28"),
    );
    let d = t.run("kubectl diff -f nginx.yaml");
    assert_eq!(d.exit_code, 1, "{d:?}");
    let lines: Vec<&str> = d.stdout.lines().collect();
    let words: Vec<&str> = lines[0].split(' ').collect();
    assert_eq!(words[..3], ["diff", "-u", "-N"], "{}", lines[0]);
    let (live, merged) = (words[3], words[4]);
    assert!(
        live.starts_with("/tmp/LIVE-") && live.ends_with("/apps.v1.Deployment.default.nginx"),
        "{live}"
    );
    assert!(
        merged.starts_with("/tmp/MERGED-") && merged.ends_with("/apps.v1.Deployment.default.nginx"),
        "{merged}"
    );
    assert!(
        lines[1].starts_with(&format!("--- {live}\t2026-01-01 00:00:")),
        "{}",
        lines[1]
    );
    assert!(lines[1].ends_with(".000000000 +0000"), "{}", lines[1]);
    assert!(
        lines[2].starts_with(&format!("+++ {merged}\t")),
        "{}",
        lines[2]
    );
    for want in [
        "-  generation: 1",
        "+  generation: 2",
        "-  replicas: 3",
        "+  replicas: 5",
        "-      - image: nginx:1.27",
        "+      - image: nginx:1.28",
    ] {
        assert!(lines.contains(&want), "{want} in\n{}", d.stdout);
    }
    assert!(lines.iter().any(|l| l.starts_with("@@ -")), "{}", d.stdout);
    // Nothing was changed by diffing.
    assert_eq!(
        t.ok("kubectl get deploy nginx -o jsonpath={.spec.replicas}"),
        "3"
    );
    // A new object is all additions.
    t.file("svc.yaml", SVC);
    let n = t.run("kubectl diff -f svc.yaml");
    assert_eq!(n.exit_code, 1);
    assert!(n.stdout.contains("\n@@ -0,0 +1,"), "{}", n.stdout);
    assert!(n.stdout.contains("\n+kind: Service\n"), "{}", n.stdout);
    assert_eq!(t.run("kubectl get svc nginx").exit_code, 1);
    let e = t.run("kubectl diff -f nope.yaml");
    assert_eq!(
        (e.exit_code, e.stderr.as_str()),
        (2, "error: the path \"nope.yaml\" does not exist\n")
    );
}

#[test]
fn replace_force_deletes_then_creates() {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    let uid = t.ok("kubectl get deploy nginx -o jsonpath={.metadata.uid}");
    assert_eq!(
        t.ok("kubectl replace --force -f nginx.yaml"),
        "deployment.apps \"nginx\" deleted from default namespace\ndeployment.apps/nginx replaced\n"
    );
    let again = t.ok("kubectl get deploy nginx -o jsonpath={.metadata.uid}");
    assert_ne!(uid, again, "a new object");
}

#[test]
fn diff_masks_a_secrets_data() {
    let mut t = T::new();
    let secret = "apiVersion: v1
kind: Secret
metadata:
  name: db
data:
  user: YWRtaW4=
  password: czNjcjN0
";
    t.file("secret.yaml", secret);
    let created = t.run("kubectl diff -f secret.yaml");
    assert_eq!(created.exit_code, 1, "{created:?}");
    assert!(
        created.stdout.contains("+  password: '***'\n"),
        "{}",
        created.stdout
    );
    assert!(
        created.stdout.contains("+  user: '***'\n"),
        "{}",
        created.stdout
    );
    t.ok("kubectl apply -f secret.yaml");
    t.file("secret.yaml", &secret.replace("czNjcjN0", "bmV3"));
    let d = t.run("kubectl diff -f secret.yaml");
    assert_eq!(d.exit_code, 1, "{d:?}");
    let changed: Vec<&str> = d
        .stdout
        .lines()
        .filter(|l| l.contains("password:") && !l.contains("{"))
        .collect();
    assert_eq!(
        changed,
        ["-  password: '*** (before)'", "+  password: '*** (after)'"],
        "{}",
        d.stdout
    );
    assert!(d.stdout.contains("   user: '***'\n"), "{}", d.stdout);
}
