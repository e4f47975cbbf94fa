//! `browser_get_html`: the live DOM serialised (the whole document with its doctype, or one
//! element's outerHTML), stored as a text/html artifact, and in the result too when small.

use tether_protocol::actions::browser_get_html::{Output, Params, INLINE_LIMIT};
use tether_protocol::ActionError;

use super::{element, Context};
use crate::page::library::Html;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let html = page
        .call(&Html {
            at: element(&p.xpath, &p.r#ref)?,
        })
        .await?
        .html;
    let bytes = html.len() as u64;
    let inline = (html.len() <= INLINE_LIMIT).then(|| html.clone());
    let stored = page.store(html.into_bytes(), "text/html; charset=utf-8").await?;
    Ok(Output {
        artifact_id: stored.artifact_id,
        url: stored.url,
        bytes,
        html: inline,
    })
}
