//! What the benches share: a raw CDP session beside the host's (the baseline doing the same
//! work), alternating measurement, and the table they print. Benches print ratios against
//! that baseline, measured in the same run; docs/performance.md records them.

use std::future::Future;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tether_host::cdp::connection::CdpConnection;

use crate::cdp::RawSession;
use crate::relay::TestRelay;
use crate::Harness;

/// The in-page library, as the host evaluates it.
pub const LIB_JS: &str = tether_host::page::library::SOURCE;
/// Timed runs per operation (after 3 warm-ups).
pub const RUNS: usize = 30;
/// The session benches act in.
pub const SESSION: &str = "bench";

/// The baseline: the same CDP work, on a session of its own on the tab, next to the host's.
pub struct Raw<'a> {
    on_tab: RawSession<'a>,
    /// The library installed in the page, as the host keeps it (a handle, until navigation).
    library: std::sync::Mutex<Option<String>>,
}

impl<'a> std::ops::Deref for Raw<'a> {
    type Target = RawSession<'a>;

    fn deref(&self) -> &RawSession<'a> {
        &self.on_tab
    }
}

/// How the host calls its library: by name, awaited, answered as one JSON string.
const CALL: &str = "async function (name, args) { return JSON.stringify(await this()[name](args)); }";

/// Starts the bench's session on `path` (a fixture page), waits for it, and attaches a raw
/// session beside the host's on its tab, with the page and lifecycle events on.
pub async fn open<'h>(h: &'h Harness, path: &str) -> (i64, Raw<'h>) {
    let started = h
        .ok(SESSION, "session_start", json!({ "url": h.url(path) }))
        .await;
    let tab = started["tabId"].as_i64().unwrap();
    h.ok(SESSION, "browser_wait_for_loaded", json!({ "tabId": tab }))
        .await;
    let cdp = h.worker().transport.connection();
    let target = h.worker().transport.target_id(tab).unwrap();
    let raw = Raw::new(RawSession::attach(cdp, &json!(target)).await);
    raw.call("Page.enable", json!({})).await;
    raw.call("Page.setLifecycleEventsEnabled", json!({ "enabled": true }))
        .await;
    (tab, raw)
}

/// `{ "tabId": tab }` with `extra`'s fields.
pub fn on_tab(tab: i64, extra: Value) -> Value {
    let mut params = extra;
    params["tabId"] = json!(tab);
    params
}

impl<'a> Raw<'a> {
    pub fn new(session: RawSession<'a>) -> Self {
        Self {
            on_tab: session,
            library: std::sync::Mutex::default(),
        }
    }

    /// Calls a library function as the host does: on the installed library (installed again
    /// when the page changed), awaited, as one JSON string.
    pub async fn lib(&self, function: &str, args: Value) -> Value {
        let cached = self.library.lock().unwrap().clone();
        if let Some(library) = cached {
            if let Some(answer) = self.call_library(&library, function, &args).await {
                return answer;
            }
        }
        let installed = self
            .call("Runtime.evaluate", json!({ "expression": format!("({LIB_JS})") }))
            .await;
        let library = installed["result"]["objectId"].as_str().unwrap().to_owned();
        *self.library.lock().unwrap() = Some(library.clone());
        self.call_library(&library, function, &args)
            .await
            .expect("the library answers")
    }

    async fn call_library(&self, library: &str, function: &str, args: &Value) -> Option<Value> {
        let params = json!({
            "objectId": library,
            "functionDeclaration": CALL,
            "arguments": [{ "value": function }, { "value": args }],
            "returnByValue": true,
            "awaitPromise": true,
        });
        let reply = self
            .cdp
            .call(Some(&self.on_tab.session), "Runtime.callFunctionOn", params)
            .await
            .ok()?;
        let text = reply.pointer("/result/value")?.as_str()?;
        serde_json::from_str(text).ok()
    }

