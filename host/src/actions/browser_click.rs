//! `browser_click`: scrolls the element into view, checks that the point it will press hits
//! the element and not something covering it (or takes the point it is given), then presses
//! it with real mouse events through CDP Input: any button, 1-3 clicks, modifiers held. Tabs the click opened join the session and are listed in `openedTabIds`.

use serde_json::json;
use tether_protocol::actions::browser_click::{Output, Params};
use tether_protocol::actions::TabId;
use tether_protocol::ActionError;

use super::{element, Context};
use crate::library::ClickPoint;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let (x, y) = match (element(&p.xpath, &p.r#ref)?, p.x, p.y) {
        (Some(at), _, _) => {
            let point = page.call(&ClickPoint { at }).await?;
            (point.x, point.y)
        }
        (None, Some(x), Some(y)) => (x, y),
        _ => {
            return Err(ActionError::invalid_params(
                "give the element (its xpath or ref), or x and y",
            ))
        }
    };
    let before: Vec<TabId> = cx.transport.tabs().await?.iter().map(|t| t.tab_id).collect();

    let (button, bit, modifiers) = (p.button.as_str(), p.button.bit(), p.modifier_bits());
    let moved = json!({ "type": "mouseMoved", "x": x, "y": y, "buttons": 0, "modifiers": modifiers });
    page.cdp("Input.dispatchMouseEvent", moved).await?;
    // A double click is two presses, the second counting 2, as a mouse reports them.
    for count in 1..=p.click_count {
        for (kind, buttons) in [("mousePressed", bit), ("mouseReleased", 0)] {
            let event = json!({
                "type": kind, "x": x, "y": y, "button": button, "buttons": buttons,
                "clickCount": count, "modifiers": modifiers,
            });
            page.cdp("Input.dispatchMouseEvent", event).await?;
        }
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
