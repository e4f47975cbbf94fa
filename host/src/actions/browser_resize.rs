//! `browser_resize`: the viewport the page sees, through CDP Emulation: device metrics (size,
//! scale, mobile layout), touch for a phone, `prefers-color-scheme`. What it sets is kept on
//! the tab (a full-page screenshot puts it back after its own override) until `reset`; the
//! browser drops all of it when the session lets go of the tab (the debugging session ends).
//!
//! The renderer learns a new size after the CDP call answers: the action returns once the page
//! has seen it (its `resize` event dispatched, where the size changes, then a frame painted),
//! so what it answers, a reset's too, is what the page's own code now reads.

use chromiumoxide::cdp::browser_protocol::emulation::{
    ClearDeviceMetricsOverrideParams, MediaFeature, SetDeviceMetricsOverrideParams, SetEmulatedMediaParams,
    SetTouchEmulationEnabledParams,
};
use serde_json::Value;
use tether_protocol::actions::browser_resize::{Output, Params};
use tether_protocol::ActionError;

use super::Context;
use crate::cdp::typed;
use crate::page::Page;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let before = viewport(&page, ARM).await?;
    if p.reset == Some(true) {
        let overridden = page.state().device_metrics().is_some();
        page.command(ClearDeviceMetricsOverrideParams {}).await?;
        page.command(SetTouchEmulationEnabledParams::new(false)).await?;
        page.command(media(Vec::new())).await?;
        page.state().set_device_metrics(None);
        return seen(&page, overridden).await;
    }
    let (Some(width), Some(height)) = (p.width, p.height) else {
        return Err(ActionError::invalid_params(
            "give width and height, or reset: true",
        ));
    };
    let mobile = p.mobile.unwrap_or(false);
    let metrics = SetDeviceMetricsOverrideParams::new(
        i64::from(width),
        i64::from(height),
        p.device_scale_factor.unwrap_or(1.0),
        mobile,
    );
    page.command(metrics.clone()).await?;
    page.state().set_device_metrics(Some(metrics));
    page.command(SetTouchEmulationEnabledParams::new(mobile)).await?;
    if let Some(scheme) = p.color_scheme {
        let feature = MediaFeature::new("prefers-color-scheme", scheme.as_str());
        page.command(media(vec![feature])).await?;
    }
    let resizes = mobile || (before.width, before.height) != (width, height);
    seen(&page, resizes).await
}

/// Reads the viewport and arms a watch for the page's next `resize` event (kept under a symbol,
/// as the in-page library keeps its state).
const ARM: &str = "(() => { \
    globalThis[Symbol.for('tether.resize')] = new Promise((done) => addEventListener('resize', () => done(true), { once: true })); \
    return { width: innerWidth, height: innerHeight, deviceScaleFactor: devicePixelRatio }; })()";

/// Waits for the armed `resize` event (at most a second) when `%WAIT%` is true, then for a
/// frame, and reads the viewport.
const SEEN: &str = "(async () => { \
    const key = Symbol.for('tether.resize'); const resized = globalThis[key]; delete globalThis[key]; \
    if (resized && %WAIT%) await Promise.race([resized, new Promise((done) => setTimeout(done, 1000))]); \
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0))); \
    return { width: innerWidth, height: innerHeight, deviceScaleFactor: devicePixelRatio }; })()";

/// What the page sees once it has taken the change in (`resizes`: its size was to change).
async fn seen(page: &Page<'_>, resizes: bool) -> Result<Output, ActionError> {
    viewport(
        page,
        &SEEN.replace("%WAIT%", if resizes { "true" } else { "false" }),
    )
    .await
}

/// Emulates these media features (none: the browser's own again).
fn media(features: Vec<MediaFeature>) -> SetEmulatedMediaParams {
    SetEmulatedMediaParams {
        features: Some(features),
        ..SetEmulatedMediaParams::default()
    }
}

async fn viewport(page: &Page<'_>, expression: &str) -> Result<Output, ActionError> {
    let reply = page.command_json(typed::evaluation(expression)).await?;
    let value = reply.pointer("/result/value").cloned().unwrap_or(Value::Null);
    serde_json::from_value(value)
        .map_err(|e| ActionError::internal(format!("the page's viewport could not be read: {e}")))
}
