//! A tab's requests as the host keeps them (docs/protocol.md §17): read from CDP's Network
//! events from the moment the tab was prepared, the latest 1000 kept, each numbered (`seq`) so a
//! listing goes on where the last one ended; one in full with its headers, the secret ones
//! redacted wherever the browser reports them.

use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestServedFromCache, EventRequestWillBeSent,
    EventRequestWillBeSentExtraInfo, EventResponseReceived, EventResponseReceivedExtraInfo,
};
use std::sync::Mutex;

use serde_json::Value;
use tether_protocol::actions::browser_network::{Headers, Output, Params, Request, RequestType};

use crate::page::numbered::{clipped, cut, Log, Numbered};
use crate::parts::glob::glob;

/// How much of a posted body is kept.
const POST_DATA_KEPT: usize = 64 * 1024;
/// How much of a URL is kept (a page's `data:` URL may be megabytes).
pub(crate) const URL_KEPT: usize = 8 * 1024;
/// How many headers a request or response keeps, each value cut at [`HEADER_KEPT`] bytes: a
/// page's own headers cannot grow a request's record past about 128 KiB.
const HEADERS_KEPT: usize = 64;
const HEADER_KEPT: usize = 2 * 1024;
/// How the browser ends, in the page, a request whose answer it saves as a download.
const DOWNLOAD_ABORT: &str = "net::ERR_ABORTED";
/// Headers whose values never leave the host.
const REDACTED: &[&str] = &["authorization", "cookie", "set-cookie", "proxy-authorization"];

#[derive(Default)]
pub struct NetworkLog(Mutex<Log<Record>>);

struct Record {
    listed: Request,
    /// When it was sent, in the browser's monotonic seconds.
    sent: f64,
    request_headers: Headers,
    response_headers: Headers,
    post_data: Option<String>,
    /// The browser saved its answer as a download: the abort that ends such a request in the
    /// page is not a failure.
    downloaded: bool,
    /// It was answered and read (or failed, or redirected to its next leg).
    ended: bool,
}

impl Numbered for Record {
    fn seq(&self) -> u64 {
        self.listed.seq
    }

    fn number(&mut self, seq: u64) {
        self.listed.seq = seq;
    }
}

impl NetworkLog {
    fn log(&self) -> std::sync::MutexGuard<'_, Log<Record>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a CDP event of the tab, if it is one of the Network domain's.
    pub fn observe(&self, method: &str, params: &Value) {
        let mut log = self.log();
        let id = params["requestId"].as_str().unwrap_or_default();
        match method {
            EventRequestWillBeSent::IDENTIFIER => {
                if let (Some(record), Some(response)) = (find(&mut log, id), params.get("redirectResponse")) {
                    // A redirect ends the request it answers; the next leg is a request of its own.
                    record.listed.status = response["status"].as_u64().and_then(|s| u16::try_from(s).ok());
                    record.finish(params["timestamp"].as_f64(), None);
                }
                log.push(sent(params));
            }
            EventRequestWillBeSentExtraInfo::IDENTIFIER => {
                if let Some(record) = find(&mut log, id) {
                    keep_headers(&mut record.request_headers, &params["headers"]);
                }
            }
            EventResponseReceived::IDENTIFIER => {
                if let Some(record) = find(&mut log, id) {
                    let response = &params["response"];
                    record.listed.status = response["status"].as_u64().and_then(|s| u16::try_from(s).ok());
                    record.listed.kind = kind(params["type"].as_str());
                    record.listed.from_cache |= ["fromDiskCache", "fromServiceWorker", "fromPrefetchCache"]
                        .iter()
                        .any(|key| response[key].as_bool() == Some(true));
                    keep_headers(&mut record.response_headers, &response["headers"]);
                }
            }
            EventResponseReceivedExtraInfo::IDENTIFIER => {
                if let Some(record) = find(&mut log, id) {
                    keep_headers(&mut record.response_headers, &params["headers"]);
                }
            }
            EventRequestServedFromCache::IDENTIFIER => {
                if let Some(record) = find(&mut log, id) {
                    record.listed.from_cache = true;
                }
            }
            EventLoadingFinished::IDENTIFIER => {
                if let Some(record) = find(&mut log, id) {
                    record.finish(params["timestamp"].as_f64(), params["encodedDataLength"].as_f64());
                }
            }
            EventLoadingFailed::IDENTIFIER => {
                if let Some(record) = find(&mut log, id) {
                    let canceled = params["canceled"].as_bool() == Some(true);
                    let error = params["errorText"].as_str().filter(|e| !e.is_empty());
                    if !(record.downloaded && error == Some(DOWNLOAD_ABORT)) {
                        record.listed.failed = Some(match (error, canceled) {
                            (Some(error), _) => error.to_owned(),
                            (None, true) => "canceled".to_owned(),
                            (None, false) => "failed".to_owned(),
                        });
                    }
                    record.finish(params["timestamp"].as_f64(), None);
                }
            }
            _ => {}
        }
    }

