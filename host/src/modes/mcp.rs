//! `tether-host mcp` (docs/protocol.md §11): the catalog as MCP tools on stdio, for agents that
//! start a program (`claude mcp add tether -- tether-host mcp`). Without `--relay` it
//! launches its own Chromium and runs the tools in this process on the same engine as
//! `exec` and the worker; with `--relay URL --token T` each call is a `POST
//! /api/browser/action` to that relay (the person's own Chrome, or any worker). It exits when
//! the client closes stdin, and closes the Chromium it launched.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use async_trait::async_trait;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use tether_mcp::{Browser, Caps, McpSessions};
use tether_protocol::actions::ArtifactRef;
use tether_protocol::{ActionError, ActionName, ActionResult};

use crate::browser::chromium::Chromium;
use crate::modes::local::LocalBrowserArgs;
use crate::modes::relay_link::relay_urls;
use crate::Engine;

/// Each action's bound, as the relay's default action timeout.
const ACTION_TIMEOUT: Duration = Duration::from_secs(30);
const CLIENT_ID: &str = "local";

#[derive(clap::Args, Debug)]
pub struct McpArgs {
    /// Serve through this relay (http(s):// or ws(s)://) instead of a Chromium of its own.
    #[arg(long)]
    pub relay: Option<String>,
    /// The relay's ORCHESTRATOR token (it dispatches actions), with --relay.
    #[arg(long, env = "TETHER_ORCHESTRATOR_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// PEM certificates of a CA to trust for an https:// relay, besides the web's roots.
    #[arg(long)]
    pub ca_file: Option<PathBuf>,
    /// Show the launched Chromium's window (headless by default).
    #[arg(long)]
    pub headed: bool,
    /// The tool groups to serve, comma-separated, or "all": core (always), tabs, forms,
    /// history, observe, gestures, files, debug, secrets, handoff, sessions, options (every
    /// parameter). The default keeps the tool list lean for the model.
    #[arg(long, default_value = "core,tabs,forms", value_parser = Caps::parse)]
    pub caps: Caps,
    #[command(flatten)]
    pub local: LocalBrowserArgs,
}

pub async fn main(args: McpArgs) -> ExitCode {
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tether-host mcp: {e:#}");
            ExitCode::from(1)
        }
    }
}

async fn run(args: McpArgs) -> Result<()> {
    if let Some(relay) = &args.relay {
        let token = args.token.as_deref().context(
            "--relay needs --token: the relay's orchestrator token (or TETHER_ORCHESTRATOR_TOKEN)",
        )?;
        let tls = crate::parts::tls::client_config(args.ca_file.as_deref())?;
        let browser = Arc::new(ThroughRelay::new(relay, token, &tls));
        return serve(McpSessions::new(browser).with_caps(args.caps)).await;
    }
    let policy = args.local.policy()?;
    let secret_names: Vec<String> = policy.secrets().named().into_iter().map(|s| s.name).collect();
    let store = args.local.store()?;
    let chromium = Chromium::launch(&args.local.launch_options(!args.headed)).await?;
    let outcome = match chromium.transport().await {
        Ok(transport) => {
            let engine = args.local.engine(Arc::new(transport), store, policy, CLIENT_ID);
            tokio::select! {
                outcome = serve(
                    McpSessions::new(Arc::new(InProcess { engine, next: AtomicU64::new(1) }))
                        .with_caps(args.caps)
                        .with_secret_names(&secret_names),
                ) => outcome,
                _ = chromium.exited() => Err(anyhow::anyhow!("Chromium exited (crashed or killed); stopping")),
                _ = crate::modes::worker::stop_signal() => Ok(()),
            }
        }
        Err(e) => Err(anyhow::anyhow!("cannot drive the Chromium it launched: {e}")),
    };
    chromium.close().await;
    outcome
}

/// Serves one MCP session on stdin/stdout until the client closes stdin. Its own Tether
/// session is ended, and its tabs closed, before the process exits.
async fn serve(sessions: McpSessions) -> Result<()> {
    let served = async {
        let running = sessions
            .session()
            .serve(rmcp::transport::stdio())
            .await
            .context("no MCP session started (stdin closed before initialize?)")?;
        running.waiting().await.context("the MCP session failed")
    }
    .await;
    sessions.ended().await;
    served.map(drop)
}

/// The tools run here, on this process's engine.
struct InProcess {
    engine: Engine,
    next: AtomicU64,
}

#[async_trait]
impl Browser for InProcess {
    async fn act(&self, session_id: &str, action: ActionName, params: Value) -> ActionResult {
        let action_id = format!("mcp-{}", self.next.fetch_add(1, Ordering::Relaxed));
        self.engine
            .execute_within(ACTION_TIMEOUT, &action_id, session_id, action.as_str(), params)
            .await
    }

    async fn artifact(&self, artifact: &ArtifactRef) -> Result<Vec<u8>, ActionError> {
        let file = self.engine.artifacts().file(&artifact.artifact_id, "").await?;
        tokio::fs::read(&file.path)
            .await
            .map_err(|e| ActionError::internal(format!("cannot read {}: {e}", file.path.display())))
    }
}

/// The tools run on a relay, as an orchestrator's `POST /api/browser/action`.
struct ThroughRelay {
    http: reqwest::Client,
    action_url: String,
    token: String,
}

impl ThroughRelay {
    fn new(relay: &str, token: &str, tls: &Arc<rustls::ClientConfig>) -> Self {
        let (_, base) = relay_urls(relay);
        Self {
            http: crate::parts::tls::http_client(tls),
            action_url: format!("{base}/api/browser/action"),
            token: token.to_owned(),
        }
    }

    async fn post(&self, body: &Value) -> Result<ActionResult, ActionError> {
        let response = self
            .http
            .post(&self.action_url)
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .map_err(|e| {
                ActionError::internal(format!("cannot reach the relay at {}: {e}", self.action_url))
            })?;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or_default();
        if let Ok(result) = serde_json::from_value::<ActionResult>(body.clone()) {
            return Ok(result);
        }
        // The relay refused the call itself (a wrong token, say): its error, as it says it.
        Err(serde_json::from_value::<ActionError>(body).unwrap_or_else(|_| {
            ActionError::internal(format!("the relay answered {status} without a result"))
        }))
    }
}

#[async_trait]
impl Browser for ThroughRelay {
    async fn act(&self, session_id: &str, action: ActionName, params: Value) -> ActionResult {
        let body = json!({ "sessionId": session_id, "actionName": action, "params": params });
        self.post(&body)
            .await
            .unwrap_or_else(|error| ActionResult::unsent(session_id, action.as_str(), error))
    }

    async fn artifact(&self, artifact: &ArtifactRef) -> Result<Vec<u8>, ActionError> {
        // The URL is presigned: no token goes with it.
        let fetch = async {
            let response = self.http.get(&artifact.url).send().await?.error_for_status()?;
            response.bytes().await
        };
        fetch
            .await
            .map(|bytes| bytes.to_vec())
            .map_err(|e| ActionError::internal(format!("cannot fetch {}: {e}", artifact.url)))
    }
}
