//! The DaemonSet controller's rolling update steps (`rollingUpdate` with and without
//! surge) and its responses: events for pod writes, revisions created, hash collisions
//! counted.

use super::*;

/// `rollingUpdate`: the pods to create and delete for a RollingUpdate DaemonSet (nothing
/// for OnDelete), maxSurge and maxUnavailable resolved against desiredNumberScheduled
/// (rounded up).
pub(super) fn rolling_update<'a>(
    ds: &DaemonSet,
    nodes: &[(&Node, bool, bool)],
    by_node: &BTreeMap<&str, OnNode<'a>>,
    now: Time,
    creates: &mut Vec<String>,
    deletes: &mut Vec<&'a Arc<Object>>,
) {
    let spec = ds.spec.clone().unwrap_or_default();
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    if strategy.type_.as_deref() == Some("OnDelete") {
        return;
    }
    let desired = nodes.iter().filter(|(_, run, _)| *run).count() as i32;
    let ru = strategy.rolling_update.unwrap_or_default();
    let scaled = |v: Option<&IntOrString>, default: i32| {
        scaled_value(v.unwrap_or(&IntOrString::Int(default)), desired, true).unwrap_or(default)
    };
    let surge = scaled(ru.max_surge.as_ref(), 0);
    let unavailable_max = scaled(ru.max_unavailable.as_ref(), 1);
    let runnable: Vec<&str> = nodes
        .iter()
        .filter(|(_, run, _)| *run)
        .filter_map(|(n, _, _)| n.metadata.name.as_deref())
        .collect();
    if surge == 0 {
        roll_in_place(
            &runnable,
            by_node,
            unavailable_max.max(1),
            min_ready,
            now,
            deletes,
        );
    } else {
        roll_with_surge(&runnable, by_node, surge, min_ready, now, creates, deletes);
    }
}

/// maxSurge 0: old pods go on at most maxUnavailable nodes at once; an old pod that is
/// already unavailable goes at once.
pub(super) fn roll_in_place<'a>(
    runnable: &[&str],
    by_node: &BTreeMap<&str, OnNode<'a>>,
    max_unavailable: i32,
    min_ready: i32,
    now: Time,
    deletes: &mut Vec<&'a Arc<Object>>,
) {
    let mut unavailable = 0;
    let mut candidates = Vec::new();
    for n in runnable {
        let Some(on) = by_node.get(*n) else {
            unavailable += 1;
            continue;
        };
        let any_available = on
            .new
            .iter()
            .chain(on.old.iter())
            .any(|o| available(o, min_ready, now) && !as_pod(o).is_some_and(is_terminating));
        if !any_available {
            unavailable += 1;
        }
        for o in &on.old {
            if as_pod(o).is_some_and(is_terminating) {
                continue;
            }
            if !available(o, min_ready, now) {
                deletes.push(o);
            } else if on.new.is_empty() {
                candidates.push(*o);
            }
        }
    }
    let budget = (max_unavailable - unavailable).max(0) as usize;
    deletes.extend(candidates.into_iter().take(budget));
}

/// maxSurge > 0: a new pod starts beside the old one on at most maxSurge nodes at once;
/// the old pod goes once the new one is available (or at once if it is unavailable).
pub(super) fn roll_with_surge<'a>(
    runnable: &[&str],
    by_node: &BTreeMap<&str, OnNode<'a>>,
    surge: i32,
    min_ready: i32,
    now: Time,
    creates: &mut Vec<String>,
    deletes: &mut Vec<&'a Arc<Object>>,
) {
    let mut surging = 0;
    let mut want_new = Vec::new();
    for n in runnable {
        let Some(on) = by_node.get(*n) else { continue };
        let old: Vec<&Arc<Object>> = on
            .old
            .iter()
            .filter(|o| !as_pod(o).is_some_and(is_terminating))
            .copied()
            .collect();
        if old.is_empty() {
            continue;
        }
        if on.new.is_empty() {
            if old.iter().all(|o| !available(o, min_ready, now)) {
                deletes.extend(old);
            } else {
                want_new.push(n.to_string());
            }
            continue;
        }
        surging += 1;
        if on.new.iter().any(|o| available(o, min_ready, now)) {
            deletes.extend(old);
        }
    }
    let room = (surge - surging).max(0) as usize;
    creates.extend(want_new.into_iter().take(room));
}

