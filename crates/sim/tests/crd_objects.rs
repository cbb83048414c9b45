//! Custom objects through the terminal: printer columns, schema validation, pruning and
//! defaults, CEL rules, status and scale subresources, `get all`, describe, RBAC, garbage
//! collection, watches and namespace deletion.

mod common;
use common::crd::{with_crd, CRONTAB_CRD};
use common::Term as T;

#[test]
fn custom_objects_are_created_listed_and_printed_with_their_columns() {
    let mut t = with_crd();
    assert_eq!(
        t.ok("kubectl apply -f my-crontab.yaml"),
        "crontab.stable.example.com/my-new-cron-object created\n"
    );
    assert_eq!(
        t.ok("kubectl get crontab"),
        "NAME                 SPEC          REPLICAS   AGE\n\
         my-new-cron-object   * * * * */5   1          0s\n"
    );
    assert_eq!(
        t.ok("kubectl get ct -o wide"),
        "NAME                 SPEC          REPLICAS   IMAGE                   AGE\n\
         my-new-cron-object   * * * * */5   1          my-awesome-cron-image   0s\n"
    );
    let yaml = t.ok("kubectl get ct my-new-cron-object -o yaml");
    assert!(
        yaml.starts_with("apiVersion: stable.example.com/v1\nkind: CronTab\n"),
        "{yaml}"
    );
    assert!(yaml.contains("  minReplicas: 1\n  replicas: 1\n"), "{yaml}");
    assert!(yaml.contains("  generation: 1\n"), "{yaml}");
}

#[test]
fn objects_that_break_the_schema_get_the_apiservers_field_errors() {
    let mut t = with_crd();
    t.file(
        "bad.yaml",
        "apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: bad
spec:
  cronSpec: \"* * * *\"
  image: 42
  replicas: 11
",
    );
    assert_eq!(
        t.err("kubectl apply -f bad.yaml"),
        "The CronTab \"bad\" is invalid: \n\
         * spec.cronSpec: Invalid value: \"* * * *\": spec.cronSpec in body should match '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'\n\
         * spec.image: Invalid value: \"integer\": spec.image in body must be of type string: \"integer\"\n\
         * spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10\n"
    );
    t.file(
        "missing.yaml",
        "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: m\nspec:\n  image: x\n",
    );
    assert_eq!(
        t.err("kubectl apply -f missing.yaml"),
        "The CronTab \"m\" is invalid: spec.cronSpec: Required value\n"
    );
    t.file(
        "unknown.yaml",
        "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: u\nspec:\n  cronSpec: \"* * * * *\"\n  image: x\n  colour: blue\n",
    );
    assert_eq!(
        t.err("kubectl apply -f unknown.yaml"),
        "Error from server (BadRequest): error when creating \"unknown.yaml\": CronTab in version \"v1\" cannot be handled as a CronTab: strict decoding error: unknown field \"spec.colour\"\n"
    );
}

#[test]
fn cel_rules_are_enforced_with_their_messages() {
    let mut t = with_crd();
    t.file(
        "few.yaml",
        "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: few\nspec:\n  cronSpec: \"* * * * *\"\n  image: x\n  replicas: 2\n  minReplicas: 3\n",
    );
    assert_eq!(
        t.err("kubectl apply -f few.yaml"),
        "The CronTab \"few\" is invalid: spec: Invalid value: \"object\": replicas should be greater than or equal to minReplicas.\n"
    );
}

#[test]
fn spec_changes_bump_generation_and_status_goes_through_its_subresource() {
    let mut t = with_crd();
    t.ok("kubectl apply -f my-crontab.yaml");
    assert_eq!(
        t.ok("kubectl patch ct my-new-cron-object --type=merge -p '{\"status\":{\"replicas\":5}}'"),
        "crontab.stable.example.com/my-new-cron-object patched (no change)\n"
    );
    assert_eq!(
        t.ok("kubectl patch ct my-new-cron-object --type=merge --subresource=status -p '{\"status\":{\"replicas\":5}}'"),
        "crontab.stable.example.com/my-new-cron-object patched\n"
    );
    assert_eq!(
        t.ok("kubectl get ct my-new-cron-object -o jsonpath={.status.replicas}/{.metadata.generation}"),
        "5/1"
    );
    assert_eq!(
        t.ok("kubectl patch ct my-new-cron-object --type=merge -p '{\"spec\":{\"image\":\"other\"}}'"),
        "crontab.stable.example.com/my-new-cron-object patched\n"
    );
    assert_eq!(
        t.ok("kubectl get ct my-new-cron-object -o jsonpath={.spec.image}/{.metadata.generation}/{.status.replicas}"),
        "other/2/5"
    );
    assert_eq!(
        t.err("kubectl patch ct my-new-cron-object -p '{\"spec\":{\"image\":\"x\"}}'"),
        "error: application/strategic-merge-patch+json is not supported by stable.example.com/v1, Kind=CronTab: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml\n"
    );
}

