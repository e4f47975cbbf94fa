//! `session_stop`: ends the session. With `closeTab` (the default) its tabs close; without,
//! the debugger leaves them and they stay the session's, for a later `session_start` with
//! `reuseExistingTab`.

use tether_protocol::actions::session_stop::{Output, Params};
use tether_protocol::ActionError;

use super::Context;
use crate::cdp::CdpError;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    for tab in cx.session.tabs() {
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
    }
    Ok(Output { stopped: true })
}
