//! `browser_evaluate`: `Runtime.evaluate` of the agent's expression as a page script, once the
//! policy allows it, its value returned by value in the same call (one round trip, as raw CDP
//! takes it: stringifying in a second call measured 2.9x raw for a small object).

use std::time::Duration;

use chromiumoxide::cdp::js_protocol::runtime::TimeDelta;
use serde_json::Value;
use tether_protocol::actions::browser_evaluate::{Output, Params, DEFAULT_TIMEOUT_MS, MAX_INLINE_BYTES};
use tether_protocol::{ActionError, ErrorCode};

use super::Context;
use crate::cdp::typed;
use crate::page::{remote_object_of, Page};

const REFUSED: &str = "browser_evaluate is off on this host: the browser's owner allows it with tether-host worker --allow-evaluate, or in the Tether extension's popup (\"Let agents run their own JavaScript\"). The other actions need no such permission.";

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    if !cx.rules.allows_evaluate() {
        return Err(ActionError::new(ErrorCode::Forbidden, REFUSED));
    }
    let page = cx.page(p.tab_id);
    let limit = p.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    let timed_out = || {
        ActionError::new(
            ErrorCode::ActionTimeout,
            format!("the expression did not finish within {limit} ms (a Promise that never settles?)"),
        )
    };
    let started = std::time::Instant::now();
    let evaluated = tokio::time::timeout(
        Duration::from_millis(limit),
        evaluate(&page, &p.expression, limit),
    )
    .await
    .map_err(|_| timed_out())?;
    // The browser ends a script that never yields at the same limit, and may say so first, as
    // an error of its own (through chrome.debugger: "Internal error"): that is the timeout too.
    let (kind, value) = match evaluated {
        Err(_) if started.elapsed() >= Duration::from_millis(limit) => return Err(timed_out()),
        evaluated => evaluated?,
    };
    let text = value.to_string();
    if text.len() > MAX_INLINE_BYTES {
        let stored = page.store(text.into_bytes(), "application/json").await?;
        return Ok(Output {
            value: None,
            kind,
            artifact_id: Some(stored.artifact_id),
            url: Some(stored.url),
        });
    }
    Ok(Output {
        value: Some(value),
        kind,
        artifact_id: None,
        url: None,
    })
}

/// The value's typeof and its JSON value.
async fn evaluate(page: &Page<'_>, expression: &str, limit: u64) -> Result<(String, Value), ActionError> {
    let mut params = typed::evaluation(expression);
    // Ends a script that never yields (a loop); the caller's bound covers a Promise that never
    // settles.
    params.timeout = Some(TimeDelta::new(limit as f64));
    // Read as JSON: a remote object's type and subtype are enums Chromium extends.
    let reply = page.command_json(params).await.map_err(|e| {
        let by_value = e.message.contains("returned by value") || e.message.contains("reference chain");
        if e.code == ErrorCode::CdpError && by_value {
            return ActionError::new(
                ErrorCode::CdpError,
                format!("the expression ran, but its value cannot be returned as JSON (a cycle, or too deep): return a plain part of it ({})", e.message),
            );
        }
        e
    })?;
    let result = remote_object_of(reply)?;
    let kind = result["type"].as_str().unwrap_or("undefined").to_owned();
    let value = match result.get("unserializableValue") {
        // NaN, Infinity and -0 are null in JSON; a bigint is its digits.
        Some(Value::String(special)) => match special.strip_suffix('n') {
            Some(digits) => Value::String(digits.to_owned()),
            None => Value::Null,
        },
        _ => result.get("value").cloned().unwrap_or(Value::Null),
    };
    Ok((kind, value))
}
