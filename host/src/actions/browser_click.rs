//! `browser_click`: scrolls the element into view, checks that the point it will press hits
//! the element and not something covering it, then presses it with real mouse events through
//! CDP Input. Tabs the click opened join the session and are listed in `openedTabIds`.

use serde_json::{json, Value};
use tether_protocol::catalog::{ClickParams, TabId};
use tether_protocol::{ActionError, ActionOutcome};

use crate::page::Page;

pub async fn run(page: &Page<'_>, session_id: &str, p: ClickParams) -> ActionOutcome {
    let point = page.lib("clickPoint", json!({ "xpath": p.xpath })).await?;
    let (x, y) = match (
        point.get("x").and_then(Value::as_f64),
        point.get("y").and_then(Value::as_f64),
    ) {
        (Some(x), Some(y)) => (x, y),
        _ => {
            return Err(ActionError::internal(format!(
                "the page library returned no click point: {point}"
            )))
        }
    };
    let transport = page.engine().transport();
    let before: Vec<TabId> = transport.tabs().await?.iter().map(|t| t.tab_id).collect();

    for (kind, buttons) in [("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)] {
        let mut event = json!({ "type": kind, "x": x, "y": y, "buttons": buttons });
        if kind != "mouseMoved" {
            event["button"] = json!("left");
            event["clickCount"] = json!(1);
        }
        page.cdp("Input.dispatchMouseEvent", event).await?;
    }

    // window.open and target=_blank create their tab synchronously with the click's dispatch,
    // so by now the browser lists it, with this tab as its opener.
    let opened: Vec<TabId> = transport
        .tabs()
        .await?
        .into_iter()
        .filter(|t| !before.contains(&t.tab_id) && t.opener_tab_id == Some(page.tab))
        .map(|t| t.tab_id)
        .collect();
    for tab in &opened {
        page.engine().sessions().join(session_id, *tab);
    }
    Ok(json!({ "clicked": true, "openedTabIds": opened }))
}
