//! A tab's requests as the host keeps them (docs/protocol.md §17): read from CDP's Network
//! events from the moment the tab was prepared, the latest 1000 kept, each numbered (`seq`) so a
//! listing goes on where the last one ended; one in full with its headers, the secret ones
//! redacted wherever the browser reports them.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::Value;
use tether_protocol::actions::browser_network::{Headers, Output, Params, Request, RequestType};

use crate::policy::glob;

/// How many requests a tab keeps: the latest.
pub const KEPT: usize = 1000;
/// How much of a posted body is kept.
const POST_DATA_KEPT: usize = 64 * 1024;
/// Headers whose values never leave the host.
const REDACTED: &[&str] = &["authorization", "cookie", "set-cookie", "proxy-authorization"];

#[derive(Default)]
pub struct NetworkLog(Mutex<Log>);

#[derive(Default)]
struct Log {
    records: VecDeque<Record>,
    /// The seq of the last request written (0: none yet).
    last: u64,
}

struct Record {
    listed: Request,
    /// When it was sent, in the browser's monotonic seconds.
    sent: f64,
    request_headers: Headers,
    response_headers: Headers,
    post_data: Option<String>,
}

impl NetworkLog {
    fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a CDP event of the tab, if it is one of the Network domain's.
    pub fn observe(&self, method: &str, params: &Value) {
        let mut log = self.log();
        let id = params["requestId"].as_str().unwrap_or_default();
        match method {
            "Network.requestWillBeSent" => {
                if let (Some(record), Some(response)) = (log.find(id), params.get("redirectResponse")) {
                    // A redirect ends the request it answers; the next leg is a request of its own.
                    record.listed.status = response["status"].as_u64().and_then(|s| u16::try_from(s).ok());
                    record.finish(params["timestamp"].as_f64(), None);
                }
                log.push(sent(params));
            }
            "Network.requestWillBeSentExtraInfo" => {
                if let Some(record) = log.find(id) {
                    record.request_headers.extend(headers(&params["headers"]));
                }
            }
            "Network.responseReceived" => {
                if let Some(record) = log.find(id) {
                    let response = &params["response"];
                    record.listed.status = response["status"].as_u64().and_then(|s| u16::try_from(s).ok());
                    record.listed.kind = kind(params["type"].as_str());
                    record.listed.from_cache |= ["fromDiskCache", "fromServiceWorker", "fromPrefetchCache"]
                        .iter()
                        .any(|key| response[key].as_bool() == Some(true));
                    record.response_headers.extend(headers(&response["headers"]));
                }
            }
            "Network.responseReceivedExtraInfo" => {
                if let Some(record) = log.find(id) {
                    record.response_headers.extend(headers(&params["headers"]));
                }
            }
            "Network.requestServedFromCache" => {
                if let Some(record) = log.find(id) {
                    record.listed.from_cache = true;
                }
            }
            "Network.loadingFinished" => {
                if let Some(record) = log.find(id) {
                    record.finish(params["timestamp"].as_f64(), params["encodedDataLength"].as_f64());
                }
            }
            "Network.loadingFailed" => {
                if let Some(record) = log.find(id) {
                    let canceled = params["canceled"].as_bool() == Some(true);
                    let error = params["errorText"].as_str().filter(|e| !e.is_empty());
                    record.listed.failed = Some(match (error, canceled) {
                        (Some(error), _) => error.to_owned(),
                        (None, true) => "canceled".to_owned(),
                        (None, false) => "failed".to_owned(),
                    });
                    record.finish(params["timestamp"].as_f64(), None);
                }
            }
            _ => {}
        }
    }

    /// The requests after `since` that match, oldest first, at most `limit`; `next` is the
    /// last seq looked at.
    pub fn list(&self, p: &Params) -> Output {
        let log = self.log();
        let since = p.since.unwrap_or(0);
        let first_kept = log.records.front().map_or(log.last + 1, |r| r.listed.seq);
        let limit = p.limit() as usize;
        let (mut requests, mut next) = (Vec::new(), since);
        for record in log.records.iter().filter(|r| r.listed.seq > since) {
            if requests.len() == limit {
                break;
            }
            next = record.listed.seq;
            let r = &record.listed;
            let wanted = (!p.failed_only || failed(r))
                && p.types.as_ref().is_none_or(|types| types.contains(&r.kind))
                && p.url.as_deref().is_none_or(|pattern| glob(pattern, &r.url));
            if wanted {
                requests.push(r.clone());
            }
        }
        Output {
            requests: Some(requests),
            next: Some(next),
            dropped: Some(first_kept.saturating_sub(since.saturating_add(1))),
            ..Output::default()
        }
    }

    /// One request in full (the latest leg of a redirected one), its secret headers redacted.
    pub fn one(&self, request_id: &str) -> Option<Output> {
        let mut log = self.log();
        let record = log.find(request_id)?;
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
        self.log().last
    }

    /// The requests after `seq` that failed, at most `max`: url, status, failed. The browser's
    /// own look for a site icon is not the page's, and left out.
    pub fn failed_after(&self, seq: u64, max: usize) -> Vec<Request> {
        let log = self.log();
        log.records
            .iter()
            .map(|r| &r.listed)
            .filter(|r| r.seq > seq && failed(r) && !is_site_icon(&r.url))
            .take(max)
            .cloned()
            .collect()
    }
}

impl Log {
    fn find(&mut self, request_id: &str) -> Option<&mut Record> {
        self.records
            .iter_mut()
            .rev()
            .find(|r| r.listed.request_id == request_id)
    }

    fn push(&mut self, mut record: Record) {
        self.last += 1;
        record.listed.seq = self.last;
        self.records.push_back(record);
        if self.records.len() > KEPT {
            self.records.pop_front();
        }
    }
}

impl Record {
    fn finish(&mut self, at: Option<f64>, bytes: Option<f64>) {
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
    let post_data = request["postData"].as_str().map(|data| {
        let mut end = data.len().min(POST_DATA_KEPT);
        while !data.is_char_boundary(end) {
            end -= 1;
        }
        data[..end].to_owned()
    });
    Record {
        listed: Request {
            seq: 0,
            request_id: text(&params["requestId"]),
            method: text(&request["method"]),
            url: text(&request["url"]),
            kind: kind(params["type"].as_str()),
            status: None,
            failed: None,
            from_cache: false,
            duration_ms: None,
            bytes: None,
        },
        sent: params["timestamp"].as_f64().unwrap_or_default(),
        request_headers: headers(&request["headers"]),
        response_headers: Headers::new(),
        post_data,
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

/// CDP's headers object (repeated headers come joined with newlines) as name -> value.
fn headers(object: &Value) -> Headers {
    let Some(object) = object.as_object() else {
        return Headers::new();
    };
    object
        .iter()
        .map(|(name, value)| {
            (
                name.to_owned(),
                value.as_str().unwrap_or_default().replace('\n', ", "),
            )
        })
        .collect()
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
}
