//! The page's strings in English and 简体中文: one key per string, one table.

/// A language the page speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// 简体中文.
    Zh,
}

impl Lang {
    /// The `lang` attribute and the value kept in localStorage.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }

    /// Reads a stored code; anything unknown is English.
    pub fn from_code(code: &str) -> Lang {
        if code.starts_with("zh") {
            Lang::Zh
        } else {
            Lang::En
        }
    }

    /// The other language (the toggle's target).
    pub fn other(self) -> Lang {
        match self {
            Lang::En => Lang::Zh,
            Lang::Zh => Lang::En,
        }
    }

    /// The language's own name, for the toggle.
    pub fn name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Zh => "简体中文",
        }
    }
}

/// Every string on the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Key {
    Tagline,
    VirtualTime,
    Behind,
    BehindHint,
    Play,
    Pause,
    Step,
    StepHint,
    Speed,
    Reset,
    ResetHint,
    Share,
    ShareCopied,
    ShareCopyFailed,
    Close,
    Examples,
    Files,
    PaneControls,
    Apply,
    ApplyHint,
    EditorErrors,
    NoErrors,
    Cluster,
    Nodes,
    ControlPlane,
    Unscheduled,
    Terminal,
    TerminalHint,
    TerminalPaused,
    TerminalWaiting,
    Flow,
    FlowHint,
    FlowNotYet,
    ProxyHint,
    Failures,
    FailuresHint,
    Network,
    Power,
    Running,
    Stopped,
    PoweredOff,
    Partitioned,
    Legend,
    ClassUnscheduled,
    ClassCreating,
    ClassReady,
    ClassNotReady,
    ClassFailed,
    ClassSucceeded,
    ClassTerminating,
    Stage1,
    Stage2,
    Stage3,
    Stage4,
    Stage5,
    Stage6,
    Stage7,
    DownEtcd,
    DownApiServer,
    DownControllerManager,
    DownScheduler,
    DownNode,
    BannerBadLink,
    BannerBadSaved,
    BannerBadScenario,
    Dismiss,
    Pod,
    Inspector,
    InspectorHint,
    SchedulingResult,
    Containers,
    Selected,
    Messages,
    About,
    LinkOffer,
    LinkOpen,
    LinkKeep,
    LinkOpened,
    Undo,
    BannerNotReplayed,
    EditorReleased,
    EditorKeys,
    PodSummary,
    EvictsIn,
    /// A pod's controller in its tooltip (as kubectl describe's "Controlled By").
    ControlledBy,
    SimLayer,
    ProxyTitle,
    ProxyMode,
    ProxySynced,
    ProxyNoRules,
    ProxyGraph,
    ProxyGraphIpvs,
    ProxyGraphNft,
    ProxySaveNft,
    ProxySave,
    ProxyMatched,
    ProxyLastPacket,
    ProxyNoPacket,
    ProxyElsewhere,
    ProxyMoreLines,
    ProxyReplay,
    ProxyShown,
    OutcomeAnswered,
    OutcomeRejected,
    OutcomeDropped,
    OutcomeTimeout,
    OutcomeRefused,
    OutcomeUnresolved,
    Following,
    FollowingNewest,
    ProxyWaiting,
    PodAlive,
    SchedEvaluated,
    SchedSampled,
    SchedTies,
    SchedFilter,
    SchedBreakdown,
    Node,
    Plugin,
    Raw,
    Normalized,
    Weight,
    Weighted,
    ShowAll,
    ShowFewer,
    TimelineTitle,
    TimelineHint,
    ViewingAt,
    Rebuilding,
    BackToLive,
    LiveNow,
    Zoom,
    ZoomAll,
    AllComponents,
    FilterObject,
    Heartbeats,
    FollowPod,
    Unfollow,
    TimelineCount,
    TimelineDropped,
    TimelineMore,
    TimelineEmpty,
    Scrubber,
    SlowMo,
    SlowMoHint,
    SlowedBurst,
    TraceTitle,
    TraceHint,
    TraceNone,
    TraceStage1,
    TraceStage2,
    TraceStage3,
    TraceStage4,
    TraceStage5,
    TraceStage6,
    TraceStage7,
    TraceStage8,
    TraceNotYet,
    WokenBy,
    Took,
    RolloutTitle,
    RolloutWhy,
    RolloutNone,
    ServiceTraceTitle,
    ServiceTraceNone,
    ServiceNoRuleChange,
    ServiceEarlier,
}

