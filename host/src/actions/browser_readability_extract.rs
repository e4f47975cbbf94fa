//! `browser_readability_extract`: the article in the live DOM (after the page's scripts ran),
//! as Mozilla Readability would find it: title, byline, excerpt, plain text and Markdown.
//! Text over 256 KiB goes whole to an artifact; `text` keeps its first 256 KiB.

use dom_smoothie::{Config, Readability, TextMode};
use serde_json::{json, Value};
use tether_protocol::catalog::ReadabilityResult;
use tether_protocol::{ActionError, ActionOutcome};

use crate::page::Page;

pub const INLINE_TEXT_LIMIT: usize = 256 * 1024;

const SNAPSHOT: &str =
    "({ html: document.documentElement.outerHTML, url: location.href, title: document.title })";

pub async fn run(page: &Page<'_>) -> ActionOutcome {
    let snapshot = page.evaluate(SNAPSHOT).await?;
    let field = |key: &str| {
        snapshot
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (html, url, title) = (field("html"), field("url"), field("title"));
    // dom_smoothie's document is not Send: parse on a blocking thread, return plain strings.
    let mut result = tokio::task::spawn_blocking(move || extract(html, &url, title))
        .await
        .map_err(|e| ActionError::internal(format!("readability failed: {e}")))?;
    if result.text.len() > INLINE_TEXT_LIMIT {
        let stored = page
            .store(result.text.clone().into_bytes(), "text/plain; charset=utf-8")
            .await?;
        result
            .text
            .truncate(floor_char_boundary(&result.text, INLINE_TEXT_LIMIT));
        result.artifact_id = Some(stored.artifact_id);
        result.url = Some(stored.url);
    }
    Ok(json!(result))
}

/// Runs readability over a page's HTML; a page with no article falls back to its body text.
pub fn extract(html: String, url: &str, page_title: String) -> ReadabilityResult {
    let config = Config {
        text_mode: TextMode::Formatted,
        ..Config::default()
    };
    // Readability wants an absolute http(s) URL to resolve links; others (about:, data:) none.
    let base = url.starts_with("http").then_some(url);
    let parsed = Readability::new(html.as_str(), base, Some(config.clone()))
        .or_else(|_| Readability::new(html.as_str(), None, Some(config)))
        .and_then(|mut r| r.parse());
    let non_empty = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    match parsed {
        Ok(article) => {
            let markdown = dom_query::Document::from(article.content.as_ref())
                .md(None)
                .to_string();
            ReadabilityResult {
                title: non_empty(Some(article.title)).or_else(|| non_empty(Some(page_title))),
                text: article.text_content.trim().to_owned(),
                markdown: non_empty(Some(markdown)),
                byline: non_empty(article.byline),
                excerpt: non_empty(article.excerpt),
                artifact_id: None,
                url: None,
            }
        }
        Err(e) => {
            tracing::debug!("no article found ({e}); using the page's text");
            let document = dom_query::Document::from(html.as_str());
            let body = document.select("body");
            let markdown = body.nodes().first().map(|node| node.md(None).to_string());
            ReadabilityResult {
                title: non_empty(Some(page_title)),
                text: body.formatted_text().trim().to_owned(),
                markdown: non_empty(markdown),
                byline: None,
                excerpt: None,
                artifact_id: None,
                url: None,
            }
        }
    }
}

fn floor_char_boundary(s: &str, mut at: usize) -> usize {
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}