    /// The browser began saving `url` as a download (`Page.downloadWillBegin`): the latest
    /// request for it was answered with the file, and the abort that ends it in the page, before
    /// or after this, is not its failure.
    pub fn became_download(&self, url: &str) {
        let mut log = self.log();
        if let Some(record) = log.latest_mut(|r| r.listed.url == url) {
            record.downloaded = true;
            if record.listed.failed.as_deref() == Some(DOWNLOAD_ABORT) {
                record.listed.failed = None;
            }
        }
    }

    /// The requests after `since` that match, oldest first, at most `limit` (see
    /// [`Log::walk`]).
    pub fn list(&self, p: &Params) -> Output {
        let log = self.log();
        let wanted = |record: &Record| {
            let r = &record.listed;
            (!p.failed_only || failed(r))
                && p.types.as_ref().is_none_or(|types| types.contains(&r.kind))
                && p.url.as_deref().is_none_or(|pattern| glob(pattern, &r.url))
        };
        let walk = log.walk(p.since, p.limit() as usize, wanted);
        Output {
            requests: Some(walk.listed.into_iter().map(|r| r.listed.clone()).collect()),
            next: Some(walk.next),
            dropped: Some(walk.dropped),
            ..Output::default()
        }
    }

    /// One request in full (the latest leg of a redirected one), its secret headers redacted.
    pub fn one(&self, request_id: &str) -> Option<Output> {
        let mut log = self.log();
        let record = find(&mut log, request_id)?;
        Some(Output {
            request: Some(record.listed.clone()),
            request_headers: Some(redacted(&record.request_headers)),
            response_headers: Some(redacted(&record.response_headers)),
            post_data: record.post_data.clone(),
            ..Output::default()
        })
    }

    /// The seq of the last request written.
    pub fn last(&self) -> u64 {
        self.log().last()
    }

    /// The requests after `seq` that failed, at most `max`: url, status, failed. The browser's
    /// own look for a site icon is not the page's, and left out.
    pub fn failed_after(&self, seq: u64, max: usize) -> Vec<Request> {
        let log = self.log();
        log.after(seq)
            .map(|r| &r.listed)
            .filter(|r| failed(r) && !is_site_icon(&r.url))
            .take(max)
            .cloned()
            .collect()
    }

    /// The documents, scripts and stylesheets requested after `seq`: how many, and those not
    /// ended yet (at most `max`).
    pub fn loading_after(&self, seq: u64, max: usize) -> (u32, Vec<Request>) {
        let log = self.log();
        let mut begun = 0;
        let mut open = Vec::new();
        for record in log
            .after(seq)
            .filter(|r| SETTLED_AT_NETWORK.contains(&r.listed.kind))
        {
            begun += 1;
            if !record.ended && open.len() < max {
                open.push(record.listed.clone());
            }
        }
        (begun, open)
    }
}

/// The kinds of request settling waits for at the network (docs/protocol.md §20): a page's
/// `fetch` and XHR are counted in the page, where what caused each is known.
const SETTLED_AT_NETWORK: [RequestType; 3] = [
    RequestType::Document,
    RequestType::Script,
    RequestType::Stylesheet,
];

