//! `browser_reload`: `Page.reload`, then the same wait and result as `browser_navigate`.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::ReloadParams;
use tether_protocol::actions::browser_navigate::DEFAULT_TIMEOUT_MS;
use tether_protocol::actions::browser_reload::{Output, Params};
use tether_protocol::ActionError;

use super::{browser_navigate, Context};
use crate::page::deadline;

const DEFAULT_TIMEOUT: Duration = Duration::from_millis(DEFAULT_TIMEOUT_MS);

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let until = deadline(p.timeout_ms, DEFAULT_TIMEOUT);
    let url = cx
        .transport
        .tab(p.tab_id)
        .await?
        .map(|t| t.url)
        .unwrap_or_default();
    let mut events = page.events();
    page.command(ReloadParams::default()).await?;
    let loaded = browser_navigate::follow(&mut events, until).await?;
    Ok(browser_navigate::outcome(&page, loaded, &url).await)
}
