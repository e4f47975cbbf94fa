//! `browser_mouse`: one pointer step at a point, through CDP Input as a person's mouse would
//! send it. The tab remembers the buttons left held, so a move between a `down` and its `up`
//! carries them (a canvas sees a stroke, not a hover). A step is done once the page has seen
//! it: the browser hands moves and wheels to the page with its next frame, after CDP answered.

use chromiumoxide::cdp::browser_protocol::input::{DispatchMouseEventParams, DispatchMouseEventType};
use tether_protocol::actions::browser_click::MouseButton;
use tether_protocol::actions::browser_mouse::{MouseStep, Output, Params};
use tether_protocol::ActionError;

use super::Context;
use crate::page::library::{ArmInput, InputSeen};

/// How long a step waits for the page to see it (a point over another site's frame is seen by
/// that frame alone, and never here).
const SEEN_WITHIN_MS: u64 = 1000;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let at = page.inside_viewport(p.x, p.y).await?;
    let state = page.state();
    let held = state.held_buttons();
    if p.action == MouseStep::Up && held & p.button.bit() == 0 {
        // Nothing to release: a person's hand does nothing either.
        return Ok(Output { done: true });
    }
    let kind = match p.action {
        MouseStep::Move => "pointermove",
        MouseStep::Down => "pointerdown",
        MouseStep::Up => "pointerup",
        MouseStep::Wheel => "wheel",
    };
    page.call(&ArmInput { kind }).await?;
    match p.action {
        MouseStep::Move => {
            page.mouse(DispatchMouseEventType::MouseMoved, at, held_button(held), held)
                .await?
        }
        MouseStep::Down => {
            let held = held | p.button.bit();
            page.mouse(DispatchMouseEventType::MousePressed, at, Some(p.button), held)
                .await?;
            state.set_held_buttons(held);
        }
        MouseStep::Up => {
            let held = held & !p.button.bit();
            page.mouse(DispatchMouseEventType::MouseReleased, at, Some(p.button), held)
                .await?;
            state.set_held_buttons(held);
        }
        MouseStep::Wheel => {
            let mut wheel = DispatchMouseEventParams::new(DispatchMouseEventType::MouseWheel, at.0, at.1);
            wheel.buttons = Some(held.into());
            wheel.delta_x = Some(p.delta_x.unwrap_or(0.0));
            wheel.delta_y = Some(p.delta_y.unwrap_or(0.0));
            page.command(wheel).await?;
        }
    }
    page.call(&InputSeen {
        within: SEEN_WITHIN_MS,
    })
    .await?;
    Ok(Output { done: true })
}

/// The button a move reports while `held` are down: the first of them, as a mouse reports it.
fn held_button(held: u32) -> Option<MouseButton> {
    [MouseButton::Left, MouseButton::Right, MouseButton::Middle]
        .into_iter()
        .find(|button| held & button.bit() != 0)
}
