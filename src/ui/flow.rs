//! The seven stages of the pod creation flow (the seed notes' mnemonic chain) for one
//! followed pod (the selected one, else the newest), lit as they happen for it, with their
//! virtual times; "Pod活" once it is Ready.

use kubeloop_sim::time::Time;
use kubeloop_sim::view::Stage;
use leptos::prelude::*;

use super::use_ui;
use crate::i18n::Key;

/// How long a stage glows after it happened (virtual ms).
pub const FRESH_MS: Time = 1500;

/// Each stage's state: `lit` when it happened in the latest run (which starts at the
/// newest `kubectl` write) and not before an earlier lit stage (a run may skip stages:
/// self-healing starts at the ReplicaSet controller); `stale` when it happened but not
/// so; `idle` when it never happened. "Proxy通" follows "Kubelet建": kube-proxy's
/// boot-time sync is not this run's.
pub fn stage_states(stages: &[Stage]) -> Vec<&'static str> {
    let run = stages.first().and_then(|s| s.at);
    let mut last_lit: Option<Time> = None;
    let mut out: Vec<&'static str> = Vec::with_capacity(stages.len());
    for (i, s) in stages.iter().enumerate() {
        let follows_kubelet = |at: Time| {
            i != 6 || (out.get(5) == Some(&"lit") && stages[5].at.is_some_and(|k| at >= k))
        };
        let state = match (s.at, run) {
            (None, _) => "idle",
            (Some(at), Some(run))
                if at >= run && last_lit.is_none_or(|l| at >= l) && follows_kubelet(at) =>
            {
                last_lit = Some(at);
                "lit"
            }
            _ => "stale",
        };
        out.push(state);
    }
    out
}

/// One stage's state (see [`stage_states`]).
pub fn stage_state(stages: &[Stage], i: usize) -> &'static str {
    stage_states(stages).get(i).copied().unwrap_or("idle")
}

/// The time shown beside a stage: `+15ms` after the run's start for a lit stage, else
/// when it last happened, `t=12.003s`.
pub fn stage_time(stages: &[Stage], i: usize) -> String {
    let Some(at) = stages.get(i).and_then(|s| s.at) else {
        return String::new();
    };
    match stages.first().and_then(|s| s.at) {
        Some(run) if i > 0 && stage_state(stages, i) == "lit" => {
            format!("+{}", kubeloop_sim::time::format_duration(at - run))
        }
        _ => format!("t={}s", kubeloop_sim::runner::seconds(at)),
    }
}

/// The chain's words: the seed notes' Chinese mnemonic in 简体中文, plain English words in
/// English (the English page needs no CJK font).
pub fn mnemonic(stage: &Stage, lang: crate::i18n::Lang) -> &'static str {
    const EN: [&str; 7] = [
        "kubectl calls",
        "apiserver writes",
        "Deployment asks",
        "ReplicaSet fills",
        "Scheduler picks",
        "Kubelet builds",
        "Proxy connects",
    ];
    match lang {
        crate::i18n::Lang::Zh => stage.mnemonic,
        crate::i18n::Lang::En => EN
            .get(usize::from(stage.number.saturating_sub(1)))
            .copied()
            .unwrap_or(stage.mnemonic),
    }
}

fn stage_key(n: u8) -> Key {
    match n {
        1 => Key::Stage1,
        2 => Key::Stage2,
        3 => Key::Stage3,
        4 => Key::Stage4,
        5 => Key::Stage5,
        6 => Key::Stage6,
        _ => Key::Stage7,
    }
}

/// What the panel shows: the followed pod's stages, else the cluster's latest run.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FlowView {
    /// The seven stages.
    pub stages: Vec<Stage>,
    /// Each stage's state (`lit`, `stale`, `idle`).
    pub states: Vec<&'static str>,
    /// The pod followed, `namespace/name`, and whether the learner picked it.
    pub pod: Option<(String, bool)>,
    /// When the followed pod became Ready.
    pub ready_at: Option<Time>,
    /// The Service selecting the followed pod.
    pub service: Option<String>,
    /// The Deployment a `kubectl expose` would name.
    pub deployment: Option<String>,
}

