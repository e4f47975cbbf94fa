//! The fixture web server: static pages from `tests/fixtures/`, plus generated ones (a
//! 20,000-element page, a 500 KB article, HTTP error statuses, a page that never finishes
//! loading, `/download/{name}`: a file served as an attachment, `/icon/{ms}/{name}`: a 24 px SVG
//! icon answered after `ms` milliseconds, `/slow/{ms}`: a text answered after `ms` milliseconds,
//! or with `?to=URL` a redirect there), and `/counter/{key}`: a count kept by the server of what pages did, which a test
//! can hold open to catch an action in the middle.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;

pub struct Server {
    addr: SocketAddr,
}

impl Server {
    pub async fn start() -> Self {
        let app = Router::new()
            .route("/fixtures/{name}", get(fixture))
            .route("/control-ui/{name}", get(fixture))
            .route("/status/{code}", get(status))
            .route("/big", get(|| async { Html(big_page(20_000)) }))
            .route("/big/{count}", get(big_page_of))
            .route("/corpus/{name}", get(corpus_page))
            .route("/long-article", get(|| async { Html(long_article(500 * 1024)) }))
            .route(
                "/huge-article",
                get(|| async { Html(long_article(400 * 1024 * 2)) }),
            )
            .route("/never-loads", get(never_loads_page))
            .route("/counter/{key}", get(count).post(count))
            .route("/kept/{key}", get(kept))
            .route("/script/{name}", get(script))
            .route("/stall", get(stall))
            .route("/icon/{ms}/{name}", get(icon))
            .route("/slow/{ms}", get(slow).post(slow))
            .route("/redirect", get(redirect))
            .route("/download/{name}", get(download).post(download))
            .route("/login", axum::routing::post(login));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fixture server");
        let addr = listener.local_addr().expect("fixture server address");
        // The same pages on another site (127.0.0.2, same port): a frame from there is out of
        // the page's process, where another port of 127.0.0.1 would not be.
        let other = tokio::net::TcpListener::bind((OTHER_SITE, addr.port()))
            .await
            .expect("bind the fixture server on 127.0.0.2");
        let also = app.clone();
        tokio::spawn(async move { axum::serve(other, also).await.expect("fixture server") });
        tokio::spawn(async move { axum::serve(listener, app).await.expect("fixture server") });
        Self { addr }
    }

    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.origin(), path)
    }
}

/// Where the fixture server also listens: another site than 127.0.0.1.
const OTHER_SITE: &str = "127.0.0.2";

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// A fixture page; `{{OTHER_SITE}}` in it becomes the server's origin on the other site.
async fn fixture(Path(name): Path<String>, headers: axum::http::HeaderMap) -> Response {
    if name.contains("..") || name.contains('/') {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let port = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.rsplit(':').next())
        .unwrap_or_default()
        .to_owned();
    match tokio::fs::read_to_string(fixtures_dir().join(&name)).await {
        Ok(body) => {
            Html(body.replace("{{OTHER_SITE}}", &format!("http://{OTHER_SITE}:{port}"))).into_response()
        }
        Err(_) => (StatusCode::NOT_FOUND, format!("no fixture {name}")).into_response(),
    }
}

/// `/status/404` answers with a body (Chromium shows the server's page); `/status/500-empty`
/// with none (Chromium shows its own error page).
async fn status(Path(code): Path<String>) -> Response {
    let (number, empty) = match code.strip_suffix("-empty") {
        Some(n) => (n, true),
        None => (code.as_str(), false),
    };
    let status = number
        .parse()
        .ok()
        .and_then(|n| StatusCode::from_u16(n).ok())
        .unwrap_or(StatusCode::BAD_REQUEST);
    if empty {
        return status.into_response();
    }
    (
        status,
        Html(format!(
            "<!doctype html><title>Status {number}</title><h1>Error {number}</h1>"
        )),
    )
        .into_response()
}

/// `/redirect?to=URL`: a 302 to wherever the page wants its tab to go (a hostile page sending
/// its tab to a refused URL, docs/protocol.md §15).
async fn redirect(axum::extract::Query(to): axum::extract::Query<HashMap<String, String>>) -> Response {
    match to.get("to") {
        Some(url) => axum::response::Redirect::to(url).into_response(),
        None => (StatusCode::BAD_REQUEST, "say where: /redirect?to=URL").into_response(),
    }
}

