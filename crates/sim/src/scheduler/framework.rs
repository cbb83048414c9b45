//! The scheduling framework: Status, CycleState, one trait per extension point, and the
//! Framework (a profile's instantiated plugins, one list per extension point).

use std::any::Any;
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use super::nodeinfo::{NodeInfo, Snapshot};
use super::podinfo::PodInfo;
use super::queue::QueuedPodInfo;
use super::runtime::Framework;
use crate::api::ApiRequest;
use crate::rng::Rng;
use crate::time::Time;

/// `MaxNodeScore`: the highest score a plugin may give after normalizing.
pub const MAX_NODE_SCORE: i64 = 100;
/// `MinNodeScore`.
pub const MIN_NODE_SCORE: i64 = 0;
/// `MaxTotalScore` (math.MaxInt64).
pub const MAX_TOTAL_SCORE: i64 = i64::MAX;

/// What a plugin's verdict means for the pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// The plugin ran and the pod passed.
    Success,
    /// An internal error: the pod goes to backoffQ and is retried.
    Error,
    /// The pod does not fit now; preemption may help. The pod waits in unschedulablePods
    /// until a relevant cluster event.
    Unschedulable,
    /// The pod does not fit and preemption on this node would not help.
    UnschedulableAndUnresolvable,
    /// A Permit plugin asks the pod to wait.
    Wait,
    /// The plugin has nothing to do for this pod (PreFilter/PreScore): its Filter/Score
    /// counterpart is skipped this cycle.
    Skip,
    /// Waiting for something outside the scheduler; the pod is moved only by an event.
    Pending,
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A plugin's result: a code, human-readable reasons, and the plugin that produced it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The code.
    pub code: Code,
    /// Reasons, joined with ", " by [`Status::message`].
    pub reasons: Vec<Cow<'static, str>>,
    /// The plugin that returned this status ("" when none).
    pub plugin: &'static str,
}

impl Status {
    /// Success (allocation-free).
    pub fn success() -> Status {
        Status {
            code: Code::Success,
            reasons: Vec::new(),
            plugin: "",
        }
    }

    /// A status with one reason.
    pub fn new(code: Code, reason: impl Into<Cow<'static, str>>) -> Status {
        Status {
            code,
            reasons: vec![reason.into()],
            plugin: "",
        }
    }

    /// A status with several reasons.
    pub fn with_reasons(code: Code, reasons: Vec<Cow<'static, str>>) -> Status {
        Status {
            code,
            reasons,
            plugin: "",
        }
    }

    /// A status with a code and no reason.
    pub fn code_only(code: Code) -> Status {
        Status {
            code,
            reasons: Vec::new(),
            plugin: "",
        }
    }

    /// An Error status.
    pub fn error(msg: impl Into<Cow<'static, str>>) -> Status {
        Status::new(Code::Error, msg)
    }

    /// Sets the plugin name.
    pub fn with_plugin(mut self, plugin: &'static str) -> Status {
        self.plugin = plugin;
        self
    }

    /// Success or Skip count as success for the caller.
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }

    /// Unschedulable or UnschedulableAndUnresolvable.
    pub fn is_rejected(&self) -> bool {
        matches!(
            self.code,
            Code::Unschedulable | Code::UnschedulableAndUnresolvable
        )
    }

    /// The reasons joined with ", ".
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }
}

/// Data a plugin keeps in the CycleState between extension points.
pub trait StateData: Any {
    /// Clones the data (the preemption dry run clones the state per node).
    fn clone_data(&self) -> Box<dyn StateData>;
    /// As Any, for downcasting.
    fn as_any(&self) -> &dyn Any;
    /// As Any, mutably.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any + Clone> StateData for T {
    fn clone_data(&self) -> Box<dyn StateData> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Per-cycle scratch space shared by the plugins of one scheduling attempt.
#[derive(Default)]
pub struct CycleState {
    // Looked up by TypeId first (an integer compare) on the hot path, then by key.
    data: Vec<(&'static str, std::any::TypeId, Box<dyn StateData>)>,
    /// Filter plugins skipped because their PreFilter returned Skip.
    pub skip_filter_plugins: BTreeSet<&'static str>,
    /// Score plugins skipped because their PreScore returned Skip.
    pub skip_score_plugins: BTreeSet<&'static str>,
    /// `skip_filter_plugins` as bits over the framework's Filter list (hot-path check).
    pub(crate) skip_filter_bits: u64,
}

impl Clone for CycleState {
    fn clone(&self) -> CycleState {
        CycleState {
            data: self
                .data
                .iter()
                .map(|(k, t, v)| (*k, *t, (**v).clone_data()))
                .collect(),
            skip_filter_plugins: self.skip_filter_plugins.clone(),
            skip_score_plugins: self.skip_score_plugins.clone(),
            skip_filter_bits: self.skip_filter_bits,
        }
    }
}

impl fmt::Debug for CycleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&str> = self.data.iter().map(|(k, _, _)| *k).collect();
        f.debug_struct("CycleState").field("keys", &keys).finish()
    }
}

