//! `browser_wait_for`: the page library waits in the page (on DOM changes, and every 100 ms
//! for what no mutation shows) until the condition holds; a navigation that replaces the
//! document mid-wait is followed into the new one. Past the deadline: `ACTION_TIMEOUT` with
//! what the page last showed.

use std::time::Duration;

use tether_protocol::actions::browser_wait_for::{Output, Params, DEFAULT_TIMEOUT_MS};
use tether_protocol::{ActionError, ErrorCode};
use tokio::time::Instant;

use super::browser_wait_for_loaded::RETRY_PAUSE;
use super::Context;
use crate::page::deadline;
use crate::page::library::WaitFor;

const DEFAULT_TIMEOUT: Duration = Duration::from_millis(DEFAULT_TIMEOUT_MS);

/// How long past the deadline the page's own "not matched" answer is awaited: it carries what
/// was last seen. (Extension mode's first call, which installs the page library through
/// chrome.debugger, took over 300 ms of a 300 ms wait on this 2-core machine.)
const ANSWER_GRACE: Duration = Duration::from_secs(1);

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let started = Instant::now();
    let until = deadline(p.timeout_ms, DEFAULT_TIMEOUT);
    let mut seen = String::from("the page did not answer");
    while Instant::now() < until {
        let left = until.saturating_duration_since(Instant::now());
        let wait = WaitFor {
            condition: &p,
            timeout_ms: u64::try_from(left.as_millis()).unwrap_or(u64::MAX).max(1),
        };
        match tokio::time::timeout_at(until + ANSWER_GRACE, page.call(&wait)).await {
            Ok(Ok(waited)) if waited.matched => {
                let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                return Ok(Output {
                    matched: true,
                    elapsed_ms,
                });
            }
            Ok(Ok(waited)) => seen = waited.seen,
            // The document went away mid-wait (a navigation): wait on in the next one.
            Ok(Err(e)) if e.code == ErrorCode::CdpError && cx.transport.is_attached(page.tab) => {
                seen = format!("the page was navigating ({})", e.message);
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            Ok(Err(e)) => return Err(e),
            Err(_) => break,
        }
    }
    let waited = p.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    Err(ActionError::new(
        ErrorCode::ActionTimeout,
        format!("the condition did not hold within {waited} ms: {seen}"),
    ))
}