/// How many times each counter was hit, and the holds armed on some (see [`hold`]).
#[derive(Default)]
struct Counters {
    hits: HashMap<String, usize>,
    holds: HashMap<String, Arc<Notify>>,
}

static COUNTERS: LazyLock<Mutex<Counters>> = LazyLock::new(Mutex::default);
static HIT: LazyLock<Notify> = LazyLock::new(Notify::new);

fn counters() -> std::sync::MutexGuard<'static, Counters> {
    COUNTERS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Counts a hit; answers once the key's hold (if armed) is released. A page that requests it
/// synchronously is stuck in the middle of its event handler until then.
async fn count(Path(key): Path<String>) -> &'static str {
    let hold = {
        let mut counters = counters();
        *counters.hits.entry(key.clone()).or_default() += 1;
        counters.holds.get(&key).cloned()
    };
    HIT.notify_waiters();
    if let Some(hold) = hold {
        hold.notified().await;
    }
    "counted"
}

/// A fixture served as JavaScript (a service worker must come with a script's type).
async fn script(Path(name): Path<String>) -> Response {
    if name.contains("..") || name.contains('/') || !name.ends_with(".js") {
        return StatusCode::BAD_REQUEST.into_response();
    }
    match tokio::fs::read_to_string(fixtures_dir().join(&name)).await {
        Ok(body) => ([(header::CONTENT_TYPE, "text/javascript")], body).into_response(),
        Err(_) => (StatusCode::NOT_FOUND, format!("no script {name}")).into_response(),
    }
}

/// Counted as `/counter/kept-{key}` is, and answered with a server cookie (`server={key}`) and
/// leave to keep the answer in the HTTP cache for an hour.
async fn kept(Path(key): Path<String>) -> Response {
    count(Path(format!("kept-{key}"))).await;
    (
        [
            (header::CACHE_CONTROL, "max-age=3600".to_owned()),
            (header::SET_COOKIE, format!("server={key}; Path=/; Max-Age=3600")),
        ],
        "kept",
    )
        .into_response()
}

/// How many times the page hit `/counter/{key}`.
pub fn hits(key: &str) -> usize {
    counters().hits.get(key).copied().unwrap_or(0)
}

/// Waits (bounded) until `/counter/{key}` was hit `n` times.
pub async fn hit_times(key: &str, n: usize) {
    let reached = async {
        loop {
            let woken = HIT.notified();
            if hits(key) >= n {
                return;
            }
            woken.await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), reached)
        .await
        .unwrap_or_else(|_| panic!("/counter/{key} was hit {} times, not {n}", hits(key)));
}

/// Holds every request to `/counter/{key}` until the returned [`Hold`] is released.
pub fn hold(key: &str) -> Hold {
    let notify = Arc::new(Notify::new());
    counters().holds.insert(key.to_owned(), notify.clone());
    Hold {
        key: key.to_owned(),
        notify,
    }
}

/// A hold on a counter: the requests it keeps waiting go on when it is released.
pub struct Hold {
    key: String,
    notify: Arc<Notify>,
}

impl Hold {
    pub fn release(self) {
        counters().holds.remove(&self.key);
        // A permit for a request between its count and its wait, and a wake for those waiting.
        self.notify.notify_one();
        self.notify.notify_waiters();
    }
}

/// The form bodies `/login` received, in order.
static LOGINS: LazyLock<Mutex<Vec<String>>> = LazyLock::new(Mutex::default);

/// What pages posted to `/login`.
pub fn logins() -> Vec<String> {
    LOGINS.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Keeps a login form's body (counted as `/counter/login` too, for [`hit_times`]).
async fn login(body: String) -> Html<&'static str> {
    LOGINS.lock().unwrap_or_else(|p| p.into_inner()).push(body);
    *counters().hits.entry("login".into()).or_default() += 1;
    HIT.notify_waiters();
    Html("<!doctype html><title>Welcome</title><h1>Welcome back</h1>")
}

/// How long a `slow-` download's server takes to answer.
const SLOW_ANSWER: Duration = Duration::from_millis(500);

/// What `/download/{name}` serves.
pub fn download_body(name: &str) -> String {
    format!("{name}: a file a page of Tether's tests downloads\n").repeat(200)
}

