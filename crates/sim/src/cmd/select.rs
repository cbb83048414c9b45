//! `-l SELECTOR` and `--all` for commands that otherwise take names (label, annotate,
//! scale, logs): the names of the objects a list with the selector returns.

use crate::api::{ApiRequest, ApiResult, Verb};
use crate::cmd::kubectl::Kubectl;
use crate::object::Kind;
use crate::selector::LabelSelector;

/// Whether the command selects (`-l` or `--all`) instead of naming.
pub fn selects(k: &Kubectl) -> bool {
    k.flags.has("selector") || k.flags.bool("all")
}

/// The names of `kind` in the request namespace that `-l` selects (all with `--all`).
pub async fn names(k: &Kubectl, kind: Kind) -> Result<Vec<String>, i32> {
    let ns = if kind.info().namespaced {
        k.namespace()
    } else {
        String::new()
    };
    let mut req = ApiRequest::new(Verb::List, kind, &ns, "");
    if let Some(l) = k.flags.get("selector") {
        req.options.label_selector = Some(LabelSelector::parse(l).map_err(|e| k.error(&e))?);
    }
    match k.sys.api(req).await {
        Ok(ApiResult::List { items, .. }) => {
            Ok(items.iter().map(|o| o.name().to_string()).collect())
        }
        Ok(_) => Ok(Vec::new()),
        Err(s) => Err(k.status_error(&s)),
    }
}
