//! `browser_readability_extract`: the article in the live DOM (after the page's scripts ran),
//! as Mozilla Readability would find it: title, byline, excerpt, plain text and Markdown.
//! Text over 256 KiB goes whole to an artifact; `text` keeps its first 256 KiB.

use dom_smoothie::{Config, Readability, TextMode};
use serde::Deserialize;
use tether_protocol::actions::browser_readability_extract::{Output, Params, INLINE_TEXT_LIMIT};
use tether_protocol::ActionError;

use super::Context;

const SNAPSHOT: &str =
    "({ html: document.documentElement.outerHTML, url: location.href, title: document.title })";

/// What `SNAPSHOT` answers.
#[derive(Deserialize)]
struct Snapshot {
    html: String,
    url: String,
    title: String,
}

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let Snapshot { html, url, title } = serde_json::from_value(page.evaluate(SNAPSHOT).await?)
        .map_err(|e| ActionError::internal(format!("the page's HTML came back in an unknown shape: {e}")))?;
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
    Ok(result)
}

/// Runs readability over a page's HTML; a page with no article falls back to its body text.
pub fn extract(html: String, url: &str, page_title: String) -> Output {
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
            Output {
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
            Output {
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
