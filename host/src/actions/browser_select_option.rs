//! `browser_select_option`: the page library sets the selection and fires `input` and
//! `change` (what Chromium's own picker does after a person's choice), after checking that
//! every value names an enabled option.

use tether_protocol::actions::browser_select_option::{Output, Params};
use tether_protocol::ActionError;

use super::{required_element, Context};
use crate::page::library::SelectOption;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let at = required_element(&p.xpath, &p.r#ref)?;
    let (page, at) = cx.reach(p.tab_id, at).await?;
    let picked = page
        .call(&SelectOption {
            at,
            values: &p.values,
        })
        .await?;
    Ok(Output {
        selected: picked.selected,
    })
}
