//! `browser_click`: scrolls the element into view, checks that the point it will press hits
//! the element and not something covering it (or takes the point it is given), then presses
//! it with real mouse events through CDP Input: any button, 1-3 clicks, modifiers held. Tabs the click opened join the session and are listed in `openedTabIds`.

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
        (None, Some(x), Some(y)) => page.inside_viewport(x, y).await?,
        _ => {
            return Err(ActionError::invalid_params(
                "give the element (its xpath or ref), or x and y",
            ))
        }
    };
    let before: Vec<TabId> = cx.transport.tabs().await?.iter().map(|t| t.tab_id).collect();

    page.click_at((x, y), p.button, p.click_count, p.modifier_bits())
        .await?;

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
