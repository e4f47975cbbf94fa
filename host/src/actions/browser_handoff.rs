//! `browser_handoff`: waits for a person to act in the tab and hand it back (`handoffs.rs`).
//! The relay tells its console (`handoff.requested`); the browser's owner is told too.

use std::time::Duration;

use tether_protocol::actions::browser_handoff::{Output, Params};
use tether_protocol::messages::{HandedBack, HandoffRequested};
use tether_protocol::{ActionError, ErrorCode};

use super::Context;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    if !cx.handoffs.reachable() {
        return Err(ActionError::new(
            ErrorCode::Unsupported,
            "no person can answer a handoff here: run the browser through a relay (tether-host worker \
             --relay, or the extension), whose console shows the request",
        ));
    }
    let mut waiting = cx.handoffs.wait(HandoffRequested {
        session_id: cx.session.id.to_owned(),
        tab_id: p.tab_id,
        action_id: cx.session.action_id.to_owned(),
        message: p.message.clone(),
    });
    let waits = Duration::from_millis(p.waits_ms());
    match tokio::time::timeout(waits, waiting.answered()).await {
        Ok(Some(answer)) if answer.outcome == HandedBack::Done => Ok(Output {
            handed_back: true,
            note: answer.note,
        }),
        Ok(Some(answer)) => {
            let said = answer.note.map(|n| format!(": {n}")).unwrap_or_default();
            Err(ActionError::new(
                ErrorCode::UserDenied,
                format!("the person declined to take over the tab{said}"),
            ))
        }
        Ok(None) => Err(ActionError::internal(
            "the handoff was dropped before anyone answered",
        )),
        Err(_) => Err(ActionError::new(
            ErrorCode::ActionTimeout,
            format!(
                "no one handed the tab back within {} s; ask again, or go on without the person",
                waits.as_secs()
            ),
        )),
    }
}
