//! The test kit every crate's tests and benches share: one headless Chromium per test binary
//! and mode (tests run in parallel, each in its own session and tab), a fixture server on
//! 127.0.0.1 serving `tests/fixtures/` plus a few generated pages, the relay as `main` starts
//! it (`relay`), an orchestrator's client (`client`), and the extension-mode browser
//! (`extension`).
//!
//! The catalog's behaviour tests run through a [`Harness`] in both modes: [`run`] runs a test
//! body against a worker's engine (worker mode), then through a relay and the real extension in
//! a Chromium that started `tether-host` over native messaging (extension mode). Tests of what
//! only one mode has use [`run_worker`].

pub mod bench;
pub mod cdp;
pub mod client;
pub mod extension;
pub mod fixtures;
pub mod mcp;
pub mod nats;
pub mod person;
pub mod playwright;
pub mod process;
pub mod proxy;
pub mod relay;
pub mod timing;
pub mod tokens;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use serde_json::{json, Value};
use tether_host::browser::chromium::{Chromium, Debugging, LaunchOptions};
use tether_host::cdp::worker::WorkerTransport;
use tether_host::cdp::Transport;
use tether_host::engine::policy::Policy;
use tether_host::parts::artifacts::LocalDir;
use tether_host::Engine;
use tether_protocol::actions::TabId;
use tether_protocol::result::ResultStatus;
use tether_protocol::{ActionError, ActionName, ActionResult, ErrorCode};
use tokio::runtime::Runtime;
use tokio::sync::OnceCell;

use extension::ExtensionBrowser;

/// A page pattern the harness treats as the control UI, to test `FORBIDDEN_TARGET`.
pub const CONTROL_UI_PATH: &str = extension::CONTROL_UI;

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

static WORKER: OnceCell<Harness> = OnceCell::const_new();
static EXTENSION: OnceCell<Harness> = OnceCell::const_new();

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The host's engine on a Chromium of its own, over CDP.
    Worker,
    /// The user's browser: relay, `tether-host` started by Chromium, the extension.
    Extension,
}

/// Runs `work` on the kit's runtime: for benches, and tests that manage their own browser.
pub fn block_on<F: Future>(work: F) -> F::Output {
    RUNTIME.block_on(work)
}

/// Runs one test body in both modes, worker mode first.
pub fn run<F, Fut>(test: F)
where
    F: Fn(&'static Harness) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    run_in(Mode::Worker, &test);
    run_in(Mode::Extension, &test);
}

/// How long a test's own look into a page may take.
pub(crate) const EVAL_LIMIT: Duration = Duration::from_secs(60);

/// Runs one test body in worker mode only: for what only a worker has (its transport, its
/// engine's session table, a browser the test shares with other clients).
pub fn run_worker<F, Fut>(test: F)
where
    F: Fn(&'static Harness) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    run_in(Mode::Worker, &test);
}

fn run_in<F, Fut>(mode: Mode, test: &F)
where
    F: Fn(&'static Harness) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    RUNTIME.block_on(async {
        let harness = match mode {
            Mode::Worker => WORKER.get_or_init(Harness::launch_worker).await,
            Mode::Extension => EXTENSION.get_or_init(Harness::launch_extension).await,
        };
        // Spawned, so a panic fails this test only, and the body runs on the runtime's threads.
        if let Err(e) = tokio::spawn(test(harness)).await {
            // The runtime's threads print a panic into whichever test's output they were
            // started under, so the message is said again here, in the failing test's own.
            let panic = e.into_panic();
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(a panic without a message)");
            eprintln!("failed in {mode:?} mode: {message}");
            std::panic::resume_unwind(panic);
        }
    });
}

/// Runs one test body in extension mode only, for what only the user's browser has (the
/// extension's own pages).
pub fn run_extension<F, Fut>(test: F)
where
    F: Fn(&'static Harness) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    run_in(Mode::Extension, &test);
}

/// Runs one test body on the shared runtime, with a shared value made once per binary: the
/// pattern of every test binary that shares one browser.
pub fn shared<T, I, IFut, F, Fut>(cell: &'static OnceCell<T>, init: I, test: F)
where
    T: Send + Sync + 'static,
    I: FnOnce() -> IFut,
    IFut: Future<Output = T>,
    F: FnOnce(&'static T) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    RUNTIME.block_on(async {
        let value = cell.get_or_init(init).await;
        if let Err(e) = tokio::spawn(test(value)).await {
            std::panic::resume_unwind(e.into_panic());
        }
    });
}

