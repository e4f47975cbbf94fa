//! `browser_go_back`: one entry back in the tab's history (`Page.navigateToHistoryEntry`), then
//! the same wait and result as `browser_navigate`. `browser_go_forward` is the same step the
//! other way.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::{GetNavigationHistoryParams, NavigateToHistoryEntryParams};
use serde::Deserialize;
use tether_protocol::actions::browser_go_back::{Output, Params};
use tether_protocol::actions::browser_navigate::DEFAULT_TIMEOUT_MS;
use tether_protocol::{ActionError, ErrorCode};

use super::{browser_navigate, Context};
use crate::page::deadline;

const DEFAULT_TIMEOUT: Duration = Duration::from_millis(DEFAULT_TIMEOUT_MS);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct History {
    current_index: usize,
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    id: i64,
    url: String,
}

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    step(cx, p, -1).await
}

/// Moves `offset` entries through the tab's history and waits for the page.
pub(super) async fn step(cx: &Context<'_>, p: Params, offset: isize) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let until = deadline(p.timeout_ms, DEFAULT_TIMEOUT);
    // Read as JSON: its entries' transition types are an enum Chromium extends.
    let reply = page.command_json(GetNavigationHistoryParams {}).await?;
    let history: History = serde_json::from_value(reply)
        .map_err(|e| ActionError::internal(format!("the browser's history is unreadable: {e}")))?;
    let entry = history
        .current_index
        .checked_add_signed(offset)
        .and_then(|index| history.entries.get(index))
        .ok_or_else(|| {
            let way = if offset < 0 { "back" } else { "forward" };
            ActionError::new(
                ErrorCode::NavigationFailed,
                format!("tab {} has nothing to go {way} to", page.tab),
            )
        })?;
    if let Some(why) = cx.rules.refusal(&entry.url) {
        return Err(ActionError::new(ErrorCode::ForbiddenTarget, why));
    }
    let mut events = page.events();
    page.command(NavigateToHistoryEntryParams::new(entry.id)).await?;
    let loaded = browser_navigate::follow(&mut events, until).await?;
    Ok(browser_navigate::outcome(&page, loaded, &entry.url).await)
}
