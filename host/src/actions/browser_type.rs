//! `browser_type`: focuses the field and inserts text through CDP Input, so the page's own
//! listeners see real input events (React's value tracker, contenteditable editors). `clear`
//! (the default) replaces the content; `submit` presses Enter. A `secret` is typed as its
//! value, only into a page of one of its origins.

use chromiumoxide::cdp::browser_protocol::input::{DispatchKeyEventType, InsertTextParams};
use tether_protocol::actions::browser_type::{Output, Params};
use tether_protocol::ActionError;

use super::browser_press_key::key_event;
use super::{required_element, Context};
use crate::page::library::FocusForTyping;
use crate::page::Page;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let at = required_element(&p.xpath, &p.r#ref)?;
    let (page, at) = cx.reach(p.tab_id, at).await?;
    let page = &page;
    let text = match &p.text {
        Some(text) => text.clone(),
        None => secret_value(cx, page, p.secret.as_deref().unwrap_or_default()).await?,
    };
    let focused = page
        .call(&FocusForTyping {
            at,
            clear: p.clear,
            secret: p.secret.as_deref(),
        })
        .await?;
    into_focused(page, &text, p.clear && focused.had_text).await?;
    if p.submit {
        press(page, "Enter", "Enter", 13, Some("\r")).await?;
    }
    Ok(Output { typed: true })
}

/// The value of the secret `name`, to type into `page`: refused unless the page (the frame,
/// for a field inside a cross-origin frame) is of one of the secret's origins (`secrets.rs`).
pub async fn secret_value(cx: &Context<'_>, page: &Page<'_>, name: &str) -> Result<String, ActionError> {
    let url = match page.frame() {
        Some(frame) => frame.url.clone(),
        None => cx
            .transport
            .tab(page.tab)
            .await?
            .map(|t| t.url)
            .unwrap_or_default(),
    };
    cx.rules.secret_for(name, &url)
}

/// Types `text` into the focused field: replacing its selection when it is selected, else at
/// the caret. Nothing to type over a selection (`selected`) deletes it, as a person would.
pub async fn into_focused(page: &Page<'_>, text: &str, selected: bool) -> Result<(), ActionError> {
    if !text.is_empty() {
        page.command(InsertTextParams::new(text)).await?;
    } else if selected {
        press(page, "Delete", "Delete", 46, None).await?;
    }
    Ok(())
}

/// One key press: down (with the text it types, if any), then up.
async fn press(
    page: &Page<'_>,
    key: &str,
    code: &str,
    key_code: u32,
    text: Option<&str>,
) -> Result<(), ActionError> {
    let down = super::browser_press_key::down(text.is_some());
    page.command(key_event(down, key, code, key_code, text)).await?;
    page.command(key_event(DispatchKeyEventType::KeyUp, key, code, key_code, None))
        .await?;
    Ok(())
}
