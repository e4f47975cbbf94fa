//! `browser_network`: the requests the page made, or one of them in full.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::TabId;
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Network",
    category: Category::Extract,
    description: "Lists the requests the page made since the tab joined the session, oldest first: each with its seq, requestId, method, url, type, status, failed (the browser's error), fromCache, durationMs and bytes; after since (the next of an earlier call), matching url (a glob, * for any run), only failed ones (failedOnly: status 400 or more, or a network error), of some types, at most limit (default 100). The tab keeps the latest 1000; dropped counts the ones after since it let go. With requestId: that request in full, with its headers (Authorization, Cookie, Set-Cookie and Proxy-Authorization shown as <redacted>), its postData, and with body: true the response body as an artifact.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

/// What a request fetched, as the browser classes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RequestType {
    Document,
    Xhr,
    Fetch,
    Script,
    Stylesheet,
    Image,
    Font,
    Media,
    Websocket,
    Other,
}

/// How many requests a listing gives unless told.
pub const DEFAULT_LIMIT: u32 = 100;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to read: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// A seq from an earlier listing (its next): only requests after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
    /// Only requests whose URL matches this glob (* matches any run of characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Only requests that failed: HTTP status 400 or more, or a network error.
    #[serde(default)]
    pub failed_only: bool,
    /// Only requests of these types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<RequestType>>,
    /// At most this many requests, 1 to 500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = DEFAULT_LIMIT))]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
    /// In place of a listing: this request in full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// With requestId: the response body too, as an artifact.
    #[serde(default)]
    pub body: bool,
}

impl Params {
    pub fn limit(&self) -> u32 {
        self.limit.unwrap_or(DEFAULT_LIMIT)
    }
}

crate::tab_action_params!(
    check = |p| {
        if !(1..=500).contains(&p.limit()) {
            return Err(format!("limit must be 1 to 500, not {}", p.limit()));
        }
        let listing =
            p.since.is_some() || p.url.is_some() || p.failed_only || p.types.is_some() || p.limit.is_some();
        match (&p.request_id, listing, p.body) {
            (Some(_), true, _) => Err("requestId asks for one request: give it alone (with body), or list with since, url, failedOnly, types and limit".into()),
            (None, _, true) => Err("body needs the requestId of the request whose response body to store".into()),
            (Some(id), _, _) if id.is_empty() => Err("requestId must not be empty; take one from a listing".into()),
            _ => Ok(()),
        }
    }
);

/// A request as a listing shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// Its number in the tab, from 1; pass the last one listed as since to go on.
    pub seq: u64,
    /// The browser's id for it: give it as requestId for the request in full.
    pub request_id: String,
    /// The HTTP method.
    pub method: String,
    /// The URL requested.
    pub url: String,
    /// What it fetched: document, xhr, fetch, script, stylesheet, image, font, media, websocket or other.
    #[serde(rename = "type")]
    pub kind: RequestType,
    /// The HTTP status, once the response came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The browser's error, for a request that failed on the network (or was cancelled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// Served from a cache (memory, disk, a service worker, a prefetch).
    pub from_cache: bool,
    /// From sending to the last byte, once it finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// Bytes received on the network, once it finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// Headers, name -> value (repeated ones joined with ", ").
pub type Headers = BTreeMap<String, String>;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The listing (without requestId), oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<Vec<Request>>,
    /// The listing's seq to pass as since to go on from here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<u64>,
    /// The listing's requests after since that the tab had already let go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<u64>,
    /// With requestId: the request, its fields beside the ones below.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Request>,
    /// With requestId: the headers it was sent with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_headers: Option<Headers>,
    /// With requestId: the headers of its response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_headers: Option<Headers>,
    /// With requestId: the body it posted (up to 64 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_data: Option<String>,
    /// With body: the stored response body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_artifact_id: Option<String>,
    /// Where to fetch it; presigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_url: Option<String>,
}
