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
}

impl Notice {
    /// The details shown under the banner's headline.
    pub fn detail(&self) -> String {
        match self {
            Notice::BadLink(d) | Notice::BadSaved(d) => d.clone(),
            Notice::BadScenario(list) => {
                list.iter().take(5).cloned().collect::<Vec<_>>().join("\n")
            }
        }
    }
}

/// Whether a location hash carries a share link (`#s=…`, or `s=` among `&`-parameters).
pub fn has_share(hash: &str) -> bool {
    hash.trim_start_matches('#')
        .split('&')
        .any(|p| p.starts_with("s="))
}

/// The scenario in a share link.
pub fn from_link(hash: &str) -> Result<Scenario, Notice> {
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
    fn should_fall_back_to_the_default() {
        assert_eq!(opening("", None), (default_scenario(), None));
        let (got, notice) = opening("", Some("spec: [unclosed"));
        assert_eq!(got, default_scenario());
        assert!(matches!(notice, Some(Notice::BadSaved(_))));
    }
}
