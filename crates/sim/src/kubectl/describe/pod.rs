//! `kubectl describe pod`, and the container and volume blocks pod templates share.

use k8s_openapi::api::core::v1::{
    Container, ContainerState, ContainerStatus, Pod, Probe, ResourceRequirements, Volume,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{
    annotations_multiline, controlled_by, labels_multiline, rfc1123z, tolerations_multiline, Writer,
};
use crate::kubectl::printers::age;
use crate::time::Time;

pub(super) fn describe_pod(w: &mut Writer, pod: &Pod, now: Time) {
    let m = &pod.metadata;
    let spec = pod.spec.clone().unwrap_or_default();
    let st = pod.status.clone().unwrap_or_default();
    w.line(0, &format!("Name:\t{}", m.name.as_deref().unwrap_or("")));
    w.line(
        0,
        &format!("Namespace:\t{}", m.namespace.as_deref().unwrap_or("")),
    );
    if let Some(p) = spec.priority {
        w.line(0, &format!("Priority:\t{p}"));
    }
    if let Some(pc) = spec
        .priority_class_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.line(0, &format!("Priority Class Name:\t{pc}"));
    }
    if let Some(rc) = spec.runtime_class_name.as_deref().filter(|s| !s.is_empty()) {
        w.line(0, &format!("Runtime Class Name:\t{rc}"));
    }
    if let Some(sa) = spec
        .service_account_name
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        w.line(0, &format!("Service Account:\t{sa}"));
    }
    match spec.node_name.as_deref().filter(|s| !s.is_empty()) {
        None => w.line(0, "Node:\t<none>"),
        Some(n) => w.line(
            0,
            &format!("Node:\t{n}/{}", st.host_ip.as_deref().unwrap_or("")),
        ),
    }
    if let Some(t) = &st.start_time {
        w.line(0, &format!("Start Time:\t{}", rfc1123z(Some(t))));
    }
    labels_multiline(w, "", "Labels", m.labels.as_ref());
    annotations_multiline(w, "Annotations", m.annotations.as_ref());
    let phase = st.phase.clone().unwrap_or_default();
    match &m.deletion_timestamp {
        Some(t) if phase != "Failed" && phase != "Succeeded" => {
            w.line(
                0,
                &format!("Status:\tTerminating (lasts {})", age(Some(t), now)),
            );
            w.line(
                0,
                &format!(
                    "Termination Grace Period:\t{}s",
                    m.deletion_grace_period_seconds.unwrap_or(0)
                ),
            );
        }
        _ => w.line(0, &format!("Status:\t{phase}")),
    }
    if let Some(r) = st.reason.as_deref().filter(|s| !s.is_empty()) {
        w.line(0, &format!("Reason:\t{r}"));
    }
    if let Some(msg) = st.message.as_deref().filter(|s| !s.is_empty()) {
        w.line(0, &format!("Message:\t{msg}"));
    }
    w.line(0, &format!("IP:\t{}", st.pod_ip.as_deref().unwrap_or("")));
    let ips = st.pod_ips.clone().unwrap_or_default();
    if ips.is_empty() {
        w.line(0, "IPs:\t<none>");
    } else {
        w.line(0, "IPs:");
        for ip in ips {
            w.line(1, &format!("IP:\t{}", ip.ip));
        }
    }
    if let Some(c) = controlled_by(m) {
        w.line(0, &format!("Controlled By:\t{c}"));
    }
    if let Some(n) = st.nominated_node_name.as_deref().filter(|s| !s.is_empty()) {
        w.line(0, &format!("NominatedNodeName:\t{n}"));
    }
    if let Some(init) = spec.init_containers.as_ref().filter(|c| !c.is_empty()) {
        let statuses = st.init_container_statuses.clone().unwrap_or_default();
        describe_containers(w, "Init Containers", init, Some(&statuses), "");
    }
    let statuses = st.container_statuses.clone().unwrap_or_default();
    describe_containers(w, "Containers", &spec.containers, Some(&statuses), "");
    let conditions = st.conditions.clone().unwrap_or_default();
    if let Some(gates) = spec.readiness_gates.as_ref().filter(|g| !g.is_empty()) {
        w.line(0, "Readiness Gates:");
        w.line(1, "Type\tStatus");
        for g in gates {
            let status = conditions
                .iter()
                .find(|c| c.type_ == g.condition_type)
                .map_or("<none>".to_string(), |c| c.status.clone());
            w.line(1, &format!("{} \t{} ", g.condition_type, status));
        }
    }
    if !conditions.is_empty() {
        w.line(0, "Conditions:");
        w.line(1, "Type\tStatus");
        for c in &conditions {
            w.line(1, &format!("{} \t{} ", c.type_, c.status));
        }
    }
    describe_volumes(w, spec.volumes.as_deref().unwrap_or(&[]), "");
    w.line(
        0,
        &format!(
            "QoS Class:\t{}",
            st.qos_class.clone().unwrap_or_else(|| qos_class(pod))
        ),
    );
    labels_multiline(w, "", "Node-Selectors", spec.node_selector.as_ref());
    tolerations_multiline(
        w,
        "",
        "Tolerations",
        spec.tolerations.as_deref().unwrap_or(&[]),
    );
}

