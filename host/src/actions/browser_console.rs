//! `browser_console`: the tab's console as the host kept it (`console.rs`), once everything the
//! page wrote before this action is in.

use tether_protocol::actions::browser_console::{Output, Params};
use tether_protocol::ActionError;

use super::Context;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    cx.page_log()?;
    let page = cx.page(p.tab_id);
    page.caught_up().await?;
    Ok(page.state().console.list(&p))
}
