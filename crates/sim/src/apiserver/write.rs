//! What a write request turns into: decoding, defaulting, admission, validation, and the
//! etcd transaction (create, update, patch, delete with grace and finalizers, binding,
//! scale, eviction).

use std::sync::{Arc, LazyLock};

use k8s_openapi::api::core::v1::PodCondition;

use crate::api::{
    ApiRequest, ApiResult, Body, PatchType, Propagation, Status, StatusReason, Subresource, Verb,
};
use crate::apiserver::server::{ApiServer, Request};
use crate::apiserver::watch::with_rv;
use crate::apiserver::{admission_chain, crd, eviction, namespace, patch, status_patch, strategy};
use crate::etcd::{Expect, KeyValue, TxnOp};
use crate::object::{Kind, Object, ObjectKey};
use crate::time::{k8s_time, Time};

/// The etcd write a request resolved to.
#[derive(Debug)]
pub enum WriteOp {
    /// Nothing to write; answer directly.
    Respond(ApiResult),
    /// Create a new key.
    Create {
        /// etcd key.
        key: String,
        /// The object.
        obj: Arc<Object>,
    },
    /// Replace a key at a known revision.
    Update {
        /// etcd key.
        key: String,
        /// Revision the object was computed from.
        expect: u64,
        /// The new object.
        obj: Arc<Object>,
        /// Whether the client sent a resourceVersion (then a lost race is a 409).
        precondition: bool,
        /// Answer with a success Status instead of the object (bindings, evictions).
        status_only: bool,
    },
    /// Charge a PodDisruptionBudget for an eviction (its status, at a known revision);
    /// the server then computes the eviction again, which deletes the pod.
    PdbDecrement {
        /// etcd key of the PDB.
        key: String,
        /// Revision the budget was read at.
        expect: u64,
        /// The budget with its status charged.
        obj: Arc<Object>,
    },
    /// Delete a key at a known revision.
    Delete {
        /// etcd key.
        key: String,
        /// Revision the decision was based on.
        expect: u64,
    },
}

impl WriteOp {
    /// The transaction to send. The object moves into it (the op keeps an empty
    /// stand-in, one shared by every op: nothing reads it), so etcd holds the only
    /// reference and stamps its revision in place: the watch cache and the response
    /// then share etcd's copy.
    pub fn txn(&mut self) -> (String, Expect, TxnOp) {
        static TAKEN: LazyLock<Arc<Object>> =
            LazyLock::new(|| Arc::new(Object::ConfigMap(Default::default())));
        let take = |o: &mut Arc<Object>| std::mem::replace(o, TAKEN.clone());
        match self {
            WriteOp::Create { key, obj } => (key.clone(), Expect::Absent, TxnOp::Put(take(obj))),
            WriteOp::Update {
                key, expect, obj, ..
            }
            | WriteOp::PdbDecrement { key, expect, obj } => (
                key.clone(),
                Expect::ModRevision(*expect),
                TxnOp::Put(take(obj)),
            ),
            WriteOp::Delete { key, expect } => {
                (key.clone(), Expect::ModRevision(*expect), TxnOp::Delete)
            }
            WriteOp::Respond(_) => (String::new(), Expect::Any, TxnOp::Delete),
        }
    }

    /// The response after the transaction succeeded: the object as etcd stored it.
    pub fn success(self, revision: u64, kv: Option<KeyValue>, prev: Option<KeyValue>) -> ApiResult {
        let stored = |kv: Option<KeyValue>| {
            kv.map(|k| with_rv(&k.value, k.mod_revision))
                .unwrap_or_else(|| Arc::new(Object::Namespace(Default::default())))
        };
        match self {
            WriteOp::Create { .. }
            | WriteOp::Update {
                status_only: false, ..
            }
            | WriteOp::PdbDecrement { .. } => ApiResult::Object(stored(kv)),
            WriteOp::Update {
                status_only: true, ..
            } => ApiResult::Success(stored(kv)),
            WriteOp::Delete { .. } => match prev {
                Some(p) => ApiResult::Object(with_rv(&p.value, revision)),
                None => ApiResult::Success(Arc::new(Object::Namespace(Default::default()))),
            },
            WriteOp::Respond(r) => r,
        }
    }

