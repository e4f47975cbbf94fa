//! `browser_wait_for_loaded`: waits until the document's readyState is `complete` (its load
//! event fired), bounded by `timeoutMs` (default 10 s); past it, `ACTION_TIMEOUT`. When the
//! tab's events already told the load event fired (`loading`), it answers without asking the
//! page.

use std::time::Duration;

use tether_protocol::actions::browser_wait_for_loaded::{Loaded, Output, Params, DEFAULT_TIMEOUT_MS};
use tether_protocol::{ActionError, ErrorCode};

use super::Context;
use crate::page::deadline;

const DEFAULT_TIMEOUT: Duration = Duration::from_millis(DEFAULT_TIMEOUT_MS);

/// Resolves in the page on its load event; no polling of the page.
const LOADED: &str = "document.readyState === 'complete' || \
    new Promise((resolve) => addEventListener('load', () => resolve(true), { once: true }))";

/// Pause before asking a page again that was replaced mid-wait (a navigation destroyed the
/// context the promise lived in).
pub(super) const RETRY_PAUSE: Duration = Duration::from_millis(20);

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let loading = &page.state().loading;
    let complete = Output {
        status: Loaded::Complete,
    };
    if loading.complete() && cx.transport.is_attached(page.tab) {
        return Ok(complete);
    }
    let until = deadline(p.timeout_ms, DEFAULT_TIMEOUT);
    loop {
        let asked = loading.now();
        match tokio::time::timeout_at(until, page.evaluate(LOADED)).await {
            Ok(Ok(_)) => {
                loading.complete_since(asked);
                return Ok(complete);
            }
            // Only a live, attached tab can have been replaced by a navigation; otherwise the
            // error is the answer.
            Ok(Err(e)) if e.code == ErrorCode::CdpError && cx.transport.is_attached(page.tab) => {
                tracing::debug!(
                    tab = page.tab,
                    "page changed while waiting for load: {}",
                    e.message
                );
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                let waited = p.timeout_ms.map(Duration::from_millis).unwrap_or(DEFAULT_TIMEOUT);
                return Err(ActionError::new(
                    ErrorCode::ActionTimeout,
                    format!(
                        "tab {} had not finished loading after {} ms",
                        page.tab,
                        waited.as_millis()
                    ),
                ));
            }
        }
    }
}
