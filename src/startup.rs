//! Which scenario the page opens: a share link's (`#s=…`), else the copy saved in
//! localStorage, else the default; and what to tell the user when one could not be read.

use kubeloop_sim::scenario::{parse_scenario, Scenario};
use kubeloop_sim::share::{decode_share_fragment, encode_share_fragment};

use crate::examples::default_scenario;

/// Why a link or the saved copy was not used. The user's work is kept in every case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// The fragment is not a share link that decodes (damaged, too big, a bomb).
    BadLink(String),
    /// The link decodes, but not to a valid scenario: each problem as `line:column: message`.
    BadScenario(Vec<String>),
    /// The saved copy does not parse (the default was loaded).
    BadSaved(String),
    /// The last visit never finished replaying the saved copy: it opened at t=0.
    NotReplayed,
}

impl Notice {
    /// The details shown under the banner's headline.
    pub fn detail(&self) -> String {
        match self {
            Notice::BadLink(d) | Notice::BadSaved(d) => d.clone(),
            Notice::NotReplayed => String::new(),
            Notice::BadScenario(list) => {
                list.iter().take(5).cloned().collect::<Vec<_>>().join("\n")
            }
        }
    }
}

/// Whether a location hash carries a share link (`#s=…`, or `s=` among `&`-parameters) or
/// a lesson's link (`#lesson=ID`, a lesson of the gallery).
pub fn has_share(hash: &str) -> bool {
    hash.trim_start_matches('#')
        .split('&')
        .any(|p| p.starts_with("s=") || p.starts_with("lesson="))
}

/// The lesson id in a lesson's link.
fn lesson_param(hash: &str) -> Option<&str> {
    hash.trim_start_matches('#')
        .split('&')
        .find_map(|p| p.strip_prefix("lesson="))
}

/// A lesson's link (`#lesson=ID`).
pub fn lesson_fragment(id: &str) -> String {
    format!("#lesson={id}")
}

/// The scenario in a share link, or the gallery lesson a lesson's link names.
pub fn from_link(hash: &str) -> Result<Scenario, Notice> {
    let has_scenario = hash
        .trim_start_matches('#')
        .split('&')
        .any(|p| p.starts_with("s="));
    if let Some(id) = lesson_param(hash).filter(|_| !has_scenario) {
        return crate::examples::lesson(id)
            .map(crate::examples::scenario)
            .ok_or_else(|| Notice::BadLink(format!("no lesson named \"{id}\"")));
    }
    let yaml = decode_share_fragment(hash).map_err(|e| Notice::BadLink(e.to_string()))?;
    parse_scenario(&yaml)
        .map_err(|errs| Notice::BadScenario(errs.iter().map(|e| e.to_string()).collect()))
}

/// The scenario to open with: the link's, else the saved one, else the default.
pub fn opening(hash: &str, saved: Option<&str>) -> (Scenario, Option<Notice>) {
    let mut notice = None;
    if has_share(hash) {
        match from_link(hash) {
            Ok(sc) => return (sc, None),
            Err(n) => notice = Some(n),
        }
    }
    let scenario = match saved.map(parse_scenario) {
        Some(Ok(sc)) => sc,
        Some(Err(errs)) => {
            notice = notice.or(Some(Notice::BadSaved(
                errs.first().map(|e| e.to_string()).unwrap_or_default(),
            )));
            default_scenario()
        }
        None => default_scenario(),
    };
    (scenario, notice)
}

/// Whether a scenario holds no work of the learner's: a gallery example as shipped (the
/// virtual time it ran to aside), so opening something else over it loses nothing.
pub fn is_pristine(sc: &Scenario) -> bool {
    let mut mine = sc.clone();
    mine.spec.until = None;
    crate::examples::EXAMPLES
        .iter()
        .any(|e| crate::examples::scenario(e) == mine)
}

/// How the page opens when the address carries a share link.
#[derive(Clone, Debug, PartialEq)]
pub struct Opening {
    /// The scenario to open now.
    pub scenario: Scenario,
    /// Why the link or the saved copy was not used.
    pub notice: Option<Notice>,
    /// A valid link's scenario waiting for the learner's yes: it would replace their work.
    pub offer: Option<Scenario>,
    /// The scenario opened is the link's: not saved until it has run cleanly, so a link
    /// that breaks the page cannot break the next visit too.
    pub from_link: bool,
}

