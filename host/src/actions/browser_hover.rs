//! `browser_hover`: finds the point a click would press (scrolled into view, hit-tested) and
//! moves the pointer there with a real `mouseMoved`, so `:hover`, `mouseenter` and
//! `mouseover` fire as for a person's mouse.

use serde_json::json;
use tether_protocol::actions::browser_hover::{Output, Params};
use tether_protocol::ActionError;

use super::{required_element, Context};
use crate::library::ClickPoint;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let point = page
        .call(&ClickPoint {
            at: required_element(&p.xpath, &p.r#ref)?,
        })
        .await?;
    page.cdp(
        "Input.dispatchMouseEvent",
        json!({ "type": "mouseMoved", "x": point.x, "y": point.y, "buttons": 0 }),
    )
    .await?;
    Ok(Output { hovered: true })
}
