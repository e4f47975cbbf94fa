//! `browser_xpath_scan`: what a person could interact with on the page, in document order,
//! each with the XPath that `browser_click` and `browser_type` accept. The walk runs in the
//! page (`js/tether.js`, `scan`) so it costs one round trip however large the page.

use serde_json::json;
use tether_protocol::catalog::XpathScanParams;
use tether_protocol::ActionOutcome;

use crate::page::Page;

pub async fn run(page: &Page<'_>, p: XpathScanParams) -> ActionOutcome {
    page.lib("scan", json!({ "scope": p.scope })).await
}