    /// The error for a failed compare, or None when the write should be recomputed.
    pub fn conflict_status(&self, req: &ApiRequest, exists: bool) -> Option<Status> {
        match self {
            WriteOp::Create { key, .. } => {
                let name = key.rsplit('/').next().unwrap_or_default();
                Some(Status::already_exists(req.kind, name))
            }
            WriteOp::Update {
                precondition: true, ..
            } => Some(Status::conflict(req.kind, &req.name)),
            _ if !exists => Some(Status::not_found(req.kind, &req.name)),
            _ => None,
        }
    }
}

/// Computes the write for a request against the current object.
pub(crate) fn compute(
    s: &mut ApiServer,
    r: &Request,
    current: Option<Arc<Object>>,
    now: Time,
) -> Result<WriteOp, Status> {
    let req = &r.req;
    match (req.verb, req.subresource) {
        (Verb::Create, None) => create(s, req, now),
        (Verb::Create, Some(Subresource::Binding)) => binding(req, current, now),
        (Verb::Create, Some(Subresource::Eviction)) => {
            let pod = current
                .clone()
                .ok_or_else(|| Status::not_found(req.kind, &req.name))?;
            if let eviction::Decision::Charge(pdb) = eviction::decide(s, r, &pod, now)? {
                return Ok(eviction::charge_op(pdb));
            }
            let mut op = delete(req, current, now)?;
            if let WriteOp::Update {
                status_only, obj, ..
            } = &mut op
            {
                *status_only = true;
                *obj = eviction::with_disruption_target(obj, now);
            }
            Ok(op)
        }
        (Verb::Update, Some(Subresource::Finalize)) => namespace::finalize(req, current),
        (Verb::Update, sub) => {
            let current = current.ok_or_else(|| Status::not_found(req.kind, &req.name))?;
            let mut new = decode_body(req)?;
            check_name(req, &new)?;
            let precondition = new.resource_version() != 0;
            if !precondition {
                // An unconditional update (every kind here allows one) applies to the
                // current version.
                new.meta_mut().resource_version = current.meta().resource_version.clone();
            }
            if precondition && new.resource_version() != current.resource_version() {
                return Err(Status::conflict(req.kind, &req.name));
            }
            update(s, req, sub, new, &current, precondition, now)
        }
        (Verb::Patch, sub) => {
            let current = current.ok_or_else(|| Status::not_found(req.kind, &req.name))?;
            let (pt, doc) = match &req.body {
                Body::Patch(pt, doc) => (*pt, doc),
                Body::Scale(n) => return scale(s, req, &current, *n, now),
                _ => {
                    return Err(Status::bad_request(
                        "the body of the request was in an unknown format",
                    ))
                }
            };
            let new = match status_patch::apply(req, pt, doc, &current) {
                Some(new) => {
                    #[cfg(debug_assertions)]
                    status_patch::check_against_general_path(&new, &current, pt, doc);
                    new
                }
                None => patched_object(req, pt, doc, &current)?,
            };
            // patch.go's applyPatch checks the patched name against the URL's.
            check_name(req, &new)?;
            let rv = new.resource_version();
            let precondition = rv != 0 && rv != current.resource_version();
            if precondition {
                return Err(Status::conflict(req.kind, &req.name));
            }
            update(s, req, sub, new, &current, false, now)
        }
        (Verb::Delete, _) if req.kind == Kind::Namespace => {
            namespace::delete_namespace(req, current, now)
        }
        // The priorityclasses REST storage refuses to delete the system classes.
        (Verb::Delete, _)
            if req.kind == Kind::PriorityClass
                && matches!(
                    req.name.as_str(),
                    "system-node-critical" | "system-cluster-critical"
                ) =>
        {
            Err(Status::new(
                403,
                StatusReason::Forbidden,
                crate::apiserver::field_error::forbidden_message(
                    "priorityclasses.scheduling.k8s.io",
                    &req.name,
                    "this is a system priority class and cannot be deleted",
                ),
            ))
        }
        (Verb::Delete, _) => delete(req, current, now),
        _ => Err(Status::new(
            405,
            StatusReason::MethodNotAllowed,
            "the server does not allow this method on the requested resource",
        )),
    }
}