pub struct Harness {
    pub mode: Mode,
    driver: Driver,
}

enum Driver {
    Worker(WorkerBrowser),
    Extension(ExtensionBrowser),
}

/// Worker mode: an engine on the binary's own Chromium.
pub struct WorkerBrowser {
    pub engine: Engine,
    /// The tab Chromium opened at launch, in the foreground: it stands for the user's own tab.
    pub user_tab: TabId,
    pub transport: Arc<WorkerTransport>,
    pub server: fixtures::Server,
    pub artifact_dir: PathBuf,
    // Kept alive for the binary's lifetime; the parent-death signal ends it with the process.
    chromium: Chromium,
}

impl WorkerBrowser {
    /// Starts the fixture server and a headless Chromium, and wires an engine to them.
    async fn launch() -> Self {
        let server = fixtures::Server::start().await;
        // A port, not the pipe a worker uses: tests and benches open clients of their own.
        let chromium = Chromium::launch(&LaunchOptions {
            debugging: Debugging::Port,
            ..LaunchOptions::default()
        })
        .await
        .expect("launch Chromium (install it: apt-get install chromium)");
        let transport = Arc::new(chromium.transport().await.expect("connect to Chromium"));
        let user_tab = transport.tabs().await.expect("list tabs")[0].tab_id;
        transport
            .attach(user_tab)
            .await
            .expect("attach to the user's tab");
        let artifact_dir = std::env::temp_dir().join(format!("tether-test-artifacts-{}", std::process::id()));
        let store = LocalDir::new(&artifact_dir).expect("artifact dir");
        let control_ui = format!("{}{}*", server.origin(), CONTROL_UI_PATH);
        let policy = Policy::new(&[control_ui]).expect("policy");
        policy.set_allow_storage_state(true);
        let engine = Engine::new(transport.clone(), Arc::new(store), policy, "test-client");
        Self {
            engine,
            user_tab,
            transport,
            server,
            artifact_dir,
            chromium,
        }
    }
}

impl Harness {
    /// Worker mode, for benches and tests that make their own.
    pub async fn launch_worker() -> Self {
        trace();
        Self {
            mode: Mode::Worker,
            driver: Driver::Worker(WorkerBrowser::launch().await),
        }
    }

    /// Extension mode, likewise.
    pub async fn launch_extension() -> Self {
        trace();
        Self {
            mode: Mode::Extension,
            driver: Driver::Extension(ExtensionBrowser::launch().await),
        }
    }

    /// What only worker mode has; a test that needs it runs with [`run_worker`].
    pub fn worker(&self) -> &WorkerBrowser {
        match &self.driver {
            Driver::Worker(worker) => worker,
            Driver::Extension(_) => panic!("this test needs worker mode: run it with run_worker"),
        }
    }

    /// What only extension mode has; a test that needs it runs with [`run_extension`].
    pub fn extension(&self) -> &ExtensionBrowser {
        match &self.driver {
            Driver::Extension(browser) => browser,
            Driver::Worker(_) => panic!("this test needs extension mode: run it with run_extension"),
        }
    }

    /// The shared browser's process (worker mode), for what a bench reads of it.
    pub fn browser_pid(&self) -> u32 {
        self.worker().chromium.pid()
    }

    /// The shared browser's endpoint, for a second client (a worker) of the same Chromium.
    pub fn browser_ws(&self) -> &str {
        self.worker().chromium.ws_url().expect("launched with a port")
    }

    /// A fixture page's URL.
    pub fn url(&self, path: &str) -> String {
        match &self.driver {
            Driver::Worker(worker) => worker.server.url(path),
            Driver::Extension(browser) => browser.url(path),
        }
    }

    /// A URL on 127.0.0.1 where nothing listens: connections to it are refused.
    pub fn refused_url(&self) -> String {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        format!("http://127.0.0.1:{port}/")
    }

