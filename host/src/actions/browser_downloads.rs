//! `browser_downloads`: what the session's tabs downloaded (`downloads.rs` follows and stores
//! them), oldest first; with `wait`, once the downloads in progress ended, or the next one
//! began and ended: the next being one no listing showed yet, so a download that finished
//! between the click that began it and this call counts.

use std::time::Duration;

use tether_protocol::actions::browser_downloads::{Download, Output, Params, State, DEFAULT_TIMEOUT_MS};
use tether_protocol::actions::TabId;
use tether_protocol::{ActionError, ErrorCode};

use super::Context;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let tabs = match p.tab_id {
        Some(tab) => vec![tab],
        None => cx.session.tabs(),
    };
    let mut changes = cx.session.download_changes();
    changes.borrow_and_update();
    let (unlisted, mut listed) = listing(cx, &tabs).await;
    if !p.wait {
        return Ok(Output { downloads: listed });
    }
    let waited_for_running = listed.iter().any(|d| d.state == State::InProgress);
    let timeout = Duration::from_millis(p.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS));
    let mut new_one = unlisted;
    let wait = async {
        loop {
            let running = listed.iter().any(|d| d.state == State::InProgress);
            if !running && (waited_for_running || new_one) {
                return Ok(listed);
            }
            if changes.changed().await.is_err() {
                return Err(ActionError::internal("the host stopped following downloads"));
            }
            changes.borrow_and_update();
            let (unlisted, now) = listing(cx, &tabs).await;
            (new_one, listed) = (new_one || unlisted, now);
        }
    };
    let downloads = tokio::time::timeout(timeout, wait).await.map_err(|_| {
        ActionError::new(
            ErrorCode::ActionTimeout,
            format!(
                "{} within {} ms; call again with wait to go on waiting",
                if waited_for_running {
                    "the downloads in progress did not end"
                } else {
                    "no download began and ended"
                },
                timeout.as_millis()
            ),
        )
    })??;
    Ok(Output { downloads })
}

/// Whether any of the tabs began a download no listing showed yet, and what they keep, oldest
/// first, once each prepared tab's watcher has taken what the browser sent.
async fn listing(cx: &Context<'_>, tabs: &[TabId]) -> (bool, Vec<Download>) {
    let mut unlisted = false;
    let mut kept = Vec::new();
    for &tab in tabs {
        if cx.transport.is_attached(tab) {
            let _ = cx.page(tab).caught_up().await;
        }
        let state = cx.session.tab_state(tab);
        unlisted |= state.downloads.unlisted();
        kept.extend(state.downloads.list());
    }
    kept.sort_by_key(|(began, _)| *began);
    (unlisted, kept.into_iter().map(|(_, d)| d).collect())
}