/// The latest leg of the request `request_id`.
fn find<'a>(log: &'a mut Log<Record>, request_id: &str) -> Option<&'a mut Record> {
    log.latest_mut(|r| r.listed.request_id == request_id)
}

impl Record {
    fn finish(&mut self, at: Option<f64>, bytes: Option<f64>) {
        self.ended = true;
        if let Some(at) = at {
            self.listed.duration_ms = Some(((at - self.sent) * 1000.0 * 10.0).round() / 10.0);
        }
        if let Some(bytes) = bytes {
            self.listed.bytes = Some(bytes as u64);
        }
    }
}

/// Whether a URL is where a browser looks for a site's icon unasked (`/favicon.ico`).
pub fn is_site_icon(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| u.path() == "/favicon.ico")
}

/// HTTP status 400 or more, or a network error.
fn failed(r: &Request) -> bool {
    r.failed.is_some() || r.status.is_some_and(|s| s >= 400)
}

/// A request as `Network.requestWillBeSent` tells it.
fn sent(params: &Value) -> Record {
    let request = &params["request"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let post_data = request["postData"]
        .as_str()
        .map(|data| cut(data, POST_DATA_KEPT).to_owned());
    let mut request_headers = Headers::new();
    keep_headers(&mut request_headers, &request["headers"]);
    Record {
        listed: Request {
            seq: 0,
            request_id: text(&params["requestId"]),
            method: text(&request["method"]),
            url: clipped(request["url"].as_str().unwrap_or_default(), URL_KEPT),
            kind: kind(params["type"].as_str()),
            status: None,
            failed: None,
            from_cache: false,
            duration_ms: None,
            bytes: None,
        },
        sent: params["timestamp"].as_f64().unwrap_or_default(),
        request_headers,
        response_headers: Headers::new(),
        post_data,
        downloaded: false,
        ended: false,
    }
}

/// The browser's resource type as the listing names it.
fn kind(resource: Option<&str>) -> RequestType {
    match resource.unwrap_or_default() {
        "Document" => RequestType::Document,
        "XHR" => RequestType::Xhr,
        "Fetch" => RequestType::Fetch,
        "Script" => RequestType::Script,
        "Stylesheet" => RequestType::Stylesheet,
        "Image" => RequestType::Image,
        "Font" => RequestType::Font,
        "Media" => RequestType::Media,
        "WebSocket" => RequestType::Websocket,
        _ => RequestType::Other,
    }
}

/// Adds CDP's headers object (repeated headers come joined with newlines) to `into`, name ->
/// value, while it has fewer than [`HEADERS_KEPT`]; each value cut at [`HEADER_KEPT`] bytes.
fn keep_headers(into: &mut Headers, object: &Value) {
    for (name, value) in object.as_object().into_iter().flatten() {
        if into.len() >= HEADERS_KEPT && !into.contains_key(name) {
            continue;
        }
        let value = value.as_str().unwrap_or_default().replace('\n', ", ");
        into.insert(clipped(name, HEADER_KEPT), clipped(&value, HEADER_KEPT));
    }
}

fn redacted(headers: &Headers) -> Headers {
    headers
        .iter()
        .map(|(name, value)| {
            let secret = REDACTED.contains(&name.to_ascii_lowercase().as_str());
            (
                name.clone(),
                if secret {
                    "<redacted>".to_owned()
                } else {
                    value.clone()
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sent(id: &str, url: &str, at: f64, redirect: Option<Value>) -> Value {
        let mut sent = json!({
            "requestId": id, "type": "Document", "timestamp": at,
            "request": { "url": url, "method": "GET", "headers": { "Authorization": "Bearer secret", "Accept": "text/html" } },
        });
        if let Some(response) = redirect {
            sent["redirectResponse"] = response;
        }
        sent
    }

    #[test]
    fn a_redirect_is_one_request_a_leg_and_secrets_never_leave() {
        let log = NetworkLog::default();
        log.observe(
            "Network.requestWillBeSent",
            &sent("1", "http://a.test/old", 1.0, None),
        );
        log.observe(
            "Network.requestWillBeSent",
            &sent("1", "http://a.test/new", 1.5, Some(json!({ "status": 302 }))),
        );
        let extra = json!({ "requestId": "1", "headers": { "Cookie": "id=42", "Set-Cookie": "x=1\ny=2" } });
        log.observe("Network.requestWillBeSentExtraInfo", &extra);
        log.observe("Network.responseReceived", &json!({ "requestId": "1", "type": "Document", "response": { "status": 200, "headers": { "Set-Cookie": "a=1\nb=2" } } }));
        log.observe(
            "Network.loadingFinished",
            &json!({ "requestId": "1", "timestamp": 2.0, "encodedDataLength": 512.0 }),
        );
        let listed = log.list(&Params {
            tab_id: 1,
            since: None,
            url: None,
            failed_only: false,
            types: None,
            limit: None,
            request_id: None,
            body: false,
        });
        let legs: Vec<(String, Option<u16>, Option<f64>)> = listed
            .requests
            .unwrap()
            .into_iter()
            .map(|r| (r.url, r.status, r.duration_ms))
            .collect();
        assert_eq!(
            legs,
            [
                ("http://a.test/old".to_owned(), Some(302), Some(500.0)),
                ("http://a.test/new".to_owned(), Some(200), Some(500.0)),
            ]
        );
        let one = log.one("1").expect("the last leg");
        let sent = one.request_headers.unwrap();
        assert_eq!(
            (sent["Authorization"].as_str(), sent["Cookie"].as_str()),
            ("<redacted>", "<redacted>")
        );
        assert_eq!(sent["Accept"], "text/html");
        assert_eq!(one.response_headers.unwrap()["Set-Cookie"], "<redacted>");
        assert!(log.one("2").is_none());
    }

    #[test]
    fn a_page_cannot_grow_a_requests_record_past_its_bounds() {
        let log = NetworkLog::default();
        let many: serde_json::Map<String, Value> = (0..500)
            .map(|n| (format!("X-{n}"), json!("v".repeat(1 << 20))))
            .collect();
        let url = format!("data:text/plain,{}", "a".repeat(4 << 20));
        let request = json!({ "requestId": "9", "type": "Fetch", "timestamp": 1.0, "request": { "url": url, "method": "GET", "headers": many } });
        log.observe("Network.requestWillBeSent", &request);
        let one = log.one("9").unwrap();
        let headers = one.request_headers.unwrap();
        assert_eq!(headers.len(), HEADERS_KEPT);
        assert!(headers.values().all(|v| v.len() < HEADER_KEPT + 64));
        assert!(one.request.unwrap().url.len() < URL_KEPT + 64);
    }

    #[test]
    fn a_request_answered_with_a_download_did_not_fail_but_a_broken_one_did() {
        let log = NetworkLog::default();
        let answered =
            json!({ "requestId": "1", "type": "Document", "response": { "status": 200, "headers": {} } });
        let aborted = json!({ "requestId": "1", "timestamp": 2.0, "errorText": DOWNLOAD_ABORT });
        // The abort before the browser says it saves the file, then after.
        log.observe(
            "Network.requestWillBeSent",
            &sent("1", "http://a.test/report.csv", 1.0, None),
        );
        log.observe("Network.responseReceived", &answered);
        log.observe("Network.loadingFailed", &aborted);
        log.became_download("http://a.test/report.csv");
        log.observe(
            "Network.requestWillBeSent",
            &sent("2", "http://a.test/export.csv", 3.0, None),
        );
        log.became_download("http://a.test/export.csv");
        log.observe(
            "Network.loadingFailed",
            &json!({ "requestId": "2", "timestamp": 4.0, "errorText": DOWNLOAD_ABORT }),
        );
        log.observe(
            "Network.requestWillBeSent",
            &sent("3", "http://a.test/page", 5.0, None),
        );
        log.observe(
            "Network.loadingFailed",
            &json!({ "requestId": "3", "timestamp": 6.0, "errorText": DOWNLOAD_ABORT }),
        );
        let failed: Vec<String> = log.failed_after(0, 5).into_iter().map(|r| r.url).collect();
        assert_eq!(failed, ["http://a.test/page"]);
    }
}
