//! `browser_click`: a person's click where docs/protocol.md §16 says a press lands. The
//! element is scrolled into view and its point (the middle of its first box fragment) is
//! checked to hit it and not a cover; the pointer moves there (hover styles and images react);
//! the point is checked again, and if the layout moved, once the element's box holds still
//! (up to a second); then the button goes down and up (any button, 1-3 clicks, modifiers
//! held). A press that reached something else (the layout moved as it went down) is aimed
//! again the same way, twice at most. The result names the element the press reached, which
//! for an element target is that element or inside it, or the click fails. Tabs the click opened join the session and are listed in `openedTabIds`.

use chromiumoxide::cdp::browser_protocol::input::DispatchMouseEventType;
use tether_protocol::actions::browser_click::{Output, Params};
use tether_protocol::actions::TabId;
use tether_protocol::{ActionError, ErrorCode};

use super::{element, Context};
use crate::page::library::{ArmPress, ClickPoint, Landing, Pressed};

/// How many times a press that reached something else than its element is aimed again.
const REAIMS: u32 = 2;

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

    page.mouse(DispatchMouseEventType::MouseMoved, aimed, None, 0)
        .await?;
    let point = match at {
        Some(at) => {
            let landing = Landing {
                at,
                x: aimed.0,
                y: aimed.1,
                arm: true,
                settle: false,
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
    let mut point = point;
    let mut reaims = 0;
    let pressed = loop {
        page.press_at(point, p.button, p.click_count, p.modifier_bits())
            .await?;
        let pressed = page.call(&Pressed {}).await?;
        let (Some(at), false) = (at, pressed.inside) else {
            break pressed;
        };
        if reaims == REAIMS {
            break pressed;
        }
        // The layout moved as the button went down (an image came, a hover style swapped):
        // aim again once the element holds still, as a person's second try would.
        reaims += 1;
        let landing = Landing {
            at,
            x: point.0,
            y: point.1,
            arm: true,
            settle: true,
        };
        let again = page.call(&landing).await?;
        point = (again.x, again.y);
    };
    if !pressed.inside {
        let what = pressed
            .element
            .as_ref()
            .map_or("nothing".to_owned(), |e| format!("<{}>", e.tag));
        return Err(ActionError::new(
            ErrorCode::ElementNotInteractable,
            format!(
                "the press reached {what}, not the element: the page moved it as it was pressed, {} times",
                REAIMS + 1
            ),
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
