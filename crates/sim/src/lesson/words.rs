//! What a check says, in English and Simplified Chinese, with kubectl's words for state
//! (STATUS as `kubectl get pods` prints it).

use super::Text;

fn text(en: String, zh: String) -> Text {
    Text { en, zh }
}

/// Several reasons in one.
pub fn join<'a>(parts: impl Iterator<Item = &'a Text>, en_sep: &str, zh_sep: &str) -> Text {
    let parts: Vec<&Text> = parts.collect();
    text(
        parts
            .iter()
            .map(|t| t.en.as_str())
            .collect::<Vec<_>>()
            .join(en_sep),
        parts
            .iter()
            .map(|t| t.zh.as_str())
            .collect::<Vec<_>>()
            .join(zh_sep),
    )
}

/// What an `exists` check looks for.
pub struct Objects<'a> {
    pub kind: &'a str,
    pub name: Option<&'a str>,
    pub selector: Option<&'a str>,
    pub namespace: Option<&'a str>,
}

impl Objects<'_> {
    fn en(&self) -> String {
        let mut s = match (self.name, self.selector) {
            (Some(n), _) => format!("{} {n}", self.kind),
            (None, Some(sel)) => format!("{} with labels {sel}", self.kind),
            (None, None) => self.kind.to_string(),
        };
        if let Some(ns) = self.namespace {
            s.push_str(&format!(" in namespace {ns}"));
        }
        s
    }

    fn zh(&self) -> String {
        let ns = self
            .namespace
            .map(|ns| format!("命名空间 {ns} 中"))
            .unwrap_or_default();
        match (self.name, self.selector) {
            (Some(n), _) => format!("{ns}名为 {n} 的 {}", self.kind),
            (None, Some(sel)) => format!("{ns}标签为 {sel} 的 {}", self.kind),
            (None, None) => format!("{ns}的 {}", self.kind),
        }
    }
}

pub fn no_resource_type(kind: &str) -> Text {
    text(
        format!("the server doesn't have a resource type \"{kind}\""),
        format!("集群中没有资源类型 \"{kind}\""),
    )
}

pub fn none_exist(what: &Objects) -> Text {
    text(
        format!("no {} yet", what.en()),
        format!("还没有{}", what.zh()),
    )
}

pub fn exist(what: &Objects, n: u64, wanted: u64) -> Text {
    if wanted <= 1 {
        return text(
            format!("{} exists", what.en()),
            format!("{}已存在", what.zh()),
        );
    }
    text(
        format!("{n} of the {wanted} wanted: {}", what.en()),
        format!("{}：{n} 个，需要 {wanted} 个", what.zh()),
    )
}

/// `Pod web-1: {.spec.nodeName} is "node-1"` (and `, not "node-2"` when it is not what is
/// wanted).
pub fn field_is(kind: &str, name: &str, path: &str, value: &str, wanted: Option<&str>) -> Text {
    let who = if name.is_empty() {
        kind.to_string()
    } else {
        format!("{kind} {name}")
    };
    match wanted {
        None => text(
            format!("{who}: {path} is {value:?}"),
            format!("{who} 的 {path} 是 {value:?}"),
        ),
        Some(w) => text(
            format!("{who}: {path} is {value:?}, not {w:?}"),
            format!("{who} 的 {path} 是 {value:?}，不是 {w:?}"),
        ),
    }
}

/// `2 of 3 pods app=web are Ready: web-7f9c-x2 is ImagePullBackOff`.
pub fn pods_ready(selector: &str, ready: u64, wanted: u64, waiting: &[(String, String)]) -> Text {
    let mut en = format!("{ready} of {wanted} pods {selector} are Ready");
    let mut zh = format!("{selector} 的 Pod 中 {ready}/{wanted} 个 Ready");
    if !waiting.is_empty() {
        let en_list: Vec<String> = waiting
            .iter()
            .map(|(pod, status)| format!("{pod} is {status}"))
            .collect();
        let zh_list: Vec<String> = waiting
            .iter()
            .map(|(pod, status)| format!("{pod} 是 {status}"))
            .collect();
        en.push_str(&format!(": {}", en_list.join(", ")));
        zh.push_str(&format!("：{}", zh_list.join("，")));
    }
    text(en, zh)
}

pub fn event_seen(reason: &str, kind: &str, name: &str, message: &str) -> Text {
    text(
        format!("Event {reason} on {kind} {name}: {message}"),
        format!("{kind} {name} 上有 Event {reason}：{message}"),
    )
}

pub fn no_event(reason: &str, name: Option<&str>) -> Text {
    match name {
        Some(n) => text(
            format!("no Event with reason {reason} about {n} yet"),
            format!("还没有关于 {n}、原因为 {reason} 的 Event"),
        ),
        None => text(
            format!("no Event with reason {reason} yet"),
            format!("还没有原因为 {reason} 的 Event"),
        ),
    }
}

fn component_name(name: &str, node: Option<&str>) -> String {
    match node {
        Some(n) => format!("{name} on {n}"),
        None => name.to_string(),
    }
}

fn component_name_zh(name: &str, node: Option<&str>) -> String {
    match node {
        Some(n) => format!("{n} 上的 {name}"),
        None => name.to_string(),
    }
}

pub fn no_component(name: &str, node: Option<&str>) -> Text {
    text(
        format!("there is no {}", component_name(name, node)),
        format!("没有 {}", component_name_zh(name, node)),
    )
}

pub fn component(name: &str, node: Option<&str>, running: bool) -> Text {
    let (en, zh) = if running {
        ("is running", "正在运行")
    } else {
        ("is stopped", "已停止")
    };
    text(
        format!("{} {en}", component_name(name, node)),
        format!("{} {zh}", component_name_zh(name, node)),
    )
}

pub fn not_run(words: &str) -> Text {
    text(
        format!("run `{words} …` (not run in this step yet)"),
        format!("运行 `{words} …`（这一步还没有运行）"),
    )
}

pub fn ran_ok(line: &str) -> Text {
    text(format!("`{line}` ran"), format!("已运行 `{line}`"))
}

pub fn output_mismatch(line: &str, pattern: &str) -> Text {
    text(
        format!("`{line}` printed nothing matching /{pattern}/"),
        format!("`{line}` 的输出里没有匹配 /{pattern}/ 的内容"),
    )
}

pub fn exit_mismatch(line: &str, code: i32, wanted: i32) -> Text {
    text(
        format!("`{line}` exited {code}, not {wanted}"),
        format!("`{line}` 的退出码是 {code}，不是 {wanted}"),
    )
}

pub fn no_curl(url: Option<&str>) -> Text {
    match url {
        Some(u) => text(
            format!("run `curl` to {u} (not run in this step yet)"),
            format!("用 `curl` 访问 {u}（这一步还没有运行）"),
        ),
        None => text(
            "run `curl` (not run in this step yet)".to_string(),
            "运行 `curl`（这一步还没有运行）".to_string(),
        ),
    }
}

/// The last curl: `curl http://web` succeeded / exited 7: curl: (7) Failed to connect….
pub fn curl(line: &str, code: i32, error: &str) -> Text {
    if code == 0 {
        return text(format!("`{line}` succeeded"), format!("`{line}` 成功了"));
    }
    let tail = if error.is_empty() {
        String::new()
    } else {
        format!(": {error}")
    };
    text(
        format!("`{line}` exited {code}{tail}"),
        format!("`{line}` 的退出码是 {code}{tail}"),
    )
}