#[test]
fn kubectl_scale_writes_the_spec_replicas_path() {
    let mut t = with_crd();
    t.ok("kubectl apply -f my-crontab.yaml");
    assert_eq!(
        t.ok("kubectl scale crontab my-new-cron-object --replicas=3"),
        "crontab.stable.example.com/my-new-cron-object scaled\n"
    );
    assert_eq!(
        t.ok("kubectl get ct my-new-cron-object -o jsonpath={.spec.replicas}"),
        "3"
    );
    assert_eq!(
        t.err("kubectl scale crontab my-new-cron-object --replicas=30"),
        "The CronTab \"my-new-cron-object\" is invalid: spec.replicas: Invalid value: 30: spec.replicas in body should be less than or equal to 10\n"
    );
}

#[test]
fn the_all_category_and_describe_include_custom_objects() {
    let mut t = with_crd();
    t.ok("kubectl apply -f my-crontab.yaml");
    let all = t.ok("kubectl get all");
    assert!(
        all.contains("NAME                                            SPEC          REPLICAS   AGE\ncrontab.stable.example.com/my-new-cron-object   * * * * */5   1          0s\n"),
        "{all}"
    );
    let d = t.ok("kubectl describe crontab my-new-cron-object");
    let head = "Name:         my-new-cron-object\n\
                Namespace:    default\n\
                Labels:       <none>\n\
                Annotations:  <none>\n\
                API Version:  stable.example.com/v1\n\
                Kind:         CronTab\n\
                Metadata:\n\
                \x20 Creation Timestamp:  2026-01-01T00:00:00Z\n\
                \x20 Generation:          1\n";
    assert!(d.starts_with(head), "{d}");
    assert!(
        d.ends_with("Spec:\n  Cron Spec:     * * * * */5\n  Image:         my-awesome-cron-image\n  Min Replicas:  1\n  Replicas:      1\nEvents:          <none>\n"),
        "{d}"
    );
}

#[test]
fn rbac_rules_on_the_custom_group_and_resource_are_enforced() {
    let mut t = with_crd();
    assert_eq!(
        t.err("kubectl get crontabs --as=jane"),
        "Error from server (Forbidden): crontabs.stable.example.com is forbidden: User \"jane\" cannot list resource \"crontabs\" in API group \"stable.example.com\" in the namespace \"default\"\n"
    );
    t.file(
        "rbac.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: crontab-reader}
rules:
- apiGroups: [stable.example.com]
  resources: [crontabs]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: jane-reads-crontabs}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: crontab-reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: jane}
",
    );
    t.ok("kubectl apply -f rbac.yaml");
    assert_eq!(
        t.ok("kubectl create role ct-editor --verb=update --resource=ct -o jsonpath={.rules}"),
        "[{\"apiGroups\":[\"stable.example.com\"],\"resources\":[\"crontabs\"],\"verbs\":[\"update\"]}]"
    );
    assert_eq!(
        t.err("kubectl explain crontabs"),
        "error: \"kubectl explain\" of crontabs.stable.example.com is not available in kubeloop yet\n"
    );
    t.ok("kubectl apply -f my-crontab.yaml");
    assert!(t
        .ok("kubectl get ct --as=jane")
        .contains("my-new-cron-object"));
    assert_eq!(
        t.err("kubectl delete ct my-new-cron-object --as=jane"),
        "Error from server (Forbidden): crontabs.stable.example.com \"my-new-cron-object\" is forbidden: User \"jane\" cannot delete resource \"crontabs\" in API group \"stable.example.com\" in the namespace \"default\"\n"
    );
}

