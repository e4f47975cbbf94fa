//! An action's result as MCP content (docs/protocol.md §11): the snapshot and an article as their
//! text, a screenshot as an image plus a link to its artifact, anything else as compact JSON;
//! an error as `isError` with its code and message. Every text names the tab acted on.

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, Resource};
use serde_json::Value;
use tether_protocol::actions::{browser_screenshot, ArtifactRef, ReadsAs};
use tether_protocol::{ActionName, ActionResult};

use crate::browser::Browser;

/// What an agent reads of `result`; `tab` is the tab the action acted on, if any.
pub async fn render(
    browser: &dyn Browser,
    action: ActionName,
    result: ActionResult,
    tab: Option<i64>,
) -> CallToolResult {
    let where_ = match tab {
        Some(tab) => format!("tab {tab}, session {}", result.session_id),
        None => format!("session {}", result.session_id),
    };
    if let Some(error) = result.error {
        let mut text = format!("{}: {} ({where_})", error.code, error.message);
        if let Some(details) = error.details {
            text.push_str(&format!("\ndetails: {details}"));
        }
        return CallToolResult::error(vec![ContentBlock::text(text)]);
    }
    let output = result.result.map(|r| r.value()).unwrap_or_default();
    let text = |key: &str| output.get(key).and_then(Value::as_str).unwrap_or_default();
    match action.about().reads_as {
        ReadsAs::Markdown => ok(format!("[{where_}] {}", text("markdown"))),
        ReadsAs::Article => {
            let mut article = format!("[{where_}] {}\n\n{}", text("title"), text("text"));
            if let Some(url) = output.get("url").and_then(Value::as_str) {
                article.push_str(&format!("\n\n(the text is cut here; all of it: {url})"));
            }
            ok(article)
        }
        ReadsAs::Image => screenshot(browser, output, tab).await,
        ReadsAs::Json => ok(json_then_screen(output, tab)),
    }
}

fn ok(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// The result as compact JSON, then the page it left (`screen`, from `observe`) as the
/// Markdown it is.
fn json_then_screen(mut output: Value, tab: Option<i64>) -> String {
    let screen = output.as_object_mut().and_then(|fields| fields.remove("screen"));
    let json = json_naming_tab(output, tab);
    match screen.as_ref().and_then(Value::as_str) {
        Some(screen) => format!("{json}\n\n{screen}"),
        None => json,
    }
}

/// The result as compact JSON, with the tab it acted on as `tabId` where it does not say, less
/// what tells a model nothing: an empty list, how long settling took and what it waited for
/// (what still ran and the fields a form refused stay), and the navigation a navigate made.
fn json_naming_tab(mut output: Value, tab: Option<i64>) -> String {
    if let Value::Object(fields) = &mut output {
        if let Some(tab) = tab {
            fields.entry("tabId").or_insert(tab.into());
        }
        fields.retain(|_, v| v.as_array().is_none_or(|a| !a.is_empty()));
        if let Some(Value::Object(settled)) = fields.get_mut("settled") {
            settled.retain(|key, _| key == "pending" || key == "invalid");
            if settled.is_empty() {
                fields.remove("settled");
            }
        }
        let url = fields.get("url").cloned();
        if let Some(Value::Object(observed)) = fields.get_mut("observed") {
            if url.is_some() && observed.get("navigated").and_then(|n| n.get("url")) == url.as_ref() {
                observed.remove("navigated");
            }
            if observed.is_empty() {
                fields.remove("observed");
            }
        }
    }
    output.to_string()
}

/// The picture itself, for the agent to look at, and where it is stored, to hand on.
async fn screenshot(browser: &dyn Browser, output: Value, tab: Option<i64>) -> CallToolResult {
    let shot: browser_screenshot::Output = match serde_json::from_value(output.clone()) {
        Ok(shot) => shot,
        Err(_) => return ok(json_naming_tab(output, tab)),
    };
    let mime = match shot.format {
        tether_protocol::actions::ImageFormat::Png => "image/png",
        tether_protocol::actions::ImageFormat::Jpeg => "image/jpeg",
    };
    let link = Resource::new(shot.url.clone(), shot.artifact_id.clone())
        .with_mime_type(mime)
        .with_size(shot.bytes);
    let artifact = ArtifactRef {
        artifact_id: shot.artifact_id,
        url: shot.url,
    };
    let mut content = vec![ContentBlock::text(json_naming_tab(output, tab))];
    match browser.artifact(&artifact).await {
        Ok(bytes) => content.push(ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(bytes),
            mime,
        )),
        Err(e) => content.push(ContentBlock::text(format!(
            "(the image could not be read back: {}; it is at the link)",
            e.message
        ))),
    }
    content.push(ContentBlock::resource_link(link));
    CallToolResult::success(content)
}
