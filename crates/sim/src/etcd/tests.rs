use super::*;
use k8s_openapi::api::core::v1::ConfigMap;

fn obj(name: &str) -> Arc<Object> {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.to_string());
    Arc::new(Object::from(cm))
}

#[test]
fn revisions_and_versions_advance_per_write() {
    let mut s = Store::default();
    let (r, _) = s.txn(
        "/registry/configmaps/default/a",
        Expect::Absent,
        TxnOp::Put(obj("a")),
    );
    assert!(matches!(
        r,
        EtcdResult::Txn {
            succeeded: true,
            revision: 1,
            ..
        }
    ));
    let (r, _) = s.txn(
        "/registry/configmaps/default/a",
        Expect::Absent,
        TxnOp::Put(obj("a")),
    );
    assert!(
        matches!(
            r,
            EtcdResult::Txn {
                succeeded: false,
                ..
            }
        ),
        "create of an existing key fails"
    );
    s.txn(
        "/registry/configmaps/default/b",
        Expect::Absent,
        TxnOp::Put(obj("b")),
    );
    let (r, _) = s.txn(
        "/registry/configmaps/default/a",
        Expect::ModRevision(1),
        TxnOp::Put(obj("a")),
    );
    assert!(matches!(
        r,
        EtcdResult::Txn {
            succeeded: true,
            revision: 3,
            ..
        }
    ));
    let a = s.get("/registry/configmaps/default/a").unwrap();
    assert_eq!((a.create_revision, a.mod_revision, a.version), (1, 3, 2));
    let (r, _) = s.txn(
        "/registry/configmaps/default/a",
        Expect::ModRevision(1),
        TxnOp::Delete,
    );
    assert!(
        matches!(
            r,
            EtcdResult::Txn {
                succeeded: false,
                ..
            }
        ),
        "stale compare fails"
    );
}

#[test]
fn prefix_range_is_ordered_and_bounded() {
    let mut s = Store::default();
    for k in [
        "/registry/pods/b/x",
        "/registry/pods/a/y",
        "/registry/podsecurity/z",
        "/registry/pods/a/x",
    ] {
        s.bootstrap_put(k, (*obj("o")).clone());
    }
    let keys: Vec<&str> = s
        .range_prefix("/registry/pods/")
        .map(|kv| kv.key.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "/registry/pods/a/x",
            "/registry/pods/a/y",
            "/registry/pods/b/x"
        ]
    );
}

#[test]
fn watch_history_and_compaction() {
    let mut s = Store::default();
    for i in 0..5 {
        s.bootstrap_put(
            &format!("/registry/configmaps/default/{i}"),
            (*obj("o")).clone(),
        );
    }
    assert_eq!(s.events_since("/registry/", 3).unwrap().len(), 3);
    s.compact(4).unwrap();
    assert_eq!(
        s.events_since("/registry/", 3).unwrap_err().0,
        ERR_COMPACTED
    );
    assert_eq!(s.events_since("/registry/", 5).unwrap().len(), 1);
    assert!(s.compact(2).is_err());
}

#[test]
fn a_watch_may_start_at_the_compaction_revision_but_not_before() {
    let mut s = Store::default();
    for i in 0..6 {
        s.bootstrap_put(
            &format!("/registry/configmaps/default/{i}"),
            (*obj("o")).clone(),
        );
    }
    s.compact(4).unwrap();
    assert_eq!(s.events_since("/registry/", 4).unwrap().len(), 3);
    assert_eq!(
        s.events_since("/registry/", 3).unwrap_err(),
        (ERR_COMPACTED.to_string(), 4)
    );
    assert_eq!(s.compact(4).unwrap_err(), ERR_COMPACTED);
    assert_eq!(s.compact(99).unwrap_err(), ERR_FUTURE_REV);
}

