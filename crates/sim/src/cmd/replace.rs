//! `kubectl replace --force -f`: delete each object, wait until it is gone, create it
//! again.

use serde_json::Value;

use crate::api::{ApiRequest, Body, Verb};
use crate::cmd::apply::file_error;
use crate::cmd::kubectl::{kind_name, kind_quoted, Kubectl};
use crate::object::Kind;

/// `replace --force`: delete the object, wait until it is gone, create it again.
pub async fn force_replace(
    k: &Kubectl,
    kind: Kind,
    ns: &str,
    name: &str,
    value: Value,
    file: &str,
) -> Result<(), i32> {
    match k
        .sys
        .api(ApiRequest::new(Verb::Delete, kind, ns, name))
        .await
    {
        Ok(_) => {
            let from = if ns.is_empty() {
                String::new()
            } else {
                format!(" from {ns} namespace")
            };
            k.sys
                .out(&format!("{} deleted{from}\n", kind_quoted(kind, name)));
        }
        Err(s) if s.is_not_found() => {}
        Err(s) => return Err(file_error(k, s, "deleting", file)),
    }
    loop {
        match k.sys.api(ApiRequest::new(Verb::Get, kind, ns, name)).await {
            Err(s) if s.is_not_found() => break,
            Err(s) if s.transport != crate::api::Transport::Server => {
                return Err(k.status_error(&s))
            }
            _ => k.sys.sleep(500).await,
        }
    }
    let req = ApiRequest::new(Verb::Create, kind, ns, "").with_body(Body::Raw(value));
    match k.sys.api(req).await {
        Ok(_) => {
            k.sys.out(&format!("{} replaced\n", kind_name(kind, name)));
            Ok(())
        }
        Err(s) => Err(file_error(k, s, "replacing", file)),
    }
}
