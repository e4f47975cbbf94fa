//! `browser_press_key`: real key events through CDP Input to the focused element (focused
//! first when an xpath or ref is given): the modifiers go down, the key goes down and up, the
//! modifiers come up, `repeat` times. The key names were read by the protocol's `Chord`.

use serde_json::{json, Value};
use tether_protocol::actions::browser_press_key::{Chord, Key, Output, Params};
use tether_protocol::ActionError;

use super::{element, Context};
use crate::library::Focus;
use crate::page::Page;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    // Checked already: the relay and the engine parse params before anything runs.
    let chord = Chord::parse(&p.key).map_err(ActionError::invalid_params)?;
    let (page, at) = cx.reach_any(p.tab_id, element(&p.xpath, &p.r#ref)?).await?;
    if let Some(at) = at {
        page.call(&Focus { at }).await?;
    }
    for _ in 0..p.repeat.unwrap_or(1) {
        press(&page, &chord).await?;
    }
    Ok(Output { pressed: true })
}

async fn press(page: &Page<'_>, chord: &Chord) -> Result<(), ActionError> {
    let mut held = 0;
    for modifier in &chord.modifiers {
        held |= modifier.bit;
        page.cdp(
            "Input.dispatchKeyEvent",
            event("rawKeyDown", &modifier.key, held, None),
        )
        .await?;
    }
    let text = chord.text();
    let down = if text.is_some() { "keyDown" } else { "rawKeyDown" };
    page.cdp(
        "Input.dispatchKeyEvent",
        event(down, &chord.key, held, text.as_deref()),
    )
    .await?;
    page.cdp("Input.dispatchKeyEvent", event("keyUp", &chord.key, held, None))
        .await?;
    for modifier in chord.modifiers.iter().rev() {
        held &= !modifier.bit;
        page.cdp(
            "Input.dispatchKeyEvent",
            event("keyUp", &modifier.key, held, None),
        )
        .await?;
    }
    Ok(())
}

fn event(kind: &str, key: &Key, modifiers: u32, text: Option<&str>) -> Value {
    let mut event = json!({
        "type": kind,
        "key": key.key,
        "code": key.code,
        "windowsVirtualKeyCode": key.key_code,
        "modifiers": modifiers,
    });
    if let Some(text) = text {
        event["text"] = json!(text);
        event["unmodifiedText"] = json!(text);
    }
    event
}
