//! `browser_press_key`: real key events through CDP Input to the focused element (focused
//! first when an xpath or ref is given): the modifiers go down, the key goes down and up, the
//! modifiers come up, `repeat` times. The key names were read by the protocol's `Chord`.

use chromiumoxide::cdp::browser_protocol::input::{DispatchKeyEventParams, DispatchKeyEventType};
use tether_protocol::actions::browser_press_key::{Chord, Key, Output, Params};
use tether_protocol::ActionError;

use super::{element, Context};
use crate::page::library::Focus;
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
        page.command(event(DispatchKeyEventType::RawKeyDown, &modifier.key, held, None))
            .await?;
    }
    let text = chord.text();
    page.command(event(down(text.is_some()), &chord.key, held, text.as_deref()))
        .await?;
    page.command(event(DispatchKeyEventType::KeyUp, &chord.key, held, None))
        .await?;
    for modifier in chord.modifiers.iter().rev() {
        held &= !modifier.bit;
        page.command(event(DispatchKeyEventType::KeyUp, &modifier.key, held, None))
            .await?;
    }
    Ok(())
}

fn event(
    kind: DispatchKeyEventType,
    key: &Key,
    modifiers: u32,
    text: Option<&str>,
) -> DispatchKeyEventParams {
    let mut event = key_event(kind, &key.key, &key.code, key.key_code, text);
    event.modifiers = Some(modifiers.into());
    event.unmodified_text = text.map(str::to_owned);
    event
}

/// A key going down types `text` when it has any (`keyDown`); a key that types nothing goes
/// down raw.
pub fn down(types_text: bool) -> DispatchKeyEventType {
    match types_text {
        true => DispatchKeyEventType::KeyDown,
        false => DispatchKeyEventType::RawKeyDown,
    }
}

/// One key's event: its names, its Windows key code, the text it types.
pub fn key_event(
    kind: DispatchKeyEventType,
    key: &str,
    code: &str,
    key_code: u32,
    text: Option<&str>,
) -> DispatchKeyEventParams {
    let mut event = DispatchKeyEventParams::new(kind);
    event.key = Some(key.to_owned());
    event.code = Some(code.to_owned());
    event.windows_virtual_key_code = Some(key_code.into());
    event.text = text.map(str::to_owned);
    event
}
