//! A person at a page, over raw CDP: waits (bounded, in the page) for what is shown, clicks
//! in the middle of an element with real mouse events, and types with real input. For the
//! pages Tether serves people (the console, the extension's popup), which Tether's own
//! actions must never touch.

use serde_json::json;

use crate::cdp::RawSession;

/// Waits in the page (bounded) until `selector` matches a shown element; its text.
pub fn shown(selector: &str) -> String {
    shown_with(selector, "")
}

/// The same, until the element's text also holds `text`.
pub fn shown_with(selector: &str, text: &str) -> String {
    format!(
        r#"new Promise((resolve, reject) => {{
            const limit = setTimeout(() => reject(new Error("not shown: " + {sel})), 20000);
            const check = () => {{
                const found = document.querySelector({sel});
                if (found && !found.closest("[hidden]") && found.textContent.includes({text})) {{
                    clearTimeout(limit); watch.disconnect(); resolve(found.textContent);
                }}
            }};
            const watch = new MutationObserver(check);
            watch.observe(document, {{ subtree: true, childList: true, attributes: true, characterData: true }});
            check();
        }})"#,
        sel = serde_json::to_string(selector).unwrap(),
        text = serde_json::to_string(text).unwrap()
    )
}

/// Waits in the page (bounded) until nothing matches `selector`.
pub fn gone(selector: &str) -> String {
    format!(
        r#"new Promise((resolve, reject) => {{
            const limit = setTimeout(() => reject(new Error("still there: " + {sel})), 20000);
            const check = () => {{
                if (!document.querySelector({sel})) {{ clearTimeout(limit); watch.disconnect(); resolve(true); }}
            }};
            const watch = new MutationObserver(check);
            watch.observe(document, {{ subtree: true, childList: true }});
            check();
        }})"#,
        sel = serde_json::to_string(selector).unwrap()
    )
}

/// A person's click in the middle of the element.
pub async fn click(page: &RawSession<'_>, selector: &str) {
    page.eval_checked(&shown(selector)).await;
    let sel = serde_json::to_string(selector).unwrap();
    let at = page
        .eval_checked(&format!(
            "(() => {{ const r = document.querySelector({sel}).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ))
        .await;
    let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
    for kind in ["mousePressed", "mouseReleased"] {
        let event = json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 });
        page.call("Input.dispatchMouseEvent", event).await;
    }
}

/// Clicks a field and types `text` into it.
pub async fn type_into(page: &RawSession<'_>, selector: &str, text: &str) {
    click(page, selector).await;
    page.call("Input.insertText", json!({ "text": text })).await;
}

/// With `TETHER_DOC_SHOTS` set, writes what the page shows (within `clip`, when given) to
/// `docs/<name>`, for the README; otherwise does nothing.
pub async fn doc_shot(page: &RawSession<'_>, name: &str, clip: Option<serde_json::Value>) {
    if std::env::var_os("TETHER_DOC_SHOTS").is_none() {
        return;
    }
    let mut params = json!({ "format": "png" });
    if let Some(clip) = clip {
        params["clip"] = clip;
    }
    let shot = page.call("Page.captureScreenshot", params).await;
    let png = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        shot["data"].as_str().expect("a screenshot"),
    )
    .expect("base64");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(name);
    std::fs::write(path, png).expect("docs/ is writable");
}

/// The relay's console (at `console_url`) in a new tab, signed in with the observer token as a
/// person types it; the page and its target id.
pub async fn signed_in_console<'c>(
    cdp: &'c tether_host::cdp::connection::CdpConnection,
    console_url: &str,
) -> (RawSession<'c>, serde_json::Value) {
    let target = cdp
        .call(None, "Target.createTarget", json!({ "url": "about:blank" }))
        .await
        .expect("a tab");
    let page = RawSession::attach(cdp, &target["targetId"]).await;
    page.call("Page.navigate", json!({ "url": console_url })).await;
    page.eval_checked(&shown("body[data-ready]")).await;
    type_into(&page, "#token", crate::tokens::OBSERVER).await;
    click(&page, "#token-form button").await;
    page.eval_checked(&shown("#board")).await;
    (page, target["targetId"].clone())
}