/// `current` under the patch `doc`: serialized, patched and strictly decoded again.
pub(crate) fn patched_object(
    req: &ApiRequest,
    pt: PatchType,
    doc: &serde_json::Value,
    current: &Object,
) -> Result<Object, Status> {
    let patched = patch::apply(&current.to_value(), pt, doc)
        .map_err(|e| Status::new(422, StatusReason::Invalid, e))?;
    decode_value(req.kind, &patched)
}

/// Decodes a request body strictly into an object of the request's kind.
pub(crate) fn decode_request_body(req: &ApiRequest) -> Result<Object, Status> {
    decode_body(req)
}

/// Decodes the request body strictly into an object of the request's kind.
pub(crate) fn decode_body(req: &ApiRequest) -> Result<Object, Status> {
    match &req.body {
        Body::Object(o) if o.kind() == req.kind => Ok(o.clone()),
        Body::Object(o) => Err(Status::bad_request(format!(
            "the API version in the data ({}) does not match the expected API version ({})",
            o.kind().info().api_version(),
            req.kind.info().api_version()
        ))),
        Body::Raw(v) => decode_value(req.kind, v),
        _ => Err(Status::bad_request(
            "the body of the request was in an unknown format",
        )),
    }
}

/// Strict decoding, with upstream's messages for type errors and unknown fields.
pub fn decode_value(kind: Kind, v: &serde_json::Value) -> Result<Object, Status> {
    let info = kind.info();
    let prefix = format!(
        "{} in version \"{}\" cannot be handled as a {}",
        info.kind, info.version, info.kind
    );
    let mut unknown = Vec::new();
    let o = Object::from_value(kind, v, &mut unknown)
        .map_err(|e| Status::bad_request(format!("{prefix}: {e}")))?;
    // A malformed quantity fails `Quantity.UnmarshalJSON`, before strictness is judged.
    if let Some(e) = crate::apiserver::quantity_fields::first_malformed(kind, v) {
        return Err(Status::bad_request(format!("{prefix}: {e}")));
    }
    if !unknown.is_empty() {
        let list: Vec<String> = unknown
            .iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect();
        return Err(Status::bad_request(format!(
            "{prefix}: strict decoding error: {}",
            list.join(", ")
        )));
    }
    Ok(o)
}

fn check_name(req: &ApiRequest, o: &Object) -> Result<(), Status> {
    if o.name() != req.name {
        return Err(Status::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({})",
            o.name(),
            req.name
        )));
    }
    Ok(())
}