    /// Navigates, waits for the load event, then reads what a navigate result must report (the
    /// URL, title and HTTP status), as the host does.
    pub async fn navigate(&self, url: &str) {
        self.navigate_only(url).await;
        self.eval(
            "[location.href, document.title, performance.getEntriesByType('navigation')[0].responseStatus]",
        )
        .await;
    }

    pub async fn navigate_only(&self, url: &str) {
        let mut events = self.cdp.subscribe();
        let nav = self.call("Page.navigate", json!({ "url": url })).await;
        let loader = nav["loaderId"].as_str().unwrap().to_owned();
        loop {
            let e = events.recv().await.unwrap();
            if e.session_id.as_deref() == Some(&self.session)
                && e.method == "Page.lifecycleEvent"
                && e.params["name"] == "load"
                && e.params["loaderId"] == loader.as_str()
            {
                return;
            }
        }
    }
}

#[derive(Clone, Copy)]
pub struct Stats {
    pub median: Duration,
    pub p90: Duration,
}

pub async fn measure<F, Fut>(mut op: F) -> Stats
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..3 {
        op().await; // warm-up
    }
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        op().await;
        times.push(start.elapsed());
    }
    stats(times)
}

/// Measures two operations in alternation, so that the machine's drift (other processes, CPU
/// frequency) falls on both alike.
pub async fn compare<A, FA, B, FB>(mut a: A, mut b: B) -> (Stats, Stats)
where
    A: FnMut() -> FA,
    FA: Future<Output = ()>,
    B: FnMut() -> FB,
    FB: Future<Output = ()>,
{
    for _ in 0..3 {
        a().await; // warm-up
        b().await;
    }
    let (mut times_a, mut times_b) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for _ in 0..RUNS {
        let start = Instant::now();
        a().await;
        times_a.push(start.elapsed());
        let start = Instant::now();
        b().await;
        times_b.push(start.elapsed());
    }
    (stats(times_a), stats(times_b))
}

pub fn stats(mut times: Vec<Duration>) -> Stats {
    times.sort();
    Stats {
        median: times[times.len() / 2],
        p90: times[times.len() * 9 / 10],
    }
}

