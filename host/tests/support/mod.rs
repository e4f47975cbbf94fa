//! Extension mode for real: a relay, and a headless Chromium with the extension loaded whose
//! profile has the host registered by `tether-host install` itself. Chromium starts
//! `tether-host` through native messaging when the extension connects; the host joins the
//! relay; tests act through `POST /api/browser/action` as an orchestrator would.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Path as UrlPath;
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tether_host::cdp::connection::CdpConnection;
use tether_host::chromium::{Chromium, LaunchOptions};
use tether_relay::artifacts::{ArtifactStore, Limits};
use tether_relay::config::{Settings, Tokens};
use tether_relay::session_log::SessionLog;
use tether_relay::state::{AppState, Relay};
use tokio_tungstenite::tungstenite::Message;

pub type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub const ORCHESTRATOR: &str = "ext-orchestrator-token";
pub const HOST: &str = "ext-host-token";
/// The extension's id, fixed by the public key in its manifest.
pub const EXTENSION_ID: &str = "eccdmegnppddiconemhgfcncpfpmdggp";
/// The page patterns the host refuses like a control UI.
pub const CONTROL_UI: &str = "/control-ui/";
/// Bound on a host (re)joining: Chromium starts it when the extension connects.
pub const JOIN_WITHIN: Duration = Duration::from_secs(30);

pub struct ExtensionBrowser {
    pub relay: SocketAddr,
    pub fixtures: SocketAddr,
    pub chromium: Chromium,
    pub profile: PathBuf,
    pub client_id: String,
    _dirs: tempfile::TempDir,
}

fn extension_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension")
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

