//! A JSON object held as its members, two levels deep (`"metadata":` with each of its
//! own members, `"kind":"Pod"` whole), so a revision shares with the one before it
//! every part that did not change — a status update changes `status` and
//! `metadata.resourceVersion`, and keeps the rest of the metadata (the scheduler's
//! result annotations, ~30 KB at 100 nodes) and the spec.

use std::sync::Arc;

/// A member of the top-level object.
#[derive(Clone, Debug)]
pub struct Member {
    /// `"name":value`, or only `"name":` when the value is an object held in `inner`.
    head: Arc<[u8]>,
    /// The members of an object value.
    inner: Option<Arc<[Arc<[u8]>]>>,
}

/// The members of `json` (a compact JSON object), sharing each part equal to the same
/// part of `base`; `None` if `json` is not an object.
pub fn split(json: &[u8], base: &[Member]) -> Option<Vec<Member>> {
    Some(
        scan(json)?
            .into_iter()
            .map(|top| match top.object {
                Some((key, children)) => nested(key, children, base),
                None => Member {
                    head: base
                        .iter()
                        .find(|b| b.inner.is_none() && *b.head == *top.whole)
                        .map_or_else(|| Arc::from(top.whole), |b| b.head.clone()),
                    inner: None,
                },
            })
            .collect(),
    )
}

/// A member of a compact JSON object as [`scan`] finds it.
#[derive(Debug, PartialEq)]
struct Top<'a> {
    /// `"name":value`.
    whole: &'a [u8],
    /// When the value is an object: `"name":` and the object's members.
    object: Option<(&'a [u8], Vec<&'a [u8]>)>,
}

/// The members of a compact JSON object and, for those whose value is an object, that
/// object's members: both levels in one pass over the bytes, skipping through strings
/// with `memchr` (a pod's scheduler annotations are one long escaped string). `None` if
/// `json` is not an object.
fn scan(json: &[u8]) -> Option<Vec<Top<'_>>> {
    let inner = json.strip_prefix(b"{")?.strip_suffix(b"}")?;
    let mut tops = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    // The current member's object value: where it opened, where its current child
    // began, its children so far, and whether it has closed.
    let mut object: Option<(usize, usize, Vec<&[u8]>, bool)> = None;
    let mut i = 0;
    while i < inner.len() {
        match inner[i] {
            b'"' => i = string_end(inner, i + 1)?,
            b'{' => {
                if depth == 0 {
                    object = Some((i, i + 1, Vec::new(), false));
                }
                depth += 1;
            }
            b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 && inner[i] == b'}' {
                    if let Some((_, child, children, closed)) = &mut object {
                        if *child < i {
                            children.push(&inner[*child..i]);
                        }
                        *closed = true;
                    }
                }
            }
            b',' if depth == 0 => {
                tops.push(top(&inner[start..i], start, object.take()));
                start = i + 1;
            }
            b',' if depth == 1 => {
                if let Some((_, child, children, false)) = &mut object {
                    children.push(&inner[*child..i]);
                    *child = i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    if depth != 0 {
        return None;
    }
    if !inner.is_empty() {
        tops.push(top(&inner[start..], start, object.take()));
    }
    Some(tops)
}

/// A member from [`scan`]: split into key and children when its value is an object that
/// opened right after its key (`"name":{`) and ended it.
fn top<'a>(
    whole: &'a [u8],
    start: usize,
    object: Option<(usize, usize, Vec<&'a [u8]>, bool)>,
) -> Top<'a> {
    let object = object.and_then(|(open, _, children, closed)| {
        let key = &whole[..open - start];
        (closed && whole.last() == Some(&b'}') && split_key(key).is_some_and(|(_, v)| v.is_empty()))
            .then_some((key, children))
    });
    Top { whole, object }
}

/// The index of the quote that ends the string whose content begins at `from`.
fn string_end(bytes: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let at = from + memchr::memchr2(b'"', b'\\', bytes.get(from..)?)?;
        if bytes[at] == b'"' {
            return Some(at);
        }
        from = at + 2;
    }
}

fn nested(key: &[u8], children: Vec<&[u8]>, base: &[Member]) -> Member {
    let old = base
        .iter()
        .find(|b| *b.head == *key)
        .and_then(|b| Some((b.head.clone(), b.inner.clone()?)));
    let (head, old_children) = match &old {
        Some((h, c)) => (h.clone(), &c[..]),
        None => (Arc::from(key), &[][..]),
    };
    let shared: Vec<Arc<[u8]>> = children
        .iter()
        .map(|c| {
            old_children
                .iter()
                .find(|o| ***o == **c)
                .map_or_else(|| Arc::from(*c), Arc::clone)
        })
        .collect();
    let same = shared.len() == old_children.len()
        && shared
            .iter()
            .zip(old_children)
            .all(|(a, b)| Arc::ptr_eq(a, b));
    let inner = match old {
        Some((_, c)) if same => c,
        _ => shared.into(),
    };
    Member {
        head,
        inner: Some(inner),
    }
}

