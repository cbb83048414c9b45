//! Resource quantities as integers (milli-CPU, bytes, counts) and pod request arithmetic
//! (`resourcehelper.PodRequests`, the scheduler's non-zero defaults).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// `DefaultMilliCPURequest`: what the scheduler assumes for a container without a cpu request.
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// `DefaultMemoryRequest`: 200 MB, assumed for a container without a memory request.
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// Parses a Kubernetes quantity into a scaled integer, rounding up like
/// `Quantity.Value()` (`scale = 0`) and `Quantity.MilliValue()` (`scale = 3`).
/// Malformed input gives `None`; callers treat it as absent.
pub fn parse_quantity_scaled(s: &str, scale: u32) -> Option<i64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let (neg, body) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let num_end = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (num, suffix) = body.split_at(num_end);
    if num.is_empty() || num == "." || num.matches('.').count() > 1 {
        return None;
    }
    let (int_part, frac_part) = num.split_once('.').unwrap_or((num, ""));
    // Mantissa as an integer with `frac_len` decimal places.
    let mut mantissa: i128 = 0;
    for c in int_part.chars().chain(frac_part.chars()) {
        mantissa = mantissa
            .checked_mul(10)?
            .checked_add(i128::from(c as u8 - b'0'))?;
    }
    let mut dec_exp: i32 = -(frac_part.len() as i32);
    let mut bin_exp: u32 = 0;
    match suffix {
        "" => {}
        "n" => dec_exp -= 9,
        "u" => dec_exp -= 6,
        "m" => dec_exp -= 3,
        "k" => dec_exp += 3,
        "M" => dec_exp += 6,
        "G" => dec_exp += 9,
        "T" => dec_exp += 12,
        "P" => dec_exp += 15,
        "E" => dec_exp += 18,
        "Ki" => bin_exp = 10,
        "Mi" => bin_exp = 20,
        "Gi" => bin_exp = 30,
        "Ti" => bin_exp = 40,
        "Pi" => bin_exp = 50,
        "Ei" => bin_exp = 60,
        other => {
            let exp = other.strip_prefix(['e', 'E'])?;
            let e: i32 = exp.parse().ok()?;
            if e.abs() > 40 {
                return None;
            }
            dec_exp += e;
        }
    }
    mantissa = mantissa.checked_mul(1i128.checked_shl(bin_exp)?)?;
    dec_exp += scale as i32;
    let value = if dec_exp >= 0 {
        mantissa.checked_mul(10i128.checked_pow(dec_exp as u32)?)?
    } else {
        let d = 10i128.checked_pow((-dec_exp) as u32).unwrap_or(i128::MAX);
        // Round away from zero, as resource.Quantity's Value/MilliValue do.
        (mantissa + d - 1) / d
    };
    let value = if neg { -value } else { value };
    i64::try_from(value).ok()
}

/// `Quantity.Value()` (rounded up, at most [`HUGE`]), 0 when malformed.
pub fn quantity_value(q: &Quantity) -> i64 {
    clamped(parse_quantity_scaled(&q.0, 0), q)
}

/// `Quantity.MilliValue()` (rounded up, at most [`HUGE`]), 0 when malformed.
pub fn quantity_milli_value(q: &Quantity) -> i64 {
    clamped(parse_quantity_scaled(&q.0, 3), q)
}

/// The largest amount the scheduler counts (2^52: 4.5 × 10^12 cores, 4 PiB): larger
/// requests (`cpu: "1e19"`, even past int64) count as this much, so they fit no node —
/// they used to read as 0 and fit every node — and sums and scores of many such amounts
/// stay far from overflowing.
pub const HUGE: i64 = 1 << 52;

fn clamped(v: Option<i64>, q: &Quantity) -> i64 {
    match v {
        Some(v) => v.clamp(-HUGE, HUGE),
        // Too large for an int64, or malformed (which the apiserver no longer stores).
        None => match crate::quantity::parse(q.0.trim()) {
            Ok(v) if v < crate::quantity::Quantity::zero() => -HUGE,
            Ok(_) => HUGE,
            Err(_) => 0,
        },
    }
}

