//! `browser_get_html`: the live DOM serialised (the whole document with its doctype, or one
//! element's outerHTML), stored as a text/html artifact.

use serde_json::{json, Value};
use tether_protocol::catalog::{GetHtmlParams, HtmlResult};
use tether_protocol::{ActionError, ActionOutcome};

use crate::page::Page;

pub async fn run(page: &Page<'_>, p: GetHtmlParams) -> ActionOutcome {
    let found = page.lib("html", json!({ "xpath": p.xpath })).await?;
    let html = found
        .get("html")
        .and_then(Value::as_str)
        .ok_or_else(|| ActionError::internal("the page library returned no HTML"))?
        .to_owned();
    let bytes = html.len() as u64;
    let stored = page.store(html.into_bytes(), "text/html; charset=utf-8").await?;
    Ok(json!(HtmlResult {
        artifact_id: stored.artifact_id,
        url: stored.url,
        bytes,
    }))
}