/// `qos.GetPodQOS` for pods whose status does not carry it yet.
fn qos_class(pod: &Pod) -> String {
    let spec = pod.spec.clone().unwrap_or_default();
    let all: Vec<Container> = spec
        .init_containers
        .clone()
        .unwrap_or_default()
        .into_iter()
        .chain(spec.containers.clone())
        .collect();
    let (mut any, mut guaranteed) = (false, true);
    for c in &all {
        let r = c.resources.clone().unwrap_or_default();
        let req = r.requests.unwrap_or_default();
        let lim = r.limits.unwrap_or_default();
        for res in ["cpu", "memory"] {
            let nonzero = |q: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>| {
                q.is_some_and(|q| q.0 != "0")
            };
            if nonzero(req.get(res)) || nonzero(lim.get(res)) {
                any = true;
            }
            match (req.get(res), lim.get(res)) {
                (_, None) => guaranteed = false,
                (Some(a), Some(b)) if a != b => guaranteed = false,
                _ => {}
            }
        }
    }
    if !any {
        "BestEffort".into()
    } else if guaranteed {
        "Guaranteed".into()
    } else {
        "Burstable".into()
    }
}

/// `describeContainers`: `space` is "" for pods and "  " inside a pod template.
pub(crate) fn describe_containers(
    w: &mut Writer,
    label: &str,
    containers: &[Container],
    statuses: Option<&[ContainerStatus]>,
    space: &str,
) {
    let none = if containers.is_empty() { " <none>" } else { "" };
    w.line(0, &format!("{space}{label}:{none}"));
    let name_indent = if space.is_empty() { "" } else { " " };
    for c in containers {
        let status = statuses.and_then(|s| s.iter().find(|s| s.name == c.name));
        w.line(1, &format!("{name_indent}{}:", c.name));
        if let Some(s) = status {
            w.line(
                2,
                &format!("Container ID:\t{}", s.container_id.as_deref().unwrap_or("")),
            );
        }
        w.line(2, &format!("Image:\t{}", c.image.as_deref().unwrap_or("")));
        if let Some(s) = status {
            w.line(2, &format!("Image ID:\t{}", s.image_id));
        }
        let ports = c.ports.clone().unwrap_or_default();
        let proto =
            |p: &k8s_openapi::api::core::v1::ContainerPort| p.protocol.clone().unwrap_or_default();
        let port_str: Vec<String> = ports
            .iter()
            .map(|p| format!("{}/{}", p.container_port, proto(p)))
            .collect();
        let host_str: Vec<String> = ports
            .iter()
            .map(|p| format!("{}/{}", p.host_port.unwrap_or(0), proto(p)))
            .collect();
        let or_none = |v: &[String]| {
            if v.is_empty() {
                "<none>".to_string()
            } else {
                v.join(", ")
            }
        };
        w.line(
            2,
            &format!(
                "{}:\t{}",
                if ports.len() > 1 { "Ports" } else { "Port" },
                or_none(&port_str)
            ),
        );
        w.line(
            2,
            &format!(
                "{}:\t{}",
                if ports.len() > 1 {
                    "Host Ports"
                } else {
                    "Host Port"
                },
                or_none(&host_str)
            ),
        );
        for (title, items) in [("Command", &c.command), ("Args", &c.args)] {
            if let Some(items) = items.as_ref().filter(|i| !i.is_empty()) {
                w.line(2, &format!("{title}:"));
                for item in items {
                    for s in item.split('\n') {
                        w.line(3, s);
                    }
                }
            }
        }
        if let Some(s) = status {
            describe_state(w, "State", s.state.as_ref());
            if s.last_state
                .as_ref()
                .is_some_and(|l| l.terminated.is_some())
            {
                describe_state(w, "Last State", s.last_state.as_ref());
            }
            w.line(
                2,
                &format!("Ready:\t{}", if s.ready { "True" } else { "False" }),
            );
            w.line(2, &format!("Restart Count:\t{}", s.restart_count));
        }
        describe_resources(w, c.resources.as_ref(), 2);
        for (title, probe) in [
            ("Liveness", &c.liveness_probe),
            ("Readiness", &c.readiness_probe),
            ("Startup", &c.startup_probe),
        ] {
            if let Some(p) = probe {
                w.line(2, &format!("{title}:\t{}", describe_probe(p)));
            }
        }
        let env = c.env.clone().unwrap_or_default();
        w.line(
            2,
            &format!(
                "Environment:{}",
                if env.is_empty() { "\t<none>" } else { "" }
            ),
        );
        for e in env {
            match &e.value_from {
                None => {
                    for (i, s) in e.value.unwrap_or_default().split('\n').enumerate() {
                        if i == 0 {
                            w.line(3, &format!("{}:\t{s}", e.name));
                        } else {
                            w.line(3, &format!("\t{s}"));
                        }
                    }
                }
                Some(from) => {
                    if let Some(f) = &from.field_ref {
                        let api = f.api_version.clone().unwrap_or_else(|| "v1".into());
                        w.line(3, &format!("{}:\t ({api}:{})", e.name, f.field_path));
                    } else if let Some(r) = &from.resource_field_ref {
                        w.line(3, &format!("{}:\t ({})", e.name, r.resource));
                    } else if let Some(s) = &from.secret_key_ref {
                        w.line(
                            3,
                            &format!(
                                "{}:\t<set to the key '{}' in secret '{}'>\tOptional: {}",
                                e.name,
                                s.key,
                                s.name,
                                s.optional.unwrap_or(false)
                            ),
                        );
                    } else if let Some(cm) = &from.config_map_key_ref {
                        w.line(
                            3,
                            &format!(
                                "{}:\t<set to the key '{}' of config map '{}'>\tOptional: {}",
                                e.name,
                                cm.key,
                                cm.name,
                                cm.optional.unwrap_or(false)
                            ),
                        );
                    }
                }
            }
        }
        let mut mounts = c.volume_mounts.clone().unwrap_or_default();
        w.line(
            2,
            &format!("Mounts:{}", if mounts.is_empty() { "\t<none>" } else { "" }),
        );
        mounts.sort_by(|a, b| a.mount_path.cmp(&b.mount_path));
        for mnt in mounts {
            let mut flags = vec![if mnt.read_only.unwrap_or(false) {
                "ro".to_string()
            } else {
                "rw".to_string()
            }];
            if let Some(sub) = mnt.sub_path.as_deref().filter(|s| !s.is_empty()) {
                flags.push(format!("path={sub:?}"));
            }
            w.line(
                3,
                &format!("{} from {} ({})", mnt.mount_path, mnt.name, flags.join(",")),
            );
        }
    }
}