impl CycleState {
    /// Stores data under a key, replacing what was there.
    pub fn write<T: Any + Clone>(&mut self, key: &'static str, v: T) {
        let t = std::any::TypeId::of::<T>();
        match self.data.iter_mut().find(|(k, _, _)| *k == key) {
            Some(slot) => {
                slot.1 = t;
                slot.2 = Box::new(v);
            }
            None => self.data.push((key, t, Box::new(v))),
        }
    }

    /// Reads data of type T under a key.
    pub fn read<T: Any>(&self, key: &'static str) -> Option<&T> {
        let t = std::any::TypeId::of::<T>();
        self.data
            .iter()
            .find(|(k, tt, _)| *tt == t && *k == key)
            .and_then(|(_, _, v)| (**v).as_any().downcast_ref())
    }

    /// Reads data mutably.
    pub fn read_mut<T: Any>(&mut self, key: &'static str) -> Option<&mut T> {
        let t = std::any::TypeId::of::<T>();
        self.data
            .iter_mut()
            .find(|(k, tt, _)| *tt == t && *k == key)
            .and_then(|(_, _, v)| (**v).as_any_mut().downcast_mut())
    }
}

/// The result of PreFilter: optionally, the only nodes worth evaluating.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PreFilterResult {
    /// `None` = all nodes.
    pub node_names: Option<BTreeSet<String>>,
}

impl PreFilterResult {
    /// Intersects two results (`PreFilterResult.Merge`).
    pub fn merge(self, o: PreFilterResult) -> PreFilterResult {
        match (self.node_names, o.node_names) {
            (None, x) | (x, None) => PreFilterResult { node_names: x },
            (Some(a), Some(b)) => PreFilterResult {
                node_names: Some(a.intersection(&b).cloned().collect()),
            },
        }
    }
}

/// Filter statuses of the nodes that failed, and one status for nodes never evaluated.
#[derive(Clone, Debug, Default)]
pub struct NodeToStatus {
    /// Node index in the snapshot → its failing status.
    pub nodes: Vec<(usize, Status)>,
    /// Status of nodes not in `nodes` (only meaningful when not all nodes were evaluated).
    pub absent: Option<Status>,
}

impl NodeToStatus {
    /// The status of a node by index, if it failed or if an absent status applies.
    pub fn get(&self, idx: usize) -> Option<&Status> {
        self.nodes
            .iter()
            .find(|(i, _)| *i == idx)
            .map(|(_, s)| s)
            .or(self.absent.as_ref())
    }
}

/// Pods nominated to nodes by earlier preemptions, consulted when filtering.
pub type Nominated = std::collections::BTreeMap<String, Vec<Arc<PodInfo>>>;

/// Result of a PostFilter plugin: the node the pod is nominated to (after preemption).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PostFilterResult {
    /// The nominated node ("" = clear the nomination).
    pub nominated_node_name: String,
    /// Pods (`namespace/name`) to delete so the pod fits there.
    pub victims: Vec<String>,
    /// Lower-priority pods nominated to that node whose nomination must be cleared
    /// (`prepareCandidate`).
    pub clear_nominations: Vec<String>,
}

/// What a PostFilter plugin gets to work with.
pub struct PostFilterContext<'a> {
    /// The framework (to run filters during the dry run).
    pub framework: &'a Framework,
    /// The snapshot.
    pub snapshot: &'a Snapshot,
    /// Nominated pods.
    pub nominated: &'a Nominated,
    /// The scheduler's random stream (candidate offset).
    pub rng: &'a mut Rng,
}

/// What a `QueueingHintFn` answers: whether a cluster event may make a pod schedulable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueingHint {
    /// Move the pod out of unschedulablePods.
    Queue,
    /// The event cannot help this pod: leave it where it is.
    QueueSkip,
}

/// `isSchedulableAfterPersistentVolumeClaimChange` of the volume plugins: a claim event
/// matters only when the claim is one of the pod's; any other event queues.
pub fn claim_hint(pod: &PodInfo, event: &EventObjects<'_>) -> QueueingHint {
    match event {
        EventObjects::Claim(key) => if_queue(key.split_once('/').is_some_and(|(ns, name)| {
            ns == pod.namespace && pod.pvc_names.iter().any(|c| c == name)
        })),
        _ => QueueingHint::Queue,
    }
}

