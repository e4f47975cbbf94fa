//! Extension mode for real: a relay, and a headless Chromium with the extension loaded whose
//! profile has the host registered by `tether-host install` itself. Chromium starts
//! `tether-host` through native messaging when the extension connects; the host joins the
//! relay; tests act through `POST /api/browser/action` as an orchestrator would, and look at
//! pages through a CDP connection of their own (never through Tether's actions).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};
use tether_host::browser::chromium::{Chromium, Debugging, LaunchOptions};
use tether_host::cdp::connection::CdpConnection;
use tether_protocol::actions::TabId;
use tether_protocol::ActionName;
use tokio::sync::Mutex;

use crate::binary;
use crate::cdp::RawSession;
use crate::fixtures;
use crate::relay::{TestRelay, HOST};

/// The extension's id, fixed by the public key in its manifest.
pub const EXTENSION_ID: &str = "eccdmegnppddiconemhgfcncpfpmdggp";
/// The page patterns the host refuses like a control UI.
pub const CONTROL_UI: &str = "/control-ui/";
/// Bound on a host (re)joining: Chromium starts it when the extension connects.
pub const JOIN_WITHIN: Duration = Duration::from_secs(30);

pub struct ExtensionBrowser {
    pub relay: TestRelay,
    pub fixtures: fixtures::Server,
    pub chromium: Chromium,
    pub profile: PathBuf,
    pub client_id: String,
    /// For looking at pages: the debugger target of each tab, and the session attached to it.
    observer: Mutex<Option<Observer>>,
    _dirs: tempfile::TempDir,
}

struct Observer {
    cdp: CdpConnection,
    service_worker: String,
    sessions: HashMap<TabId, String>,
}

fn extension_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension")
}

impl ExtensionBrowser {
    pub async fn launch() -> Self {
        Self::launch_with(&binary("tether-host")).await
    }

    /// The same, installing the host binary at `host`.
    pub async fn launch_with(host: &Path) -> Self {
        let dirs = tempfile::tempdir().unwrap();
        let profile = dirs.path().join("profile");
        let home = dirs.path().join("home");
        let fixtures = fixtures::Server::start().await;
        let relay = TestRelay::start(&dirs.path().join("relay"), None);
        // The real install, into the test's own profile and config dirs (and a throwaway HOME
        // for the per-browser folders it also writes).
        let control_ui = format!("{}{CONTROL_UI}*", fixtures.origin());
        let installed = Command::new(host)
            .args(["install", "--extension-id", EXTENSION_ID, "--relay"])
            .arg(format!("ws://{}", relay.addr))
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
        // The person's download folder is the test's own, not the HOME of whoever runs it.
        let preferences = json!({
            "download": { "default_directory": dirs.path().join("downloads"), "prompt_for_download": false }
        });
        std::fs::create_dir_all(profile.join("Default")).unwrap();
        std::fs::write(profile.join("Default/Preferences"), preferences.to_string()).unwrap();
        // Without the "started debugging this browser" infobar: Chromium slides it into each
        // debugged tab, and again at moments of its own, resizing the viewport under a test's
        // screenshot (a 665-pixel shot between two 657-pixel layouts, one run in three). A
        // person's browser shows it; nothing Tether does depends on it.
        let options = LaunchOptions {
            extra_args: vec![
                format!("--load-extension={}", extension_dir().display()),
                "--silent-debugger-extension-api".into(),
            ],
            user_data_dir: Some(profile.clone()),
            // The test looks at the person's browser with CDP clients of its own.
            debugging: Debugging::Port,
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
            observer: Mutex::new(None),
            _dirs: dirs,
        };
        browser.client_id = browser.wait_for_extension_host().await;
        browser.check_catalog(host).await;
        browser.wait_for_twin().await;
        browser
    }

    /// A `tether-host` built before the catalog last changed would fail tests confusingly
    /// (`UNKNOWN_ACTION`): its join names its actions, so say what to rebuild instead.
    async fn check_catalog(&self, host: &Path) {
        let list = self.get("/api/extension/extension-list").await;
        let actions = list["clients"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["clientId"] == self.client_id.as_str())
            .map(|c| c["meta"]["actions"].clone())
            .unwrap_or_default();
        let missing: Vec<&str> = ActionName::ALL
            .iter()
            .map(|a| a.as_str())
            .filter(|name| !actions.as_array().into_iter().flatten().any(|a| a == name))
            .collect();
        assert!(
            missing.is_empty(),
            "{} is older than this test ({missing:?} missing): cargo build -p tether-host, or cargo test --workspace",
            host.display()
        );
    }

    pub fn url(&self, path: &str) -> String {
        self.fixtures.url(path)
    }

    /// Waits until the browser has reported its tabs to the relay.
    /// The browser's DevTools endpoint, for the test's own CDP clients.
    pub fn ws_url(&self) -> &str {
        self.chromium.ws_url().expect("launched with a port")
    }

    pub async fn wait_for_twin(&self) {
        self.relay.wait_twin(&self.client_id, JOIN_WITHIN).await
    }

    /// Waits until a host in extension mode is online; returns its clientId.
    pub async fn wait_for_extension_host(&self) -> String {
        self.relay
            .wait_until(json!({}), JOIN_WITHIN, || self.online_extension_host())
            .await
    }

    /// Waits until the browser `client_id` is online.
    pub async fn wait_for_client(&self, client_id: &str) {
        self.relay.wait_online(client_id, JOIN_WITHIN).await
    }

