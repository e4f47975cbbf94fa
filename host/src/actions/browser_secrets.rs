//! `browser_secrets`: the names and origins of the secrets the browser's owner holds
//! (`secrets.rs`), never their values.

use tether_protocol::actions::browser_secrets::{Output, Params};
use tether_protocol::ActionError;

use super::Context;

pub async fn run(cx: &Context<'_>, _: Params) -> Result<Output, ActionError> {
    Ok(Output {
        secrets: cx.rules.secret_names(),
    })
}
