//! An action's result as MCP content (docs/protocol.md §11): the snapshot and an article as their
//! text, a screenshot as an image plus a link to its artifact, anything else as compact JSON;
//! an error as `isError` with its code and message. Every text names the tab acted on. The
//! session acted in is the result's `_meta` `dev.tether/sessionId`, for programs and the
//! people reading a transcript: the agent named it, or it is the MCP session's own, so in the
//! text it would tell a model nothing on every reply.

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, MetaObject, Resource};
use serde_json::Value;
use tether_protocol::actions::{browser_screenshot, ArtifactRef, ReadsAs};
use tether_protocol::{ActionName, ActionResult};

use crate::browser::Browser;

/// The `_meta` key naming the session a result is of.
pub const SESSION_META: &str = "dev.tether/sessionId";

/// What an agent reads of `result`; `tab` is the tab the action acted on, if any.
pub async fn render(
    browser: &dyn Browser,
    action: ActionName,
    result: ActionResult,
    tab: Option<i64>,
) -> CallToolResult {
    let mut meta = MetaObject::default();
    meta.0
        .insert(SESSION_META.to_owned(), result.session_id.clone().into());
    let mut reply = content(browser, action, result, tab).await;
    reply.meta = Some(meta);
    reply
}

async fn content(
    browser: &dyn Browser,
    action: ActionName,
    result: ActionResult,
    tab: Option<i64>,
) -> CallToolResult {
    if let Some(error) = result.error {
        let mut text = format!("{}: {}", error.code, error.message);
        if let Some(tab) = tab {
            text.push_str(&format!(" (tab {tab})"));
        }
        if let Some(details) = error.details {
            text.push_str(&format!("\ndetails: {details}"));
        }
        return CallToolResult::error(vec![ContentBlock::text(text)]);
    }
    let output = result.result.map(|r| r.value()).unwrap_or_default();
    let text = |key: &str| output.get(key).and_then(Value::as_str).unwrap_or_default();
    let where_ = tab.map(|tab| format!("[tab {tab}] ")).unwrap_or_default();
    match action.about().reads_as {
        ReadsAs::Markdown => ok(format!("{where_}{}", text("markdown"))),
        ReadsAs::Article => {
            let mut article = format!("{where_}{}\n\n{}", text("title"), text("text"));
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
/// Markdown it is. Where the screen is there, its header says the page's title and address
/// (or that they are as the previous snapshot showed), so the JSON does not repeat them, nor a
/// load that completed (the screen is the loaded page).
fn json_then_screen(mut output: Value, tab: Option<i64>) -> String {
    let screen = output.as_object_mut().and_then(|fields| fields.remove("screen"));
    lean(&mut output, tab);
    let Some(screen) = screen.as_ref().and_then(Value::as_str) else {
        return output.to_string();
    };
    if let Value::Object(fields) = &mut output {
        fields.remove("title");
        fields.remove("url");
        if fields.get("status").and_then(Value::as_str) == Some("complete") {
            fields.remove("status");
        }
    }
    format!("{output}\n\n{screen}")
}

/// The result as compact JSON, with the tab it acted on as `tabId` where it does not say, less
/// what tells a model nothing: an empty list, how long settling took and what it waited for
/// (what still ran and the fields a form refused stay), the navigation a navigate made, and
/// the fields a fill filled (each `ok`: a field that fails is the action's error).
fn json_naming_tab(mut output: Value, tab: Option<i64>) -> String {
    lean(&mut output, tab);
    output.to_string()
}

/// Makes `output` what [`json_naming_tab`] sends.
fn lean(output: &mut Value, tab: Option<i64>) {
    if let Value::Object(fields) = output {
        if let Some(tab) = tab {
            fields.entry("tabId").or_insert(tab.into());
        }
        if let Some(Value::Array(filled)) = fields.get_mut("filled") {
            filled.retain(|f| f.get("ok") != Some(&Value::Bool(true)));
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
