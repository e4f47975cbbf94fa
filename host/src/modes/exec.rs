//! `tether-host exec`: runs a list of actions against a headless Chromium and prints one result
//! payload per line. The developer's way to try the catalog without a relay.

use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use serde_json::Value;
use tether_protocol::actions::TabId;
use tether_protocol::ActionName;

use crate::browser::chromium::Chromium;
use crate::cdp::worker::WorkerTransport;
use crate::modes::local::LocalBrowserArgs;
use crate::Engine;

/// Each step's bound, as the relay's default action timeout.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);
const SESSION_ID: &str = "exec";
const CLIENT_ID: &str = "local";

#[derive(clap::Args, Debug)]
pub struct ExecArgs {
    /// A browser endpoint ws://host:port/devtools/browser/<id> to use instead of launching one.
    #[arg(long)]
    pub browser_ws: Option<String>,
    #[command(flatten)]
    pub local: LocalBrowserArgs,
    /// JSON: [{"actionName": "...", "params": {...}}, ...] (or one such object); "-" reads stdin.
    /// A step without tabId gets the tab of the last session_start.
    pub steps: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Step {
    action_name: String,
    #[serde(default)]
    params: Value,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

pub async fn main(args: ExecArgs) -> ExitCode {
    match run(args).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("tether-host exec: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs every step; `Ok(true)` when all succeeded.
async fn run(args: ExecArgs) -> Result<bool> {
    let steps = parse_steps(&args.steps)?;
    let policy = args.local.policy()?;
    let store = args.local.store()?;

    let (chromium, transport) = match &args.browser_ws {
        Some(url) => (
            None,
            WorkerTransport::connect(url).await.map_err(|e| (url.clone(), e)),
        ),
        None => {
            let chromium = Chromium::launch(&args.local.launch_options(true)).await?;
            let transport = chromium.transport().await.map_err(|e| ("its pipe".to_owned(), e));
            (Some(chromium), transport)
        }
    };
    let all_ok = match transport {
        Ok(transport) => {
            let engine = args.local.engine(Arc::new(transport), store, policy, CLIENT_ID);
            run_steps(&engine, steps).await
        }
        Err((at, e)) => Err(anyhow::anyhow!("cannot drive the browser at {at}: {e}")),
    };
    if let Some(chromium) = chromium {
        chromium.close().await;
    }
    all_ok
}

async fn run_steps(engine: &Engine, steps: Vec<Step>) -> Result<bool> {
    let mut all_ok = true;
    let mut last_tab: Option<TabId> = None;
    for (index, mut step) in steps.into_iter().enumerate() {
        let takes_tab = step
            .action_name
            .parse::<ActionName>()
            .is_ok_and(|a| a.takes_tab());
        if let (true, Some(tab), Value::Object(params)) = (takes_tab, last_tab, &mut step.params) {
            params.entry("tabId").or_insert(tab.into());
        }
        if takes_tab && step.params.is_null() {
            if let Some(tab) = last_tab {
                step.params = serde_json::json!({ "tabId": tab });
            }
        }
        let timeout = step.timeout_ms.map(Duration::from_millis).unwrap_or(STEP_TIMEOUT);
        let action_id = format!("step-{}", index + 1);
        let result = engine
            .execute_within(timeout, &action_id, SESSION_ID, &step.action_name, step.params)
            .await;
        if result.is_success() && step.action_name == ActionName::SessionStart.as_str() {
            last_tab = result
                .result
                .as_ref()
                .and_then(|r| r.value().get("tabId")?.as_i64());
        }
        all_ok &= result.is_success();
        println!("{}", serde_json::to_string(&result)?);
    }
    Ok(all_ok)
}

fn parse_steps(source: &str) -> Result<Vec<Step>> {
    let text = if source == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read steps from stdin")?;
        text
    } else {
        source.to_owned()
    };
    let value: Value = serde_json::from_str(&text).context("STEPS is not JSON")?;
    let list = match value {
        Value::Array(list) => list,
        one @ Value::Object(_) => vec![one],
        _ => bail!("STEPS must be a JSON array of {{\"actionName\", \"params\"}} objects"),
    };
    list.into_iter()
        .enumerate()
        .map(|(i, step)| {
            serde_json::from_value(step)
                .with_context(|| format!("step {} needs \"actionName\" (and optional \"params\")", i + 1))
        })
        .collect()
}
