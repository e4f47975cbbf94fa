//! `browser_click`: scrolls the element into view, checks that the point it will press hits
//! the element and not something covering it, then presses it with real mouse events through
//! CDP Input. Tabs the click opened join the session and are listed in `openedTabIds`.

use serde_json::json;
use tether_protocol::actions::browser_click::{Output, Params};
use tether_protocol::actions::TabId;
use tether_protocol::ActionError;

use super::Context;
use crate::library::ClickPoint;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let point = page.call(&ClickPoint { xpath: &p.xpath }).await?;
    let before: Vec<TabId> = cx.transport.tabs().await?.iter().map(|t| t.tab_id).collect();

    for (kind, buttons) in [("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)] {
        let mut event = json!({ "type": kind, "x": point.x, "y": point.y, "buttons": buttons });
        if kind != "mouseMoved" {
            event["button"] = json!("left");
            event["clickCount"] = json!(1);
        }
        page.cdp("Input.dispatchMouseEvent", event).await?;
    }

    // window.open and target=_blank create their tab synchronously with the click's dispatch,
    // so by now the browser lists it, with this tab as its opener.
    let opened: Vec<TabId> = cx
        .transport
        .tabs()
        .await?
        .into_iter()
        .filter(|t| !before.contains(&t.tab_id) && t.opener_tab_id == Some(p.tab_id))
        .map(|t| t.tab_id)
        .collect();
    for tab in &opened {
        cx.session.join(*tab);
    }
    Ok(Output {
        clicked: true,
        opened_tab_ids: opened,
    })
}
