//! `browser_network`: the tab's requests as the host kept them (`network.rs`), once every event
//! the browser sent before this action is in; one request in full, its response body stored as
//! an artifact when asked.

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::network::GetResponseBodyParams;
use tether_protocol::actions::browser_network::{Output, Params};
use tether_protocol::{ActionError, ErrorCode};

use super::Context;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    cx.page_log()?;
    let page = cx.page(p.tab_id);
    page.caught_up().await?;
    let network = &page.state().network;
    let Some(id) = &p.request_id else {
        return Ok(network.list(&p));
    };
    let mut one = network.one(id).ok_or_else(|| {
        ActionError::new(
            ErrorCode::ElementNotFound,
            format!(
                "tab {} has no request {id:?}: take a requestId from a listing (the tab keeps its latest 1000 requests)",
                p.tab_id
            ),
        )
    })?;
    if p.body {
        let body = page
            .command(GetResponseBodyParams::new(id.to_owned()))
            .await
            .map_err(|e| {
                ActionError::new(
                    ErrorCode::ElementNotFound,
                    format!(
                        "the browser no longer holds the body of request {id} ({})",
                        e.message
                    ),
                )
            })?;
        let text = body.body.as_str();
        let bytes = match body.base64_encoded {
            true => base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| ActionError::internal(format!("the body is not base64: {e}")))?,
            _ => text.as_bytes().to_vec(),
        };
        let stored = page.store(bytes, &content_type(&one)).await?;
        one.body_artifact_id = Some(stored.artifact_id);
        one.body_url = Some(stored.url);
    }
    Ok(one)
}

/// The response's media type, as its `Content-Type` says it (without parameters).
fn content_type(one: &Output) -> String {
    let said = one
        .response_headers
        .iter()
        .flatten()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"));
    said.and_then(|(_, value)| value.split(';').next())
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "application/octet-stream".to_owned())
}
