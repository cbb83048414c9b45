//! Property test: arbitrary (randomly mutated) objects never panic defaulting, validation
//! or the admission plugins. Deterministic: a fixed seed drives every mutation.

use serde_json::{json, Map, Value};

use crate::apiserver::admission::{
    defaulttolerationseconds, limitranger, namespacelifecycle, priority, resourcequota,
    serviceaccount, Operation,
};
use crate::apiserver::defaults::{generate_job_selector, set_defaults};
use crate::apiserver::field_error::invalid_message;
use crate::apiserver::quantity::parse_quantity;
use crate::apiserver::validation::{decode_quantity_error, validate_create, validate_update};
use crate::object::{Kind, Object};
use crate::rng::Rng;

mod seeds;
use seeds::seeds;

/// Strings chosen to hit edge cases: empty, too long, non-ASCII, odd quantities and ports.
const STRINGS: &[&str] = &[
    "",
    " ",
    "-",
    ".",
    "a",
    "A",
    "web",
    "nginx",
    "http",
    "TCP",
    "UDP",
    "SCTP",
    "Always",
    "Never",
    "None",
    "Exists",
    "In",
    "NotIn",
    "Equal",
    "NoExecute",
    "RollingUpdate",
    "Recreate",
    "OnDelete",
    "ClusterIP",
    "NodePort",
    "LoadBalancer",
    "ExternalName",
    "ReadWriteOnce",
    "Filesystem",
    "Block",
    "0",
    "-1",
    "1",
    "1m",
    "0.5",
    "1e3",
    "1E308",
    "1e-9",
    "1e1000",
    "1Ei",
    "8Ei",
    "1.5Gi",
    "999999999999999999999999999999999999",
    "0.000000000000000000001",
    "9223372036854775807",
    "-9223372036854775808",
    "1Ki",
    "+1",
    "1.",
    ".5",
    "1..2",
    "1e",
    "1e+",
    "Ki",
    "1KiB",
    "1k",
    "50%",
    "0%",
    "100%",
    "101%",
    "-5%",
    "%",
    "1.5%",
    "abc%",
    "65536",
    "30000",
    "/",
    "/data",
    "../x",
    "a/b",
    "example.com/gpu",
    "requests.cpu",
    "limits.memory",
    "count/pods",
    "kubernetes.io/hostname",
    "-bad-",
    "UPPER",
    "a_b",
    "🙂",
    "ü",
    "a\u{0}b",
    "x\ny",
    "10.0.0.1",
    "::1",
    "10.0.0.0/8",
    "None",
    "IPv4",
    "IPv6",
    "PreferDualStack",
    "RequireDualStack",
    "Local",
    "Cluster",
    "ClientIP",
    "NotBestEffort",
    "BestEffort",
    "Terminating",
    "PriorityClass",
    "Container",
    "Pod",
    "PersistentVolumeClaim",
    "storage",
    "cpu",
    "memory",
    "pods",
    "services",
    "Role",
    "ClusterRole",
    "ServiceAccount",
    "User",
    "Group",
    "get",
    "*",
    "Indexed",
    "NonIndexed",
    "FailJob",
    "Ignore",
    "Count",
    "OnExitCodes",
];

fn long_string(rng: &mut Rng) -> String {
    let unit = ["a", "-", ".", "0", "ü"][rng.intn(5) as usize];
    unit.repeat(1 + rng.intn(400) as usize)
}

fn random_string(rng: &mut Rng) -> String {
    match rng.intn(10) {
        0 => long_string(rng),
        1 => {
            // Random quantity-like strings.
            const CHARS: &[u8] = b"0123456789.+-eEinumkKMGTP%";
            (0..rng.intn(12))
                .map(|_| CHARS[rng.intn(CHARS.len() as u64) as usize] as char)
                .collect()
        }
        _ => STRINGS[rng.intn(STRINGS.len() as u64) as usize].to_string(),
    }
}

fn random_int(rng: &mut Rng) -> i64 {
    const INTS: &[i64] = &[
        0,
        1,
        -1,
        2,
        3,
        10,
        80,
        100,
        101,
        443,
        1000,
        30000,
        32767,
        32768,
        65535,
        65536,
        2_147_483_647,
        2_147_483_648,
        -2_147_483_648,
        1_000_000_000,
        2_000_000_001,
        i64::MAX,
        i64::MIN,
        i64::MAX - 1,
    ];
    if rng.intn(4) == 0 {
        rng.next_u64() as i64
    } else {
        INTS[rng.intn(INTS.len() as u64) as usize]
    }
}

