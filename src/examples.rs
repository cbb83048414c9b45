//! The scenario gallery: example scenarios built into the page (from public/scenarios/),
//! the first of which is what a new visitor starts with.

use kubeloop_sim::scenario::{parse_scenario, Scenario};

/// One example.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Example {
    /// Stable id (the file's stem).
    pub id: &'static str,
    /// English title.
    pub title: &'static str,
    /// 简体中文 title.
    pub title_zh: &'static str,
    /// The scenario file.
    pub yaml: &'static str,
}

/// Every example, the default first.
pub const EXAMPLES: &[Example] = &[
    Example {
        id: "playground",
        title: "nginx Deployment (press Apply)",
        title_zh: "nginx Deployment（点击应用）",
        yaml: include_str!("../public/scenarios/playground.yaml"),
    },
    Example {
        id: "nginx-basic",
        title: "Roll out, expose, heal",
        title_zh: "发布、暴露服务、自愈",
        yaml: include_str!("../public/scenarios/nginx-basic.yaml"),
    },
    Example {
        id: "scheduler-down",
        title: "Scheduler down: pods stay Pending",
        title_zh: "调度器宕机：Pod 保持 Pending",
        yaml: include_str!("../public/scenarios/scheduler-down.yaml"),
    },
    Example {
        id: "crashloop",
        title: "CrashLoopBackOff",
        title_zh: "CrashLoopBackOff 重启退避",
        yaml: include_str!("../public/scenarios/crashloop.yaml"),
    },
    Example {
        id: "node-failure",
        title: "A node loses power",
        title_zh: "节点断电",
        yaml: include_str!("../public/scenarios/node-failure.yaml"),
    },
    Example {
        id: "nginx-service-traffic",
        title: "Service traffic through kube-proxy",
        title_zh: "Service 流量与 kube-proxy 规则",
        yaml: include_str!("../public/scenarios/nginx-service-traffic.yaml"),
    },
    Example {
        id: "network-policy-dns",
        title: "NetworkPolicy: default deny, then DNS, then the web",
        title_zh: "NetworkPolicy：默认拒绝、放行 DNS、再放行 Web",
        yaml: include_str!("../public/scenarios/network-policy-dns.yaml"),
    },
    Example {
        id: "service-iptables-mode",
        title: "One Service, kube-proxy in iptables mode",
        title_zh: "同一个 Service：kube-proxy iptables 模式",
        yaml: include_str!("../public/scenarios/service-iptables-mode.yaml"),
    },
    Example {
        id: "service-nftables-mode",
        title: "The same Service, kube-proxy in nftables mode",
        title_zh: "同一个 Service：kube-proxy nftables 模式",
        yaml: include_str!("../public/scenarios/service-nftables-mode.yaml"),
    },
    Example {
        id: "ingress-two-hosts",
        title: "Ingress: two hosts through ingress-nginx",
        title_zh: "Ingress：经 ingress-nginx 分流两个主机名",
        yaml: include_str!("../public/scenarios/ingress-two-hosts.yaml"),
    },
    Example {
        id: "gateway-canary",
        title: "Gateway API: a 90/10 canary through Envoy Gateway",
        title_zh: "Gateway API：经 Envoy Gateway 的 90/10 金丝雀分流",
        yaml: include_str!("../public/scenarios/gateway-canary.yaml"),
    },
    Example {
        id: "loadbalancer-kind",
        title: "LoadBalancer: cloud-provider-kind gives the EXTERNAL-IP",
        title_zh: "LoadBalancer：cloud-provider-kind 分配 EXTERNAL-IP",
        yaml: include_str!("../public/scenarios/loadbalancer-kind.yaml"),
    },
    Example {
        id: "readiness-rollout",
        title: "Rolling update with readiness probes",
        title_zh: "就绪探针与滚动更新",
        yaml: include_str!("../public/scenarios/readiness-rollout.yaml"),
    },
    Example {
        id: "imagepull-fix",
        title: "ImagePullBackOff and the fix",
        title_zh: "镜像拉取失败与修复",
        yaml: include_str!("../public/scenarios/imagepull-fix.yaml"),
    },
    Example {
        id: "mysql-pvc",
        title: "MySQL with a PersistentVolumeClaim",
        title_zh: "MySQL 与 PVC 存储",
        yaml: include_str!("../public/scenarios/mysql-pvc.yaml"),
    },
    Example {
        id: "hundred-nodes",
        title: "100 nodes, 200 replicas",
        title_zh: "100 个节点，200 个副本",
        yaml: include_str!("../public/scenarios/hundred-nodes.yaml"),
    },
    Example {
        id: "statefulset-web",
        title: "StatefulSet: stable names and storage",
        title_zh: "StatefulSet：稳定的名字与存储",
        yaml: include_str!("../public/scenarios/statefulset-web.yaml"),
    },
    Example {
        id: "daemonset-node-added",
        title: "DaemonSet on a node added later",
        title_zh: "DaemonSet：新加节点也有一份",
        yaml: include_str!("../public/scenarios/daemonset-node-added.yaml"),
    },
    Example {
        id: "job-pi",
        title: "Job: compute π, then complete",
        title_zh: "Job：计算 π 后完成",
        yaml: include_str!("../public/scenarios/job-pi.yaml"),
    },
    Example {
        id: "cronjob-hello",
        title: "CronJob: a Job every minute",
        title_zh: "CronJob：每分钟一个 Job",
        yaml: include_str!("../public/scenarios/cronjob-hello.yaml"),
    },
    Example {
        id: "hpa-php-apache",
        title: "HorizontalPodAutoscaler under load",
        title_zh: "HPA：负载下自动扩缩容",
        yaml: include_str!("../public/scenarios/hpa-php-apache.yaml"),
    },
    // Lessons (design §6.20): the lessons list shows these, the examples menu does not.
    Example {
        id: "lesson-pod-creation",
        title: "Lesson: the seven steps of pod creation",
        title_zh: "课程：创建 Pod 的七个步骤",
        yaml: include_str!("../public/scenarios/lesson-pod-creation.yaml"),
    },
    Example {
        id: "lesson-self-healing",
        title: "Lesson: self-healing",
        title_zh: "课程：自愈",
        yaml: include_str!("../public/scenarios/lesson-self-healing.yaml"),
    },
    Example {
        id: "lesson-scheduler-choice",
        title: "Lesson: the scheduler's choice",
        title_zh: "课程：调度器的选择",
        yaml: include_str!("../public/scenarios/lesson-scheduler-choice.yaml"),
    },
    Example {
        id: "lesson-control-plane-failures",
        title: "Lesson: when the control plane fails",
        title_zh: "课程：当控制面出故障",
        yaml: include_str!("../public/scenarios/lesson-control-plane-failures.yaml"),
    },
    Example {
        id: "lesson-rollout-rollback",
        title: "Lesson: a rollout and a rollback",
        title_zh: "课程：滚动更新与回滚",
        yaml: include_str!("../public/scenarios/lesson-rollout-rollback.yaml"),
    },
    Example {
        id: "lesson-kubelet-troubleshooting",
        title: "Lesson: why is my pod stuck?",
        title_zh: "课程：我的 Pod 为什么卡住了？",
        yaml: include_str!("../public/scenarios/lesson-kubelet-troubleshooting.yaml"),
    },
    Example {
        id: "lesson-services-kube-proxy",
        title: "Lesson: Services and kube-proxy",
        title_zh: "课程：Service 与 kube-proxy",
        yaml: include_str!("../public/scenarios/lesson-services-kube-proxy.yaml"),
    },
    Example {
        id: "lesson-mysql-pvc",
        title: "Lesson: MySQL with a PersistentVolumeClaim",
        title_zh: "课程：使用 PersistentVolumeClaim 的 MySQL",
        yaml: include_str!("../public/scenarios/lesson-mysql-pvc.yaml"),
    },
    Example {
        id: "lesson-broken-1",
        title: "Lesson: the site is down (challenge)",
        title_zh: "课程：网站挂了（挑战）",
        yaml: include_str!("../public/scenarios/lesson-broken-1.yaml"),
    },
    Example {
        id: "lesson-broken-2",
        title: "Lesson: new pods never start (challenge)",
        title_zh: "课程：新 Pod 永远起不来（挑战）",
        yaml: include_str!("../public/scenarios/lesson-broken-2.yaml"),
    },
    Example {
        id: "lesson-broken-3",
        title: "Lesson: connection refused (challenge)",
        title_zh: "课程：连接被拒绝（挑战）",
        yaml: include_str!("../public/scenarios/lesson-broken-3.yaml"),
    },
];