/// Queue when `b`, else QueueSkip.
pub fn if_queue(b: bool) -> QueueingHint {
    if b {
        QueueingHint::Queue
    } else {
        QueueingHint::QueueSkip
    }
}

/// The objects of a cluster event, as the queueing hints see them.
#[derive(Clone, Copy, Debug)]
pub enum EventObjects<'a> {
    /// An event whose objects no hint looks at.
    Other,
    /// A node was added (`old` None) or updated; NodeInfos without pods.
    Node {
        /// The node before the update.
        old: Option<&'a NodeInfo>,
        /// The node now.
        new: &'a NodeInfo,
    },
    /// A PersistentVolumeClaim (`namespace/name`) was added or changed.
    Claim(&'a str),
    /// A pod was bound (or assumed) on a node.
    AddedPod(&'a PodInfo),
    /// An assigned pod was deleted or became Succeeded/Failed.
    DeletedPod(&'a PodInfo),
    /// An assigned pod changed.
    UpdatedPod {
        /// Before.
        old: &'a PodInfo,
        /// After.
        new: &'a PodInfo,
    },
}

/// A plugin: a name and the extension points it implements.
pub trait Plugin {
    /// The plugin's registered name.
    fn name(&self) -> &'static str;
    /// `QueueingHintFn` for the events the plugin registers (`EventsToRegister`): whether
    /// the event may make `pod`, which this plugin rejected, schedulable. Default: Queue.
    fn queueing_hint(&self, _pod: &PodInfo, _event: &EventObjects<'_>) -> QueueingHint {
        QueueingHint::Queue
    }
    /// As a PreEnqueue plugin.
    fn as_pre_enqueue(&self) -> Option<&dyn PreEnqueuePlugin> {
        None
    }
    /// As a QueueSort plugin.
    fn as_queue_sort(&self) -> Option<&dyn QueueSortPlugin> {
        None
    }
    /// As a PreFilter plugin.
    fn as_pre_filter(&self) -> Option<&dyn PreFilterPlugin> {
        None
    }
    /// As a Filter plugin.
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        None
    }
    /// As a PostFilter plugin.
    fn as_post_filter(&self) -> Option<&dyn PostFilterPlugin> {
        None
    }
    /// As a PreScore plugin.
    fn as_pre_score(&self) -> Option<&dyn PreScorePlugin> {
        None
    }
    /// As a Score plugin.
    fn as_score(&self) -> Option<&dyn ScorePlugin> {
        None
    }
    /// As a Reserve plugin.
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        None
    }
    /// As a Permit plugin.
    fn as_permit(&self) -> Option<&dyn PermitPlugin> {
        None
    }
    /// As a PreBind plugin.
    fn as_pre_bind(&self) -> Option<&dyn PreBindPlugin> {
        None
    }
    /// As a Bind plugin.
    fn as_bind(&self) -> Option<&dyn BindPlugin> {
        None
    }
    /// As a PostBind plugin.
    fn as_post_bind(&self) -> Option<&dyn PostBindPlugin> {
        None
    }
}

/// Gates a pod before it enters activeQ (e.g. scheduling gates).
pub trait PreEnqueuePlugin {
    /// Success lets the pod in; anything else keeps it out until it changes.
    fn pre_enqueue(&self, pod: &PodInfo) -> Status;
}

/// Orders activeQ.
pub trait QueueSortPlugin {
    /// Whether `a` should be popped before `b`.
    fn less(&self, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool;
}

/// Runs once per cycle before filtering; may narrow the nodes or reject the pod.
pub trait PreFilterPlugin {
    /// Computes per-cycle data. Skip disables the plugin's Filter for this cycle.
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        snap: &Snapshot,
    ) -> (Option<PreFilterResult>, Status);
    /// `PreFilterExtensions.AddPod`: account a pod that will be on `node` (nominated pods,
    /// preemption dry runs). Default: nothing to update.
    fn add_pod(
        &self,
        _state: &mut CycleState,
        _pod: &PodInfo,
        _to_add: &PodInfo,
        _node: &NodeInfo,
    ) -> Status {
        Status::success()
    }
    /// `PreFilterExtensions.RemovePod`.
    fn remove_pod(
        &self,
        _state: &mut CycleState,
        _pod: &PodInfo,
        _to_remove: &PodInfo,
        _node: &NodeInfo,
    ) -> Status {
        Status::success()
    }
}

/// Decides whether a pod can run on one node.
pub trait FilterPlugin {
    /// Success, or a rejection with reasons.
    fn filter(&self, state: &CycleState, pod: &PodInfo, node: &NodeInfo) -> Status;
}

