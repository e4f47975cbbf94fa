//! `browser_evaluate`: `Runtime.evaluate` of the agent's expression as a page script, once the
//! policy allows it. The value comes back as `JSON.stringify` sees it (a second call on the
//! result object), so DOM nodes, functions and cycles answer plainly instead of as CDP's
//! remote-object descriptions.

use std::time::Duration;

use serde_json::{json, Value};
use tether_protocol::actions::browser_evaluate::{Output, Params, DEFAULT_TIMEOUT_MS, MAX_INLINE_BYTES};
use tether_protocol::{ActionError, ErrorCode};

use super::Context;
use crate::page::{remote_object_of, value_of, Page};

const REFUSED: &str = "browser_evaluate is off on this host: the browser's owner allows it with tether-host worker --allow-evaluate, or in the Tether extension's popup (\"Let agents run their own JavaScript\"). The other actions need no such permission.";

/// The JSON text of the value `this` is, and its typeof (`undefined` stringifies to nothing).
const TO_JSON: &str =
    "function () { const text = JSON.stringify(this); return text === undefined ? 'null' : text; }";

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    if !cx.policy.allows_evaluate() {
        return Err(ActionError::new(ErrorCode::Forbidden, REFUSED));
    }
    let page = cx.page(p.tab_id);
    let limit = p.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    let evaluated = tokio::time::timeout(
        Duration::from_millis(limit),
        evaluate(&page, &p.expression, limit),
    )
    .await
    .map_err(|_| {
        ActionError::new(
            ErrorCode::ActionTimeout,
            format!("the expression did not finish within {limit} ms (a Promise that never settles?)"),
        )
    })?;
    let (kind, text) = evaluated?;
    if text.len() > MAX_INLINE_BYTES {
        let stored = page.store(text.into_bytes(), "application/json").await?;
        return Ok(Output {
            value: None,
            kind,
            artifact_id: Some(stored.artifact_id),
            url: Some(stored.url),
        });
    }
    let value = serde_json::from_str(&text)
        .map_err(|e| ActionError::internal(format!("the page's JSON of the value does not parse: {e}")))?;
    Ok(Output {
        value: Some(value),
        kind,
        artifact_id: None,
        url: None,
    })
}

/// The value's typeof and JSON text.
async fn evaluate(page: &Page<'_>, expression: &str, limit: u64) -> Result<(String, String), ActionError> {
    let reply = page
        .cdp(
            "Runtime.evaluate",
            // `timeout` ends a script that never yields (a loop); the caller's bound covers
            // a Promise that never settles.
            json!({ "expression": expression, "awaitPromise": true, "timeout": limit }),
        )
        .await?;
    let result = remote_object_of(reply)?;
    let kind = result["type"].as_str().unwrap_or("undefined").to_owned();
    let text = match (
        result.get("objectId").and_then(Value::as_str),
        result.get("unserializableValue"),
    ) {
        (Some(object), _) => {
            let json = page
                .cdp(
                    "Runtime.callFunctionOn",
                    json!({ "objectId": object, "functionDeclaration": TO_JSON, "returnByValue": true }),
                )
                .await;
            page.release(object).await;
            match value_of(json?)? {
                Value::String(text) => text,
                other => return Err(ActionError::internal(format!("JSON.stringify returned {other}"))),
            }
        }
        // NaN, Infinity and -0 are null in JSON; a bigint is its digits.
        (None, Some(Value::String(special))) => match special.strip_suffix('n') {
            Some(digits) => Value::String(digits.to_owned()).to_string(),
            None => "null".to_owned(),
        },
        (None, _) => result.get("value").cloned().unwrap_or(Value::Null).to_string(),
    };
    Ok((kind, text))
}