/// The string for `key` in `lang`.
pub fn t(lang: Lang, key: Key) -> &'static str {
    let (en, zh) = pair(key);
    match lang {
        Lang::En => en,
        Lang::Zh => zh,
    }
}

fn pair(key: Key) -> (&'static str, &'static str) {
    use Key::*;
    match key {
        Tagline => (
            "the Kubernetes control loop, step by step",
            "一步一步看懂 Kubernetes 控制循环",
        ),
        VirtualTime => ("virtual time", "虚拟时间"),
        Behind => ("slowed", "减速"),
        BehindHint => (
            "The simulation has more to do than fits in a frame: virtual time runs slower until it catches up.",
            "模拟的工作量超过一帧的时间：虚拟时间暂时变慢，直到赶上。",
        ),
        Play => ("Play", "播放"),
        Pause => ("Pause", "暂停"),
        Step => ("Step", "单步"),
        StepHint => ("Run to the next message", "运行到下一条消息"),
        Speed => ("Speed", "速度"),
        Reset => ("Reset", "重置"),
        ResetHint => (
            "Restart the cluster at t=0 (your files stay)",
            "从 t=0 重新启动集群（文件保留）",
        ),
        Share => ("Share", "分享"),
        ShareCopied => ("Link copied to the clipboard", "链接已复制到剪贴板"),
        ShareCopyFailed => ("Copy this link:", "请复制此链接："),
        Close => ("Close", "关闭"),
        Examples => ("Examples", "示例"),
        Files => ("Files", "文件"),
        PaneControls => ("Controls", "控制"),
        Apply => ("Apply", "应用"),
        ApplyHint => (
            "Runs kubectl apply -f in the terminal",
            "在终端中运行 kubectl apply -f",
        ),
        EditorErrors => ("Problems", "问题"),
        NoErrors => ("No problems", "没有问题"),
        Cluster => ("Cluster", "集群"),
        Nodes => ("Nodes", "节点"),
        ControlPlane => ("control plane", "控制平面"),
        Unscheduled => ("waiting for a node", "等待调度"),
        Terminal => ("Terminal", "终端"),
        TerminalHint => (
            "type a command · ↑↓ history · Ctrl-C stops · try: kubectl get pods -o wide",
            "输入命令 · ↑↓ 历史 · Ctrl-C 中断 · 试试：kubectl get pods -o wide",
        ),
        TerminalPaused => (
            "time is paused: commands wait for Play or Step",
            "时间已暂停：命令在播放或单步时运行",
        ),
        TerminalWaiting => ("waiting:", "排队中："),
        Flow => ("Pod creation flow", "Pod 创建流程"),
        FlowHint => (
            "Lit as each step happens, with its virtual time",
            "每一步发生时点亮，并显示虚拟时间",
        ),
        FlowNotYet => ("not yet", "尚未发生"),
        ProxyHint => (
            "needs a Service: kubectl expose deployment {deployment} --port=80",
            "需要 Service：kubectl expose deployment {deployment} --port=80",
        ),
        Failures => ("Failure switches", "故障开关"),
        FailuresHint => (
            "Each switch runs its sim command in the terminal",
            "每个开关都会在终端运行对应的 sim 命令",
        ),
        Network => ("network", "网络"),
        Power => ("power", "电源"),
        Running => ("running", "运行中"),
        Stopped => ("stopped", "已停止"),
        PoweredOff => ("powered off", "已关机"),
        Partitioned => ("partitioned", "网络隔离"),
        Legend => ("Pods", "Pod 状态"),
        ClassUnscheduled => ("Pending", "待调度"),
        ClassCreating => ("Creating", "创建中"),
        ClassReady => ("Ready", "就绪"),
        ClassNotReady => ("Not ready", "未就绪"),
        ClassFailed => ("Failing", "失败"),
        ClassSucceeded => ("Completed", "已完成"),
        ClassTerminating => ("Terminating", "终止中"),
        Stage1 => ("kubectl sends the request", "kubectl 向 apiserver 发起请求"),
        Stage2 => (
            "authn, authz, then the desired state into etcd",
            "认证授权后把期望状态写入 etcd",
        ),
        Stage3 => (
            "Deployment controller creates a ReplicaSet",
            "Deployment 控制器创建 ReplicaSet",
        ),
        Stage4 => (
            "ReplicaSet controller creates the Pods",
            "ReplicaSet 控制器补齐 Pod",
        ),
        Stage5 => (
            "scheduler filters, scores, binds a node",
            "调度器过滤、打分、绑定节点",
        ),
        Stage6 => (
            "kubelet starts containers, reports status",
            "kubelet 创建容器并上报状态",
        ),
        Stage7 => (
            "kube-proxy writes the Service rules",
            "kube-proxy 更新 iptables 规则",
        ),
        DownEtcd => (
            "the apiserver cannot store or read state",
            "apiserver 无法存取状态",
        ),
        DownApiServer => (
            "no operations possible: kubectl fails",
            "无法进行任何操作：kubectl 失败",
        ),
        DownControllerManager => (
            "no reconciliation: deleted pods are not replaced",
            "不再调谐：删除的 Pod 不会被补齐",
        ),
        DownScheduler => (
            "new pods stay Pending; running pods continue",
            "新 Pod 保持 Pending；已运行的 Pod 不受影响",
        ),
        DownNode => (
            "about 50s later NotReady; its pods are evicted after 5 min",
            "约 50 秒后 NotReady；5 分钟后驱逐其上的 Pod",
        ),
        BannerBadLink => (
            "This share link could not be opened; your work is unchanged.",
            "无法打开此分享链接；你的内容未改变。",
        ),
        BannerBadSaved => (
            "The saved scenario could not be read; the default was loaded.",
            "无法读取保存的场景；已加载默认场景。",
        ),
        BannerBadScenario => (
            "The shared scenario is not valid; your work is unchanged.",
            "分享的场景无效；你的内容未改变。",
        ),
        Dismiss => ("Dismiss", "关闭"),
        Pod => ("Pod", "Pod"),
        Inspector => ("Inspector", "详情"),
        InspectorHint => ("Click a pod in the diagram", "点击图中的 Pod"),
        SchedulingResult => ("Scheduling (filter → score)", "调度结果（过滤 → 打分）"),
        Containers => ("Containers", "容器"),
        Selected => ("selected", "已选"),
        Messages => ("latest messages", "最新消息"),
        About => ("About this scenario", "关于此场景"),
        LinkOffer => (
            "This link opens a shared scenario. Opening it replaces your current work (you can undo).",
            "此链接会打开一个分享的场景，并替换你当前的内容（可以撤销）。",
        ),
        LinkOpen => ("Open the shared scenario", "打开分享的场景"),
        LinkKeep => ("Keep my work", "保留我的内容"),
        LinkOpened => (
            "The shared scenario is open; your previous work is kept.",
            "已打开分享的场景；你之前的内容已保留。",
        ),
        Undo => ("Undo", "撤销"),
        BannerNotReplayed => (
            "The last visit did not finish opening the saved scenario, so it was not replayed: the cluster starts at t=0.",
            "上次访问未能完整打开保存的场景，因此没有重放：集群从 t=0 开始。",
        ),
        EditorReleased => (
            "Tab now moves to the next control; type to keep editing.",
            "现在按 Tab 会移到下一个控件；继续输入即可编辑。",
        ),
        EditorKeys => (
            "Tab indents · Esc then Tab leaves the editor · Ctrl+Enter applies",
            "Tab 缩进 · 先按 Esc 再按 Tab 离开编辑器 · Ctrl+Enter 应用",
        ),
        PodSummary => ("pods by state", "按状态统计的 Pod"),
        Following => ("following pod", "跟随 Pod"),
        FollowingNewest => ("the newest; click a pod to follow it", "最新的；点击 Pod 以跟随"),
        ProxyWaiting => (
            "Service {service} selects it: waiting for its endpoints in kube-proxy's rules",
            "Service {service} 已选中它：等待端点写入 kube-proxy 规则",
        ),
        PodAlive => ("Running and Ready", "运行且就绪"),
        SchedEvaluated => (
            "{n} of {m} nodes evaluated, {f} passed the filters.",
            "评估了 {m} 个节点中的 {n} 个，{f} 个通过过滤。",
        ),
        SchedSampled => (
            "In a large cluster the scheduler stops after enough feasible nodes (percentageOfNodesToScore): the rest were not looked at.",
            "大集群中调度器找到足够多的可行节点后就停止（percentageOfNodesToScore）：其余节点未被评估。",
        ),
        SchedTies => (
            "{k} nodes tie at the best score; the scheduler picked one of them at random (from its seeded stream).",
            "{k} 个节点并列最高分；调度器从中随机（按种子）选了一个。",
        ),
        SchedFilter => ("filter", "过滤"),
        SchedBreakdown => ("Scores on {node}", "{node} 上的打分"),
        Node => ("node", "节点"),
        Plugin => ("plugin", "插件"),
        Raw => ("raw", "原始分"),
        Normalized => ("normalized", "归一化"),
        Weight => ("weight", "权重"),
        Weighted => ("× weight", "加权分"),
        ShowAll => ("show all nodes", "显示全部节点"),
        ShowFewer => ("show the best", "只显示最高分"),
        EvictsIn => ("evicts pods in", "驱逐 Pod 倒计时"),
        ControlledBy => ("Controlled By", "控制者"),
        SimLayer => ("simulator (the cluster does not know yet)", "模拟器（集群尚不知道）"),
        ProxyTitle => ("kube-proxy rules", "kube-proxy 规则"),
        ProxyMode => ("mode", "模式"),
        ProxySynced => ("written at", "写入于"),
        ProxyNoRules => ("kube-proxy on this node has not written rules yet.", "此节点上的 kube-proxy 还没有写入规则。"),
        ProxyGraph => ("Rules as a graph: KUBE-SERVICES → KUBE-SVC → KUBE-SEP (DNAT), each arrow with the probability of its rule", "规则图：KUBE-SERVICES → KUBE-SVC → KUBE-SEP（DNAT），箭头上是该规则的概率"),
        ProxyGraphIpvs => ("IPVS: virtual servers → real servers (round robin)", "IPVS：虚拟服务器 → 真实服务器（轮询）"),
        ProxyGraphNft => ("nftables: services → service-… (the @service-ips element) → endpoint-… (dnat), each arrow with its numgen pick", "nftables：services → service-…（@service-ips 元素）→ endpoint-…（dnat），箭头上是 numgen 的取值"),
        ProxySave => ("iptables-save on {node}", "{node} 上的 iptables-save"),
        ProxySaveNft => ("nft list ruleset on {node}", "{node} 上的 nft list ruleset"),
        ProxyMatched => ("highlighted: the rules the last packet matched; dashed: tested, not taken", "高亮：上一个数据包匹配的规则；虚线：检查过但未采用"),
        ProxyLastPacket => ("Last request", "最近一次请求"),
        ProxyNoPacket => ("No request yet. Run curl in the terminal: kubectl exec POD -- curl -s SERVICE, or ssh node-1 curl http://CLUSTER-IP/", "还没有请求。在终端运行 curl：kubectl exec POD -- curl -s SERVICE，或 ssh node-1 curl http://CLUSTER-IP/"),
        ProxyElsewhere => ("This request met the rules of {node}: pick that node to see them matched.", "该请求经过的是 {node} 上的规则：选择该节点即可看到匹配。"),
        ProxyMoreLines => ("… {n} more lines …", "… 另有 {n} 行 …"),
        ProxyReplay => ("Replay", "重放"),
        ProxyShown => ("Services and their endpoints on {node}", "{node} 上的 Service 及其端点"),
        OutcomeAnswered => ("answered", "已响应"),
        OutcomeRejected => ("REJECT: connection refused", "REJECT：连接被拒绝"),
        OutcomeDropped => ("DROP: no reply, the client times out", "DROP：无回应，客户端超时"),
        OutcomeTimeout => ("no answer: timed out", "无回应：超时"),
        OutcomeRefused => ("connection refused: nothing listens", "连接被拒绝：没有进程监听"),
        OutcomeUnresolved => ("the name did not resolve", "域名无法解析"),
        TimelineTitle => ("Timeline", "时间线"),
        TimelineHint => ("Every message between components at its virtual time. Pick a moment to see the cluster as it was then.", "组件之间的每条消息及其虚拟时间。选一个时刻，查看集群当时的样子。"),
        ViewingAt => ("viewing t={t}", "正在查看 t={t}"),
        Rebuilding => ("rebuilding this moment from the seed and your commands…", "正在用种子和你的命令重建这一时刻…"),
        BackToLive => ("Back to live", "回到实时"),
        LiveNow => ("live", "实时"),
        Zoom => ("Span", "范围"),
        ZoomAll => ("all", "全部"),
        AllComponents => ("all components", "所有组件"),
        FilterObject => ("filter by object or name", "按对象或名称筛选"),
        Heartbeats => ("heartbeats", "心跳"),
        FollowPod => ("Follow this pod", "跟随此 Pod"),
        Unfollow => ("Stop following", "停止跟随"),
        TimelineCount => ("{n} of {total} entries", "{total} 条中的 {n} 条"),
        TimelineDropped => ("{n} older entries (before t={t}) were dropped to keep the timeline within its memory budget of {cap} entries; jumping there still works.", "为使时间线保持在 {cap} 条的内存预算内，已丢弃 {n} 条较早的记录（t={t} 之前）；仍可跳转到那里。"),
        TimelineMore => ("{n} more in this span: narrow it or filter", "此范围内还有 {n} 条：缩小范围或筛选"),
        TimelineEmpty => ("Nothing here yet: press Apply or type a command.", "这里还没有内容：点击应用或输入命令。"),
        Scrubber => ("Moment to view", "要查看的时刻"),
        SlowMo => ("slow-mo", "慢动作"),
        SlowMoHint => ("Slow motion around bursts: while control-plane messages fly, virtual time runs at 0.02×.", "突发时慢动作：控制平面消息传递期间，虚拟时间以 0.02× 运行。"),
        SlowedBurst => ("slow motion", "慢动作中"),
        TraceTitle => ("Causal trace", "因果链"),
        TraceHint => ("Each stage of the followed pod with the request behind it, what woke its sender, its time and latency. Click a stage to see that moment.", "所跟随 Pod 的每个阶段：背后的请求、唤醒发送者的事件、时间和延迟。点击阶段可查看那一时刻。"),
        TraceNone => ("No pod to trace yet.", "还没有可追踪的 Pod。"),
        TraceStage1 => ("kubectl → kube-apiserver", "kubectl → kube-apiserver"),
        TraceStage2 => ("kube-apiserver → etcd", "kube-apiserver → etcd"),
        TraceStage3 => ("Deployment controller", "Deployment 控制器"),
        TraceStage4 => ("ReplicaSet controller", "ReplicaSet 控制器"),
        TraceStage5 => ("kube-scheduler", "kube-scheduler"),
        TraceStage6 => ("kubelet", "kubelet"),
        TraceStage7 => ("EndpointSlice → kube-proxy", "EndpointSlice → kube-proxy"),
        TraceStage8 => ("Running and Ready", "Running 且 Ready"),
        TraceNotYet => ("not yet", "尚未发生"),
        WokenBy => ("woken by", "唤醒自"),
        Took => ("served in", "处理耗时"),
        RolloutTitle => ("Rollout of {d}", "{d} 的滚动发布"),
        RolloutWhy => ("because", "原因"),
        RolloutNone => ("No ReplicaSet scaled yet.", "还没有 ReplicaSet 扩缩。"),
        ServiceTraceTitle => ("Endpoints of Service {s}", "Service {s} 的端点"),
        ServiceTraceNone => ("No EndpointSlice written yet.", "还没有写入 EndpointSlice。"),
        ServiceNoRuleChange => (
            "no ready endpoint added or removed: the rules stay",
            "没有增减就绪端点：规则不变",
        ),
        ServiceEarlier => ("{n} earlier changes", "更早的 {n} 次变化"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_round_trip_language_codes() {
        for lang in [Lang::En, Lang::Zh] {
            assert_eq!(Lang::from_code(lang.code()), lang);
            assert_eq!(lang.other().other(), lang);
        }
        assert_eq!(Lang::from_code("fr"), Lang::En);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_have_both_languages_for_every_key() {
        for key in [
            Key::Apply,
            Key::Flow,
            Key::Stage5,
            Key::DownScheduler,
            Key::BannerBadLink,
            Key::TimelineTitle,
            Key::BackToLive,
            Key::TraceTitle,
            Key::TimelineDropped,
        ] {
            assert!(!t(Lang::En, key).is_empty());
            assert!(!t(Lang::Zh, key).is_empty());
            assert_ne!(t(Lang::En, key), t(Lang::Zh, key));
        }
    }
}
