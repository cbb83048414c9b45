//! The end of a scheduling cycle and the binding cycle (`schedule_one.go`): Reserve and
//! Permit run right after the pod is assumed; then, asynchronously, WaitOnPermit,
//! PreBind, Bind and PostBind. Plugins cannot block here, so a cycle is a small state
//! machine the scheduler actor advances when time passes and when its writes are answered.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::framework::*;
use super::nodeinfo::Snapshot;
use super::podinfo::PodInfo;
use super::runtime::{Ext, Framework};
use crate::time::{format_duration, Time, SECOND};

/// `maxTimeout`: the longest a Permit plugin may make a pod wait.
pub const MAX_PERMIT_TIMEOUT: Time = 15 * 60 * SECOND;
/// How often a pending PreBind is polled (VolumeBinding polls every second).
pub const PRE_BIND_POLL: Time = SECOND;

/// Where a binding cycle is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Stage {
    /// `WaitOnPermit`: plugins that asked the pod to wait → their deadline.
    Permit(BTreeMap<&'static str, (Time, Time)>),
    /// PreBind plugin `index` (in the PreBind list), `started` once it was called.
    PreBind { index: usize, started: bool },
    /// The Binding posted by this Bind plugin awaits the apiserver's answer.
    Binding(&'static str),
}

/// A pod between Reserve and the end of its binding.
#[derive(Debug)]
pub struct BindingCycle {
    /// The assumed pod.
    pub pod: Arc<PodInfo>,
    /// The node it is reserved on.
    pub node: String,
    /// The cycle state of the scheduling cycle that chose the node.
    pub state: CycleState,
    stage: Stage,
}

/// What advancing a binding cycle came to.
#[derive(Debug, PartialEq)]
pub enum Progress {
    /// Waiting (on Permit or a PreBind plugin); advance again at the given time.
    WaitUntil(Time),
    /// The Binding is on its way: finish with [`Framework::finish_bind`] on its answer.
    BindSent,
    /// The cycle failed: unreserve, forget the pod and report the status.
    Failed(Status),
}

fn wrap(ext: &str, plugin: &'static str, s: Status) -> Status {
    if s.is_rejected() {
        return s.with_plugin(plugin);
    }
    Status::error(format!("running {ext} plugin {plugin:?}: {}", s.message())).with_plugin(plugin)
}

impl BindingCycle {
    /// `WaitingPod.Allow`: the plugin lets the waiting pod go.
    pub fn allow(&mut self, plugin: &str) {
        if let Stage::Permit(waits) = &mut self.stage {
            waits.retain(|p, _| *p != plugin);
        }
    }

    /// Whether the pod waits on Permit plugins.
    pub fn waiting_on_permit(&self) -> bool {
        matches!(&self.stage, Stage::Permit(w) if !w.is_empty())
    }
}

impl Framework {
    /// Reserve, then Permit, for the pod just assumed on `node`. On failure every Reserve
    /// plugin's Unreserve has run; the caller forgets the pod.
    pub fn start_binding_cycle(
        &self,
        mut state: CycleState,
        pod: Arc<PodInfo>,
        node: &str,
        cache: &mut Snapshot,
        now: Time,
    ) -> Result<BindingCycle, Status> {
        let mut failed = None;
        for p in self.iter(Ext::Reserve) {
            let Some(r) = p.as_reserve() else { continue };
            let s = r.reserve(&mut state, &pod, node, cache);
            if !s.is_success() {
                failed = Some(wrap("Reserve", p.name(), s));
                break;
            }
        }
        let mut waits = BTreeMap::new();
        if failed.is_none() {
            for p in self.iter(Ext::Permit) {
                let Some(pm) = p.as_permit() else { continue };
                let (s, timeout) = pm.permit(&state, &pod, node);
                match s.code {
                    Code::Success => {}
                    Code::Wait => {
                        let t = timeout.clamp(0, MAX_PERMIT_TIMEOUT);
                        waits.insert(p.name(), (t, now + t));
                    }
                    _ => {
                        failed = Some(wrap("Permit", p.name(), s));
                        break;
                    }
                }
            }
        }
        let mut cycle = BindingCycle {
            pod,
            node: node.to_string(),
            state,
            stage: Stage::Permit(waits),
        };
        match failed {
            Some(s) => {
                self.unreserve(&mut cycle, cache);
                Err(s)
            }
            None => Ok(cycle),
        }
    }

    /// Moves the cycle on as far as it can go at `now`.
    pub fn advance(
        &self,
        c: &mut BindingCycle,
        cache: &Snapshot,
        now: Time,
        writes: &mut BindingWrites,
    ) -> Progress {
        loop {
            match &mut c.stage {
                Stage::Permit(waits) => {
                    if let Some((p, (t, _))) = waits.iter().find(|(_, (_, d))| *d <= now) {
                        let msg = format!(
                            "rejected due to timeout after waiting {} at plugin {p}",
                            format_duration(*t)
                        );
                        return Progress::Failed(
                            Status::new(Code::Unschedulable, msg).with_plugin(p),
                        );
                    }
                    if let Some(d) = waits.values().map(|(_, d)| *d).min() {
                        return Progress::WaitUntil(d);
                    }
                    c.stage = Stage::PreBind {
                        index: 0,
                        started: false,
                    };
                }
                Stage::PreBind { index, started } => {
                    let Some(p) = self.iter(Ext::PreBind).nth(*index) else {
                        return self.bind(c, writes);
                    };
                    let Some(pb) = p.as_pre_bind() else {
                        *index += 1;
                        continue;
                    };
                    let s = if *started {
                        pb.pre_bind_poll(&c.state, &c.pod, &c.node, cache, now)
                    } else {
                        *started = true;
                        pb.pre_bind(&mut c.state, &c.pod, &c.node, now, writes)
                    };
                    match s.code {
                        Code::Success => {
                            c.stage = Stage::PreBind {
                                index: *index + 1,
                                started: false,
                            }
                        }
                        Code::Pending => return Progress::WaitUntil(now + PRE_BIND_POLL),
                        _ => return Progress::Failed(wrap("PreBind", p.name(), s)),
                    }
                }
                Stage::Binding(_) => return Progress::BindSent,
            }
        }
    }

    /// `RunBindPlugins`: the first plugin that does not skip binds.
    fn bind(&self, c: &mut BindingCycle, writes: &mut BindingWrites) -> Progress {
        for p in self.iter(Ext::Bind) {
            let Some(b) = p.as_bind() else { continue };
            let s = b.bind(&c.state, &c.pod, &c.node, writes);
            match s.code {
                Code::Skip => continue,
                Code::Success => {
                    c.stage = Stage::Binding(p.name());
                    return Progress::BindSent;
                }
                _ => return Progress::Failed(wrap("Bind", p.name(), s)),
            }
        }
        Progress::Failed(Status::error("no Bind plugin bound the pod"))
    }

    /// The apiserver answered the Binding: PostBind on success, the Bind plugin's error
    /// otherwise.
    pub fn finish_bind(&self, c: &BindingCycle, result: Result<(), String>) -> Result<(), Status> {
        let plugin = match &c.stage {
            Stage::Binding(p) => *p,
            _ => "",
        };
        if let Err(msg) = result {
            return Err(wrap("Bind", plugin, Status::error(msg)));
        }
        for p in self.iter(Ext::PostBind) {
            if let Some(pb) = p.as_post_bind() {
                pb.post_bind(&c.state, &c.pod, &c.node);
            }
        }
        Ok(())
    }

    /// `RunReservePluginsUnreserve`: every Reserve plugin, in reverse order.
    pub fn unreserve(&self, c: &mut BindingCycle, cache: &mut Snapshot) {
        let list: Vec<&dyn Plugin> = self.iter(Ext::Reserve).collect();
        for p in list.into_iter().rev() {
            if let Some(r) = p.as_reserve() {
                r.unreserve(&mut c.state, &c.pod, &c.node, cache);
            }
        }
    }
}

#[cfg(test)]
#[path = "binding_tests.rs"]
mod tests;
