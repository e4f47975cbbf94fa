//! `browser_hover`: finds the point a click would press (scrolled into view, hit-tested),
//! moves the pointer there with a real `mouseMoved`, so `:hover`, `mouseenter` and
//! `mouseover` fire as for a person's mouse, and checks the element is still what the pointer
//! rests on (docs/protocol.md §16).

use chromiumoxide::cdp::browser_protocol::input::DispatchMouseEventType;
use tether_protocol::actions::browser_hover::{Output, Params};
use tether_protocol::ActionError;

use super::{required_element, Context};
use crate::page::library::{ClickPoint, Landing};

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let at = required_element(&p.xpath, &p.r#ref)?;
    let (page, at) = cx.reach(p.tab_id, at).await?;
    let point = page.call(&ClickPoint { at }).await?;
    page.mouse(DispatchMouseEventType::MouseMoved, (point.x, point.y), None, 0)
        .await?;
    // What the hover opened or changed must still leave the element under the pointer.
    let landing = Landing {
        at,
        x: point.x,
        y: point.y,
        arm: false,
        settle: false,
    };
    page.call(&landing).await?;
    Ok(Output { hovered: true })
}
