//! `session_stop`: ends the session. With `closeTab` (the default) its tabs close; without,
//! the debugger leaves them and they stay the session's, for a later `session_start` with
//! `reuseExistingTab`.

use serde_json::json;
use tether_protocol::catalog::SessionStopParams;
use tether_protocol::ActionOutcome;

use crate::cdp::CdpError;
use crate::engine::Engine;

pub async fn run(engine: &Engine, session_id: &str, p: SessionStopParams) -> ActionOutcome {
    let tabs = engine
        .sessions()
        .get(session_id)
        .map(|s| s.tabs.clone())
        .unwrap_or_default();
    let transport = engine.transport();
    for tab in tabs {
        let done = if p.close_tab {
            transport.close_tab(tab).await
        } else {
            transport.detach(tab).await
        };
        match done {
            Ok(()) | Err(CdpError::TabGone(_)) => {}
            Err(e) => tracing::warn!(tab, session_id, "while stopping the session: {e}"),
        }
        if p.close_tab {
            engine.forget(tab);
        }
    }
    if p.close_tab {
        engine.sessions().end(session_id);
    }
    Ok(json!({ "stopped": true }))
}