#[test]
fn range_at_a_past_revision_sees_the_values_of_then() {
    let mut s = Store::default();
    let k = "/registry/configmaps/default/a";
    s.txn(k, Expect::Absent, TxnOp::Put(obj("v1"))); // rev 1
    s.txn(
        "/registry/configmaps/default/b",
        Expect::Absent,
        TxnOp::Put(obj("b")),
    ); // 2
    s.txn(k, Expect::ModRevision(1), TxnOp::Put(obj("v2"))); // 3
    s.txn("/registry/configmaps/default/b", Expect::Any, TxnOp::Delete); // 4
    s.txn(
        "/registry/configmaps/default/c",
        Expect::Absent,
        TxnOp::Put(obj("c")),
    ); // 5
    let names = |kvs: Vec<KeyValue>| -> Vec<(String, u64)> {
        kvs.into_iter()
            .map(|kv| (kv.value.name().to_string(), kv.mod_revision))
            .collect()
    };
    let p = "/registry/configmaps/";
    assert_eq!(
        names(s.range_at(p, true, 0).unwrap()),
        [("v2".into(), 3), ("c".into(), 5)]
    );
    assert_eq!(
        names(s.range_at(p, true, 2).unwrap()),
        [("v1".into(), 1), ("b".into(), 2)]
    );
    assert_eq!(
        names(s.range_at(p, true, 3).unwrap()),
        [("v2".into(), 3), ("b".into(), 2)]
    );
    assert_eq!(names(s.range_at(k, false, 1).unwrap()), [("v1".into(), 1)]);
    assert!(s.range_at(p, true, 9).is_err());
    s.compact(3).unwrap();
    assert_eq!(s.range_at(p, true, 2).unwrap_err(), ERR_COMPACTED);
    assert_eq!(
        names(s.range_at(p, true, 3).unwrap()),
        [("v2".into(), 3), ("b".into(), 2)]
    );
}

#[test]
fn limited_ranges_count_everything_and_clone_only_the_limit() {
    let mut s = Store::default();
    for i in 0..10 {
        s.bootstrap_put(&format!("/registry/pods/default/p{i}"), (*obj("p")).clone());
    }
    let (kvs, count) = s.range_limited("/registry/pods/", 1);
    assert_eq!((kvs.len(), count), (1, 10));
    assert_eq!(kvs[0].key, "/registry/pods/default/p0");
}

#[test]
fn the_actor_cancels_a_watch_below_the_compaction_point() {
    use crate::message::{Actor, Ctx, Payload};
    let mut e = Etcd::default();
    for i in 0..5 {
        e.store.bootstrap_put(
            &format!("/registry/configmaps/default/{i}"),
            (*obj("o")).clone(),
        );
    }
    e.store.compact(4).unwrap();
    let mut out = Vec::new();
    let mut ctx = Ctx::new(0, Actor::Etcd, &mut out);
    let watch = |rev| EtcdRequest {
        id: rev,
        op: EtcdOp::Watch {
            prefix: "/registry/".into(),
            start_revision: rev,
        },
    };
    e.handle(&mut ctx, Actor::ApiServer, watch(2));
    e.handle(&mut ctx, Actor::ApiServer, watch(4));
    assert_eq!(
        e.watch_count(),
        1,
        "only the watch from the compaction point is open"
    );
    match &out[1].payload {
        Payload::EtcdWatch(b) => assert_eq!(b.events.as_ref().unwrap_err().0, ERR_COMPACTED),
        p => panic!("{p:?}"),
    }
    let mut out2 = Vec::new();
    let mut ctx = Ctx::new(0, Actor::Etcd, &mut out2);
    let txn = EtcdRequest {
        id: 9,
        op: EtcdOp::Txn {
            key: "/registry/configmaps/default/x".into(),
            expect: Expect::Absent,
            op: TxnOp::Put(obj("x")),
        },
    };
    e.handle(&mut ctx, Actor::Terminal(1), txn);
    let watched: Vec<u64> = out2
        .iter()
        .filter_map(|o| match &o.payload {
            Payload::EtcdWatch(b) => Some(b.events.as_ref().unwrap()[0].revision),
            _ => None,
        })
        .collect();
    assert_eq!(watched, [6]);
}

#[test]
fn superseded_revisions_are_kept_encoded_and_read_back_as_written() {
    let mut s = Store::default();
    let k = "/registry/configmaps/default/a";
    let mut written = Vec::new();
    for i in 0..3 {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("a".into());
        cm.data = Some([("v".to_string(), i.to_string())].into_iter().collect());
        let (_, ev) = s.txn(k, Expect::Any, TxnOp::Put(Arc::new(Object::from(cm))));
        written.push(ev.expect("an event").kv.value);
    }
    s.txn(k, Expect::Any, TxnOp::Delete);
    // Revisions 1 and 2 and the deleted value are held by history alone: encoded.
    assert!(s.history.encoded_bytes() > 0);
    let h = s.history_of(k);
    assert_eq!(h.len(), 4);
    for (e, w) in h.iter().zip(&written) {
        assert_eq!(*e.kv.value, **w, "revision {}", e.revision);
    }
    assert_eq!(*h[3].kv.value, *written[2], "the delete's last value");
    assert_eq!(
        h[2].prev.as_ref().map(|p| (*p.value).clone()),
        Some((*written[1]).clone())
    );
    let at_1 = s.range_at(k, false, 1).unwrap();
    assert_eq!(at_1.len(), 1);
    assert_eq!(*at_1[0].value, *written[0]);
}