/// Runs when no node fits (preemption).
pub trait PostFilterPlugin {
    /// Tries to make the pod schedulable.
    fn post_filter(
        &self,
        ctx: &mut PostFilterContext<'_>,
        state: &CycleState,
        pod: &PodInfo,
        statuses: &NodeToStatus,
    ) -> (Option<PostFilterResult>, Status);
}

/// Runs once per cycle before scoring, over the feasible nodes.
pub trait PreScorePlugin {
    /// Computes per-cycle data; Skip disables the plugin's Score for this cycle.
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        feasible: &[usize],
        snap: &Snapshot,
    ) -> Status;
}

/// Scores one feasible node.
pub trait ScorePlugin {
    /// The raw score.
    fn score(
        &self,
        state: &CycleState,
        pod: &PodInfo,
        node: &NodeInfo,
        snap: &Snapshot,
    ) -> Result<i64, Status>;
    /// Whether the plugin has a NormalizeScore extension.
    fn has_normalize(&self) -> bool {
        false
    }
    /// Normalizes all nodes' raw scores into [0, 100], in place.
    fn normalize_score(&self, _state: &CycleState, _pod: &PodInfo, _scores: &mut [i64]) -> Status {
        Status::success()
    }
}

/// Reserves what the plugin tracks for the pod on its node, in the scheduler's cache
/// (`cache`), before the binding cycle starts.
pub trait ReservePlugin {
    /// Reserve; a failure ends the cycle and every Reserve plugin's Unreserve runs.
    fn reserve(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        node: &str,
        cache: &mut Snapshot,
    ) -> Status;
    /// Undoes Reserve (idempotent: it also runs for plugins whose Reserve did not).
    fn unreserve(
        &self,
        _state: &mut CycleState,
        _pod: &PodInfo,
        _node: &str,
        _cache: &mut Snapshot,
    ) {
    }
}

/// Approves, denies or delays binding.
pub trait PermitPlugin {
    /// Success, a rejection, or Wait with how long to wait (capped at 15 minutes).
    fn permit(&self, state: &CycleState, pod: &PodInfo, node: &str) -> (Status, Time);
}

/// Work before binding (e.g. binding volumes).
pub trait PreBindPlugin {
    /// Starts the work; API writes go to `writes`. Success: done; Pending: the binding
    /// cycle polls [`PreBindPlugin::pre_bind_poll`] every second; anything else fails it.
    fn pre_bind(
        &self,
        state: &mut CycleState,
        pod: &PodInfo,
        node: &str,
        now: Time,
        writes: &mut BindingWrites,
    ) -> Status;
    /// Whether pending work finished, as the scheduler's cache sees the cluster.
    fn pre_bind_poll(
        &self,
        _state: &CycleState,
        _pod: &PodInfo,
        _node: &str,
        _cache: &Snapshot,
        _now: Time,
    ) -> Status {
        Status::success()
    }
}

/// Binds the pod. Success means the plugin put its `Binding` in `writes` (the apiserver's
/// answer ends the cycle); Skip passes to the next binder.
pub trait BindPlugin {
    /// Binds, or skips.
    fn bind(
        &self,
        state: &CycleState,
        pod: &PodInfo,
        node: &str,
        writes: &mut BindingWrites,
    ) -> Status;
}

/// Informational after a successful bind.
pub trait PostBindPlugin {
    /// Called after binding.
    fn post_bind(&self, state: &CycleState, pod: &PodInfo, node: &str);
}

/// API writes the binding cycle's plugins ask for, each with the plugin that asked and
/// the words upstream puts before an error of that write.
#[derive(Debug, Default)]
pub struct BindingWrites {
    /// (plugin, error context, request), in order.
    pub requests: Vec<(&'static str, &'static str, ApiRequest)>,
    /// The scheduling-result annotations every Binding carries (design.md §3.4).
    pub annotations: std::collections::BTreeMap<String, String>,
}

impl BindingWrites {
    /// Queues a write.
    pub fn push(&mut self, plugin: &'static str, context: &'static str, req: ApiRequest) {
        self.requests.push((plugin, context, req));
    }

    /// Queues the pods/binding request for `pod` to `node`.
    pub fn binding(&mut self, plugin: &'static str, pod: &PodInfo, node: &str) {
        let req = ApiRequest::new(
            crate::api::Verb::Create,
            crate::object::Kind::Pod,
            &pod.namespace,
            &pod.name,
        )
        .with_subresource(crate::api::Subresource::Binding)
        .with_body(crate::api::Body::Binding {
            node: node.to_string(),
            annotations: self.annotations.clone(),
        });
        self.push(plugin, "", req);
    }
}
