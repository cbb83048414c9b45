//! The kubelet's node half: Lease renewals, the containerd health check, node status
//! (conditions and the images on the machine) and registration.

use crate::api::{ApiRequest, ApiResult, Body, PatchType, Status, Subresource, Verb};
use crate::message::Ctx;
use crate::node::runtime::CriOp;
use crate::object::{Kind, Object};
use crate::time::{k8s_micro_time, Time, MINUTE, SECOND};
use k8s_openapi::api::coordination::v1::Lease;

use super::{ApiPurpose, Inflight, Kubelet, Timer};

/// `nodeStatusUpdateFrequency` and the Lease renew interval (¼ of 40 s).
pub const HEARTBEAT: Time = 10 * SECOND;
/// `nodeStatusReportFrequency`.
const STATUS_REPORT: Time = 5 * MINUTE;

impl Kubelet {
    /// Every 10 s: renew the Lease, check containerd, post node status when it changed.
    pub(super) fn heartbeat(&mut self, ctx: &mut Ctx) {
        self.renew_lease(ctx);
        self.cri(ctx, CriOp::ListImages, Inflight::Health);
        self.timers.set(ctx, HEARTBEAT, Timer::Heartbeat);
    }

    /// The node lease controller's `sync` (component-helpers' lease controller): update
    /// the Lease the last renewal returned, without reading it first; with none (the
    /// first renewal, or the last one failed), read it — creating it when it is missing —
    /// and update what was read.
    fn renew_lease(&mut self, ctx: &mut Ctx) {
        if self.api_inflight.values().any(|p| {
            matches!(
                p,
                ApiPurpose::Lease | ApiPurpose::LeaseGet | ApiPurpose::LeaseCreate
            )
        }) {
            return;
        }
        match self.latest_lease.take() {
            Some(base) => self.update_lease(ctx, base),
            None => self.read_lease(ctx),
        }
    }

    /// `ensureLease`'s read (a missing Lease is created when the answer comes).
    fn read_lease(&mut self, ctx: &mut Ctx) {
        let req = ApiRequest::new(Verb::Get, Kind::Lease, "kube-node-lease", &self.name);
        self.api(ctx, req, ApiPurpose::LeaseGet);
    }

    /// `newLease(base)` and `leaseClient.Update`: the base's copy with this node as the
    /// holder and the renew time now.
    fn update_lease(&mut self, ctx: &mut Ctx, mut lease: Lease) {
        let spec = lease.spec.get_or_insert_with(Default::default);
        spec.holder_identity = Some(self.name.clone());
        spec.lease_duration_seconds = Some(40);
        spec.renew_time = Some(k8s_micro_time(ctx.now));
        let req = ApiRequest::new(Verb::Update, Kind::Lease, "kube-node-lease", &self.name)
            .with_body(Body::Object(lease.into()));
        self.api(ctx, req, ApiPurpose::Lease);
    }

    fn on_lease_response(&mut self, ctx: &mut Ctx, p: &ApiPurpose, r: &Result<ApiResult, Status>) {
        let lease = match r {
            Ok(ApiResult::Object(o)) => match &**o {
                Object::Lease(l) => Some((**l).clone()),
                _ => None,
            },
            _ => None,
        };
        match (p, r) {
            // Updated or created: the next renewal starts from it.
            (ApiPurpose::Lease | ApiPurpose::LeaseCreate, Ok(_)) => self.latest_lease = lease,
            // A conflict: `retryUpdateLease` reads the Lease again and updates that. Other
            // failures leave it to the next renewal, which reads it first.
            (ApiPurpose::Lease, Err(s)) if s.is_conflict() => self.read_lease(ctx),
            (ApiPurpose::LeaseGet, Ok(_)) => {
                if let Some(l) = lease {
                    self.update_lease(ctx, l);
                }
            }
            (ApiPurpose::LeaseGet, Err(s)) if s.is_not_found() => {
                let mut rng = crate::rng::Rng::stream(u64::from(self.node), "kubelet-lease");
                let lease = crate::cluster::node_lease(&self.name, ctx.now, &mut rng);
                let req = ApiRequest::new(Verb::Create, Kind::Lease, "kube-node-lease", "")
                    .with_body(Body::Object(lease.into()));
                self.api(ctx, req, ApiPurpose::LeaseCreate);
            }
            _ => {}
        }
    }