impl FlowView {
    /// From the followed pod's flow when there is one, else from the cluster's stages.
    pub fn new(
        flow: Option<kubeloop_sim::view::PodFlow>,
        picked: bool,
        deployment: Option<String>,
        cluster: &[Stage],
    ) -> FlowView {
        match flow {
            Some(mut f) => {
                // The audit log is bounded: in a busy cluster the kubectl request and the
                // Deployment controller's write behind an older pod may have dropped out of
                // it. The cluster's latched stage times stand in when they came before the
                // pod was created.
                let created = f.stages.get(3).and_then(|s| s.at);
                for i in 0..3 {
                    if f.stages[i].at.is_none() {
                        if let Some(c) =
                            cluster.get(i).filter(|c| c.at.is_some() && c.at <= created)
                        {
                            f.stages[i] = c.clone();
                        }
                    }
                }
                FlowView::from_pod(f, picked, deployment)
            }
            None => FlowView {
                states: stage_states(cluster),
                stages: cluster.to_vec(),
                deployment,
                ..FlowView::default()
            },
        }
    }

    fn from_pod(
        f: kubeloop_sim::view::PodFlow,
        picked: bool,
        deployment: Option<String>,
    ) -> FlowView {
        FlowView {
            states: f
                .stages
                .iter()
                .map(|s| if s.at.is_some() { "lit" } else { "idle" })
                .collect(),
            stages: f.stages,
            pod: Some((f.pod, picked)),
            ready_at: f.ready_at,
            service: f.service,
            deployment,
        }
    }

    /// Whether the pod is Running and Ready ("Pod活").
    pub fn alive(&self) -> bool {
        match &self.pod {
            Some(_) => self.ready_at.is_some(),
            None => self.states.len() >= 6 && self.states[..6].iter().all(|s| *s == "lit"),
        }
    }

    /// The time beside stage `i`: `+15ms` after the first stage, else `t=12.003s`.
    pub fn time(&self, i: usize) -> String {
        if self.pod.is_none() {
            return stage_time(&self.stages, i);
        }
        let Some(at) = self.stages.get(i).and_then(|s| s.at) else {
            return String::new();
        };
        match self.stages.first().and_then(|s| s.at) {
            Some(start) if i > 0 && at >= start => {
                format!("+{}", kubeloop_sim::time::format_duration(at - start))
            }
            _ => format!("t={}s", kubeloop_sim::runner::seconds(at)),
        }
    }

    /// The line under stage 7 when it has not happened: what it waits for.
    pub fn proxy_hint(&self, lang: crate::i18n::Lang) -> String {
        match &self.service {
            Some(svc) => crate::i18n::t(lang, Key::ProxyWaiting).replace("{service}", svc),
            None => crate::i18n::t(lang, Key::ProxyHint).replace(
                "{deployment}",
                self.deployment.as_deref().unwrap_or("<name>"),
            ),
        }
    }
}

