//! `browser_resize`: the viewport the page sees, through CDP Emulation: device metrics (size,
//! scale, mobile layout), touch for a phone, `prefers-color-scheme`. What it sets is kept on
//! the tab (a full-page screenshot puts it back after its own override) until `reset`; the
//! browser drops all of it when the session lets go of the tab (the debugging session ends).

use serde_json::{json, Value};
use tether_protocol::actions::browser_resize::{Output, Params};
use tether_protocol::ActionError;

use super::Context;
use crate::page::Page;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    if p.reset == Some(true) {
        page.cdp("Emulation.clearDeviceMetricsOverride", json!({}))
            .await?;
        page.cdp("Emulation.setTouchEmulationEnabled", json!({ "enabled": false }))
            .await?;
        page.cdp("Emulation.setEmulatedMedia", json!({ "features": [] }))
            .await?;
        page.state().set_device_metrics(None);
        return seen(&page).await;
    }
    let (Some(width), Some(height)) = (p.width, p.height) else {
        return Err(ActionError::invalid_params(
            "give width and height, or reset: true",
        ));
    };
    let mobile = p.mobile.unwrap_or(false);
    let metrics = json!({
        "width": width,
        "height": height,
        "deviceScaleFactor": p.device_scale_factor.unwrap_or(1.0),
        "mobile": mobile,
    });
    page.cdp("Emulation.setDeviceMetricsOverride", metrics.clone())
        .await?;
    page.state().set_device_metrics(Some(metrics));
    page.cdp("Emulation.setTouchEmulationEnabled", json!({ "enabled": mobile }))
        .await?;
    if let Some(scheme) = p.color_scheme {
        let features = json!([{ "name": "prefers-color-scheme", "value": scheme.as_str() }]);
        page.cdp("Emulation.setEmulatedMedia", json!({ "features": features }))
            .await?;
    }
    seen(&page).await
}

/// What the page sees now.
async fn seen(page: &Page<'_>) -> Result<Output, ActionError> {
    let expression = "({ width: innerWidth, height: innerHeight, deviceScaleFactor: devicePixelRatio })";
    let reply = page
        .cdp(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
        )
        .await?;
    let value = reply.pointer("/result/value").cloned().unwrap_or(Value::Null);
    serde_json::from_value(value)
        .map_err(|e| ActionError::internal(format!("the page's viewport could not be read: {e}")))
}
