//! Shared harness for the cross-component tests: one headless Chromium and one engine per test
//! binary (tests run in parallel, each in its own session and tab), and a fixture server on
//! 127.0.0.1 serving `tests/fixtures/` plus a few generated pages.

pub mod fixtures;
pub mod relay;

use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use serde_json::{json, Value};
use tether_host::artifacts::LocalDirSink;
use tether_host::cdp::worker::WorkerTransport;
use tether_host::cdp::Transport;
use tether_host::chromium::{Chromium, LaunchOptions};
use tether_host::policy::Policy;
use tether_host::Engine;
use tether_protocol::actions::TabId;
use tether_protocol::result::ResultStatus;
use tether_protocol::{ActionError, ActionName, ActionResult, ErrorCode};
use tokio::runtime::Runtime;
use tokio::sync::OnceCell;

/// A page pattern the harness treats as the control UI, to test `FORBIDDEN_TARGET`.
pub const CONTROL_UI_PATH: &str = "/control-ui/";

/// Each test's bound on one action; generous, since a loaded 2-core machine is slow.
const ACTION_TIMEOUT: Duration = Duration::from_secs(30);

// One runtime for the whole binary: the browser connection's tasks live on it, so they outlive
// any one test.
static RUNTIME: LazyLock<Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("test runtime")
});

static HARNESS: OnceCell<Harness> = OnceCell::const_new();

/// Runs one test body on the shared runtime.
pub fn run<F, Fut>(test: F)
where
    F: FnOnce(&'static Harness) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    RUNTIME.block_on(async {
        let harness = HARNESS.get_or_init(Harness::launch).await;
        // Spawned, so a panic fails this test only, and the body runs on the runtime's threads.
        let outcome = tokio::spawn(test(harness)).await;
        if let Err(e) = outcome {
            std::panic::resume_unwind(e.into_panic());
        }
    });
}

pub struct Harness {
    pub engine: Engine,
    /// The tab Chromium opened at launch, in the foreground: it stands for the user's own tab.
    pub user_tab: TabId,
    pub transport: Arc<WorkerTransport>,
    pub server: fixtures::Server,
    pub artifact_dir: PathBuf,
    // Kept alive for the binary's lifetime; the parent-death signal ends it with the process.
    chromium: Chromium,
}

impl Harness {
    /// Starts the fixture server and a headless Chromium, and wires an engine to them.
    pub async fn launch() -> Self {
        // RUST_LOG=tether_host=debug shows the CDP traffic of a failing test.
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
        let server = fixtures::Server::start().await;
        let chromium = Chromium::launch(&LaunchOptions::default())
            .await
            .expect("launch Chromium (install it: apt-get install chromium)");
        let transport = Arc::new(
            WorkerTransport::connect(chromium.ws_url())
                .await
                .expect("connect to Chromium"),
        );
        let user_tab = transport.tabs().await.expect("list tabs")[0].tab_id;
        transport
            .attach(user_tab)
            .await
            .expect("attach to the user's tab");
        let artifact_dir = std::env::temp_dir().join(format!("tether-test-artifacts-{}", std::process::id()));
        let sink = LocalDirSink::new(&artifact_dir).expect("artifact dir");
        let control_ui = format!("{}{}*", server.origin(), CONTROL_UI_PATH);
        let policy = Policy::new(&[control_ui]).expect("policy");
        let engine = Engine::new(transport.clone(), Arc::new(sink), policy, "test-client");
        Self {
            engine,
            user_tab,
            transport,
            server,
            artifact_dir,
            chromium,
        }
    }

    /// The shared browser's endpoint, for a second client (a worker) of the same Chromium.
    pub fn browser_ws(&self) -> &str {
        self.chromium.ws_url()
    }

    /// A fixture page's URL.
    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    /// A URL on 127.0.0.1 where nothing listens: connections to it are refused.
    pub fn refused_url(&self) -> String {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        format!("http://127.0.0.1:{port}/")
    }

    /// Runs one action and returns its whole result payload.
    pub async fn act(&self, session: &str, action: &str, params: Value) -> ActionResult {
        self.engine
            .execute_within(ACTION_TIMEOUT, "test", session, action, params)
            .await
    }

    /// Runs one action that must succeed, returning its `result`, which must be what the
    /// action's descriptor promises.
    pub async fn ok(&self, session: &str, action: &str, params: Value) -> Value {
        let result = self.act(session, action, params.clone()).await;
        assert_eq!(
            result.status,
            ResultStatus::Success,
            "{action} {params} failed: {:?}",
            result.error
        );
        let result = result.result.expect("a successful result carries `result`");
        let name: ActionName = action.parse().expect("a catalog action");
        if let Err(e) = name.descriptor().check_result(&result) {
            panic!("{e}");
        }
        result
    }

    /// Runs one action that must fail, returning its error.
    pub async fn err(&self, session: &str, action: &str, params: Value) -> ActionError {
        let result = self.act(session, action, params.clone()).await;
        assert_eq!(
            result.status,
            ResultStatus::Error,
            "{action} {params} should have failed but returned {:?}",
            result.result
        );
        result.error.expect("a failed result carries `error`")
    }

    /// Runs one action that must fail with `code`, returning its error.
    pub async fn fails_with(
        &self,
        code: ErrorCode,
        session: &str,
        action: &str,
        params: Value,
    ) -> ActionError {
        let error = self.err(session, action, params).await;
        assert_eq!(error.code, code, "unexpected error: {}", error.message);
        error
    }

    /// Starts `session` on a fixture page; returns the session's tab.
    pub async fn start(&self, session: &str, path: &str) -> TabId {
        let started = self
            .ok(session, "session_start", json!({ "url": self.url(path) }))
            .await;
        let tab = started["tabId"].as_i64().expect("tabId");
        self.ok(session, "browser_wait_for_loaded", json!({ "tabId": tab }))
            .await;
        tab
    }

    /// Evaluates an expression in the tab to observe what the page did (not through Tether's
    /// actions, so an assertion cannot be fooled by the code under test).
    pub async fn eval(&self, tab: TabId, expression: &str) -> Value {
        let reply = self
            .transport
            .send(
                tab,
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
            )
            .await
            .expect("Runtime.evaluate");
        assert!(
            reply.get("exceptionDetails").is_none(),
            "{expression} threw: {reply}"
        );
        reply.pointer("/result/value").cloned().unwrap_or(Value::Null)
    }

    /// Reads an artifact back from its `file://` URL.
    pub fn artifact(&self, result: &Value) -> Vec<u8> {
        let url = result["url"].as_str().expect("artifact url");
        let path = url.strip_prefix("file://").expect("a file:// artifact url");
        assert!(
            path.starts_with(self.artifact_dir.to_str().unwrap()),
            "{path} is outside the artifact dir"
        );
        std::fs::read(path).expect("artifact file")
    }
}