/// The JSON the members came from.
pub fn join(members: &[Member]) -> Vec<u8> {
    let mut out = Vec::with_capacity(len(members) + 2);
    out.push(b'{');
    for (i, m) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&m.head);
        if let Some(inner) = &m.inner {
            out.push(b'{');
            for (j, c) in inner.iter().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(c);
            }
            out.push(b'}');
        }
    }
    out.push(b'}');
    out
}

/// Bytes held (a part shared with another revision counts in each).
pub fn len(members: &[Member]) -> usize {
    members
        .iter()
        .map(|m| {
            m.head.len()
                + m.inner
                    .as_ref()
                    .map_or(0, |i| i.iter().map(|c| c.len() + 1).sum())
        })
        .sum()
}

/// The parts of `a` that are the very same allocation as a part of `b`.
#[cfg(test)]
pub fn shared_parts(a: &[Member], b: &[Member]) -> usize {
    let parts = |ms: &[Member]| -> Vec<Arc<[u8]>> {
        ms.iter()
            .flat_map(|m| {
                std::iter::once(m.head.clone())
                    .chain(m.inner.iter().flat_map(|i| i.iter().cloned()))
            })
            .collect()
    };
    let (pa, pb) = (parts(a), parts(b));
    pa.iter()
        .filter(|x| pb.iter().any(|y| Arc::ptr_eq(x, y)))
        .count()
}

/// `"name":value` → (`"name":`, `value`).
fn split_key(member: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut escaped = false;
    for (i, &b) in member.iter().enumerate().skip(1) {
        match b {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => {
                return (member.get(i + 1) == Some(&b':')).then(|| member.split_at(i + 2));
            }
            _ => {}
        }
    }
    None
}

/// The members of a compact JSON object (`{"a":1,"b":{…}}` → `"a":1`, `"b":{…}`), or
/// `None` if `json` is not one.
#[cfg(test)]
fn split_object(json: &[u8]) -> Option<Vec<&[u8]>> {
    let inner = json.strip_prefix(b"{")?.strip_suffix(b"}")?;
    let mut parts = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0usize, false, false, 0);
    for (i, &b) in inner.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if in_string || depth != 0 {
        return None;
    }
    if !inner.is_empty() {
        parts.push(&inner[start..]);
    }
    Some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_split_around_strings_and_nesting_and_join_back() {
        let json = br#"{"a":"x,}\"{","b":{"c":[1,{"d":2}],"e\"":{}},"f":[],"g":{}}"#;
        let parts = split_object(json).expect("an object");
        assert_eq!(
            parts,
            vec![
                &br#""a":"x,}\"{""#[..],
                br#""b":{"c":[1,{"d":2}],"e\"":{}}"#,
                br#""f":[]"#,
                br#""g":{}"#
            ]
        );
        let tops = scan(json).expect("an object");
        let wholes: Vec<&[u8]> = tops.iter().map(|t| t.whole).collect();
        assert_eq!(wholes, parts, "one pass finds the members two passes find");
        assert_eq!(tops[0].object, None, "a string value");
        assert_eq!(
            tops[1].object,
            Some((
                &br#""b":"#[..],
                vec![&br#""c":[1,{"d":2}]"#[..], br#""e\"":{}"#]
            ))
        );
        assert_eq!(tops[2].object, None, "an array value");
        assert_eq!(tops[3].object, Some((&br#""g":"#[..], vec![])));
        assert_eq!(
            scan(br#"{"a":"\\"}"#).map(|t| t.len()),
            Some(1),
            "an escaped backslash ends no string"
        );
        assert_eq!(scan(br#"{"a":"x}"#), None, "an unterminated string");
        assert_eq!(scan(br#"{"a":{"b":1}}}"#), None);
        let members = split(json, &[]).expect("an object");
        assert_eq!(join(&members), json.to_vec());
        assert_eq!(split_object(b"{}"), Some(vec![]));
        assert_eq!(join(&split(b"{}", &[]).unwrap_or_default()), b"{}".to_vec());
        assert_eq!(split_object(b"[1]"), None);
        assert_eq!(
            split_key(br#""k\"y":1"#),
            Some((&br#""k\"y":"#[..], &b"1"[..]))
        );
    }

    #[test]
    fn a_revision_shares_every_part_that_did_not_change() {
        let old = br#"{"kind":"Pod","metadata":{"annotations":{"a":"big"},"resourceVersion":"7"},"spec":{"x":1}}"#;
        let new = br#"{"kind":"Pod","metadata":{"annotations":{"a":"big"},"resourceVersion":"8"},"spec":{"x":1}}"#;
        let a = split(old, &[]).expect("an object");
        let b = split(new, &a).expect("an object");
        assert_eq!(join(&b), new.to_vec());
        // kind, "metadata":, the annotations, "spec": and its x — not the resourceVersion.
        assert_eq!(shared_parts(&b, &a), 5);
    }
}
