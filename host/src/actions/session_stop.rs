//! `session_stop`: ends the session. With `closeTab` (the default) its tabs close; without,
//! the debugger leaves them and they stay the session's, for a later `session_start` with
//! `reuseExistingTab`.

use tether_protocol::actions::session_stop::{Output, Params};
use tether_protocol::ActionError;

use super::Context;
use crate::cdp::CdpError;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    if p.close_tab {
        // A profile this was the last session of is saved while its pages are there to read.
        cx.contexts.leaving(cx.transport.as_ref(), cx.session.id).await;
    }
    for tab in cx.session.tabs() {
        // What the session started and did not take ends with it (its staging goes too).
        for guid in cx.session.tab_state(tab).downloads.in_progress() {
            if let Err(e) = cx.transport.cancel_download(&guid).await {
                tracing::debug!(tab, "a download of the session goes on: {e}");
            }
        }
        let done = if p.close_tab {
            cx.transport.close_tab(tab).await
        } else {
            cx.transport.detach(tab).await
        };
        match done {
            Ok(()) | Err(CdpError::TabGone(_)) => {}
            Err(e) => tracing::warn!(tab, session_id = cx.session.id, "while stopping the session: {e}"),
        }
        if p.close_tab {
            cx.session.forget(tab);
        }
    }
    if p.close_tab {
        cx.session.end();
        // Its tabs closed: its browser context goes (a profile's once its last session left).
        cx.contexts.release(cx.transport.as_ref(), cx.session.id).await;
    }
    cx.artifacts.session_ended(cx.session.id);
    Ok(Output { stopped: true })
}
