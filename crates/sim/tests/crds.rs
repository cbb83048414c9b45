//! CustomResourceDefinitions through the terminal: the docs' CronTab CRD
//! (stable.example.com), its conditions, discovery and short names, custom objects with
//! schema validation, pruning, defaults, CEL rules, status and scale subresources,
//! printer columns, and deleting the CRD deleting its objects.

mod common;
use common::Term as T;

/// The documentation's CRD (tasks/extend-kubernetes/custom-resources/
/// custom-resource-definitions), with the printer columns and subresources its later
/// sections add.
const CRONTAB_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: \"self.minReplicas <= self.replicas\"
                  message: \"replicas should be greater than or equal to minReplicas.\"
              properties:
                cronSpec:
                  type: string
                  pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'
                image:
                  type: string
                replicas:
                  type: integer
                  minimum: 1
                  maximum: 10
                  default: 1
                minReplicas:
                  type: integer
                  default: 1
              required: [cronSpec, image]
            status:
              type: object
              properties:
                replicas:
                  type: integer
                labelSelector:
                  type: string
      subresources:
        status: {}
        scale:
          specReplicasPath: .spec.replicas
          statusReplicasPath: .status.replicas
          labelSelectorPath: .status.labelSelector
      additionalPrinterColumns:
        - name: Spec
          type: string
          description: The cron spec defining the interval a CronJob is run
          jsonPath: .spec.cronSpec
        - name: Replicas
          type: integer
          description: The number of jobs launched by the CronJob
          jsonPath: .spec.replicas
        - name: Image
          type: string
          priority: 1
          jsonPath: .spec.image
        - name: Age
          type: date
          jsonPath: .metadata.creationTimestamp
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames:
    - ct
    categories:
    - all
";

const MY_CRONTAB: &str = "apiVersion: \"stable.example.com/v1\"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: \"* * * * */5\"
  image: my-awesome-cron-image
";

fn with_crd() -> T {
    let mut t = T::new();
    t.file("crd.yaml", CRONTAB_CRD);
    t.file("my-crontab.yaml", MY_CRONTAB);
    assert_eq!(
        t.ok("kubectl apply -f crd.yaml"),
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n"
    );
    t
}

#[test]
fn an_applied_crd_is_established_and_discoverable() {
    let mut t = with_crd();
    assert_eq!(
        t.ok("kubectl get crd"),
        "NAME                          CREATED AT\n\
         crontabs.stable.example.com   2026-01-01T00:00:00Z\n"
    );
    let conditions = t.ok(
        "kubectl get crd crontabs.stable.example.com -o 'jsonpath={range .status.conditions[*]}{.type}={.status}/{.reason}{\"\\n\"}{end}'",
    );
    assert_eq!(
        conditions,
        "NamesAccepted=True/NoConflicts\nEstablished=True/InitialNamesAccepted\n"
    );
    let resources = t.ok("kubectl api-resources --api-group=stable.example.com");
    assert_eq!(
        resources,
        "NAME       SHORTNAMES   APIVERSION              NAMESPACED   KIND\n\
         crontabs   ct           stable.example.com/v1   true         CronTab\n"
    );
    assert!(t
        .ok("kubectl api-versions")
        .contains("stable.example.com/v1\n"));
}

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
fn deleting_the_crd_deletes_its_objects_and_its_resource() {
    let mut t = with_crd();
    t.ok("kubectl apply -f my-crontab.yaml");
    assert_eq!(
        t.ok("kubectl delete crd crontabs.stable.example.com"),
        "customresourcedefinition.apiextensions.k8s.io \"crontabs.stable.example.com\" deleted\n"
    );
    t.settle(5);
    assert_eq!(t.run("kubectl get crd").stderr, "No resources found\n");
    assert_eq!(
        t.err("kubectl get crontabs"),
        "error: the server doesn't have a resource type \"crontabs\"\n"
    );
    assert_eq!(
        t.err("kubectl apply -f my-crontab.yaml"),
        "error: resource mapping not found for name: \"my-new-cron-object\" namespace: \"\" from \"my-crontab.yaml\": no matches for kind \"CronTab\" in version \"stable.example.com/v1\"\nensure CRDs are installed first\n"
    );
    // Recreated, the CRD serves an empty collection: the old object went with it.
    t.ok("kubectl apply -f crd.yaml");
    assert_eq!(
        t.run("kubectl get ct").stderr,
        "No resources found in default namespace.\n"
    );
}