#[test]
fn dependents_of_a_custom_object_are_garbage_collected() {
    let mut t = with_crd();
    t.ok("kubectl apply -f my-crontab.yaml");
    let uid = t.ok("kubectl get ct my-new-cron-object -o jsonpath={.metadata.uid}");
    t.file(
        "owned.yaml",
        &format!(
            "apiVersion: v1
kind: ConfigMap
metadata:
  name: owned
  ownerReferences:
  - apiVersion: stable.example.com/v1
    kind: CronTab
    name: my-new-cron-object
    uid: {uid}
"
        ),
    );
    t.ok("kubectl apply -f owned.yaml");
    t.settle(40);
    assert!(t
        .ok("kubectl get configmap owned -o name")
        .contains("owned"));
    t.ok("kubectl delete ct my-new-cron-object");
    t.settle(60);
    assert_eq!(
        t.err("kubectl get configmap owned"),
        "Error from server (NotFound): configmaps \"owned\" not found\n"
    );
}

#[test]
fn a_watch_on_custom_objects_streams_their_changes() {
    let mut t = with_crd();
    let pid = match kubeloop_sim::cmd::start(&mut t.w, "kubectl get ct -w", &t.files) {
        kubeloop_sim::cmd::Started::Running(id) => id,
        kubeloop_sim::cmd::Started::Done(o) => panic!("{o:?}"),
    };
    t.settle(1);
    t.ok("kubectl apply -f my-crontab.yaml");
    t.ok("kubectl scale ct my-new-cron-object --replicas=2");
    t.settle(1);
    let p = t.w.terminal(pid).expect("still watching");
    let seen = p.take_unread();
    let rows: Vec<Vec<&str>> = seen
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            ["my-new-cron-object", "*", "*", "*", "*", "*/5", "1", "0s"],
            ["my-new-cron-object", "*", "*", "*", "*", "*/5", "2", "0s"],
        ],
        "{seen}"
    );
}

#[test]
fn labels_annotations_and_namespace_deletion_reach_custom_objects() {
    let mut t = with_crd();
    t.ok("kubectl create namespace team");
    t.ok("kubectl apply -f my-crontab.yaml -n team");
    assert_eq!(
        t.ok("kubectl label ct my-new-cron-object -n team tier=batch"),
        "crontab.stable.example.com/my-new-cron-object labeled\n"
    );
    assert_eq!(
        t.ok("kubectl get ct -n team -l tier=batch -o name"),
        "crontab.stable.example.com/my-new-cron-object\n"
    );
    t.ok("kubectl delete namespace team");
    t.settle(30);
    assert_eq!(t.run("kubectl get ct -A").stderr, "No resources found\n");
}

#[test]
fn create_delete_and_json_output_work_on_custom_objects() {
    let mut t = with_crd();
    assert_eq!(
        t.ok("kubectl create -f my-crontab.yaml"),
        "crontab.stable.example.com/my-new-cron-object created\n"
    );
    assert!(t
        .err("kubectl create -f my-crontab.yaml")
        .contains("crontabs.stable.example.com \"my-new-cron-object\" already exists"));
    let json: serde_json::Value =
        serde_json::from_str(&t.ok("kubectl get ct my-new-cron-object -o json")).unwrap();
    assert_eq!(json["kind"], "CronTab");
    assert_eq!(json["spec"]["cronSpec"], "* * * * */5");
    assert_eq!(
        t.ok("kubectl delete -f my-crontab.yaml"),
        "crontab.stable.example.com \"my-new-cron-object\" deleted from default namespace\n"
    );
    assert_eq!(
        t.err("kubectl get ct my-new-cron-object"),
        "Error from server (NotFound): crontabs.stable.example.com \"my-new-cron-object\" not found\n"
    );
}

#[test]
fn without_validation_unknown_fields_are_pruned_and_preserved_ones_kept() {
    let mut t = T::new();
    let open = CRONTAB_CRD.replace(
        "                minReplicas:\n",
        "                extra:\n                  type: object\n                  x-kubernetes-preserve-unknown-fields: true\n                minReplicas:\n",
    );
    t.file("crd.yaml", &open);
    t.ok("kubectl apply -f crd.yaml");
    t.file(
        "loose.yaml",
        "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: loose\nspec:\n  cronSpec: \"* * * * *\"\n  image: x\n  colour: blue\n  extra:\n    anything: [1, 2]\n",
    );
    assert_eq!(
        t.ok("kubectl apply -f loose.yaml --validate=false"),
        "crontab.stable.example.com/loose created\n"
    );
    assert_eq!(
        t.ok("kubectl get ct loose -o jsonpath={.spec}"),
        "{\"cronSpec\":\"* * * * *\",\"extra\":{\"anything\":[1,2]},\"image\":\"x\",\"minReplicas\":1,\"replicas\":1}"
    );
}
