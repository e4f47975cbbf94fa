//! `browser_scroll`: a real `mouseWheel` over the page's (or the element's visible) centre,
//! then the position once the scroll ended, as the page reports it; or, with `intoView`, the
//! element scrolled to the viewport's centre.

use chromiumoxide::cdp::browser_protocol::input::{DispatchMouseEventParams, DispatchMouseEventType};
use tether_protocol::actions::browser_scroll::{Direction, Output, Params};
use tether_protocol::ActionError;

use super::{element, Context};
use crate::page::library::{IntoView, Scrolled, WheelAt};

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let (page, at) = cx.reach_any(p.tab_id, element(&p.xpath, &p.r#ref)?).await?;
    if let (true, Some(at)) = (p.into_view, at) {
        return page
            .call(&IntoView {
                at,
                direction: p.direction,
            })
            .await;
    }
    let wheel = page
        .call(&WheelAt {
            at,
            direction: p.direction,
        })
        .await?;
    let amount = p.amount.unwrap_or(wheel.page);
    let (dx, dy) = match p.direction {
        Direction::Down => (0.0, amount),
        Direction::Up => (0.0, -amount),
        Direction::Right => (amount, 0.0),
        Direction::Left => (-amount, 0.0),
    };
    let mut event = DispatchMouseEventParams::new(DispatchMouseEventType::MouseWheel, wheel.x, wheel.y);
    (event.delta_x, event.delta_y) = (Some(dx), Some(dy));
    page.command(event).await?;
    page.call(&Scrolled {
        at,
        direction: p.direction,
    })
    .await
}
