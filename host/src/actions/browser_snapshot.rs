//! `browser_snapshot`: the page's Live Screen. The page's blocks and refs come from one call
//! into the page (`js/snapshot.js`) and one into each cross-origin frame (`framed.rs`); the
//! header, the diff against the session's previous snapshot of the tab, the gist and the cut
//! are made here (`live_screen`).

use tether_protocol::actions::browser_snapshot::{Output, Params};
use tether_protocol::ActionError;

use super::Context;
use crate::page::live_screen::{self, count_refs};

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let scope = p.scope;
    let text = crate::page::framed::snapshot(&page, cx.rules, scope).await?;
    let state = page.state();
    let version = state.next_version();
    let previous = state.previous_snapshot(cx.session.id);
    let screen = live_screen::render(&text, version, p.detail, previous.as_deref(), p.max_chars());
    let (url, title) = (text.url.clone(), text.title.clone());
    // A person's look (screen.md) leaves the session's previous snapshot as it was.
    if !cx.session.peek {
        state.keep_snapshot(cx.session.id, text.into());
    }
    Ok(Output {
        refs: count_refs(&screen.markdown),
        markdown: screen.markdown,
        url,
        title,
        version,
        truncated: screen.truncated,
    })
}
