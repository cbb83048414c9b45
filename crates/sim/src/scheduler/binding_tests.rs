//! The binding cycle driven through the framework: Reserve/Unreserve order, Permit
//! rejections, waits, timeouts and Allow, PreBind polling, Bind and its errors.

use std::cell::RefCell;

use super::*;
use crate::scheduler::plugins::helper::fixtures::*;
use crate::scheduler::{build_frameworks, in_tree_registry, parse_config};
use serde_json::json;

thread_local! {
    static LOG: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

fn log(s: String) {
    LOG.with(|l| l.borrow_mut().push(s));
}

fn take_log() -> Vec<String> {
    LOG.with(|l| std::mem::take(&mut *l.borrow_mut()))
}

/// Test plugins; what each does at an extension point is fixed by its name.
struct P(&'static str);

impl Plugin for P {
    fn name(&self) -> &'static str {
        self.0
    }
    fn as_reserve(&self) -> Option<&dyn ReservePlugin> {
        self.0.starts_with("Reserve").then_some(self)
    }
    fn as_permit(&self) -> Option<&dyn PermitPlugin> {
        self.0.starts_with("Permit").then_some(self)
    }
    fn as_pre_bind(&self) -> Option<&dyn PreBindPlugin> {
        self.0.starts_with("PreBind").then_some(self)
    }
    fn as_bind(&self) -> Option<&dyn BindPlugin> {
        self.0.starts_with("Bind").then_some(self)
    }
    fn as_post_bind(&self) -> Option<&dyn PostBindPlugin> {
        self.0.starts_with("PostBind").then_some(self)
    }
}

impl ReservePlugin for P {
    fn reserve(&self, _: &mut CycleState, _: &PodInfo, node: &str, _: &mut Snapshot) -> Status {
        log(format!("reserve {} {node}", self.0));
        if self.0 == "ReserveFails" {
            return Status::error("disk full");
        }
        Status::success()
    }
    fn unreserve(&self, _: &mut CycleState, _: &PodInfo, _: &str, _: &mut Snapshot) {
        log(format!("unreserve {}", self.0));
    }
}

impl PermitPlugin for P {
    fn permit(&self, _: &CycleState, _: &PodInfo, _: &str) -> (Status, Time) {
        match self.0 {
            "PermitDenies" => (Status::new(Code::Unschedulable, "quota of gang reached"), 0),
            "PermitWaits" => (Status::code_only(Code::Wait), 10 * SECOND),
            "PermitWaitsLong" => (Status::code_only(Code::Wait), 3600 * SECOND),
            _ => (Status::success(), 0),
        }
    }
}

impl PreBindPlugin for P {
    fn pre_bind(
        &self,
        _: &mut CycleState,
        _: &PodInfo,
        _: &str,
        now: Time,
        _: &mut BindingWrites,
    ) -> Status {
        log(format!("prebind {} at {now}", self.0));
        match self.0 {
            "PreBindFails" => Status::error("volume attach refused"),
            "PreBindSlow" => Status::code_only(Code::Pending),
            _ => Status::success(),
        }
    }
    fn pre_bind_poll(
        &self,
        _: &CycleState,
        _: &PodInfo,
        _: &str,
        _: &Snapshot,
        now: Time,
    ) -> Status {
        log(format!("poll {} at {now}", self.0));
        if now >= 3 * SECOND {
            Status::success()
        } else {
            Status::code_only(Code::Pending)
        }
    }
}

impl BindPlugin for P {
    fn bind(&self, _: &CycleState, pod: &PodInfo, node: &str, w: &mut BindingWrites) -> Status {
        if self.0 == "BindSkips" {
            return Status::code_only(Code::Skip);
        }
        w.binding(self.0, pod, node);
        Status::success()
    }
}

impl PostBindPlugin for P {
    fn post_bind(&self, _: &CycleState, _: &PodInfo, node: &str) {
        log(format!("postbind {} {node}", self.0));
    }
}

macro_rules! factories {
    ($($name:literal),*) => {
        [$(($name, (|_| Ok(Box::new(P($name)) as Box<dyn Plugin>)) as crate::scheduler::runtime::Factory)),*]
    };
}

/// A profile with the default plugins plus the given ones at their extension points.
fn framework(plugins: serde_json::Value) -> Framework {
    let mut reg = in_tree_registry();
    for (n, f) in factories!(
        "ReserveA",
        "ReserveFails",
        "PermitDenies",
        "PermitWaits",
        "PermitWaitsLong",
        "PreBindSlow",
        "PreBindFails",
        "BindSkips",
        "PostBindLog"
    ) {
        reg.insert(n, f);
    }
    let cfg = parse_config(
        &json!({"profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}),
    )
    .expect("config");
    build_frameworks(&reg, &cfg)
        .expect("frameworks")
        .remove("default-scheduler")
        .expect("profile")
}

fn enabled(names: &[&str]) -> serde_json::Value {
    json!({"enabled": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()})
}

fn start(fw: &Framework, snap: &mut Snapshot) -> Result<BindingCycle, Status> {
    let pod = Arc::new(info(pod("web", json!({}))));
    fw.start_binding_cycle(CycleState::default(), pod, "n1", snap, 0)
}

fn snap() -> Snapshot {
    Snapshot::new(&[node("n1", json!({}))], &[])
}

#[test]
fn the_default_binding_cycle_posts_one_binding_and_runs_post_bind() {
    let fw = framework(json!({"postBind": enabled(&["PostBindLog"])}));
    let mut s = snap();
    let mut c = start(&fw, &mut s).expect("reserved");
    let mut w = BindingWrites::default();
    w.annotations
        .insert("kubeloop.dev/selected-node".into(), "n1".into());
    assert_eq!(fw.advance(&mut c, &s, 0, &mut w), Progress::BindSent);
    let (plugin, _, req) = &w.requests[0];
    assert_eq!(*plugin, "DefaultBinder");
    assert_eq!(req.subresource, Some(crate::api::Subresource::Binding));
    match &req.body {
        crate::api::Body::Binding { node, annotations } => {
            assert_eq!(node, "n1");
            assert_eq!(annotations["kubeloop.dev/selected-node"], "n1");
        }
        b => panic!("not a Binding: {b:?}"),
    }
    take_log();
    assert!(fw.finish_bind(&c, Ok(())).is_ok());
    assert_eq!(take_log(), ["postbind PostBindLog n1"]);
}

#[test]
fn a_failing_reserve_unreserves_every_plugin_in_reverse_order() {
    let fw = framework(json!({"reserve": enabled(&["ReserveA", "ReserveFails"])}));
    take_log();
    let err = start(&fw, &mut snap()).expect_err("reserve fails");
    assert_eq!(err.code, Code::Error);
    assert_eq!(
        err.message(),
        "running Reserve plugin \"ReserveFails\": disk full"
    );
    // VolumeBinding (a default Reserve plugin) runs first and logs nothing.
    assert_eq!(
        take_log(),
        [
            "reserve ReserveA n1",
            "reserve ReserveFails n1",
            "unreserve ReserveFails",
            "unreserve ReserveA",
        ]
    );
}

#[test]
fn a_permit_rejection_is_unschedulable_with_the_plugin_named() {
    let fw =
        framework(json!({"permit": enabled(&["PermitDenies"]), "reserve": enabled(&["ReserveA"])}));
    take_log();
    let err = start(&fw, &mut snap()).expect_err("denied");
    assert_eq!(err.code, Code::Unschedulable);
    assert_eq!(err.plugin, "PermitDenies");
    assert_eq!(err.message(), "quota of gang reached");
    assert_eq!(take_log(), ["reserve ReserveA n1", "unreserve ReserveA"]);
}

#[test]
fn a_waiting_pod_times_out_with_upstreams_message_unless_allowed() {
    let fw = framework(json!({"permit": enabled(&["PermitWaits"])}));
    let mut s = snap();
    let mut c = start(&fw, &mut s).expect("waits");
    assert!(c.waiting_on_permit());
    let mut w = BindingWrites::default();
    assert_eq!(
        fw.advance(&mut c, &s, 0, &mut w),
        Progress::WaitUntil(10 * SECOND)
    );
    assert!(w.requests.is_empty(), "nothing is bound while waiting");
    match fw.advance(&mut c, &s, 10 * SECOND, &mut w) {
        Progress::Failed(st) => {
            assert_eq!(st.code, Code::Unschedulable);
            assert_eq!(
                st.message(),
                "rejected due to timeout after waiting 10s at plugin PermitWaits"
            );
        }
        p => panic!("expected a timeout, got {p:?}"),
    }

    // Allowed before its deadline, the pod goes on to bind.
    let mut c = start(&fw, &mut s).expect("waits");
    c.allow("PermitWaits");
    assert_eq!(fw.advance(&mut c, &s, SECOND, &mut w), Progress::BindSent);
}

#[test]
fn permit_waits_are_capped_at_fifteen_minutes() {
    let fw = framework(json!({"permit": enabled(&["PermitWaitsLong"])}));
    let mut s = snap();
    let mut c = start(&fw, &mut s).expect("waits");
    let mut w = BindingWrites::default();
    assert_eq!(
        fw.advance(&mut c, &s, 0, &mut w),
        Progress::WaitUntil(900 * SECOND)
    );
    match fw.advance(&mut c, &s, 900 * SECOND, &mut w) {
        Progress::Failed(st) => assert_eq!(
            st.message(),
            "rejected due to timeout after waiting 15m0s at plugin PermitWaitsLong"
        ),
        p => panic!("expected a timeout, got {p:?}"),
    }
}

#[test]
fn a_pending_pre_bind_is_polled_every_second_before_bind() {
    let fw = framework(json!({"preBind": enabled(&["PreBindSlow"])}));
    let mut s = snap();
    let mut c = start(&fw, &mut s).expect("reserved");
    let mut w = BindingWrites::default();
    take_log();
    assert_eq!(
        fw.advance(&mut c, &s, 0, &mut w),
        Progress::WaitUntil(SECOND)
    );
    assert_eq!(
        fw.advance(&mut c, &s, SECOND, &mut w),
        Progress::WaitUntil(2 * SECOND)
    );
    assert!(w.requests.is_empty());
    assert_eq!(
        fw.advance(&mut c, &s, 3 * SECOND, &mut w),
        Progress::BindSent
    );
    assert_eq!(
        take_log(),
        [
            "prebind PreBindSlow at 0",
            "poll PreBindSlow at 1000",
            "poll PreBindSlow at 3000"
        ]
    );
    assert_eq!(w.requests.len(), 1, "one Binding, after PreBind");
}

#[test]
fn pre_bind_and_bind_errors_name_the_plugin() {
    let fw = framework(json!({"preBind": enabled(&["PreBindFails"])}));
    let mut s = snap();
    let mut c = start(&fw, &mut s).expect("reserved");
    let mut w = BindingWrites::default();
    match fw.advance(&mut c, &s, 0, &mut w) {
        Progress::Failed(st) => {
            assert_eq!(st.code, Code::Error);
            assert_eq!(
                st.message(),
                "running PreBind plugin \"PreBindFails\": volume attach refused"
            );
        }
        p => panic!("expected a failure, got {p:?}"),
    }

    // A Bind plugin that skips passes to DefaultBinder; the apiserver's refusal is its error.
    let fw = framework(
        json!({"bind": {"enabled": [{"name": "BindSkips"}, {"name": "DefaultBinder"}], "disabled": [{"name": "*"}]}}),
    );
    let mut c = start(&fw, &mut s).expect("reserved");
    let mut w = BindingWrites::default();
    assert_eq!(fw.advance(&mut c, &s, 0, &mut w), Progress::BindSent);
    assert_eq!(w.requests[0].0, "DefaultBinder");
    let err = fw
        .finish_bind(&c, Err("pods \"web\" not found".into()))
        .expect_err("refused");
    assert_eq!(
        err.message(),
        "running Bind plugin \"DefaultBinder\": pods \"web\" not found"
    );
}
