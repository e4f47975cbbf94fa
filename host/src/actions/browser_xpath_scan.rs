//! `browser_xpath_scan`: what a person could interact with on the page, in document order,
//! each with the XPath that `browser_click` and `browser_type` accept. The walk runs in the
//! page (`js/scan.js`) so it costs one round trip however large the page, and one more per
//! cross-origin frame (`framed.rs`).

use tether_protocol::actions::browser_xpath_scan::{Output, Params};
use tether_protocol::ActionError;

use super::Context;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    crate::page::framed::scan(&cx.page(p.tab_id), cx.rules, p.scope).await
}