fn describe_state(w: &mut Writer, name: &str, state: Option<&ContainerState>) {
    let state = state.cloned().unwrap_or_default();
    if let Some(r) = &state.running {
        w.line(2, &format!("{name}:\tRunning"));
        w.line(3, &format!("Started:\t{}", rfc1123z(r.started_at.as_ref())));
    } else if let Some(wt) = &state.waiting {
        w.line(2, &format!("{name}:\tWaiting"));
        if let Some(r) = wt.reason.as_deref().filter(|s| !s.is_empty()) {
            w.line(3, &format!("Reason:\t{r}"));
        }
    } else if let Some(t) = &state.terminated {
        w.line(2, &format!("{name}:\tTerminated"));
        if let Some(r) = t.reason.as_deref().filter(|s| !s.is_empty()) {
            w.line(3, &format!("Reason:\t{r}"));
        }
        if let Some(msg) = t.message.as_deref().filter(|s| !s.is_empty()) {
            w.line(3, &format!("Message:\t{msg}"));
        }
        w.line(3, &format!("Exit Code:\t{}", t.exit_code));
        if let Some(sig) = t.signal.filter(|&s| s > 0) {
            w.line(3, &format!("Signal:\t{sig}"));
        }
        w.line(3, &format!("Started:\t{}", rfc1123z(t.started_at.as_ref())));
        w.line(
            3,
            &format!("Finished:\t{}", rfc1123z(t.finished_at.as_ref())),
        );
    } else {
        w.line(2, &format!("{name}:\tWaiting"));
    }
}

fn describe_resources(w: &mut Writer, r: Option<&ResourceRequirements>, level: usize) {
    let Some(r) = r else { return };
    for (title, list) in [("Limits", &r.limits), ("Requests", &r.requests)] {
        if let Some(list) = list.as_ref().filter(|l| !l.is_empty()) {
            w.line(level, &format!("{title}:"));
            for (name, q) in list {
                w.line(level + 1, &format!("{name}:\t{}", q.0));
            }
        }
    }
}