fn random_leaf(rng: &mut Rng, keys: &[String], donors: &[Value]) -> Value {
    match rng.intn(10) {
        0 => Value::Null,
        1 => Value::Bool(rng.intn(2) == 0),
        2 | 3 => json!(random_int(rng)),
        4 => json!(rng.float() * 1e6 - 5e5),
        5 => json!({}),
        6 => json!([]),
        7 => {
            // A fragment of some valid manifest, in a place it may not belong.
            let mut v = donors[rng.intn(donors.len() as u64) as usize].clone();
            for _ in 0..rng.intn(4) {
                v = match &v {
                    Value::Object(m) if !m.is_empty() => m
                        .values()
                        .nth(rng.intn(m.len() as u64) as usize)
                        .cloned()
                        .unwrap_or(Value::Null),
                    Value::Array(a) if !a.is_empty() => {
                        a[rng.intn(a.len() as u64) as usize].clone()
                    }
                    _ => v,
                };
            }
            v
        }
        8 => {
            let mut m = Map::new();
            for _ in 0..rng.intn(3) {
                let k = keys[rng.intn(keys.len() as u64) as usize].clone();
                m.insert(k, json!(random_string(rng)));
            }
            Value::Object(m)
        }
        _ => Value::String(random_string(rng)),
    }
}

fn collect_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                collect_keys(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_keys(x, out)),
        _ => {}
    }
}

/// Applies one random mutation somewhere in `v`.
fn mutate(v: &mut Value, rng: &mut Rng, keys: &[String], donors: &[Value]) {
    let descend = rng.intn(5) != 0;
    match v {
        Value::Object(m) if descend && !m.is_empty() => {
            let i = rng.intn(m.len() as u64) as usize;
            let k = m.keys().nth(i).cloned().unwrap_or_default();
            match rng.intn(8) {
                0 => {
                    m.remove(&k);
                }
                1 => {
                    let nk = match rng.intn(3) {
                        0 => random_string(rng),
                        _ => keys[rng.intn(keys.len() as u64) as usize].clone(),
                    };
                    m.insert(nk, random_leaf(rng, keys, donors));
                }
                _ => {
                    if let Some(x) = m.get_mut(&k) {
                        mutate(x, rng, keys, donors);
                    }
                }
            }
        }
        Value::Array(a) if descend && !a.is_empty() => {
            let i = rng.intn(a.len() as u64) as usize;
            match rng.intn(6) {
                0 => {
                    a.remove(i);
                }
                1 => {
                    let x = a[i].clone();
                    a.push(x);
                }
                _ => mutate(&mut a[i], rng, keys, donors),
            }
        }
        _ => *v = random_leaf(rng, keys, donors),
    }
}

/// Runs everything this module's siblings export on one object; only panics matter.
fn exercise(obj: &Object, original: &Object, cluster: &[Object]) {
    let mut obj = obj.clone();
    set_defaults(&mut obj);
    if let Object::Job(j) = &mut obj {
        generate_job_selector(j, "0b0c1ab5-1b6a-4f0e-8a35-9b8a1a2b3c4d");
    }
    let _ = decode_quantity_error(&obj);
    let errs = validate_create(&obj);
    let info = obj.kind().info();
    let _ = invalid_message(info.kind, info.group, obj.name(), &errs);
    for e in &errs {
        let _ = e.to_string();
    }
    let _ = validate_update(&obj, original);
    let _ = validate_update(original, &obj);
    let _ = validate_update(&obj, &obj);

    let ns = cluster.iter().find_map(|o| match o {
        Object::Namespace(n) => Some((**n).clone()),
        _ => None,
    });
    let mut ranges = Vec::new();
    let mut quotas = Vec::new();
    let mut classes = priority::system_priority_classes();
    let mut accounts = Vec::new();
    for o in cluster {
        match o {
            Object::LimitRange(l) => ranges.push((**l).clone()),
            Object::ResourceQuota(q) => quotas.push((**q).clone()),
            Object::PriorityClass(p) => classes.push((**p).clone()),
            Object::ServiceAccount(s) => accounts.push((**s).clone()),
            _ => {}
        }
    }
    for op in [Operation::Create, Operation::Update, Operation::Delete] {
        let _ = namespacelifecycle::admit(
            op,
            obj.kind(),
            obj.name(),
            obj.namespace(),
            Some(&obj),
            ns.as_ref(),
        );
        let _ = resourcequota::check(op, &obj, Some(original), &quotas);
        let _ = resourcequota::check(op, &obj, None, &quotas);
    }
    match &obj {
        Object::Pod(p) => {
            let mut p = (**p).clone();
            limitranger::mutate_pod(&mut p, &ranges);
            let _ = limitranger::validate_pod(&p, &ranges);
            let _ = serviceaccount::admit(&mut p, &accounts, "x7k2q");
            let old = match original {
                Object::Pod(o) => Some(&**o),
                _ => None,
            };
            let _ = priority::admit_pod(Operation::Create, &mut p, None, &classes);
            let _ = priority::admit_pod(Operation::Update, &mut p, old, &classes);
            defaulttolerationseconds::admit(&mut p);
            let _ = resourcequota::pod_requests(&p);
            let _ = resourcequota::pod_limits(&p);
            let _ = validate_create(&Object::from(p));
        }
        Object::PersistentVolumeClaim(c) => {
            let _ = limitranger::validate_pvc(c, &ranges);
        }
        Object::PriorityClass(pc) => {
            let _ = priority::admit_priority_class(Operation::Create, pc, &classes);
        }
        _ => {}
    }
}