impl DaemonSetController {
    pub(super) fn handle_response(
        &mut self,
        id: ReqId,
        resp: &ApiResponse,
        env: &mut Env,
        inf: &Informers,
    ) {
        let Some(sent) = self.sent.take(id) else {
            return;
        };
        let ds_of = |key: &str| {
            let (ns, name) = split_key(key);
            inf.of(Kind::DaemonSet).get(ns, name).cloned()
        };
        match sent {
            Sent::Create(key, node) => match (&resp.result, ds_of(&key)) {
                (Ok(ApiResult::Object(p)), Some(ds)) => {
                    env.event(
                        &ds,
                        NORMAL,
                        "SuccessfulCreate",
                        &format!("Created pod: {}", p.name()),
                    );
                }
                (Err(e), ds) => {
                    self.observed(&key, &format!("node/{node}"));
                    if let Some(ds) = ds {
                        env.event(
                            &ds,
                            WARNING,
                            "FailedCreate",
                            &format!("Error creating: {}", e.message),
                        );
                    }
                    env.retry(key);
                }
                _ => {}
            },
            Sent::Delete(key, pod) => match (&resp.result, ds_of(&key)) {
                (Ok(_), Some(ds)) => {
                    env.event(
                        &ds,
                        NORMAL,
                        "SuccessfulDelete",
                        &format!("Deleted pod: {pod}"),
                    );
                }
                (Err(e), ds) => {
                    self.observed(&key, &format!("pod/{pod}"));
                    if let (false, Some(ds)) = (e.is_not_found(), ds) {
                        env.event(
                            &ds,
                            WARNING,
                            "FailedDelete",
                            &format!("Error deleting: {}", e.message),
                        );
                    }
                    env.retry(key);
                }
                _ => {}
            },
            Sent::Revision(key) => self.revision_written(key, resp, env, inf),
            Sent::Other(key) => {
                if resp.result.is_err() {
                    env.retry(key);
                }
            }
        }
    }
}

impl DaemonSetController {
    /// `truncateHistory`: revisions no pod uses, past revisionHistoryLimit.
    pub(super) fn prune(
        &mut self,
        key: &str,
        ns: &str,
        ds: &DaemonSet,
        all: &[(Arc<Object>, ControllerRevision)],
        live_hashes: &[String],
        env: &mut Env,
    ) {
        let live: Vec<String> = all
            .iter()
            .filter(|(_, r)| {
                r.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(REVISION_HASH_LABEL))
                    .is_some_and(|h| live_hashes.contains(h))
            })
            .filter_map(|(_, r)| r.metadata.name.clone())
            .collect();
        let live: Vec<&str> = live.iter().map(String::as_str).collect();
        let limit = ds
            .spec
            .as_ref()
            .and_then(|s| s.revision_history_limit)
            .unwrap_or(10);
        for r in history::revisions_to_prune(all, &live, limit) {
            let rname = r.metadata.name.clone().unwrap_or_default();
            let id = env.send(ApiRequest::new(
                Verb::Delete,
                Kind::ControllerRevision,
                ns,
                &rname,
            ));
            self.sent.insert(id, Sent::Other(key.to_string()));
        }
    }
}

impl DaemonSetController {
    /// A revision create or renumbering answered: a name taken by other data is a hash
    /// collision, counted in `status.collisionCount`.
    fn revision_written(
        &mut self,
        key: String,
        resp: &ApiResponse,
        env: &mut Env,
        inf: &Informers,
    ) {
        let ds_of = |key: &str| {
            let (ns, name) = split_key(key);
            inf.of(Kind::DaemonSet).get(ns, name).cloned()
        };
        match &resp.result {
            Ok(ApiResult::Object(o)) => {
                if let Object::ControllerRevision(r) = &**o {
                    self.created_revisions
                        .insert(o.name().to_string(), (**r).clone());
                }
                env.enqueue(key);
            }
            Err(e) if e.is_already_exists() => {
                let Some(ds) = ds_of(&key) else { return };
                let Object::DaemonSet(d) = &*ds else { return };
                let mut d = d.clone();
                let st = d.status.get_or_insert_with(Default::default);
                st.collision_count = Some(st.collision_count.unwrap_or(0) + 1);
                let (ns, name) = split_key(&key);
                let req = ApiRequest::new(Verb::Update, Kind::DaemonSet, ns, name)
                    .with_subresource(Subresource::Status)
                    .with_body(Body::Object(d.into()));
                let id = env.send(req);
                self.sent.insert(id, Sent::Other(key));
            }
            _ => env.retry(key),
        }
    }
}
