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

#[test]
fn invalid_crds_are_refused_with_apiextensions_messages() {
    let mut t = T::new();
    let bad = CRONTAB_CRD
        .replace(
            "name: crontabs.stable.example.com",
            "name: crontab.stable.example.com",
        )
        .replace("      storage: true", "      storage: false");
    t.file("bad-crd.yaml", &bad);
    let e = t.err("kubectl apply -f bad-crd.yaml");
    assert!(
        e.starts_with("The CustomResourceDefinition \"crontab.stable.example.com\" is invalid: \n* metadata.name: Invalid value: \"crontab.stable.example.com\": must be spec.names.plural+\".\"+spec.group\n* spec.versions: Invalid value: "),
        "{e}"
    );
    assert!(
        e.ends_with(": must have exactly one version marked as storage version\n"),
        "{e}"
    );
    t.file(
        "untyped.yaml",
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            properties:
              size: {type: strin}
",
    );
    assert_eq!(
        t.err("kubectl apply -f untyped.yaml"),
        "The CustomResourceDefinition \"widgets.example.com\" is invalid: \n\
         * spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields\n\
         * spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].type: Unsupported value: \"strin\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"\n"
    );
    assert_eq!(t.run("kubectl get crd").stderr, "No resources found\n");
}

/// A Gateway-API-like CRD: cluster-scoped, a category, a transition rule and a rule
/// outside kubeloop's CEL subset.
const GATEWAY_CLASS_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gatewayclasses.gateway.networking.k8s.io
spec:
  group: gateway.networking.k8s.io
  names:
    categories: [gateway-api]
    kind: GatewayClass
    listKind: GatewayClassList
    plural: gatewayclasses
    shortNames: [gc]
    singular: gatewayclass
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - jsonPath: .spec.controllerName
      name: Controller
      type: string
    - jsonPath: .status.conditions[?(@.type==\"Accepted\")].status
      name: Accepted
      type: string
    - jsonPath: .metadata.creationTimestamp
      name: Age
      type: date
    - jsonPath: .spec.description
      name: Description
      priority: 1
      type: string
    schema:
      openAPIV3Schema:
        type: object
        required: [spec]
        properties:
          spec:
            type: object
            required: [controllerName]
            properties:
              controllerName:
                type: string
                maxLength: 253
                minLength: 1
                pattern: ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$
                x-kubernetes-validations:
                - message: Value is immutable
                  rule: self == oldSelf
              description:
                type: string
                maxLength: 64
              parametersRef:
                type: object
                x-kubernetes-validations:
                - message: must name a known kind
                  rule: self.kind.lowerAscii() in ['configmap', 'secret']
                properties:
                  kind: {type: string}
                  name: {type: string}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
    subresources:
      status: {}
";

#[test]
fn a_cluster_scoped_gateway_class_crd_with_transition_rules() {
    let mut t = T::new();
    t.file("gc-crd.yaml", GATEWAY_CLASS_CRD);
    let o = t.run("kubectl apply -f gc-crd.yaml");
    assert_eq!(
        o.stdout,
        "customresourcedefinition.apiextensions.k8s.io/gatewayclasses.gateway.networking.k8s.io created\n"
    );
    assert_eq!(
        o.stderr,
        "Warning: kubeloop does not evaluate the x-kubernetes-validations rule \"self.kind.lowerAscii() in ['configmap', 'secret']\" at spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[parametersRef] (function 'lowerAscii' is not supported); it is stored but not enforced\n"
    );
    t.file(
        "gc.yaml",
        "apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: example
  namespace: ignored
spec:
  controllerName: example.net/gateway-controller
  description: The example class
",
    );
    assert_eq!(
        t.ok("kubectl apply -f gc.yaml"),
        "gatewayclass.gateway.networking.k8s.io/example created\n"
    );
    assert_eq!(
        t.ok("kubectl get gc -o wide"),
        "NAME      CONTROLLER                       ACCEPTED   AGE   DESCRIPTION\n\
         example   example.net/gateway-controller   <none>     0s    The example class\n"
    );
    assert_eq!(
        t.ok("kubectl patch gatewayclass example --subresource=status --type=merge -p '{\"status\":{\"conditions\":[{\"type\":\"Accepted\",\"status\":\"True\"}]}}'"),
        "gatewayclass.gateway.networking.k8s.io/example patched\n"
    );
    assert_eq!(
        t.ok("kubectl get gateway-api"),
        "NAME      CONTROLLER                       ACCEPTED   AGE\n\
         example   example.net/gateway-controller   True       0s\n"
    );
    assert_eq!(
        t.err("kubectl patch gc example --type=merge -p '{\"spec\":{\"controllerName\":\"example.net/other\"}}'"),
        "The GatewayClass \"example\" is invalid: spec.controllerName: Invalid value: \"string\": Value is immutable\n"
    );
    assert_eq!(
        t.ok("kubectl get gatewayclasses.v1.gateway.networking.k8s.io -o name"),
        "gatewayclass.gateway.networking.k8s.io/example\n"
    );
    assert_eq!(
        t.ok("kubectl delete gc example"),
        "gatewayclass.gateway.networking.k8s.io \"example\" deleted\n"
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
fn every_served_version_answers_with_its_own_api_version() {
    let mut t = T::new();
    let two = CRONTAB_CRD.replace(
        "  versions:\n    - name: v1\n",
        "  versions:\n    - name: v1beta1\n      served: true\n      storage: false\n      schema:\n        openAPIV3Schema:\n          type: object\n          x-kubernetes-preserve-unknown-fields: true\n    - name: v1\n",
    );
    t.file("crd.yaml", &two);
    t.file("my-crontab.yaml", MY_CRONTAB);
    t.ok("kubectl apply -f crd.yaml");
    assert_eq!(
        t.ok("kubectl api-versions")
            .matches("stable.example.com")
            .count(),
        2
    );
    t.ok("kubectl apply -f my-crontab.yaml");
    assert_eq!(
        t.ok("kubectl get crontabs.v1beta1.stable.example.com my-new-cron-object -o jsonpath={.apiVersion}"),
        "stable.example.com/v1beta1"
    );
    assert_eq!(
        t.ok("kubectl get ct my-new-cron-object -o jsonpath={.apiVersion}"),
        "stable.example.com/v1"
    );
    assert_eq!(
        t.ok("kubectl get crd crontabs.stable.example.com -o jsonpath={.status.storedVersions}"),
        "[\"v1\"]"
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
fn describe_crd_prints_its_spec_and_status() {
    let mut t = with_crd();
    let d = t.ok("kubectl describe crd crontabs.stable.example.com");
    assert!(
        d.starts_with("Name:         crontabs.stable.example.com\nNamespace:    \nLabels:       <none>\nAnnotations:  "),
        "{d}"
    );
    for line in [
        "API Version:  apiextensions.k8s.io/v1\n",
        "Kind:         CustomResourceDefinition\n",
        "  Accepted Names:\n    Categories:\n      all\n    Kind:       CronTab\n",
        "    Message:               the initial names have been accepted\n",
        "  Stored Versions:\n    v1\n",
    ] {
        assert!(d.contains(line), "{line}\n{d}");
    }
}

fn indented(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines().map(|l| format!("{pad}{l}\n")).collect()
}

#[test]
fn a_scenario_installs_a_crd_and_its_objects() {
    let text = format!(
        "apiVersion: kubeloop.dev/v1alpha1
kind: Scenario
metadata:
  name: crontab-crd
spec:
  files:
    crd.yaml: |
{}    my-crontab.yaml: |
{}  steps:
  - at: 0s
    run: kubectl apply -f crd.yaml
  - at: 1s
    run: kubectl apply -f my-crontab.yaml
  - at: 2s
    run: kubectl get ct
",
        indented(CRONTAB_CRD, 6),
        indented(MY_CRONTAB, 6)
    );
    let sc = kubeloop_sim::scenario::parse_scenario(&text).unwrap_or_else(|e| panic!("{e:?}"));
    let r = kubeloop_sim::runner::run(&sc, None).1;
    let out: Vec<&str> = r.iter().map(|s| s.stdout.as_str()).collect();
    assert_eq!(
        out,
        [
            "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n",
            "crontab.stable.example.com/my-new-cron-object created\n",
            "NAME                 SPEC          REPLICAS   AGE\nmy-new-cron-object   * * * * */5   1          1s\n",
        ]
    );
}

#[test]
fn a_second_crd_claiming_taken_names_is_not_established() {
    let mut t = with_crd();
    let rival = CRONTAB_CRD
        .replace("crontabs.stable.example.com", "cronjobs.stable.example.com")
        .replace("plural: crontabs", "plural: cronjobs")
        .replace("singular: crontab", "singular: cronjob")
        .replace("kind: CronTab", "kind: CronJob");
    t.file("rival.yaml", &rival);
    t.ok("kubectl apply -f rival.yaml");
    assert_eq!(
        t.ok("kubectl get crd cronjobs.stable.example.com -o 'jsonpath={range .status.conditions[*]}{.type}={.status}/{.reason}: {.message}{\"\\n\"}{end}'"),
        "NamesAccepted=False/NameConflict: \"ct\" is already in use\nEstablished=False/NotAccepted: not all names are accepted\n"
    );
    assert_eq!(
        t.ok("kubectl api-resources --api-group=stable.example.com -o name"),
        "crontabs.stable.example.com\n"
    );
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