/// The median of a JSON array of milliseconds (what a Node client of a bench prints).
pub fn median_ms(samples: &Value) -> f64 {
    let mut ms: Vec<f64> = samples
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    ms.sort_by(f64::total_cmp);
    ms.get(ms.len() / 2).copied().unwrap_or(f64::NAN)
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn report(name: &str, host: Stats, raw: Stats) {
    println!(
        "{name:<34} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>7.2}x",
        ms(host.median),
        ms(host.p90),
        ms(raw.median),
        ms(raw.p90),
        ms(host.median) / ms(raw.median)
    );
}

/// Runs an action through the host, which must succeed.
pub async fn host(h: &Harness, action: &str, params: Value) {
    let result = h.act(SESSION, action, params.clone()).await;
    assert!(result.is_success(), "{action} {params}: {:?}", result.error);
}

/// The table's header line.
pub fn header() {
    println!(
        "{:<34} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "action (ms)", "host p50", "host p90", "raw p50", "raw p90", "ratio"
    );
}

/// Raw CDP opening a tab on a loaded page: a new tab in a window of its own (as the worker opens
/// a session's tab), attached, `Page.navigate` to `url` and its load event; how long that took.
/// The tab is closed again after the timing.
pub async fn open_loaded_tab(cdp: &CdpConnection, url: &str) -> Duration {
    open_loaded_tab_in(cdp, url, None).await
}

/// The same in browser context `context` (`None`: the default one).
pub async fn open_loaded_tab_in(cdp: &CdpConnection, url: &str, context: Option<&str>) -> Duration {
    let (took, target) = loaded_tab_in(cdp, url, context).await;
    cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
        .await
        .unwrap();
    took
}

/// A tab of raw CDP's own in a window of its own in browser context `context`, `url` loaded
/// in it and left open: how long that took, and the tab's target id.
pub async fn loaded_tab_in(cdp: &CdpConnection, url: &str, context: Option<&str>) -> (Duration, Value) {
    let start = Instant::now();
    let (raw, target) = new_window_in(cdp, context).await;
    let mut events = cdp.subscribe();
    raw.call("Page.enable", json!({})).await;
    raw.call("Page.navigate", json!({ "url": url })).await;
    loop {
        let e = events.recv().await.unwrap();
        if e.session_id.as_deref() == Some(&raw.session) && e.method == "Page.loadEventFired" {
            break;
        }
    }
    (start.elapsed(), target)
}

/// Tether opening a tab on a loaded page: `session_start` and `browser_wait_for_loaded`
/// through `act` (an action's name and params to its result); how long they took. The
/// session is stopped again (its tab closed) after the timing.
pub async fn tether_open<F, Fut>(act: F, url: &str) -> Duration
where
    F: Fn(&'static str, Value) -> Fut,
    Fut: Future<Output = Value>,
{
    let start = Instant::now();
    let tab = act("session_start", json!({ "url": url })).await["tabId"].clone();
    act("browser_wait_for_loaded", json!({ "tabId": tab })).await;
    let took = start.elapsed();
    act("session_stop", json!({})).await;
    took
}

/// A blank tab of raw CDP's own in a window of its own, as the worker opens a session's tab (a
/// background tab of a shared window would not paint, so could not be captured); attached.
pub async fn new_window(cdp: &CdpConnection) -> (RawSession<'_>, Value) {
    new_window_in(cdp, None).await
}

/// The same in browser context `context` (`None`: the default one).
pub async fn new_window_in<'c>(cdp: &'c CdpConnection, context: Option<&str>) -> (RawSession<'c>, Value) {
    let mut params = json!({ "url": "about:blank", "background": true, "newWindow": true });
    if let Some(context) = context {
        params["browserContextId"] = json!(context);
    }
    let created = cdp.call(None, "Target.createTarget", params).await.unwrap();
    let target = created["targetId"].clone();
    (RawSession::attach(cdp, &target).await, target)
}

/// A relay of the bench's own (in this process) with a worker serving it on the harness's
/// Chromium, online: what an orchestrator of a real deployment talks to.
pub struct RelayedWorker {
    pub relay: TestRelay,
    /// The orchestrator's HTTP client, its connections kept alive as a real one's would be.
    pub client: reqwest::Client,
    _worker: tokio::task::JoinHandle<()>,
    _data: tempfile::TempDir,
}

impl std::ops::Deref for RelayedWorker {
    type Target = TestRelay;

    fn deref(&self) -> &TestRelay {
        &self.relay
    }
}

impl RelayedWorker {
    /// `POST /api/browser/action` on the kept-alive client, for an action that must succeed;
    /// its `result`.
    pub async fn ok(&self, session: &str, action: &str, params: Value) -> Value {
        self.relay.ok_on(&self.client, session, action, params).await
    }
}

/// The client id the bench's worker serves the relay as.
pub const BENCH_WORKER: &str = "bench-worker";

pub async fn relayed_worker(h: &Harness) -> RelayedWorker {
    relayed_worker_with(h, |_| {}).await
}

/// The same, the worker's flags set by `configure`.
pub async fn relayed_worker_with(
    h: &Harness,
    configure: impl FnOnce(&mut tether_host::modes::worker::Worker),
) -> RelayedWorker {
    let data = tempfile::tempdir().unwrap();
    let relay = TestRelay::start(data.path(), None);
    let worker = relay.start_worker_with(h.browser_ws(), BENCH_WORKER, configure);
    relay.wait_online(BENCH_WORKER, Duration::from_secs(20)).await;
    RelayedWorker {
        relay,
        client: crate::client::own_http(),
        _worker: worker,
        _data: data,
    }
}