/// The scenario to open with, asking first before a link replaces real work: a valid link
/// over a saved copy with the learner's work opens the saved copy and offers the link.
pub fn opening_asking(hash: &str, saved: Option<&str>) -> Opening {
    let (scenario, notice) = opening(hash, saved);
    let from_link = has_share(hash) && notice.is_none();
    let saved_work = saved
        .and_then(|y| parse_scenario(y).ok())
        .filter(|sc| !is_pristine(sc));
    match saved_work {
        Some(work) if from_link && !same_work(&work, &scenario) => Opening {
            scenario: work,
            notice: None,
            offer: Some(scenario),
            from_link: false,
        },
        _ => Opening {
            scenario,
            notice,
            offer: None,
            from_link,
        },
    }
}

/// The same scenario, whatever virtual time each ran to.
pub fn same_work(a: &Scenario, b: &Scenario) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    a.spec.until = None;
    b.spec.until = None;
    a == b
}

/// The share fragment (`#s=…`) for a scenario.
pub fn share_fragment(scenario: &Scenario) -> String {
    encode_share_fragment(&scenario.to_yaml())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn should_open_a_share_link_before_the_saved_copy() {
        let mut sc = default_scenario();
        sc.spec.seed = 99;
        let link = share_fragment(&sc);
        let saved = default_scenario().to_yaml();
        let (got, notice) = opening(&link, Some(&saved));
        assert_eq!(got, sc);
        assert_eq!(notice, None);
        assert!(
            has_share("#s=abc") && has_share("#x=1&s=abc") && !has_share("#top") && !has_share("")
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_keep_the_saved_copy_when_a_link_is_bad() {
        let mut mine = default_scenario();
        mine.spec.seed = 5;
        let saved = mine.to_yaml();
        for bad in ["#s=", "#s=!!!!", "#s=AAAA", "#s="] {
            let (got, notice) = opening(bad, Some(&saved));
            assert_eq!(got, mine, "{bad}");
            assert!(
                matches!(notice, Some(Notice::BadLink(_))),
                "{bad}: {notice:?}"
            );
        }
        let not_a_scenario = encode_share_fragment("kind: Pod\n");
        let (got, notice) = opening(&not_a_scenario, Some(&saved));
        assert_eq!(got, mine);
        let Some(Notice::BadScenario(list)) = notice else {
            panic!("{notice:?}")
        };
        assert!(list[0].contains(':'), "located: {list:?}");
        let bomb = encode_share_fragment(&"a".repeat(3 << 20));
        assert!(matches!(
            opening(&bomb, Some(&saved)).1,
            Some(Notice::BadLink(_))
        ));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_ask_before_a_link_replaces_the_learners_work() {
        let mut shared = default_scenario();
        shared.spec.seed = 99;
        let link = share_fragment(&shared);
        let mut work = default_scenario();
        work.spec
            .files
            .insert("mine.yaml".into(), "kind: Pod\n".into());
        let o = opening_asking(&link, Some(&work.to_yaml()));
        assert_eq!(o.scenario, work, "the work stays open");
        assert_eq!(o.offer, Some(shared.clone()), "the link waits for a yes");
        assert!(!o.from_link);
        for nothing_to_lose in [None, Some(default_scenario().to_yaml())] {
            let o = opening_asking(&link, nothing_to_lose.as_deref());
            assert_eq!(
                (o.scenario, o.offer, o.from_link),
                (shared.clone(), None, true)
            );
        }
        let o = opening_asking(&link, Some(&shared.to_yaml()));
        assert_eq!(o.offer, None, "the same scenario needs no question");
        let bad = opening_asking("#s=!!!", Some(&work.to_yaml()));
        assert_eq!(bad.scenario, work);
        assert!(bad.notice.is_some() && bad.offer.is_none() && !bad.from_link);
        let mut ran = default_scenario();
        ran.spec.until = Some("2m".into());
        assert!(is_pristine(&ran), "time alone is no work");
        assert!(!is_pristine(&work));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_fall_back_to_the_default() {
        assert_eq!(opening("", None), (default_scenario(), None));
        let (got, notice) = opening("", Some("spec: [unclosed"));
        assert_eq!(got, default_scenario());
        assert!(matches!(notice, Some(Notice::BadSaved(_))));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn should_open_a_lesson_by_its_link() {
        let link = lesson_fragment("lesson-self-healing");
        assert!(has_share(&link));
        let (got, notice) = opening(&link, None);
        assert_eq!(notice, None);
        assert_eq!(got.metadata.name, "lesson-self-healing");
        assert!(got.spec.lesson.is_some());
        let (got, notice) = opening("#lesson=no-such-lesson", None);
        assert_eq!(got, default_scenario());
        assert_eq!(
            notice,
            Some(Notice::BadLink(
                "no lesson named \"no-such-lesson\"".to_string()
            ))
        );
    }
}
