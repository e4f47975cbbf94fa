//! `browser_wait_for_loaded`: waits until the document's readyState is `complete` (its load
//! event fired), bounded by `timeoutMs` (default 10 s); past it, `ACTION_TIMEOUT`.

use std::time::Duration;

use serde_json::json;
use tether_protocol::catalog::WaitForLoadedParams;
use tether_protocol::{ActionError, ActionOutcome, ErrorCode};

use crate::page::{deadline, Page};

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Resolves in the page on its load event; no polling of the page.
const LOADED: &str = "document.readyState === 'complete' || \
    new Promise((resolve) => addEventListener('load', () => resolve(true), { once: true }))";

/// Pause before asking a page again that was replaced mid-wait (a navigation destroyed the
/// context the promise lived in).
const RETRY_PAUSE: Duration = Duration::from_millis(20);

pub async fn run(page: &Page<'_>, p: WaitForLoadedParams) -> ActionOutcome {
    let until = deadline(p.timeout_ms, DEFAULT_TIMEOUT);
    loop {
        match tokio::time::timeout_at(until, page.evaluate(LOADED)).await {
            Ok(Ok(_)) => return Ok(json!({ "status": "complete" })),
            // Only a live, attached tab can have been replaced by a navigation; otherwise the
            // error is the answer.
            Ok(Err(e))
                if e.code == ErrorCode::CdpError && page.engine().transport().is_attached(page.tab) =>
            {
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