/// A file served as an attachment (`Content-Disposition`), `text/csv` for a `.csv`. A name
/// starting `held-` sends the first half, then the rest once [`hold`] on that name is released
/// (arm the hold before the page asks): a download caught in progress. A name starting
/// `slow-` is answered after [`SLOW_ANSWER`], as a server that builds the file first.
async fn download(Path(name): Path<String>) -> Response {
    if name.starts_with("slow-") {
        tokio::time::sleep(SLOW_ANSWER).await;
    }
    let body = download_body(&name).into_bytes();
    let length = body.len();
    let rest = body[length / 2..].to_vec();
    let first = body[..length / 2].to_vec();
    let hold = counters()
        .holds
        .get(&name)
        .cloned()
        .filter(|_| name.starts_with("held-"));
    let first = futures::stream::once(async move { Ok::<_, std::io::Error>(first) });
    let rest = futures::stream::once(async move {
        if let Some(hold) = hold {
            hold.notified().await;
        }
        Ok(rest)
    });
    let content_type = if name.ends_with(".csv") {
        "text/csv"
    } else {
        "application/octet-stream"
    };
    (
        [
            (header::CONTENT_TYPE, content_type.to_owned()),
            (header::CONTENT_LENGTH, length.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        axum::body::Body::from_stream(futures::StreamExt::chain(first, rest)),
    )
        .into_response()
}

/// A page whose load event waits on a stylesheet the server never finishes sending.
async fn never_loads_page() -> Html<&'static str> {
    Html("<!doctype html><title>Never loads</title><p>Waiting</p><img src=\"/stall\">")
}

/// `ok` after `ms` (at most 10,000) milliseconds; with `?to=URL`, a 303 to it then (a form's
/// answer that takes its time).
async fn slow(
    Path(ms): Path<u64>,
    axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>,
) -> Response {
    tokio::time::sleep(Duration::from_millis(ms.min(10_000))).await;
    match query.get("to") {
        Some(url) => axum::response::Redirect::to(url).into_response(),
        None => format!("ok after {ms} ms").into_response(),
    }
}

/// A 24 x 24 SVG square, answered `ms` (at most 10,000) milliseconds late; `name` (any, such as
/// `like-1234.svg`) keeps each page's copy out of the browser's cache.
async fn icon(Path((ms, _name)): Path<(u64, String)>) -> Response {
    tokio::time::sleep(Duration::from_millis(ms.min(10_000))).await;
    let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24"><rect width="24" height="24" fill="#c33"/></svg>"##;
    ([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response()
}

async fn stall() -> Response {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    ([(header::CONTENT_TYPE, "image/png")], Vec::<u8>::new()).into_response()
}

/// `count` elements: a table of rows, each with a link, a button, an input and plain cells.
async fn big_page_of(Path(count): Path<usize>) -> Response {
    if count > 200_000 {
        return StatusCode::BAD_REQUEST.into_response();
    }
    Html(big_page(count)).into_response()
}

/// A page of the benchmark corpus: `$TETHER_SNAPSHOT_CORPUS/<name>/source.html` (Mozilla
/// Readability's test pages), for the snapshot benchmark.
async fn corpus_page(Path(name): Path<String>) -> Response {
    let Some(corpus) = std::env::var_os("TETHER_SNAPSHOT_CORPUS") else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if name.contains("..") || name.contains('/') {
        return StatusCode::BAD_REQUEST.into_response();
    }
    match tokio::fs::read(PathBuf::from(corpus).join(&name).join("source.html")).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], bytes).into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

pub fn big_page(count: usize) -> String {
    let mut html = String::from("<!doctype html><title>Big</title><table>");
    let rows = count / 10;
    for i in 0..rows {
        // 10 elements per row: tr, 4 td, a, button, input, span, b.
        let _ = write!(
            html,
            "<tr><td><a href=\"#r{i}\">Row {i}</a></td><td><button>Act {i}</button></td>\
             <td><input name=\"f{i}\"></td><td><span>cell <b>{i}</b></span></td></tr>"
        );
    }
    html.push_str("</table>");
    html
}

/// An article of about `bytes` bytes of text, with the furniture readability must drop.
pub fn long_article(bytes: usize) -> String {
    let paragraph = "Tether keeps the browser safe while agents work. ".repeat(8);
    let mut html = String::from(
        "<!doctype html><html><head><title>Long read</title></head><body>\
         <nav><a href=\"/\">Home</a> <a href=\"/news\">News</a></nav>\
         <article><h1>Long read</h1>",
    );
    let mut i = 0;
    while html.len() < bytes {
        let _ = write!(html, "<p>Paragraph {i}. {paragraph}</p>");
        i += 1;
    }
    html.push_str("</article><footer>Footer links</footer></body></html>");
    html
}
