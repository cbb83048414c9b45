//! The namespace controller: empties a Terminating namespace of every namespaced kind
//! (list, then delete what is left), reports what remains in the namespace's
//! conditions, and when nothing is left removes the `kubernetes` finalizer through the
//! `finalize` subresource, which lets the apiserver delete the namespace.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Namespace, NamespaceCondition, NamespaceSpec};

use crate::api::{ApiRequest, ApiResponse, ApiResult, Body, ReqId, Subresource, Verb};
use crate::client::{Change, Pending, WorkQueue};
use crate::controllers::{Action, Controller, Env, Informers, SyncResult};
use crate::object::{Kind, Object};
use crate::time::{k8s_time, Time, SECOND};

/// How long to wait before looking again at a namespace whose content is still going
/// away (pods terminating gracefully).
const RECHECK: Time = 2 * SECOND;

/// One namespace being emptied: the lists still out and what they found.
#[derive(Debug, Default)]
struct Sweep {
    lists_out: usize,
    /// Remaining objects per resource (`pods` → 2).
    remaining: BTreeMap<&'static str, usize>,
}

/// The namespace controller.
#[derive(Default)]
pub struct NamespaceController {
    sweeps: BTreeMap<String, Sweep>,
    /// Request tag → (namespace, kind listed).
    /// The List requests in flight: which namespace and kind each is for.
    sent: Pending<(String, Kind)>,
}

fn terminating(o: &Object) -> bool {
    matches!(o, Object::Namespace(n) if n.metadata.deletion_timestamp.is_some())
}

impl NamespaceController {
    fn finish(&mut self, ns: String, env: &mut Env, inf: &Informers) {
        let Some(sweep) = self.sweeps.remove(&ns) else {
            return;
        };
        let Some(Object::Namespace(current)) =
            inf.of(Kind::Namespace).get("", &ns).map(|o| (**o).clone())
        else {
            return;
        };
        if sweep.remaining.is_empty() {
            // Everything is gone: drop our finalizer; the apiserver deletes the namespace.
            let kept: Vec<String> = current
                .spec
                .as_ref()
                .and_then(|s| s.finalizers.clone())
                .unwrap_or_default()
                .into_iter()
                .filter(|f| f != "kubernetes")
                .collect();
            let body = Namespace {
                metadata: current.metadata.clone(),
                spec: Some(NamespaceSpec {
                    finalizers: Some(kept),
                }),
                status: None,
            };
            env.fire(
                ApiRequest::new(Verb::Update, Kind::Namespace, "", &ns)
                    .with_subresource(Subresource::Finalize)
                    .with_body(Body::Object(Object::from(body))),
            );
            return;
        }
        let resources: Vec<&str> = sweep.remaining.keys().copied().collect();
        let counts: Vec<String> = sweep
            .remaining
            .iter()
            .map(|(r, n)| format!("{r} has {n} resource instances"))
            .collect();
        let now = env.now();
        let cond = |t: &str, status: &str, reason: &str, msg: &str| NamespaceCondition {
            type_: t.to_string(),
            status: status.to_string(),
            reason: Some(reason.to_string()),
            message: Some(msg.to_string()),
            last_transition_time: Some(k8s_time(now)),
        };
        let conditions = vec![
            cond(
                "NamespaceDeletionDiscoveryFailure",
                "False",
                "ResourcesDiscovered",
                "All resources successfully discovered",
            ),
            cond(
                "NamespaceDeletionGroupVersionParsingFailure",
                "False",
                "ParsedGroupVersions",
                "All legacy kube types successfully parsed",
            ),
            cond(
                "NamespaceDeletionContentFailure",
                "False",
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization",
            ),
            cond(
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                &format!("Some resources are remaining: {}", counts.join(", ")),
            ),
            cond(
                "NamespaceFinalizersRemaining",
                "False",
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished",
            ),
        ];
        let old_msgs: Vec<Option<String>> = current
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .map(|cs| cs.iter().map(|c| c.message.clone()).collect())
            .unwrap_or_default();
        let new_msgs: Vec<Option<String>> = conditions.iter().map(|c| c.message.clone()).collect();
        if old_msgs != new_msgs {
            let mut ns_obj = current.clone();
            let status = ns_obj.status.get_or_insert_with(Default::default);
            status.conditions = Some(conditions);
            env.fire(
                ApiRequest::new(Verb::Update, Kind::Namespace, "", &ns)
                    .with_subresource(Subresource::Status)
                    .with_body(Body::Object(Object::Namespace(ns_obj))),
            );
        }
        let _ = resources;
        env.enqueue_after(ns, RECHECK);
    }
}

impl Controller for NamespaceController {
    fn name(&self) -> &'static str {
        "namespace-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        // CRDs: the custom kinds discovery serves are swept too.
        &[Kind::Namespace, Kind::CustomResourceDefinition]
    }

    fn on_change(
        &mut self,
        kind: Kind,
        change: &Change,
        queue: &mut WorkQueue<String>,
        _inf: &Informers,
        _now: Time,
    ) {
        if kind != Kind::Namespace {
            return;
        }
        if let Change::Added(o) | Change::Updated(_, o) = change {
            if terminating(o) {
                queue.add(o.name().to_string());
            }
        }
    }

    fn sync(&mut self, key: &str, env: &mut Env, inf: &Informers) -> SyncResult {
        let Some(o) = inf.of(Kind::Namespace).get("", key) else {
            self.sweeps.remove(key);
            return Ok(Action::await_change());
        };
        if !terminating(o) || self.sweeps.contains_key(key) {
            return Ok(Action::await_change());
        }
        // Like the controller's discovery walk: every namespaced resource the server has.
        let mut sweep = Sweep::default();
        let crds = inf.of(Kind::CustomResourceDefinition).iter().map(|o| &**o);
        let custom = crate::apiserver::crd::discovery(crds).preferred();
        for kind in Kind::ALL.iter().copied().chain(custom) {
            if !kind.info().namespaced {
                continue;
            }
            let id = env.send(ApiRequest::new(Verb::List, kind, key, ""));
            self.sent.insert(id, (key.to_string(), kind));
            sweep.lists_out += 1;
        }
        self.sweeps.insert(key.to_string(), sweep);
        Ok(Action::await_change())
    }

    fn on_response(&mut self, id: ReqId, resp: &ApiResponse, env: &mut Env, inf: &Informers) {
        let Some((ns, kind)) = self.sent.take(id) else {
            return;
        };
        let Some(sweep) = self.sweeps.get_mut(&ns) else {
            return;
        };
        sweep.lists_out = sweep.lists_out.saturating_sub(1);
        match &resp.result {
            Ok(ApiResult::List { items, .. }) => {
                if !items.is_empty() {
                    sweep.remaining.insert(kind.info().plural, items.len());
                }
                for o in items {
                    if o.meta().deletion_timestamp.is_none() {
                        env.fire(ApiRequest::new(Verb::Delete, kind, &ns, o.name()));
                    }
                }
            }
            // A failed list leaves content we cannot see: try again later.
            _ => {
                sweep.remaining.insert(kind.info().plural, 0);
            }
        }
        if sweep.lists_out == 0 {
            self.finish(ns, env, inf);
        }
    }
}