/// The flow panel.
#[component]
pub fn Flow() -> impl IntoView {
    let ui = use_ui();
    let flow = Memo::new(move |_| {
        ui.panels_rev.track();
        let selected = ui.selected.get();
        ui.session
            .try_update_value(|s| {
                s.view();
                let (f, deployment) = s.flow(selected.as_deref());
                FlowView::new(f, selected.is_some(), deployment, s.stages())
            })
            .unwrap_or_default()
    });
    let state = move |i: usize| flow.with(|f| f.states.get(i).copied().unwrap_or("idle"));
    view! {
        <section class="flow" data-testid="flow">
            <div class="side-head">
                <h2>{move || ui.t(Key::Flow)}</h2>
                <p class="muted">{move || ui.t(Key::FlowHint)}</p>
                {move || flow.with(|f| f.pod.clone()).map(|(pod, picked)| view! {
                    <p class="following" data-testid="flow-pod">
                        <span class="muted">{move || ui.t(Key::Following)}" "</span>
                        <span class="mono">{pod.split_once('/').map_or(pod.clone(), |(_, n)| n.to_string())}</span>
                        {(!picked).then(|| view! { <span class="muted">" · "{move || ui.t(Key::FollowingNewest)}</span> })}
                    </p>
                })}
            </div>
            <div class="chain" data-testid="mnemonic">
                {move || flow.with(|f| {
                    f.stages.iter().enumerate().map(|(i, s)| {
                        view! { <span class=format!("link {}", f.states.get(i).copied().unwrap_or("idle"))>{mnemonic(s, ui.lang.get())}</span><span class="arrow" aria-hidden="true">"→"</span> }
                    }).collect_view()
                })}
                <span data-testid="pod-alive" title=move || ui.t(Key::PodAlive) data-state=move || if flow.with(FlowView::alive) { "lit" } else { "idle" }
                    class=move || if flow.with(FlowView::alive) { "link lit alive" } else { "link idle" }>{move || if ui.lang.get() == crate::i18n::Lang::Zh { "Pod活" } else { "Pod alive" }}</span>
            </div>
            <ol class="stages">
                <For each=move || 0..7usize key=|i| *i let:i>
                    {
                        let fresh = move || {
                            flow.with(|f| f.stages.get(i).and_then(|s| s.at)).is_some_and(|at| ui.clock.get().saturating_sub(at) < FRESH_MS && state(i) == "lit")
                        };
                        view! {
                            <li class=move || format!("stage {}", state(i)) class:fresh=fresh data-testid="stage" data-stage=i + 1 data-state=move || state(i)
                                title=move || flow.with(|f| f.stages.get(i).map(|s| s.detail.clone()).unwrap_or_default())>
                                <span class="num">{i + 1}</span>
                                <div class="stage-body">
                                    <div class="stage-top">
                                        <span class="mnemonic">{move || flow.with(|f| f.stages.get(i).map(|s| mnemonic(s, ui.lang.get())).unwrap_or(""))}</span>
                                        <span class="stage-time mono" data-testid="stage-time">{move || {
                                            flow.with(|f| if f.stages.get(i).and_then(|s| s.at).is_some() { f.time(i) } else { ui.t(Key::FlowNotYet).to_string() })
                                        }}</span>
                                    </div>
                                    <div class="stage-title" data-testid="stage-title">{move || {
                                        if i == 6 && state(i) != "lit" { flow.with(|f| f.proxy_hint(ui.lang.get())) } else { ui.t(stage_key(i as u8 + 1)).to_string() }
                                    }}</div>
                                </div>
                            </li>
                        }
                    }
                </For>
            </ol>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn stage(n: u8, at: Option<Time>) -> Stage {
        Stage {
            number: n,
            title: "",
            mnemonic: "",
            at,
            detail: String::new(),
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_light_the_stages_of_the_latest_run() {
        let st = vec![
            stage(1, Some(5000)),
            stage(2, Some(5003)),
            stage(3, Some(100)),
            stage(4, None),
        ];
        assert_eq!(stage_states(&st), ["lit", "lit", "stale", "idle"]);
        assert_eq!(stage_time(&st, 0), "t=5s");
        assert_eq!(stage_time(&st, 1), "+3ms");
        assert_eq!(stage_time(&st, 2), "t=0.1s");
        assert_eq!(stage_time(&st, 3), "");
        let healed = vec![
            stage(1, Some(40_000)),
            stage(2, Some(40_002)),
            stage(3, Some(450)),
            stage(4, Some(40_010)),
            stage(5, Some(40_020)),
            stage(6, Some(44_000)),
            stage(7, Some(1000)),
        ];
        assert_eq!(
            stage_states(&healed),
            ["lit", "lit", "stale", "lit", "lit", "lit", "stale"],
            "a run may skip a stage"
        );
        let boot_sync = vec![
            stage(1, Some(400)),
            stage(2, Some(402)),
            stage(3, Some(404)),
            stage(4, Some(410)),
            stage(5, Some(420)),
            stage(6, None),
            stage(7, Some(1000)),
        ];
        assert_eq!(
            stage_state(&boot_sync, 6),
            "stale",
            "kube-proxy's sync before any kubelet report is not this run's"
        );
        let exposed = vec![
            stage(1, Some(400)),
            stage(2, Some(402)),
            stage(3, Some(404)),
            stage(4, Some(410)),
            stage(5, Some(420)),
            stage(6, Some(4000)),
            stage(7, Some(31_000)),
        ];
        assert_eq!(stage_state(&exposed, 6), "lit");
        let out_of_order = vec![
            stage(1, Some(400)),
            stage(2, Some(402)),
            stage(3, Some(4000)),
            stage(4, Some(1000)),
        ];
        assert_eq!(stage_state(&out_of_order, 3), "stale");
        assert_eq!(
            stage_state(&[stage(1, None), stage(7, Some(1))], 1),
            "stale"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_follow_one_pod_and_name_its_deployment() {
        let mut stages: Vec<Stage> = (1..=7).map(|n| stage(n, None)).collect();
        for (i, at) in [100, 102, 104, 110, 115].into_iter().enumerate() {
            stages[i].at = Some(at);
        }
        let flow = kubeloop_sim::view::PodFlow {
            pod: "default/web-1".into(),
            stages,
            ready_at: None,
            deployment: Some("web".into()),
            service: None,
        };
        let v = FlowView::new(Some(flow.clone()), false, Some("web".into()), &[]);
        assert_eq!(
            v.states,
            ["lit", "lit", "lit", "lit", "lit", "idle", "idle"]
        );
        assert!(!v.alive(), "not Ready: Pod活 stays dark");
        assert_eq!(v.time(4), "+15ms");
        assert_eq!(
            v.proxy_hint(crate::i18n::Lang::En),
            "needs a Service: kubectl expose deployment web --port=80"
        );
        let mut ready = flow;
        ready.ready_at = Some(3000);
        ready.service = Some("web-svc".into());
        let v = FlowView::new(Some(ready), true, Some("web".into()), &[]);
        assert!(v.alive());
        assert!(v
            .proxy_hint(crate::i18n::Lang::En)
            .starts_with("Service web-svc selects it"));
        // A busy cluster's audit log lost the kubectl request behind an older pod.
        let mut old: Vec<Stage> = (1..=7).map(|n| stage(n, None)).collect();
        old[3].at = Some(9000);
        old[4].at = Some(9010);
        let cluster = vec![
            stage(1, Some(100)),
            stage(2, Some(102)),
            stage(3, Some(20_000)),
        ];
        let lost = kubeloop_sim::view::PodFlow {
            pod: "default/web-9".into(),
            stages: old,
            ready_at: None,
            deployment: Some("web".into()),
            service: None,
        };
        let v = FlowView::new(Some(lost), false, None, &cluster);
        assert_eq!(
            v.stages[0].at,
            Some(100),
            "the cluster's kubectl time stands in"
        );
        assert_eq!(
            v.stages[2].at, None,
            "not a write after the pod was created"
        );
        let mut st = stage(6, None);
        st.mnemonic = "Kubelet建";
        assert_eq!(mnemonic(&st, crate::i18n::Lang::En), "Kubelet builds");
        assert_eq!(mnemonic(&st, crate::i18n::Lang::Zh), "Kubelet建");
        let none = FlowView::new(None, false, None, &[stage(1, Some(5))]);
        assert_eq!(none.pod, None);
        assert!(none.proxy_hint(crate::i18n::Lang::Zh).contains("<name>"));
    }
}