    /// Serves this browser's relay with an in-process worker on this same browser too, as
    /// `client_id`, once it is online: worker mode beside extension mode, for benches.
    pub async fn serve_worker(&self, client_id: &str) {
        // The worker lives as long as the runtime: its handle is not needed.
        drop(self.relay.start_worker_on(self.ws_url(), client_id));
        self.wait_for_client(client_id).await;
    }

    /// `act_on` that must succeed: the result payload.
    pub async fn ok_on(&self, session: &str, client: &str, action: &str, params: Value) -> Value {
        let answer = self.act_on(session, Some(client), action, params).await;
        assert_eq!(answer["status"], "success", "{action}: {answer}");
        answer["result"].clone()
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
        self.relay.get(path).await
    }

    /// `POST /api/browser/action`; the result payload.
    pub async fn act(&self, session: &str, action: &str, params: Value) -> Value {
        self.relay.act(session, action, params).await
    }

    /// The same, on a browser named by its clientId.
    pub async fn act_on(&self, session: &str, client: Option<&str>, action: &str, params: Value) -> Value {
        let mut body = json!({ "sessionId": session, "actionName": action, "params": params });
        if let Some(client) = client {
            body["clientId"] = json!(client);
        }
        self.relay.post(body).await
    }

    pub async fn ok(&self, session: &str, action: &str, params: Value) -> Value {
        self.relay.ok(session, action, params).await
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
        let cdp = CdpConnection::connect(self.ws_url()).await.unwrap();
        let target = self.service_worker_target(&cdp).await;
        let session = RawSession::attach(&cdp, &target).await.session;
        (cdp, session)
    }

    /// Evaluates an expression in a tab (by its `chrome.tabs` id), through a CDP session of
    /// the test's own: the extension's service worker names the tab's debugger target.
    pub async fn eval(&self, tab: TabId, expression: &str) -> Value {
        // Bounded: a page promise that never settles fails the test, not the run.
        tokio::time::timeout(crate::EVAL_LIMIT, self.eval_unbounded(tab, expression))
            .await
            .unwrap_or_else(|_| panic!("{expression} did not settle within {:?}", crate::EVAL_LIMIT))
    }

    async fn eval_unbounded(&self, tab: TabId, expression: &str) -> Value {
        let mut guard = self.observer.lock().await;
        if guard.is_none() {
            let (cdp, service_worker) = self.service_worker().await;
            *guard = Some(Observer {
                cdp,
                service_worker,
                sessions: HashMap::new(),
            });
        }
        let observer = guard.as_mut().expect("just set");
        if !observer.sessions.contains_key(&tab) {
            let find = format!(
                "chrome.debugger.getTargets().then(ts => ts.find(t => t.tabId === {tab})?.id ?? null)"
            );
            let worker = RawSession {
                cdp: &observer.cdp,
                session: observer.service_worker.clone(),
            };
            let target = worker.eval_checked(&find).await;
            assert!(target.is_string(), "tab {tab} has no debugger target");
            let session = RawSession::attach(&observer.cdp, &target).await.session;
            observer.sessions.insert(tab, session);
        }
        let page = RawSession {
            cdp: &observer.cdp,
            session: observer.sessions[&tab].clone(),
        };
        page.eval_checked(expression).await
    }

    /// Sets the owner's "let agents run their own JavaScript" option as the popup does, and
    /// waits (bounded) until the host reports it applied it.
    pub async fn allow_evaluate(&self, allowed: bool) {
        self.set_owner_setting("allowEvaluate", json!(allowed)).await;
    }

    /// Sets the owner's "let agents save and load logins" as the popup does, and waits until
    /// the host applies it.
    pub async fn allow_storage_state(&self, allowed: bool) {
        self.set_owner_setting("allowStorageState", json!(allowed)).await;
    }

    /// Sets the owner's blocked sites as the popup does, and waits until the host applies them.
    pub async fn block_sites(&self, patterns: &[&str]) {
        self.set_owner_setting("blockedSites", json!(patterns)).await;
    }

    /// Sets the owner's "ask me before every action" as the popup does, and waits until the
    /// host applies it.
    pub async fn confirm_every_action(&self, every: bool) {
        self.set_owner_setting("confirmEveryAction", json!(every)).await;
    }

    /// Writes one of the owner's settings where the popup keeps them (chrome.storage), and
    /// waits (bounded) until the host's status reports the same value.
    async fn set_owner_setting(&self, key: &str, value: Value) {
        let (cdp, service_worker) = self.service_worker().await;
        let worker = RawSession {
            cdp: &cdp,
            session: service_worker,
        };
        let applied = format!(
            "chrome.storage.local.set({{ {key}: {value} }}).then(() => new Promise(done => {{ \
               const check = () => JSON.stringify(tetherState().{key}) === JSON.stringify({value}) ? done(true) : setTimeout(check, 10); check(); }}))"
        );
        let wait = worker.eval_checked(&applied);
        tokio::time::timeout(JOIN_WITHIN, wait)
            .await
            .unwrap_or_else(|_| panic!("the host applied the owner's {key}"));
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
                let parent: u32 = stat.rsplit(')').next()?.split_whitespace().nth(1)?.parse().ok()?;
                (is_host && parent == self.chromium.pid()).then_some(pid)
            })
            .collect()
    }
}
