//! A relay for cross-component tests, on a runtime of its own so a test can kill it the way a
//! crash would (every socket drops at once) and start another on the same port and data dir.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};
use tether_relay::config::{Settings, Tokens};
use tether_relay::core::state::{AppState, Relay};
use tether_relay::server::serve;
use tether_relay::stores::artifacts::Limits;
use tokio::runtime::Runtime;

use tether_host::modes::worker::{BrowserAt, Worker};

use crate::{client, Harness};

pub use crate::tokens::{HOST, METRICS, OBSERVER, ORCHESTRATOR};

fn tokens() -> Tokens {
    Tokens {
        orchestrator: ORCHESTRATOR.into(),
        host: HOST.into(),
        observer: OBSERVER.into(),
        metrics: METRICS.into(),
        bound: Default::default(),
    }
}

/// Starts a relay on the caller's runtime, on a free port, keeping its data in a fresh dir
/// (kept after the test, for a look); its address and data dir.
pub async fn serve_here(settings: Settings, limits: Limits) -> (SocketAddr, PathBuf) {
    let data = tempfile::tempdir().expect("a data dir").keep();
    let relay = Relay::open(settings, tokens(), &data, limits).expect("open the relay's data dir");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the relay");
    let addr = listener.local_addr().expect("the relay's address");
    tokio::spawn(serve(listener, AppState(Arc::new(relay)), std::future::pending()));
    (addr, data)
}

pub struct TestRelay {
    api: RelayApi,
    pub data: PathBuf,
    runtime: Option<Runtime>,
}

impl std::ops::Deref for TestRelay {
    type Target = RelayApi;

    fn deref(&self) -> &RelayApi {
        &self.api
    }
}

/// What a test does with a running relay, wherever it runs: its HTTP API, its events, and a
/// worker serving it.
pub struct RelayApi {
    pub addr: SocketAddr,
}

impl TestRelay {
    /// Starts a relay on `addr` (a free port when `None`) keeping its data in `data`.
    pub fn start(data: &Path, addr: Option<SocketAddr>) -> Self {
        Self::start_with(data, addr, Limits::default())
    }

    /// The same, with artifact store limits of its own.
    pub fn start_with(data: &Path, addr: Option<SocketAddr>, limits: Limits) -> Self {
        Self::start_configured(data, addr, Settings::default(), limits)
    }

    /// The same, with settings of its own.
    pub fn start_configured(
        data: &Path,
        addr: Option<SocketAddr>,
        settings: Settings,
        limits: Limits,
    ) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("relay runtime");
        let relay = Relay::open(settings, tokens(), data, limits).expect("open the relay's data dir");
        let want = addr.unwrap_or_else(|| "127.0.0.1:0".parse().unwrap());
        // Bound here (std sets SO_REUSEADDR on Unix, so a restart can take the port again) and
        // served on the relay's own runtime: the caller may itself be on a runtime.
        let listener = std::net::TcpListener::bind(want).expect("bind the relay");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let _ = serve(listener, AppState(Arc::new(relay)), std::future::pending()).await;
        });
        Self {
            api: RelayApi { addr },
            data: data.to_owned(),
            runtime: Some(runtime),
        }
    }

    /// Stops the relay at once, as a crash would: every connection drops.
    pub async fn kill(mut self) {
        if let Some(runtime) = self.runtime.take() {
            tokio::task::spawn_blocking(move || runtime.shutdown_timeout(Duration::from_secs(5)))
                .await
                .unwrap();
        }
    }
}

impl RelayApi {
    /// Serves this relay with a worker wired exactly as the `worker` command wires it, on the
    /// harness's Chromium (as `--browser-ws`), as the browser `client_id`.
    pub fn start_worker(&self, harness: &Harness, client_id: &str) -> tokio::task::JoinHandle<()> {
        self.start_worker_on(harness.browser_ws(), client_id)
    }

    /// The same on the browser at `browser_ws`.
    pub fn start_worker_on(&self, browser_ws: &str, client_id: &str) -> tokio::task::JoinHandle<()> {
        self.start_worker_with(browser_ws, client_id, |_| {})
    }