async fn fixture(UrlPath(name): UrlPath<String>) -> Response {
    match std::fs::read_to_string(fixtures_dir().join(name.replace('/', ""))) {
        Ok(text) => Html(text).into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn stall() -> Response {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    ([(header::CONTENT_TYPE, "image/png")], Vec::<u8>::new()).into_response()
}

pub async fn serve_fixtures() -> SocketAddr {
    let app = Router::new()
        .route("/fixtures/{name}", get(fixture))
        .route("/control-ui/{name}", get(fixture))
        .route(
            "/never-loads",
            get(|| async { Html("<!doctype html><title>Never loads</title><img src=\"/stall\">") }),
        )
        .route("/stall", get(stall));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

pub async fn start_relay(data: &Path) -> SocketAddr {
    let tokens = Tokens {
        orchestrator: ORCHESTRATOR.into(),
        host: HOST.into(),
    };
    let artifacts = ArtifactStore::open(data, Limits::default()).unwrap();
    let log = SessionLog::new(data).unwrap();
    let relay = Relay::new(Settings::default(), tokens, artifacts, log);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = AppState(Arc::new(relay));
    tokio::spawn(tether_relay::server::serve(
        listener,
        state,
        std::future::pending(),
    ));
    addr
}

/// `POST /api/browser/action` on `relay` with the orchestrator's token; the result payload.
pub async fn post_action(relay: &str, body: Value) -> Value {
    let response = reqwest::Client::new()
        .post(format!("http://{relay}/api/browser/action"))
        .bearer_auth(ORCHESTRATOR)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    response.json().await.unwrap()
}

/// A GET on `relay` with the orchestrator's token, as JSON.
pub async fn get_json(relay: &str, path: &str) -> Value {
    reqwest::Client::new()
        .get(format!("http://{relay}{path}"))
        .bearer_auth(ORCHESTRATOR)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// An orchestrator's socket on `relay`, subscribed to every event.
pub async fn subscribed_to_all(relay: &str) -> Ws {
    let url = format!("ws://{relay}/ws?token={ORCHESTRATOR}");
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    for (kind, payload) in [
        ("relay.join", json!({ "role": "orchestrator" })),
        ("subscribe", json!({})),
    ] {
        let text = json!({ "v": "1", "type": kind, "id": kind, "payload": payload }).to_string();
        ws.send(Message::Text(text.into())).await.unwrap();
    }
    ws
}

/// Waits (bounded) for `client.online` of `client_id` on a socket subscribed before the host
/// could have joined.
pub async fn client_online(mut ws: Ws, client_id: &str) {
    let wait = async {
        while let Some(Ok(message)) = ws.next().await {
            let envelope: Value = serde_json::from_str(message.to_text().unwrap()).unwrap();
            if envelope["type"] == "client.online" && envelope["payload"]["clientId"] == client_id {
                return;
            }
        }
        panic!("the relay closed the connection");
    };
    tokio::time::timeout(Duration::from_secs(60), wait)
        .await
        .expect("the host joined the relay");
}

impl ExtensionBrowser {
    pub async fn launch() -> Self {
        let dirs = tempfile::tempdir().unwrap();
        let profile = dirs.path().join("profile");
        let home = dirs.path().join("home");
        let fixtures = serve_fixtures().await;
        let relay = start_relay(&dirs.path().join("relay")).await;
        // The real install, into the test's own profile and config dirs (and a throwaway HOME
        // for the per-browser folders it also writes).
        let control_ui = format!("http://{fixtures}{CONTROL_UI}*");
        let installed = Command::new(env!("CARGO_BIN_EXE_tether-host"))
            .args(["install", "--extension-id", EXTENSION_ID, "--relay"])
            .arg(format!("ws://{relay}"))
            .args([
                "--token",
                HOST,
                "--browser",
                "chromium",
                "--forbid-url",
                &control_ui,
            ])
            .arg("--manifest-dir")
            .arg(profile.join("NativeMessagingHosts"))
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", profile.join("config"))
            .output()
            .unwrap();
        assert!(installed.status.success(), "{installed:?}");
        let options = LaunchOptions {
            extra_args: vec![format!("--load-extension={}", extension_dir().display())],
            user_data_dir: Some(profile.clone()),
            ..LaunchOptions::default()
        };
        let chromium = Chromium::launch(&options)
            .await
            .expect("launch Chromium (install it: apt-get install chromium)");
        let mut browser = Self {
            relay,
            fixtures,
            chromium,
            profile,
            client_id: String::new(),
            _dirs: dirs,
        };
        browser.client_id = browser.wait_for_extension_host().await;
        browser.wait_for_twin().await;
        browser
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.fixtures)
    }

    /// An orchestrator's socket, subscribed to `filter` (`{}`: everything).
    async fn subscribed(&self, filter: Value) -> Ws {
        let url = format!("ws://{}/ws?token={ORCHESTRATOR}", self.relay);
        let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let say = |kind: &str, payload: Value| {
            let text = json!({ "v": "1", "type": kind, "id": kind, "payload": payload }).to_string();
            Message::Text(text.into())
        };
        ws.send(say("relay.join", json!({ "role": "orchestrator" })))
            .await
            .unwrap();
        ws.send(say("subscribe", filter)).await.unwrap();
        ws
    }

    /// Waits (bounded) until `ready` gives an answer: asked once subscribed to `filter`, then
    /// again after each event, so a change in between is never missed.
    async fn wait_until<T, F, Fut>(&self, filter: Value, ready: F) -> T
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Option<T>>,
    {
        let mut ws = self.subscribed(filter).await;
        let wait = async {
            while let Some(Ok(_)) = ws.next().await {
                if let Some(answer) = ready().await {
                    return answer;
                }
            }
            panic!("the relay closed the connection");
        };
        tokio::time::timeout(JOIN_WITHIN, wait)
            .await
            .expect("the browser did not get there in time")
    }

    /// Waits until the browser has reported its tabs to the relay.
    pub async fn wait_for_twin(&self) {
        let filter = json!({ "clientId": self.client_id });
        self.wait_until(filter, || async {
            let twin = self.get(&format!("/api/twin/{}", self.client_id)).await;
            twin["version"].as_u64().is_some_and(|v| v > 0).then_some(())
        })
        .await
    }

    /// Waits until a host in extension mode is online; returns its clientId.
    pub async fn wait_for_extension_host(&self) -> String {
        self.wait_until(json!({}), || self.online_extension_host()).await
    }

    /// Waits until the browser `client_id` is online.
    pub async fn wait_for_client(&self, client_id: &str) {
        self.wait_until(json!({}), || async {
            let list = self.get("/api/extension/extension-list").await;
            let clients = list["clients"].as_array().cloned().unwrap_or_default();
            clients
                .iter()
                .any(|c| c["clientId"] == client_id && c["online"] == true)
                .then_some(())
        })
        .await
    }

    async fn online_extension_host(&self) -> Option<String> {
        let list = self.get("/api/extension/extension-list").await;
        list["clients"]
            .as_array()?
            .iter()
            .find(|c| c["online"] == true && c["meta"]["mode"] == "extension")
            .and_then(|c| c["clientId"].as_str())
            .map(str::to_owned)
    }

    pub async fn get(&self, path: &str) -> Value {
        get_json(&self.relay.to_string(), path).await
    }

    /// `POST /api/browser/action`; the result payload.
    pub async fn act(&self, session: &str, action: &str, params: Value) -> Value {
        self.act_on(session, None, action, params).await
    }

    /// The same, on a browser named by its clientId.
    pub async fn act_on(&self, session: &str, client: Option<&str>, action: &str, params: Value) -> Value {
        let mut body = json!({ "sessionId": session, "actionName": action, "params": params });
        if let Some(client) = client {
            body["clientId"] = json!(client);
        }
        post_action(&self.relay.to_string(), body).await
    }

    pub async fn ok(&self, session: &str, action: &str, params: Value) -> Value {
        let result = self.act(session, action, params.clone()).await;
        assert_eq!(result["status"], "success", "{action} {params}: {result}");
        result["result"].clone()
    }

    /// The extension's service worker target.
    pub async fn service_worker_target(&self, cdp: &CdpConnection) -> Value {
        let targets = cdp.call(None, "Target.getTargets", json!({})).await.unwrap();
        let prefix = format!("chrome-extension://{EXTENSION_ID}/");
        targets["targetInfos"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| {
                t["type"] == "service_worker" && t["url"].as_str().unwrap_or_default().starts_with(&prefix)
            })
            .expect("the extension's service worker")["targetId"]
            .clone()
    }

    /// A CDP session on the extension's service worker, as DevTools would open one.
    pub async fn service_worker(&self) -> (CdpConnection, String) {
        let cdp = CdpConnection::connect(self.chromium.ws_url()).await.unwrap();
        let target = self.service_worker_target(&cdp).await;
        let attached = cdp
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target, "flatten": true }),
            )
            .await
            .unwrap();
        let session = attached["sessionId"].as_str().unwrap().to_owned();
        (cdp, session)
    }

    /// The pids of `tether-host` processes this Chromium started for the extension.
    pub fn host_pids(&self) -> Vec<i32> {
        let origin = format!("chrome-extension://{EXTENSION_ID}/");
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|entry| {
                let pid: i32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
                let is_host =
                    args.first()?.ends_with(b"tether-host") && args.get(1) == Some(&origin.as_bytes());
                // This browser's own hosts: other test binaries run browsers of their own.
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let parent: i32 = stat.rsplit(')').next()?.split_whitespace().nth(1)?.parse().ok()?;
                (is_host && parent == self.chromium.pid()).then_some(pid)
            })
            .collect()
    }
}

/// Downloads an artifact by the URL a result carries, with no token.
pub async fn download(url: &str) -> (String, Vec<u8>) {
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status().as_u16(), 200, "{url}");
    let kind = response.headers()["content-type"].to_str().unwrap().to_owned();
    (kind, response.bytes().await.unwrap().to_vec())
}
