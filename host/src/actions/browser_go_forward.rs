//! `browser_go_forward`: one entry forward in the tab's history (see `browser_go_back`).

use tether_protocol::actions::browser_go_forward::{Output, Params};
use tether_protocol::ActionError;

use super::{browser_go_back, Context};

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    browser_go_back::step(cx, p, 1).await
}
