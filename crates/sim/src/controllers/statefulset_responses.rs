//! The StatefulSet controller's responses: events for pod and claim writes, revisions
//! created, hash collisions counted.

use super::*;

impl StatefulSetController {
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
        let set_of = |key: &str| {
            let (ns, name) = split_key(key);
            inf.of(Kind::StatefulSet).get(ns, name).cloned()
        };
        match sent {
            Sent::CreatePod(key, pod) => self.pod_written("create", key, &pod, resp, env, inf),
            Sent::DeletePod(key, pod) => self.pod_written("delete", key, &pod, resp, env, inf),
            Sent::CreateClaim(key, claim, pod) => {
                let Some(set) = set_of(&key) else { return };
                match &resp.result {
                    Ok(_) => {
                        let msg = format!(
                            "create Claim {claim} Pod {pod} in StatefulSet {} success",
                            set.name()
                        );
                        env.event(&set, NORMAL, "SuccessfulCreate", &msg);
                    }
                    Err(e) if e.is_already_exists() => {}
                    Err(e) => {
                        let msg = format!(
                            "create Claim {claim} for Pod {pod} in StatefulSet {} failed error: {}",
                            set.name(),
                            e.message
                        );
                        env.event(&set, WARNING, "FailedCreate", &msg);
                    }
                }
            }
            Sent::Revision(key) => {
                match &resp.result {
                    Ok(ApiResult::Object(o)) => {
                        if let Object::ControllerRevision(r) = &**o {
                            self.created_revisions
                                .insert(o.name().to_string(), (**r).clone());
                        }
                        env.enqueue(key);
                    }
                    Err(e) if e.is_already_exists() => {
                        // A revision of that name with other data: a hash collision.
                        self.bump_collision(&key, env, inf);
                    }
                    _ => env.retry(key),
                }
            }
            Sent::Other(key) => {
                if resp.result.is_err() {
                    env.retry(key);
                }
            }
        }
    }

    /// A pod create or delete answered (`recordPodEvent`): the event, and on failure the
    /// expectation dropped and the set retried.
    fn pod_written(
        &mut self,
        verb: &str,
        key: String,
        pod: &str,
        resp: &ApiResponse,
        env: &mut Env,
        inf: &Informers,
    ) {
        let (ns, name) = split_key(&key);
        let set = inf.of(Kind::StatefulSet).get(ns, name).cloned();
        let (ok, failed) = match verb {
            "create" => ("SuccessfulCreate", "FailedCreate"),
            _ => ("SuccessfulDelete", "FailedDelete"),
        };
        match (&resp.result, set) {
            (Ok(_), Some(set)) => {
                let msg = format!("{verb} Pod {pod} in StatefulSet {} successful", set.name());
                env.event(&set, NORMAL, ok, &msg);
            }
            (Err(e), set) => {
                self.observed(&key, pod);
                let benign = e.is_already_exists() || e.is_not_found();
                if let (false, Some(set)) = (benign, set) {
                    let msg = format!(
                        "{verb} Pod {pod} in StatefulSet {} failed error: {}",
                        set.name(),
                        e.message
                    );
                    env.event(&set, WARNING, failed, &msg);
                }
                env.retry(key);
            }
            _ => {}
        }
    }

    /// A revision name already taken by different data: count the collision so the next
    /// hash differs (`collisionCount`).
    fn bump_collision(&mut self, key: &str, env: &mut Env, inf: &Informers) {
        let (ns, name) = split_key(key);
        let Some(set) = inf.of(Kind::StatefulSet).get(ns, name) else {
            return;
        };
        let Object::StatefulSet(s) = &**set else {
            return;
        };
        let mut updated = s.clone();
        let st = updated.status.get_or_insert_with(Default::default);
        st.collision_count = Some(st.collision_count.unwrap_or(0) + 1);
        let req = ApiRequest::new(Verb::Update, Kind::StatefulSet, ns, name)
            .with_subresource(Subresource::Status)
            .with_body(Body::Object(updated.into()));
        let id = env.send(req);
        self.sent.insert(id, Sent::Other(key.to_string()));
    }
}
