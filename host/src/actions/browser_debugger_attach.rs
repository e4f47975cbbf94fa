//! `browser_debugger_attach`: the engine attaches and prepares every tab before its action
//! runs, so by now the debugger is attached.

use tether_protocol::actions::browser_debugger_attach::{Output, Params};
use tether_protocol::ActionError;

use super::Context;

pub async fn run(_cx: &Context<'_>, _p: Params) -> Result<Output, ActionError> {
    Ok(Output { attached: true })
}