    /// The same, with its flags set by `configure` (its `--secrets`, `--no-page-log`).
    pub fn start_worker_with(
        &self,
        browser_ws: &str,
        client_id: &str,
        configure: impl FnOnce(&mut Worker),
    ) -> tokio::task::JoinHandle<()> {
        let mut worker = Worker {
            browser: BrowserAt::Ws(browser_ws.to_owned()),
            relay: format!("ws://{}", self.addr),
            token: HOST.into(),
            client_id: client_id.into(),
            forbid_urls: Vec::new(),
            ca_file: None,
            allow_evaluate: false,
            allow_file_urls: false,
            no_page_log: false,
            secrets: Default::default(),
            data_dir: None,
        };
        configure(&mut worker);
        tokio::spawn(async move {
            let outcome = worker.serve().await;
            panic!("the worker stopped: {outcome:?}");
        })
    }

    pub fn http(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// `POST /api/browser/action`; the result payload.
    pub async fn act(&self, session: &str, action: &str, params: Value) -> Value {
        self.post(json!({ "sessionId": session, "actionName": action, "params": params }))
            .await
    }

    /// `POST /api/browser/action` with a whole payload (a clientId, an actionId...).
    pub async fn post(&self, body: Value) -> Value {
        self.post_on(crate::client::http(), body).await
    }

    /// The same on `client` (a bench's kept-alive one).
    pub async fn post_on(&self, client: &reqwest::Client, body: Value) -> Value {
        let response = client
            .post(self.http("/api/browser/action"))
            .bearer_auth(ORCHESTRATOR)
            .json(&body)
            .send()
            .await
            .expect("POST /api/browser/action");
        assert_eq!(response.status().as_u16(), 200);
        response.json().await.expect("a result payload")
    }

    /// Like [`Self::act`], for an action that must succeed; its `result`.
    pub async fn ok(&self, session: &str, action: &str, params: Value) -> Value {
        self.ok_on(crate::client::http(), session, action, params).await
    }

    /// The same on `client` (a bench's kept-alive one).
    pub async fn ok_on(&self, client: &reqwest::Client, session: &str, action: &str, params: Value) -> Value {
        let body = json!({ "sessionId": session, "actionName": action, "params": params.clone() });
        let result = self.post_on(client, body).await;
        assert_eq!(result["status"], "success", "{action} {params}: {result}");
        result["result"].clone()
    }

    /// A GET with the orchestrator token, as JSON.
    pub async fn get(&self, path: &str) -> Value {
        crate::client::http()
            .get(self.http(path))
            .bearer_auth(ORCHESTRATOR)
            .send()
            .await
            .expect("GET")
            .json()
            .await
            .expect("JSON")
    }

    /// A GET with the orchestrator token: the status and the body as text.
    pub async fn get_text(&self, path: &str) -> (u16, String) {
        let response = crate::client::http()
            .get(self.http(path))
            .bearer_auth(ORCHESTRATOR)
            .send()
            .await
            .expect("GET");
        let status = response.status().as_u16();
        (status, response.text().await.expect("a body"))
    }

    /// Waits until the browser `client_id` is online, bounded by `limit`.
    pub async fn wait_online(&self, client_id: &str, limit: Duration) {
        let filter = json!({ "clientId": client_id });
        self.wait_until(filter, limit, || async {
            let list = self.get("/api/extension/extension-list").await;
            list["clients"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["clientId"] == client_id && c["online"] == true)
                .then_some(())
        })
        .await
    }

    /// Waits until the browser `client_id` has reported its tabs, bounded by `limit`.
    pub async fn wait_twin(&self, client_id: &str, limit: Duration) {
        let filter = json!({ "clientId": client_id });
        self.wait_until(filter, limit, || async {
            let twin = self.get(&format!("/api/twin/{client_id}")).await;
            twin["version"].as_u64().is_some_and(|v| v > 0).then_some(())
        })
        .await
    }

    /// Waits (bounded by `limit`) until `ready` gives an answer: asked once subscribed to
    /// `filter`, then again after each event, so a change in between is never missed.
    pub async fn wait_until<T, F, Fut>(&self, filter: Value, limit: Duration, ready: F) -> T
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Option<T>>,
    {
        let wait = async {
            let mut ws = client::subscribed(&self.addr.to_string(), filter).await;
            loop {
                if let Some(answer) = ready().await {
                    return answer;
                }
                match ws.next().await {
                    Some(Ok(_)) => {}
                    _ => panic!("the relay closed the connection"),
                }
            }
        };
        tokio::time::timeout(limit, wait)
            .await
            .unwrap_or_else(|_| panic!("not there within {limit:?}"))
    }
}

impl Drop for TestRelay {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