fn create(s: &mut ApiServer, req: &ApiRequest, now: Time) -> Result<WriteOp, Status> {
    let mut obj = decode_body(req)?;
    let info = req.kind.info();
    if info.namespaced {
        let ns = obj.namespace().to_string();
        if ns.is_empty() {
            obj.meta_mut().namespace = Some(req.namespace.clone());
        } else if ns != req.namespace {
            return Err(Status::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        admission_chain::namespace_lifecycle(
            &s.cache,
            crate::apiserver::admission::Operation::Create,
            &obj,
        )?;
    } else {
        obj.meta_mut().namespace = None;
    }
    if obj.name().is_empty() {
        if let Some(base) = obj.meta().generate_name.clone() {
            let base: String = base.chars().take(58).collect();
            let name = format!("{base}{}", s.random_suffix());
            obj.meta_mut().name = Some(name);
        }
    }
    {
        let uid = crate::cluster::uuid(&mut s.rng);
        let m = obj.meta_mut();
        m.uid = Some(uid);
        m.creation_timestamp = Some(k8s_time(now));
        m.resource_version = None;
        m.deletion_timestamp = None;
        m.deletion_grace_period_seconds = None;
        m.managed_fields = None;
    }
    // Mutating admission runs before the strategy's PrepareForCreate, as in upstream's
    // create handler: a pod's QoS class is computed after LimitRanger's defaults.
    admission_chain::mutate_create(s, &mut obj)?;
    strategy::prepare_for_create(&mut obj);
    crd::on_write(
        &s.cache,
        req,
        &mut obj,
        None,
        crd::admit::Write::Create,
        now,
    )?;
    admission_chain::validate_create(s, &obj, now)?;
    let key = obj.key().etcd_key();
    let obj = Arc::new(obj);
    if !req.options.dry_run {
        admission_chain::charge_quota(s, &obj, now);
    }
    Ok(WriteOp::Create { key, obj })
}

fn update(
    s: &mut ApiServer,
    req: &ApiRequest,
    sub: Option<Subresource>,
    mut new: Object,
    current: &Arc<Object>,
    precondition: bool,
    now: Time,
) -> Result<WriteOp, Status> {
    let write = match sub {
        Some(Subresource::Status) => {
            strategy::prepare_for_status_update(&mut new, current);
            crd::admit::Write::Status
        }
        _ => {
            strategy::prepare_for_update(&mut new, current);
            admission_chain::mutate_update(s, &mut new, current)?;
            crd::admit::Write::Update
        }
    };
    crd::on_write(&s.cache, req, &mut new, Some(current), write, now)?;
    if matches!(new, Object::Custom(_)) && crd::admit::unchanged(&new, current) {
        // The custom resource storage writes nothing for a no-op update.
        return Ok(WriteOp::Respond(ApiResult::Object(current.clone())));
    }
    let status = matches!(sub, Some(Subresource::Status));
    admission_chain::validate_update(s, &new, current, status)?;
    let key = current.key().etcd_key();
    let expect = current.resource_version();
    // An object being deleted whose last finalizer is gone disappears now.
    let m = new.meta();
    let finalizers_done = m.finalizers.as_ref().is_none_or(|f| f.is_empty())
        && namespace::namespace_finalizers(&new).is_empty();
    let grace_done = new.kind() != Kind::Pod || m.deletion_grace_period_seconds.unwrap_or(0) == 0;
    if m.deletion_timestamp.is_some() && finalizers_done && grace_done {
        return Ok(WriteOp::Delete { key, expect });
    }
    new.meta_mut().resource_version = None;
    Ok(WriteOp::Update {
        key,
        expect,
        obj: Arc::new(new),
        precondition,
        status_only: false,
    })
}

fn scale(
    s: &mut ApiServer,
    req: &ApiRequest,
    current: &Arc<Object>,
    n: i32,
    now: Time,
) -> Result<WriteOp, Status> {
    let mut new = (**current).clone();
    match &mut new {
        Object::Deployment(d) => d.spec.get_or_insert_with(Default::default).replicas = Some(n),
        Object::ReplicaSet(r) => r.spec.get_or_insert_with(Default::default).replicas = Some(n),
        Object::StatefulSet(x) => x.spec.get_or_insert_with(Default::default).replicas = Some(n),
        Object::Custom(c) => crd::scale::set_replicas(&s.cache, c, n)?,
        _ => {
            return Err(Status::new(
                404,
                StatusReason::NotFound,
                "the server could not find the requested resource",
            ));
        }
    }
    update(s, req, None, new, current, false, now)
}

fn binding(req: &ApiRequest, current: Option<Arc<Object>>, now: Time) -> Result<WriteOp, Status> {
    let current = current.ok_or_else(|| Status::not_found(Kind::Pod, &req.name))?;
    let Body::Binding { node, annotations } = &req.body else {
        return Err(Status::bad_request("binding body required"));
    };
    let Object::Pod(mut pod) = (*current).clone() else {
        return Err(Status::internal("not a pod"));
    };
    if pod.metadata.deletion_timestamp.is_some() {
        return Err(Status::new(
            409,
            StatusReason::Conflict,
            format!(
                "pod {} is being deleted, cannot be assigned to a host",
                req.name
            ),
        ));
    }
    let spec = pod.spec.get_or_insert_with(Default::default);
    if let Some(existing) = spec.node_name.as_ref().filter(|n| !n.is_empty()) {
        return Err(Status::new(
            409,
            StatusReason::Conflict,
            format!(
                "pod {} is already assigned to node \"{}\"",
                req.name, existing
            ),
        ));
    }
    spec.node_name = Some(node.clone());
    if !annotations.is_empty() {
        let a = pod
            .metadata
            .annotations
            .get_or_insert_with(Default::default);
        a.extend(annotations.clone());
    }
    let status = pod.status.get_or_insert_with(Default::default);
    set_pod_condition(
        status.conditions.get_or_insert_with(Vec::new),
        "PodScheduled",
        "True",
        None,
        None,
        now,
    );
    let key = current.key().etcd_key();
    pod.metadata.resource_version = None;
    Ok(WriteOp::Update {
        key,
        expect: current.resource_version(),
        obj: Arc::new(Object::Pod(pod)),
        precondition: false,
        status_only: true,
    })
}

/// Sets (or updates) a pod condition, moving lastTransitionTime only when the status changes.
pub fn set_pod_condition(
    conds: &mut Vec<PodCondition>,
    type_: &str,
    status: &str,
    reason: Option<&str>,
    message: Option<&str>,
    now: Time,
) {
    let t = Some(k8s_time(now));
    if let Some(c) = conds.iter_mut().find(|c| c.type_ == type_) {
        if c.status != status {
            c.last_transition_time = t;
        }
        c.status = status.to_string();
        c.reason = reason.map(str::to_string);
        c.message = message.map(str::to_string);
        return;
    }
    conds.push(PodCondition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: reason.map(str::to_string),
        message: message.map(str::to_string),
        last_transition_time: t,
        last_probe_time: None,
        ..PodCondition::default()
    });
}

fn delete(req: &ApiRequest, current: Option<Arc<Object>>, now: Time) -> Result<WriteOp, Status> {
    let current = current.ok_or_else(|| Status::not_found(req.kind, &req.name))?;
    let key = ObjectKey::new(req.kind, &req.namespace, &req.name).etcd_key();
    let expect = current.resource_version();
    let mut obj = (*current).clone();
    let grace = graceful_period(req, &obj);
    let propagation = req.options.propagation.unwrap_or(Propagation::Background);
    let m = obj.meta_mut();
    let mut finalizers = m.finalizers.clone().unwrap_or_default();
    let already_deleting = m.deletion_timestamp.is_some();
    match propagation {
        Propagation::Foreground
            if !finalizers.iter().any(|f| f == "foregroundDeletion")
                && has_dependents_hint(req.kind) =>
        {
            finalizers.push("foregroundDeletion".into());
        }
        Propagation::Orphan
            if !finalizers.iter().any(|f| f == "orphan") && has_dependents_hint(req.kind) =>
        {
            finalizers.push("orphan".into());
        }
        _ => {}
    }
    if grace == 0 && finalizers.is_empty() {
        return Ok(WriteOp::Delete { key, expect });
    }
    // Graceful or finalizer-blocked: mark the object and keep it.
    let current_grace = m.deletion_grace_period_seconds;
    if already_deleting
        && current_grace.is_some_and(|g| g <= grace)
        && m.finalizers.as_ref() == Some(&finalizers)
    {
        return Ok(WriteOp::Respond(ApiResult::Object(current)));
    }
    m.finalizers = if finalizers.is_empty() {
        None
    } else {
        Some(finalizers)
    };
    m.deletion_grace_period_seconds = Some(grace);
    if !already_deleting || current_grace.is_some_and(|g| grace < g) {
        m.deletion_timestamp = Some(k8s_time(now + grace as u64 * 1000));
    }
    m.generation = m.generation.map(|g| g + 1);
    m.resource_version = None;
    if let Object::CustomResourceDefinition(c) = &mut obj {
        crd::set_terminating(c.status.get_or_insert_with(Default::default), now);
    }
    Ok(WriteOp::Update {
        key,
        expect,
        obj: Arc::new(obj),
        precondition: false,
        status_only: false,
    })
}

/// Kinds that commonly own others (deletions of these honour foreground/orphan).
fn has_dependents_hint(kind: Kind) -> bool {
    !matches!(kind, Kind::Event | Kind::Lease)
}

/// The grace period of a delete: pods that are bound and not terminal get their
/// terminationGracePeriodSeconds (or the request's); everything else goes at once.
fn graceful_period(req: &ApiRequest, o: &Object) -> i64 {
    let Object::Pod(p) = o else { return 0 };
    let requested = req.options.grace_period_seconds;
    let bound = p
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_ref())
        .is_some_and(|n| !n.is_empty());
    let phase = p
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("");
    if !bound || phase == "Succeeded" || phase == "Failed" {
        return 0;
    }
    let g = requested.unwrap_or_else(|| {
        p.spec
            .as_ref()
            .and_then(|s| s.termination_grace_period_seconds)
            .unwrap_or(30)
    });
    // A grace period of 0 from a client still means 1s unless forced (kubectl --force),
    // but the kubelet's final delete carries 0.
    g.max(0)
}
