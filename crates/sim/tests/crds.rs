//! CustomResourceDefinitions through the terminal: the docs' CronTab CRD
//! (stable.example.com) and a Gateway-API-like one: validation of the CRD, its
//! conditions, discovery, short names and categories, served versions, name conflicts,
//! describe, scenarios, and deleting a CRD deleting its objects.

mod common;
use common::crd::{with_crd, CRONTAB_CRD, MY_CRONTAB};
use common::Term as T;

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
    let watch = "kubectl get crontabs.v1beta1.stable.example.com -w -o 'jsonpath={.apiVersion} '";
    let pid = match kubeloop_sim::cmd::start(&mut t.w, watch, &t.files) {
        kubeloop_sim::cmd::Started::Running(id) => id,
        kubeloop_sim::cmd::Started::Done(o) => panic!("{o:?}"),
    };
    t.ok("kubectl apply -f my-crontab.yaml");
    t.settle(1);
    let seen = t.w.terminal(pid).expect("watching").take_unread();
    assert!(seen.ends_with(" stable.example.com/v1beta1 "), "{seen}");
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
fn a_file_with_a_crd_and_its_object_needs_a_second_apply() {
    let mut t = T::new();
    t.file("both.yaml", &format!("{CRONTAB_CRD}---\n{MY_CRONTAB}"));
    let o = t.run("kubectl apply -f both.yaml");
    assert_eq!(
        (o.exit_code, o.stdout.as_str(), o.stderr.as_str()),
        (
            1,
            "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n",
            "error: resource mapping not found for name: \"my-new-cron-object\" namespace: \"\" from \"both.yaml\": no matches for kind \"CronTab\" in version \"stable.example.com/v1\"\nensure CRDs are installed first\n"
        )
    );
    assert_eq!(
        t.ok("kubectl apply -f both.yaml"),
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com unchanged\n\
         crontab.stable.example.com/my-new-cron-object created\n"
    );
}

#[test]
fn a_crd_update_changes_what_discovery_serves() {
    let mut t = with_crd();
    t.ok("kubectl apply -f my-crontab.yaml");
    t.settle(30);
    t.file(
        "crd.yaml",
        &CRONTAB_CRD.replace("    - ct\n", "    - ct\n    - cts\n"),
    );
    assert_eq!(
        t.ok("kubectl apply -f crd.yaml"),
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com configured\n"
    );
    assert_eq!(
        t.ok("kubectl get cts -o name"),
        "crontab.stable.example.com/my-new-cron-object\n"
    );
    // The conditions keep their first transition time.
    assert_eq!(
        t.ok("kubectl get crd crontabs.stable.example.com -o 'jsonpath={.status.conditions[*].lastTransitionTime} {.status.acceptedNames.shortNames}'"),
        "2026-01-01T00:00:00Z 2026-01-01T00:00:00Z [\"ct\",\"cts\"]"
    );
    t.file(
        "crd.yaml",
        &CRONTAB_CRD.replace("scope: Namespaced", "scope: Cluster"),
    );
    assert_eq!(
        t.err("kubectl apply -f crd.yaml"),
        "The CustomResourceDefinition \"crontabs.stable.example.com\" is invalid: spec.scope: Invalid value: \"Cluster\": field is immutable\n"
    );
}

#[test]
fn kubectl_wait_sees_the_established_condition() {
    let mut t = with_crd();
    assert_eq!(
        t.ok("kubectl wait --for condition=established --timeout=60s crd/crontabs.stable.example.com"),
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com condition met\n"
    );
}
