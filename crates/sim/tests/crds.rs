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
