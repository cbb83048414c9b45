//! Selecting what kubectl acts on, through the terminal: `get -f`, `--sort-by`,
//! `--show-labels`, `-L`, `--field-selector`, custom columns, `TYPE1,TYPE2`, `--all`,
//! and `-l` for get, describe, delete, label, scale and logs.

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

fn cluster() -> T {
    let mut t = T::new();
    t.ok("kubectl apply -f nginx.yaml");
    t.ok("kubectl run redis-leader --image=redis --labels=app=redis,role=leader");
    t.ok("kubectl run redis-follower --image=redis --labels=app=redis,role=follower");
    t.settle(30);
    t
}

fn names(table: &str) -> Vec<String> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn describe_l_describes_only_the_selected_pods() {
    // Regression (issue 10): `describe pods -l` used to describe every pod.
    let mut t = cluster();
    let d = t.ok("kubectl describe pods -l app=redis,role=leader");
    let described: Vec<&str> = d.lines().filter(|l| l.starts_with("Name:")).collect();
    assert_eq!(described, ["Name:             redis-leader"]);
    let o = t.run("kubectl describe pods -l app=nope");
    assert_eq!((o.exit_code, o.stdout.as_str()), (0, ""));
    assert_eq!(o.stderr, "No resources found in default namespace.\n");
}

#[test]
fn get_from_a_file_and_of_several_types() {
    let mut t = cluster();
    t.file("svc.yaml", SVC);
    t.ok("kubectl apply -f svc.yaml");
    let g = t.ok("kubectl get -f nginx.yaml");
    assert_eq!(
        g.lines().next().unwrap(),
        "NAME    READY   UP-TO-DATE   AVAILABLE   AGE"
    );
    assert!(
        g.lines()
            .nth(1)
            .unwrap()
            .starts_with("nginx   3/3     3            3"),
        "{g}"
    );
    t.file("both.yaml", &format!("{}---\n{SVC}", common::NGINX));
    let both = t.ok("kubectl get -f both.yaml");
    assert!(both.contains("deployment.apps/nginx   3/3"), "{both}");
    assert!(both.contains("\n\nNAME            TYPE"), "{both}");
    assert!(both.contains("service/nginx   ClusterIP"), "{both}");
    let several = t.ok("kubectl get deploy,svc");
    assert!(several.contains("deployment.apps/nginx") && several.contains("service/kubernetes"));
    assert_eq!(
        t.err("kubectl get -f missing.yaml"),
        "error: the path \"missing.yaml\" does not exist\n"
    );
}

#[test]
fn sort_by_orders_rows_by_a_field() {
    let mut t = cluster();
    let by_name = names(&t.ok("kubectl get pods -l app=redis --sort-by=.metadata.name"));
    assert_eq!(by_name, ["redis-follower", "redis-leader"]);
    let by_role = names(&t.ok("kubectl get pods -l app=redis --sort-by='{.metadata.labels.role}'"));
    assert_eq!(by_role, ["redis-follower", "redis-leader"]);
    let by_ts = names(&t.ok("kubectl get pods --sort-by=.metadata.creationTimestamp"));
    assert_eq!(by_ts.len(), 5);
    assert_eq!(
        t.err("kubectl get pods --sort-by=.metadata.nope"),
        "error: couldn't find any field with path \"{.metadata.nope}\" in the list of objects\n"
    );
}

#[test]
fn label_columns_and_field_selectors() {
    let mut t = cluster();
    let l = t.ok("kubectl get pods -l app=redis --show-labels");
    assert!(l.lines().next().unwrap().ends_with("AGE   LABELS"), "{l}");
    assert!(l.contains("app=redis,role=leader"), "{l}");
    let cols = t.ok("kubectl get pods -l app=redis -L role");
    assert!(
        cols.lines().next().unwrap().ends_with("AGE   ROLE"),
        "{cols}"
    );
    assert!(cols.contains("leader"), "{cols}");
    let running = names(
        &t.ok("kubectl get pods --field-selector=status.phase=Running,metadata.name=redis-leader"),
    );
    assert_eq!(running, ["redis-leader"]);
    let cc = t.ok("kubectl get pods -l app=redis -o custom-columns=NAME:.metadata.name,ROLE:.metadata.labels.role --sort-by=.metadata.name");
    assert_eq!(
        cc,
        "NAME             ROLE\nredis-follower   follower\nredis-leader     leader\n"
    );
}

#[test]
fn delete_several_types_all_and_by_label() {
    let mut t = cluster();
    t.file("svc.yaml", SVC);
    t.ok("kubectl apply -f svc.yaml");
    assert_eq!(
        t.ok("kubectl delete deployment,svc nginx"),
        "deployment.apps \"nginx\" deleted from default namespace\nservice \"nginx\" deleted from default namespace\n"
    );
    assert_eq!(
        t.ok("kubectl delete pods -l role=leader"),
        "pod \"redis-leader\" deleted from default namespace\n"
    );
    let o = t.run("kubectl delete pods,svc -l app=nope");
    assert_eq!(
        (o.exit_code, o.stdout.as_str()),
        (0, "No resources found\n")
    );
    t.ok("kubectl delete pods --all");
    assert_eq!(
        t.run("kubectl get pods").stderr,
        "No resources found in default namespace.\n"
    );
    assert_eq!(
        t.err("kubectl delete pods,svc"),
        "error: resource(s) were provided, but no name was specified\n"
    );
}

#[test]
fn label_scale_and_logs_take_a_selector() {
    let mut t = cluster();
    assert_eq!(
        t.ok("kubectl label pods -l app=redis tier=db"),
        "pod/redis-follower labeled\npod/redis-leader labeled\n"
    );
    assert_eq!(
        names(&t.ok("kubectl get pods -l tier=db")),
        ["redis-follower", "redis-leader"]
    );
    assert_eq!(
        t.ok("kubectl annotate pods -l role=leader note=primary"),
        "pod/redis-leader annotated\n"
    );
    assert_eq!(
        t.err("kubectl label pods -l app=nope a=b"),
        "error: no objects passed to label\n"
    );
    assert_eq!(
        t.ok("kubectl scale deploy --all --replicas=2"),
        "deployment.apps/nginx scaled\n"
    );
    assert_eq!(
        t.ok("kubectl get deploy nginx -o jsonpath={.spec.replicas}"),
        "2"
    );
    // One log after the other, as kubectl prints them without --prefix.
    t.ok("kubectl run a --image=busybox:1.28 --labels=job=echo --restart=Never -- echo from-a");
    t.ok("kubectl run b --image=busybox:1.28 --labels=job=echo --restart=Never -- echo from-b");
    t.settle(20);
    assert_eq!(t.ok("kubectl logs -l job=echo"), "from-a\nfrom-b\n");
    assert_eq!(
        t.run("kubectl logs -l job=nope").stderr,
        "No resources found in default namespace.\n"
    );
}

#[test]
fn describe_from_a_file() {
    let mut t = cluster();
    let d = t.ok("kubectl describe -f nginx.yaml");
    assert!(
        d.starts_with("Name:                   nginx\nNamespace:              default\n"),
        "{d}"
    );
    assert_eq!(d.matches("\nName:").count(), 0, "one object");
}