/// `IsScalarResourceName`: extended, hugepages, prefixed-native or attachable-volume resources.
pub fn is_scalar_resource_name(name: &str) -> bool {
    name.contains('/') || name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")
}

/// A set of compute resources as integers (`framework.Resource`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resource {
    /// CPU in milli-cores.
    pub milli_cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
    /// Ephemeral storage in bytes.
    pub ephemeral_storage: i64,
    /// The `pods` resource (allocatable pod slots).
    pub allowed_pod_number: i64,
    /// Extended and other scalar resources, sorted by name.
    pub scalar: Vec<(String, i64)>,
}

impl Resource {
    /// Builds a Resource from a ResourceList.
    pub fn from_list(list: Option<&BTreeMap<String, Quantity>>) -> Resource {
        let mut r = Resource::default();
        if let Some(list) = list {
            r.add_list(list);
        }
        r
    }

    /// Adds a ResourceList.
    pub fn add_list(&mut self, list: &BTreeMap<String, Quantity>) {
        for (name, q) in list {
            match name.as_str() {
                "cpu" => self.milli_cpu += quantity_milli_value(q),
                "memory" => self.memory += quantity_value(q),
                "pods" => self.allowed_pod_number += quantity_value(q),
                "ephemeral-storage" => self.ephemeral_storage += quantity_value(q),
                n if is_scalar_resource_name(n) => self.add_scalar(n, quantity_value(q)),
                _ => {}
            }
        }
    }

    /// Adds `v` to scalar resource `name`.
    pub fn add_scalar(&mut self, name: &str, v: i64) {
        match self.scalar.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
            Ok(i) => self.scalar[i].1 += v,
            Err(i) => self.scalar.insert(i, (name.to_string(), v)),
        }
    }

    /// The amount of scalar resource `name` (0 if absent).
    pub fn scalar(&self, name: &str) -> i64 {
        match self.scalar.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
            Ok(i) => self.scalar[i].1,
            Err(_) => 0,
        }
    }

    /// The amount of any resource by name (cpu in milli-cores).
    pub fn get(&self, name: &str) -> i64 {
        match name {
            "cpu" => self.milli_cpu,
            "memory" => self.memory,
            "ephemeral-storage" => self.ephemeral_storage,
            "pods" => self.allowed_pod_number,
            n => self.scalar(n),
        }
    }

    /// Adds another Resource (used when a pod lands on a node).
    pub fn add(&mut self, o: &Resource) {
        self.milli_cpu += o.milli_cpu;
        self.memory += o.memory;
        self.ephemeral_storage += o.ephemeral_storage;
        self.allowed_pod_number += o.allowed_pod_number;
        for (n, v) in &o.scalar {
            self.add_scalar(n, *v);
        }
    }

    /// Subtracts another Resource (used when a pod leaves a node).
    pub fn sub(&mut self, o: &Resource) {
        self.milli_cpu -= o.milli_cpu;
        self.memory -= o.memory;
        self.ephemeral_storage -= o.ephemeral_storage;
        self.allowed_pod_number -= o.allowed_pod_number;
        for (n, v) in &o.scalar {
            self.add_scalar(n, -*v);
        }
    }

    /// Per-resource maximum (`SetMaxResource`).
    fn max_with(&mut self, o: &Resource) {
        self.milli_cpu = self.milli_cpu.max(o.milli_cpu);
        self.memory = self.memory.max(o.memory);
        self.ephemeral_storage = self.ephemeral_storage.max(o.ephemeral_storage);
        for (n, v) in &o.scalar {
            let cur = self.scalar(n);
            if *v > cur {
                self.add_scalar(n, *v - cur);
            }
        }
    }
}

/// A container's requests, with the scheduler's defaults for missing cpu/memory when
/// `non_missing` is set (an explicit 0 stays 0).
fn container_requests(c: &Container, non_missing: bool) -> Resource {
    let list = c.resources.as_ref().and_then(|r| r.requests.as_ref());
    let mut r = Resource::from_list(list);
    if non_missing {
        let has = |k: &str| list.is_some_and(|l| l.contains_key(k));
        if !has("cpu") {
            r.milli_cpu = DEFAULT_MILLI_CPU_REQUEST;
        }
        if !has("memory") {
            r.memory = DEFAULT_MEMORY_REQUEST;
        }
    }
    r
}