    pub(super) fn on_node_response(
        &mut self,
        ctx: &mut Ctx,
        p: ApiPurpose,
        r: &Result<ApiResult, Status>,
    ) {
        match (&p, r) {
            (ApiPurpose::NodeStatus, Err(s)) if s.is_not_found() => self.register(ctx),
            (ApiPurpose::NodeStatus, Err(_)) => self.last_node_report = None,
            (ApiPurpose::NodeGet, Ok(ApiResult::Object(node))) => {
                if let crate::object::Object::Node(n) = &**node {
                    self.patch_node_status(ctx, n);
                }
            }
            (ApiPurpose::NodeGet, Err(s)) if s.is_not_found() => self.register(ctx),
            (ApiPurpose::Lease | ApiPurpose::LeaseGet | ApiPurpose::LeaseCreate, _) => {
                self.on_lease_response(ctx, &p, r);
            }
            (ApiPurpose::Register, Ok(ApiResult::Object(_))) => {
                self.last_node_report = None;
                self.report_node_status(ctx);
            }
            _ => {}
        }
    }

    fn register(&mut self, ctx: &mut Ctx) {
        let host = crate::node::host::NodeHost::new(self.node as usize, self.config.clone());
        let mut rng = crate::rng::Rng::stream(u64::from(self.node), "kubelet-register");
        let node = crate::cluster::node_object(&host, ctx.now, &mut rng);
        let req =
            ApiRequest::new(Verb::Create, Kind::Node, "", "").with_body(Body::Object(node.into()));
        self.api(ctx, req, ApiPurpose::Register);
    }

    /// The images on the machine as node status lists them: largest first, at most 50.
    pub(super) fn set_images(&mut self, mut list: Vec<(Vec<String>, u64)>) {
        list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        list.truncate(50);
        let v: Vec<serde_json::Value> = list
            .into_iter()
            .map(|(names, size)| serde_json::json!({"names": names, "sizeBytes": size}))
            .collect();
        let v = serde_json::Value::Array(v);
        if self.images != v {
            self.images = v;
            self.images_dirty = true;
        }
    }

    /// `updateNodeStatus` (every `nodeStatusUpdateFrequency`, and after registering):
    /// read the Node back from the apiserver, then patch its status if it differs from
    /// what the kubelet would report, or if `nodeStatusReportFrequency` has passed.
    pub(super) fn report_node_status(&mut self, ctx: &mut Ctx) {
        if self
            .api_inflight
            .values()
            .any(|p| matches!(p, ApiPurpose::NodeGet))
        {
            return;
        }
        let req = ApiRequest::new(Verb::Get, Kind::Node, "", &self.name);
        self.api(ctx, req, ApiPurpose::NodeGet);
    }

    /// `tryUpdateNodeStatus` with the Node as the apiserver has it: the status changed
    /// (conditions compared without their heartbeat times, e.g. Ready set to Unknown by
    /// the node lifecycle controller), the images changed, or the report is due.
    fn patch_node_status(&mut self, ctx: &mut Ctx, server: &k8s_openapi::api::core::v1::Node) {
        let ready = self.runtime_ok;
        let desired = crate::cluster::node_conditions(ctx.now, ready);
        let current = server
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default();
        let key = |c: &k8s_openapi::api::core::v1::NodeCondition| {
            (
                c.type_.clone(),
                c.status.clone(),
                c.reason.clone(),
                c.message.clone(),
            )
        };
        let mut have: Vec<_> = current.iter().map(key).collect();
        let mut want: Vec<_> = desired.iter().map(key).collect();
        have.sort();
        want.sort();
        let changed = have != want;
        let due = self.images_dirty
            || changed
            || match self.last_node_report {
                None => true,
                Some((t, _)) => ctx.now >= t + STATUS_REPORT,
            };
        if !due {
            return;
        }
        self.last_node_report = Some((ctx.now, ready));
        let conditions: Vec<serde_json::Value> = desired
            .into_iter()
            .map(|c| {
                // A condition keeps its transition time unless its status changes.
                let same = current
                    .iter()
                    .any(|x| x.type_ == c.type_ && x.status == c.status);
                let mut v = serde_json::to_value(&c).unwrap_or_default();
                if let Some(m) = v.as_object_mut().filter(|_| same) {
                    m.remove("lastTransitionTime");
                }
                v
            })
            .collect();
        let mut patch = serde_json::json!({"status": {"conditions": conditions}});
        if self.images.as_array().is_some_and(|a| !a.is_empty()) {
            patch["status"]["images"] = self.images.clone();
        }
        self.images_dirty = false;
        let req = ApiRequest::new(Verb::Patch, Kind::Node, "", &self.name)
            .with_subresource(Subresource::Status)
            .with_body(Body::Patch(PatchType::StrategicMerge, patch));
        self.api(ctx, req, ApiPurpose::NodeStatus);
    }
}