#[test]
fn arbitrary_objects_never_panic() {
    let seeds = seeds();
    let donors: Vec<Value> = seeds.iter().map(|(_, v)| v.clone()).collect();
    let mut keys = Vec::new();
    donors.iter().for_each(|v| collect_keys(v, &mut keys));
    keys.sort();
    keys.dedup();
    let decode = |kind: Kind, v: &Value| Object::from_value(kind, v, &mut Vec::new()).ok();
    let cluster: Vec<Object> = seeds.iter().filter_map(|(k, v)| decode(*k, v)).collect();
    assert_eq!(cluster.len(), seeds.len(), "every seed decodes");

    // `KUBELOOP_FUZZ_ROUNDS` / `KUBELOOP_FUZZ_SEED` allow longer explorations by hand.
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let mut rng = Rng::new(env("KUBELOOP_FUZZ_SEED", 0x6b75_6265_6c6f_6f70));
    let mut decoded = 0;
    for round in 0..env("KUBELOOP_FUZZ_ROUNDS", 120) {
        for (kind, seed) in &seeds {
            let original = decode(*kind, seed).unwrap_or_else(|| panic!("{kind:?} seed decodes"));
            let mut v = seed.clone();
            for _ in 0..1 + rng.intn(1 + round % 6) {
                mutate(&mut v, &mut rng, &keys, &donors);
            }
            let Some(obj) = decode(*kind, &v) else {
                continue;
            };
            decoded += 1;
            // Some mutated objects also serve as the cluster state admission reads.
            let mut state = cluster.clone();
            if rng.intn(3) == 0 {
                state.push(obj.clone());
            }
            exercise(&obj, &original, &state);
        }
    }
    assert!(decoded > 1000, "only {decoded} mutated objects decoded");
}

#[test]
fn arbitrary_quantities_never_panic() {
    let mut rng = Rng::new(42);
    let mut parsed = Vec::new();
    for _ in 0..20_000 {
        let s = random_string(&mut rng);
        if let Ok(q) = parse_quantity(&s) {
            let _ = (q.value(), q.milli_value(), q.canonical(), q.to_string());
            let _ = (
                q.round_up(0),
                q.round_up(-3),
                q.scaled_value(6),
                q.scaled_value(-9),
            );
            parsed.push(q);
        }
    }
    for w in parsed.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let _ = (
            a.add(b).canonical(),
            a.sub(b).canonical(),
            a.cmp_value(b),
            a == b,
            a < b,
        );
    }
    assert!(parsed.len() > 1000);
}

#[test]
fn extreme_quantities_in_every_resource_field_never_panic() {
    let extremes = [
        "8Ei",
        "9223372036854775807",
        "1e18",
        "999999999999999999999999999999999999",
        "0.000000001m",
        "1E308",
        "-8Ei",
        "9.999999999999999999999E18",
    ];
    let (cluster, seeds) = (seeds(), seeds());
    let state: Vec<Object> = cluster
        .iter()
        .filter_map(|(k, v)| Object::from_value(*k, v, &mut Vec::new()).ok())
        .collect();
    for q in extremes {
        for (kind, seed) in &seeds {
            let mut v = seed.clone();
            replace_quantities(&mut v, q);
            let Ok(obj) = Object::from_value(*kind, &v, &mut Vec::new()) else {
                continue;
            };
            let original = Object::from_value(*kind, seed, &mut Vec::new()).expect("seed decodes");
            // Quotas, ranges and classes full of extremes too.
            let mut extreme_state = state.clone();
            extreme_state.push(obj.clone());
            exercise(&obj, &original, &extreme_state);
        }
    }
}

/// Replaces every string that parses as a quantity (and every integer) with `q`.
fn replace_quantities(v: &mut Value, q: &str) {
    match v {
        Value::Object(m) => m.values_mut().for_each(|x| replace_quantities(x, q)),
        Value::Array(a) => a.iter_mut().for_each(|x| replace_quantities(x, q)),
        Value::String(s) if parse_quantity(s).is_ok() => *s = q.to_string(),
        _ => {}
    }
}