    /// Runs one action and returns its whole result payload: on the worker's engine, or as
    /// an orchestrator through the relay.
    pub async fn act(&self, session: &str, action: &str, params: Value) -> ActionResult {
        match &self.driver {
            Driver::Worker(worker) => {
                worker
                    .engine
                    .execute_within(ACTION_TIMEOUT, "test", session, action, params)
                    .await
            }
            Driver::Extension(browser) => {
                let result = browser.act(session, action, params).await;
                serde_json::from_value(result).expect("a result payload")
            }
        }
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
        let result = result
            .result
            .expect("a successful result carries `result`")
            .value();
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
        match &self.driver {
            Driver::Worker(worker) => {
                let params = json!({ "expression": expression, "returnByValue": true, "awaitPromise": true });
                // Bounded: a page promise that never settles fails the test, not the run.
                let evaluated = worker.transport.send(tab, "Runtime.evaluate", params);
                let reply = tokio::time::timeout(EVAL_LIMIT, evaluated)
                    .await
                    .unwrap_or_else(|_| panic!("{expression} did not settle within {EVAL_LIMIT:?}"))
                    .expect("Runtime.evaluate");
                assert!(
                    reply.get("exceptionDetails").is_none(),
                    "{expression} threw: {reply}"
                );
                reply.pointer("/result/value").cloned().unwrap_or(Value::Null)
            }
            Driver::Extension(browser) => browser.eval(tab, expression).await,
        }
    }

    /// Lets `browser_evaluate` run, or not, as the browser's owner would: the worker's
    /// `--allow-evaluate`, or the extension's popup setting (waiting until the host applied it).
    pub async fn allow_evaluate(&self, allowed: bool) {
        match &self.driver {
            Driver::Worker(worker) => worker.engine.policy().set_allow_evaluate(allowed),
            Driver::Extension(browser) => browser.allow_evaluate(allowed).await,
        }
    }

    /// Lets `browser_storage_state` run, or not: always on for a worker's own browser (this
    /// sets its policy as a test needs), the extension's popup setting for a person's.
    pub async fn allow_storage_state(&self, allowed: bool) {
        match &self.driver {
            Driver::Worker(worker) => worker.engine.policy().set_allow_storage_state(allowed),
            Driver::Extension(browser) => browser.allow_storage_state(allowed).await,
        }
    }

    /// Sets the browser owner's blocked sites: the worker's policy, or the extension's popup
    /// setting (waiting until the host applied it).
    pub async fn block_sites(&self, patterns: &[&str]) {
        match &self.driver {
            Driver::Worker(worker) => {
                let wrong = worker.engine.policy().set_blocked_sites(patterns);
                assert!(wrong.is_empty(), "{wrong:?}");
            }
            Driver::Extension(browser) => browser.block_sites(patterns).await,
        }
    }

    /// Puts a file in the artifact store as an orchestrator would, for browser_upload_file: in
    /// worker mode a file of the artifact folder (its id is its name), in extension mode a
    /// named upload to the relay. Its artifact id.
    pub async fn store_file(&self, name: &str, content_type: &str, bytes: &[u8]) -> String {
        match &self.driver {
            Driver::Worker(worker) => {
                std::fs::write(worker.artifact_dir.join(name), bytes).expect("write a file to upload");
                name.to_owned()
            }
            Driver::Extension(browser) => {
                client::upload_named(
                    &browser.relay.addr.to_string(),
                    name,
                    content_type,
                    bytes.to_vec(),
                )
                .await
            }
        }
    }

    /// Reads an artifact back by the URL its result carries: a `file://` path in worker mode,
    /// the relay's presigned URL in extension mode.
    pub async fn artifact(&self, result: &Value) -> Vec<u8> {
        let url = result["url"].as_str().expect("artifact url");
        let worker = match &self.driver {
            Driver::Worker(worker) => worker,
            Driver::Extension(_) => return client::download(url).await.1,
        };
        let path = url.strip_prefix("file://").expect("a file:// artifact url");
        assert!(
            path.starts_with(worker.artifact_dir.to_str().unwrap()),
            "{path} is outside the artifact dir"
        );
        std::fs::read(path).expect("artifact file")
    }
}

/// A binary of this workspace (`tether-host`, `tether-relay`), as `cargo test --workspace`
/// or `cargo bench` built it beside the running test or bench.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: build it first (cargo build --workspace, or cargo test --workspace)",
        path.display()
    );
    path
}

/// The element of a scan's `elements` with this tag and `id` attribute.
pub fn find_element<'a>(elements: &'a [Value], tag: &str, id: &str) -> &'a Value {
    elements
        .iter()
        .find(|e| e["tag"] == tag && e["attributes"]["id"] == id)
        .unwrap_or_else(|| panic!("no <{tag} id={id}> in {elements:?}"))
}

/// RUST_LOG=tether_host=debug shows the CDP traffic of a failing test.
fn trace() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}
