//! The apiserver's reads served from its watch cache: consistent lists, watches with
//! their backlog, and SelfSubjectAccessReviews.

use std::sync::Arc;

use super::{ApiServer, Request};
use crate::api::{ApiRequest, ApiResult, Status, Verb};
use crate::apiserver::authz;
use crate::apiserver::watch::{CacheEvent, Watcher};
use crate::apiserver::write;
use crate::message::{Ctx, Payload};
use crate::object::{Kind, Object};

impl ApiServer {
    pub(super) fn finish_list(&mut self, ctx: &mut Ctx, r: Request) {
        let w = watcher_of(&r.req);
        let items: Vec<Arc<Object>> = if r.req.kind == Kind::Pod && node_filter(&w).is_some() {
            let node = node_filter(&w).unwrap_or_default();
            self.cache
                .pods_on_node(&node)
                .into_iter()
                .filter(|o| matches_watcher(&w, o))
                .collect()
        } else {
            self.cache
                .list(r.req.kind, &r.req.namespace)
                .into_iter()
                .filter(|o| matches_watcher(&w, o))
                .collect()
        };
        let resource_version = self.cache.revision();
        self.respond(
            ctx,
            r,
            Ok(ApiResult::List {
                items,
                resource_version,
            }),
        );
    }

    pub(super) fn start_watch(&mut self, ctx: &mut Ctx, r: Request) {
        let w = watcher_of(&r.req);
        let id = r.req.id;
        let client = r.client;
        let rv = r.req.options.resource_version.unwrap_or(0);
        let backlog: Vec<CacheEvent> = if rv == 0 {
            // "Get state and start at most recent": synthetic ADDED for what exists now.
            self.cache
                .list(r.req.kind, &r.req.namespace)
                .into_iter()
                .map(|o| CacheEvent {
                    revision: o.resource_version(),
                    object: o,
                    prev: None,
                    deleted: false,
                })
                .collect()
        } else {
            let kind = r.req.kind;
            match self.cache.events_after(kind, rv) {
                Some(evs) => evs,
                None => {
                    self.respond(ctx, r, Ok(ApiResult::WatchStarted));
                    let oldest = self.cache.oldest(kind).saturating_sub(1);
                    self.watchers.expire(ctx, client, id, rv, oldest);
                    return;
                }
            }
        };
        self.respond(ctx, r, Ok(ApiResult::WatchStarted));
        for ev in &backlog {
            if let Some(e) = w.translate(ev) {
                ctx.send(
                    client,
                    Payload::Watch(crate::api::WatchEvent {
                        watch_id: id,
                        event: Ok(e),
                    }),
                );
            }
        }
        self.watchers.add(client, id, w);
    }

    /// `SelfSubjectAccessReview`: authorizes the spec's attributes for the requester
    /// and answers with the verdict; nothing is stored.
    pub(super) fn access_review(&mut self, ctx: &mut Ctx, r: Request) {
        if r.req.verb != Verb::Create {
            let s = Status::new(
                405,
                crate::api::StatusReason::MethodNotAllowed,
                "the server does not allow this method on the requested resource",
            );
            return self.respond(ctx, r, Err(s));
        }
        let review = match write::decode_request_body(&r.req) {
            Ok(Object::SelfSubjectAccessReview(x)) => x,
            Ok(_) => return self.respond(ctx, r, Err(Status::bad_request("not a review"))),
            Err(s) => return self.respond(ctx, r, Err(s)),
        };
        let allowed = authz::review(&r.user, &review.spec, &self.cache);
        let mut out = review;
        out.status = Some(
            k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus {
                allowed,
                ..Default::default()
            },
        );
        let o = Arc::new(Object::SelfSubjectAccessReview(out));
        self.respond(ctx, r, Ok(ApiResult::Object(o)));
    }

    pub(super) fn expire_all_watches(&mut self, ctx: &mut Ctx) {
        let rv = self.cache.revision();
        self.watchers.expire_all(ctx, rv);
    }
}

fn watcher_of(req: &ApiRequest) -> Watcher {
    Watcher {
        kind: req.kind,
        namespace: if req.kind.info().namespaced {
            req.namespace.clone()
        } else {
            String::new()
        },
        labels: req.options.label_selector.clone(),
        fields: req.options.field_selector.clone(),
    }
}

fn node_filter(w: &Watcher) -> Option<String> {
    w.fields
        .as_ref()?
        .required_value("spec.nodeName")
        .filter(|n| !n.is_empty())
        .map(str::to_string)
}

fn matches_watcher(w: &Watcher, o: &Object) -> bool {
    w.matches(o)
}