fn is_sidecar(c: &Container) -> bool {
    c.restart_policy.as_deref() == Some("Always")
}

/// `resourcehelper.PodRequests`: app containers + sidecars, max'ed with each init container
/// (plus the sidecars started before it), plus pod overhead. With `non_missing`, containers
/// missing a cpu/memory request count 100m/200Mi.
pub fn pod_requests(pod: &Pod, non_missing: bool) -> Resource {
    let mut reqs = Resource::default();
    let Some(spec) = pod.spec.as_ref() else {
        return reqs;
    };
    for c in &spec.containers {
        reqs.add(&container_requests(c, non_missing));
    }
    let mut restartable = Resource::default();
    let mut init_max = Resource::default();
    for c in spec.init_containers.iter().flatten() {
        let cr = container_requests(c, non_missing);
        if is_sidecar(c) {
            reqs.add(&cr);
            restartable.add(&cr);
            init_max.max_with(&restartable);
        } else {
            let mut tmp = cr;
            tmp.add(&restartable);
            init_max.max_with(&tmp);
        }
    }
    reqs.max_with(&init_max);
    if let Some(overhead) = spec.overhead.as_ref() {
        reqs.add_list(overhead);
    }
    reqs.allowed_pod_number = 0;
    reqs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_like_resource_quantity() {
        let cases: &[(&str, u32, Option<i64>)] = &[
            ("1", 3, Some(1000)),
            ("100m", 3, Some(100)),
            ("0.5", 3, Some(500)),
            ("1.5", 0, Some(2)), // Value() rounds up
            ("1Gi", 0, Some(1 << 30)),
            ("200Mi", 0, Some(209_715_200)),
            ("1G", 0, Some(1_000_000_000)),
            ("1e3", 0, Some(1000)),
            ("1k", 0, Some(1000)),
            ("1m", 0, Some(1)), // 0.001 rounds up to 1
            ("1500u", 3, Some(2)),
            ("abc", 0, None),
            ("1Qi", 0, None),
            ("", 0, None),
            ("-1", 0, Some(-1)),
        ];
        for (s, scale, want) in cases {
            assert_eq!(parse_quantity_scaled(s, *scale), *want, "{s} scale {scale}");
        }
    }

    fn pod(json: serde_json::Value) -> Pod {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn pod_requests_follow_init_container_and_sidecar_rules() {
        let p = pod(serde_json::json!({"spec": {
            "initContainers": [
                {"name": "i1", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
                {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
                {"name": "i2", "resources": {"requests": {"cpu": "1"}}}
            ],
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "1", "memory": "100Mi"}}},
                {"name": "b"}
            ],
            "overhead": {"cpu": "10m"}
        }}));
        let r = pod_requests(&p, false);
        // app 1000 + sidecar 500 = 1500; init max: i1 2000, side 500, i2 1000+500 → 2000.
        // max(1500, 2000) + overhead 10 = 2010.
        assert_eq!(r.milli_cpu, 2010);
        assert_eq!(r.memory, 1 << 30);
        let nz = pod_requests(&p, true);
        // app: a 1000 + b 100 (default) + sidecar 500 = 1600 < init 2000 → 2000 + 10.
        assert_eq!(nz.milli_cpu, 2010);
        // memory: a 100Mi + b 200Mi + sidecar 200Mi = 500Mi; init i1 1Gi → 1Gi.
        assert_eq!(nz.memory, 1 << 30);
    }

    #[test]
    fn explicit_zero_is_not_defaulted() {
        let p = pod(serde_json::json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "0"}}}
        ]}}));
        let nz = pod_requests(&p, true);
        assert_eq!(nz.milli_cpu, 0);
        assert_eq!(nz.memory, DEFAULT_MEMORY_REQUEST);
    }
}