/// `IntOrString.String()`.
pub(super) fn int_or_string(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// `DescribeProbe`.
fn describe_probe(p: &Probe) -> String {
    let attrs = format!(
        "delay={}s timeout={}s period={}s #success={} #failure={}",
        p.initial_delay_seconds.unwrap_or(0),
        p.timeout_seconds.unwrap_or(0),
        p.period_seconds.unwrap_or(0),
        p.success_threshold.unwrap_or(0),
        p.failure_threshold.unwrap_or(0)
    );
    if let Some(e) = &p.exec {
        return format!(
            "exec [{}] {attrs}",
            e.command.clone().unwrap_or_default().join(" ")
        );
    }
    if let Some(h) = &p.http_get {
        let scheme = h.scheme.clone().unwrap_or_default().to_lowercase();
        let host = h.host.clone().unwrap_or_default();
        let port = int_or_string(&h.port);
        let hostport = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let prefix = if scheme.is_empty() {
            "//".to_string()
        } else {
            format!("{scheme}://")
        };
        return format!(
            "http-get {prefix}{hostport}{} {attrs}",
            h.path.clone().unwrap_or_default()
        );
    }
    if let Some(t) = &p.tcp_socket {
        return format!(
            "tcp-socket {}:{} {attrs}",
            t.host.clone().unwrap_or_default(),
            int_or_string(&t.port)
        );
    }
    if let Some(g) = &p.grpc {
        return format!(
            "grpc <pod>:{} {} {attrs}",
            g.port,
            g.service.clone().unwrap_or_default()
        );
    }
    format!("unknown {attrs}")
}

/// `describeVolumes` for the volume kinds kubeloop's pods use.
pub(crate) fn describe_volumes(w: &mut Writer, volumes: &[Volume], space: &str) {
    if volumes.is_empty() {
        w.line(0, &format!("{space}Volumes:\t<none>"));
        return;
    }
    w.line(0, &format!("{space}Volumes:"));
    let name_indent = if space.is_empty() { "" } else { " " };
    for v in volumes {
        w.line(1, &format!("{name_indent}{}:", v.name));
        if let Some(h) = &v.host_path {
            w.line(2, "Type:\tHostPath (bare host directory volume)");
            w.line(2, &format!("Path:\t{}", h.path));
            w.line(
                2,
                &format!(
                    "HostPathType:\t{}",
                    h.type_.clone().unwrap_or_else(|| "<none>".into())
                ),
            );
        } else if let Some(e) = &v.empty_dir {
            w.line(
                2,
                "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)",
            );
            w.line(
                2,
                &format!("Medium:\t{}", e.medium.clone().unwrap_or_default()),
            );
            let size = e
                .size_limit
                .as_ref()
                .map(|q| q.0.clone())
                .filter(|s| s != "0" && !s.is_empty());
            w.line(
                2,
                &format!("SizeLimit:\t{}", size.unwrap_or_else(|| "<unset>".into())),
            );
        } else if let Some(s) = &v.secret {
            w.line(2, "Type:\tSecret (a volume populated by a Secret)");
            w.line(
                2,
                &format!("SecretName:\t{}", s.secret_name.clone().unwrap_or_default()),
            );
            w.line(2, &format!("Optional:\t{}", s.optional.unwrap_or(false)));
        } else if let Some(cm) = &v.config_map {
            w.line(2, "Type:\tConfigMap (a volume populated by a ConfigMap)");
            w.line(2, &format!("Name:\t{}", cm.name));
            w.line(2, &format!("Optional:\t{}", cm.optional.unwrap_or(false)));
        } else if let Some(pvc) = &v.persistent_volume_claim {
            w.line(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)");
            w.line(2, &format!("ClaimName:\t{}", pvc.claim_name));
            w.line(2, &format!("ReadOnly:\t{}", pvc.read_only.unwrap_or(false)));
        } else if let Some(p) = &v.projected {
            w.line(
                2,
                "Type:\tProjected (a volume that contains injected data from multiple sources)",
            );
            for src in p.sources.iter().flatten() {
                if let Some(s) = &src.secret {
                    w.line(2, &format!("SecretName:\t{}", s.name));
                    w.line(2, &format!("Optional:\t{}", s.optional.unwrap_or(false)));
                } else if src.downward_api.is_some() {
                    w.line(2, "DownwardAPI:\ttrue");
                } else if let Some(cm) = &src.config_map {
                    w.line(2, &format!("ConfigMapName:\t{}", cm.name));
                    w.line(2, &format!("Optional:\t{}", cm.optional.unwrap_or(false)));
                } else if let Some(t) = &src.service_account_token {
                    w.line(
                        2,
                        &format!(
                            "TokenExpirationSeconds:\t{}",
                            t.expiration_seconds.unwrap_or(0)
                        ),
                    );
                }
            }
        } else {
            w.line(1, "<unknown>");
        }
    }
}
