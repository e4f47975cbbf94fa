//! `browser_console`: the tab's console as the host kept it (`console.rs`), once everything the
//! page wrote before this action is in.

use serde_json::json;
use tether_protocol::actions::browser_console::{Output, Params};
use tether_protocol::ActionError;

use super::Context;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    // The browser answers after the events it sent before: once this is answered, the tab's
    // watcher has every entry the page wrote so far to take.
    page.cdp("Runtime.evaluate", json!({ "expression": "0" })).await?;
    page.state().caught_up().await;
    Ok(page.state().console.list(&p))
}
