//! `browser_click`: a person's click where docs/protocol.md §16 says a press lands. The
//! element is scrolled into view and its point (the middle of its first box fragment) is
//! checked to hit it and not a cover; the pointer moves there (hover styles and images react);
//! the point is checked again, once more after a frame if the layout moved; then the button
//! goes down and up (any button, 1-3 clicks, modifiers held). The result names the element the
//! press reached, which for an element target is that element or inside it, or the click
//! fails. Tabs the click opened join the session and are listed in `openedTabIds`.

use tether_protocol::actions::browser_click::{Output, Params};
use tether_protocol::actions::TabId;
use tether_protocol::{ActionError, ErrorCode};

use super::{element, Context};
use crate::library::{ArmPress, ClickPoint, Landing, Pressed};

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let (page, at) = cx.reach_any(p.tab_id, element(&p.xpath, &p.r#ref)?).await?;
    let aimed = match (at, p.x, p.y) {
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

    page.mouse("mouseMoved", aimed, "none", 0).await?;
    let point = match at {
        Some(at) => {
            let landing = Landing {
                at,
                x: aimed.0,
                y: aimed.1,
                arm: true,
            };
            let point = page.call(&landing).await?;
            (point.x, point.y)
        }
        None => {
            page.call(&ArmPress {
                x: aimed.0,
                y: aimed.1,
            })
            .await?;
            aimed
        }
    };
    page.press_at(point, p.button, p.click_count, p.modifier_bits())
        .await?;
    let pressed = page.call(&Pressed {}).await?;
    if !pressed.inside {
        let what = pressed
            .element
            .as_ref()
            .map_or("nothing".to_owned(), |e| format!("<{}>", e.tag));
        return Err(ActionError::new(
            ErrorCode::ElementNotInteractable,
            format!("the press reached {what}, not the element: something moved over it as it was pressed"),
        )
        .with_details(serde_json::json!({ "pressed": pressed.element })));
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
        pressed: pressed.element,
    })
}