/// The example with this id.
pub fn example(id: &str) -> Option<&'static Example> {
    EXAMPLES.iter().find(|e| e.id == id)
}

/// The gallery's lessons: examples whose scenario has a `spec.lesson`, in gallery order.
pub fn lessons() -> impl Iterator<Item = &'static Example> {
    EXAMPLES.iter().filter(|e| e.id.starts_with("lesson-"))
}

/// A lesson of the gallery by id.
pub fn lesson(id: &str) -> Option<&'static Example> {
    lessons().find(|e| e.id == id)
}

/// An example's scenario. The built-in files are tested to parse; an empty scenario if one
/// ever did not.
pub fn scenario(e: &Example) -> Scenario {
    parse_scenario(e.yaml).unwrap_or_default()
}

/// A scenario's description in `lang`: `kubeloop.dev/description-zh` in 简体中文 when the
/// scenario has one, else `kubeloop.dev/description`.
pub fn description(s: &Scenario, lang: crate::i18n::Lang) -> Option<String> {
    let a = &s.metadata.annotations;
    let zh = (lang == crate::i18n::Lang::Zh)
        .then(|| a.get("kubeloop.dev/description-zh"))
        .flatten();
    zh.or_else(|| a.get("kubeloop.dev/description")).cloned()
}

/// What a first visit starts with: the classic nginx Deployment, not yet applied.
pub fn default_scenario() -> Scenario {
    scenario(&EXAMPLES[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_parse_every_example() {
        for e in EXAMPLES {
            let sc = parse_scenario(e.yaml).unwrap_or_else(|errs| panic!("{}: {errs:?}", e.id));
            assert!(!sc.spec.files.is_empty(), "{} has a file to edit", e.id);
            let en = description(&sc, crate::i18n::Lang::En).unwrap_or_default();
            let zh = description(&sc, crate::i18n::Lang::Zh).unwrap_or_default();
            assert!(!en.is_empty(), "{} is described", e.id);
            assert!(
                zh != en && zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{} is described in 简体中文",
                e.id
            );
        }
        let d = default_scenario();
        let text = &d.spec.files["nginx-deploy.yaml"];
        assert!(
            text.contains("replicas: 3")
                && text.contains("image: nginx:1.27")
                && text.contains("containerPort: 80")
        );
        assert!(d.spec.steps.is_empty(), "nothing runs until Apply");
        assert_eq!(d.nodes().len(), 3);
        assert!(example("crashloop").is_some() && example("nope").is_none());
    }
}
