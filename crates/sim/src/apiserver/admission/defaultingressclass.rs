//! `DefaultIngressClass` (plugin/pkg/admission/network/defaultingressclass): an Ingress
//! created without `spec.ingressClassName` and without the `kubernetes.io/ingress.class`
//! annotation gets the IngressClass annotated `ingressclass.kubernetes.io/is-default-class:
//! "true"`; with several, the newest by creationTimestamp (then the first by name) wins.

use k8s_openapi::api::networking::v1::{Ingress, IngressClass};

/// `networkingv1.AnnotationIsDefaultIngressClass`.
pub const IS_DEFAULT_CLASS: &str = "ingressclass.kubernetes.io/is-default-class";
/// `networkingv1beta1.AnnotationIngressClass`, the class annotation older Ingresses use.
pub const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// `getDefaultClass`: the newest class marked default, ties broken by name.
pub fn default_class(classes: &[IngressClass]) -> Option<&IngressClass> {
    let mut defaults: Vec<&IngressClass> = classes
        .iter()
        .filter(|c| {
            c.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(IS_DEFAULT_CLASS))
                .is_some_and(|v| v == "true")
        })
        .collect();
    defaults.sort_by(|a, b| {
        let ts = |c: &IngressClass| c.metadata.creation_timestamp.as_ref().map(|t| t.0);
        ts(b)
            .cmp(&ts(a))
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    defaults.into_iter().next()
}

/// `Admit` on create: fills `spec.ingressClassName` from the default class.
pub fn admit(ing: &mut Ingress, classes: &[IngressClass]) {
    let spec = ing.spec.get_or_insert_with(Default::default);
    if spec.ingress_class_name.is_some() {
        return;
    }
    if ing
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(INGRESS_CLASS_ANNOTATION))
    {
        return;
    }
    if let Some(c) = default_class(classes) {
        spec.ingress_class_name = c.metadata.name.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, secs: u64, default: bool) -> IngressClass {
        let mut c = IngressClass::default();
        c.metadata.name = Some(name.into());
        c.metadata.creation_timestamp = Some(crate::time::k8s_time(secs * 1000));
        if default {
            c.metadata.annotations =
                Some([(IS_DEFAULT_CLASS.to_string(), "true".to_string())].into());
        }
        c
    }

    fn admitted(classes: &[IngressClass], ing: Ingress) -> Option<String> {
        let mut ing = ing;
        admit(&mut ing, classes);
        ing.spec.and_then(|s| s.ingress_class_name)
    }

    #[test]
    fn the_newest_default_wins_and_ties_go_to_the_first_name() {
        let classes = [
            class("old", 10, true),
            class("new", 20, true),
            class("plain", 30, false),
        ];
        assert_eq!(
            admitted(&classes, Ingress::default()).as_deref(),
            Some("new")
        );
        let tied = [class("b", 20, true), class("a", 20, true)];
        assert_eq!(admitted(&tied, Ingress::default()).as_deref(), Some("a"));
    }

    #[test]
    fn a_class_given_by_name_or_annotation_is_kept() {
        let classes = [class("nginx", 10, true)];
        let mut named = Ingress::default();
        named.spec = Some(k8s_openapi::api::networking::v1::IngressSpec {
            ingress_class_name: Some("other".into()),
            ..Default::default()
        });
        assert_eq!(admitted(&classes, named).as_deref(), Some("other"));
        let mut annotated = Ingress::default();
        annotated.metadata.annotations =
            Some([(INGRESS_CLASS_ANNOTATION.to_string(), "x".to_string())].into());
        assert_eq!(admitted(&classes, annotated), None);
        assert_eq!(
            admitted(&[class("nginx", 10, false)], Ingress::default()),
            None
        );
    }
}
