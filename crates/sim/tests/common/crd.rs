//! The CRDs the CRD tests share: the docs' CronTab CRD and object, and a terminal with
//! the CRD applied.

use super::Term;

/// The documentation's CRD (tasks/extend-kubernetes/custom-resources/
/// custom-resource-definitions), with the printer columns and subresources its later
/// sections add.
pub const CRONTAB_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
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

pub const MY_CRONTAB: &str = "apiVersion: \"stable.example.com/v1\"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: \"* * * * */5\"
  image: my-awesome-cron-image
";

pub fn with_crd() -> Term {
    let mut t = Term::new();
    t.file("crd.yaml", CRONTAB_CRD);
    t.file("my-crontab.yaml", MY_CRONTAB);
    assert_eq!(
        t.ok("kubectl apply -f crd.yaml"),
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n"
    );
    t
}
