//! `tether-host worker`: a host with a browser of its own. It launches Chromium (or uses the
//! one at `--browser-ws`), then serves the relay's actions on it until stopped.

use chromiumoxide::cdp::browser_protocol::browser::GetVersionParams;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use tether_protocol::messages::HostMeta;
use tether_protocol::ActionName;

use crate::browser::chromium::{Chromium, LaunchOptions};
use crate::cdp::connection::CdpConnection;
use crate::cdp::worker::WorkerTransport;
use crate::cdp::Transport;
use crate::engine::policy::Policy;
use crate::modes::relay_link::{self, LinkOptions};
use crate::modes::twin_report::TransportTwin;
use crate::parts::artifacts::RelayStore;
use crate::Engine;

#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    /// The relay to serve, e.g. ws://127.0.0.1:17800 (its /ws endpoint). Repeat it, or give
    /// several comma-separated, for the relays of one deployment: the host joins one and
    /// rejoins another when it goes away.
    #[arg(long, required = true, value_delimiter = ',')]
    pub relay: Vec<String>,
    #[command(flatten)]
    pub token: crate::modes::config::HostToken,
    /// This browser's stable id (default: one generated once and kept in the config dir).
    #[arg(long)]
    pub client_id: Option<String>,
    /// The Chromium binary to launch (default: $TETHER_CHROMIUM, then the usual places).
    #[arg(long)]
    pub chromium: Option<PathBuf>,
    /// Run Chromium without a window (the default when there is no display).
    #[arg(long)]
    pub headless: bool,
    /// A browser endpoint ws://host:port/devtools/browser/<id> to use instead of launching one.
    #[arg(long)]
    pub browser_ws: Option<String>,
    /// Keep the launched Chromium's profile (cookies, storage, logins of the sessions that name
    /// the profile "default") in DIR, from one run to the next; default: a fresh profile,
    /// removed at exit.
    #[arg(long, value_name = "DIR")]
    pub user_data_dir: Option<PathBuf>,
    /// Where named profiles are kept (DIR/profiles/NAME.json); default: the host's config dir.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// The launched browser's window size, WIDTHxHEIGHT.
    #[arg(long, default_value = "1280x800", value_parser = parse_size)]
    pub window_size: (u32, u32),
    /// A flag for the launched Chromium, e.g. --chromium-arg=--lang=de; repeatable.
    #[arg(long = "chromium-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub chromium_args: Vec<String>,
    /// A page pattern to refuse like the control UI (Chrome match pattern); repeatable. The
    /// relay's own pages are always refused.
    #[arg(long = "forbid-url", value_name = "PATTERN")]
    pub forbid_urls: Vec<String>,
    /// PEM certificates of a CA to trust for a wss:// relay, besides the web's roots.
    #[arg(long)]
    pub ca_file: Option<PathBuf>,
    /// Let agents run their own JavaScript in pages (browser_evaluate); refused without it.
    #[arg(long)]
    pub allow_evaluate: bool,
    /// Let agents open file: URLs, which read this machine's disk; refused without it.
    #[arg(long)]
    pub allow_file_urls: bool,
    /// Keep none of the pages' console messages and requests (browser_console and
    /// browser_network are then refused; results still report navigations and downloads).
    #[arg(long)]
    pub no_page_log: bool,
    /// Secrets agents may have typed but never see: a JSON file
    /// {"name": {"value": "...", "origins": ["https://site.example"]}}, readable by its owner
    /// alone (chmod 600).
    #[arg(long, value_name = "FILE")]
    pub secrets: Option<PathBuf>,
}

fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let (w, h) = text
        .split_once('x')
        .ok_or_else(|| format!("{text:?} is not WIDTHxHEIGHT"))?;
    let number = |s: &str| {
        s.trim()
            .parse::<u32>()
            .map_err(|_| format!("{text:?} is not WIDTHxHEIGHT"))
    };
    Ok((number(w)?, number(h)?))
}

pub async fn main(args: WorkerArgs) -> ExitCode {
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tether-host worker: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: WorkerArgs) -> Result<()> {
    let token = args.token.resolve()?;
    let secrets = match &args.secrets {
        Some(path) => crate::engine::secrets::Secrets::load(path)?,
        None => crate::engine::secrets::Secrets::default(),
    };
    let client_id = match &args.client_id {
        Some(id) => id.clone(),
        None => crate::modes::config::stored_client_id()?,
    };
    let (chromium, browser) = match &args.browser_ws {
        Some(url) => (None, BrowserAt::Ws(url.clone())),
        None => {
            let headless = args.headless || !has_display();
            let options = LaunchOptions {
                executable: args.chromium.clone(),
                headless,
                window_size: args.window_size,
                extra_args: args.chromium_args.clone(),
                user_data_dir: args.user_data_dir.clone(),
                ..LaunchOptions::default()
            };
            let chromium = Chromium::launch(&options).await?;
            let pipe = chromium.pipe().context("the launched Chromium has no pipe")?;
            (Some(chromium), BrowserAt::Pipe(pipe))
        }
    };
    let worker = Worker {
        browser,
        relay: args.relay.join(","),
        token,
        client_id,
        forbid_urls: args.forbid_urls,
        ca_file: args.ca_file,
        allow_evaluate: args.allow_evaluate,
        allow_file_urls: args.allow_file_urls,
        no_page_log: args.no_page_log,
        secrets,
        data_dir: Some(args.data_dir.unwrap_or_else(crate::modes::config::config_dir)),
    };
    // A worker without its browser can serve nothing: it stops, so whatever supervises it can
    // start it again (the relay has already failed its running actions).
    let browser_gone = async {
        match &chromium {
            Some(chromium) => chromium.exited().await,
            None => std::future::pending().await,
        }
    };
    let outcome = tokio::select! {
        outcome = worker.serve() => outcome,
        _ = browser_gone => Err(anyhow::anyhow!("Chromium exited (crashed or killed); stopping")),
        _ = stop_signal() => Ok(()),
    };
    if let Some(chromium) = chromium {
        chromium.close().await;
    }
    outcome
}

/// Ctrl-C, or SIGTERM from a service manager: the worker closes the Chromium it launched.
pub(crate) async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Where a worker's browser is.
pub enum BrowserAt {
    /// A browser another program started: its endpoint ws://host:port/devtools/browser/<id>.
    Ws(String),
    /// The browser the worker launched, over its pipe.
    Pipe(CdpConnection),
}

/// A worker's wiring: which browser, which relay, who it is.
pub struct Worker {
    pub browser: BrowserAt,
    /// The relay as the user gave it (ws://host:port, with or without /ws); for the relays of
    /// one deployment, several comma-separated.
    pub relay: String,
    pub token: String,
    pub client_id: String,
    /// Control-UI patterns to refuse besides the relay's own pages.
    pub forbid_urls: Vec<String>,
    /// A CA to trust for a `wss://` relay, besides the web's roots.
    pub ca_file: Option<PathBuf>,
    /// Whether `browser_evaluate` may run (`--allow-evaluate`).
    pub allow_evaluate: bool,
    /// Whether `file:` URLs may be opened (`--allow-file-urls`).
    pub allow_file_urls: bool,
    /// Whether the pages' console and requests are not kept (`--no-page-log`).
    pub no_page_log: bool,
    /// The operator's secrets (`--secrets`).
    pub secrets: crate::engine::secrets::Secrets,
    /// Where named profiles are kept (`--data-dir`); `None`: not past their sessions.
    pub data_dir: Option<PathBuf>,
}

impl Worker {
    /// Serves the relay until it refuses this host (an error); reconnects on anything else.
    pub async fn serve(self) -> Result<()> {
        let relays = relay_link::relay_list(&self.relay);
        let Some((_, http_base)) = relays.first().cloned() else {
            anyhow::bail!("--relay names no relay");
        };
        let policy = Policy::new(&self.forbid_urls)
            .map_err(anyhow::Error::msg)?
            .allow_file_urls(self.allow_file_urls)
            .without_page_log(self.no_page_log);
        for (_, http) in &relays {
            policy.add_relay_origin(http);
        }
        policy.set_allow_evaluate(self.allow_evaluate);
        // The browser is the host's own: its cookies are no person's.
        policy.set_allow_storage_state(true);
        policy.secrets().set_from(&self.secrets);
        let transport = match &self.browser {
            BrowserAt::Ws(url) => WorkerTransport::connect(url)
                .await
                .with_context(|| format!("cannot drive the browser at {url}"))?,
            BrowserAt::Pipe(cdp) => WorkerTransport::new(cdp.clone())
                .await
                .context("cannot drive the browser it launched")?,
        };
        let product = match transport.connection().command(None, GetVersionParams {}).await {
            Ok(version) => version.product,
            Err(_) => "Chromium/unknown".to_owned(),
        };
        let transport: Arc<dyn Transport> = Arc::new(transport);
        let twin = TransportTwin::new(transport.clone());
        let tls = crate::parts::tls::client_config(self.ca_file.as_deref())?;
        let store = RelayStore::new(&http_base, &self.token, &tls)
            .context("cannot make a folder for files to upload")?;
        let mut engine = Engine::new(transport, Arc::new(store), policy.clone(), self.client_id.clone());
        if let Some(dir) = &self.data_dir {
            engine = engine.keeping_profiles_in(dir);
        }
        let engine = Arc::new(engine);
        let ws_urls: Vec<String> = relays.into_iter().map(|(ws, _)| ws).collect();
        tracing::info!("serving {} as {}", ws_urls.join(", "), self.client_id);
        let options = LinkOptions {
            ws_urls,
            token: self.token,
            client_id: self.client_id,
            meta: HostMeta {
                secrets: Some(policy.secrets().named().into_iter().map(|s| s.name).collect()),
                ..meta(&product, "worker")
            },
            twin,
            on_link: None,
            tls,
            owner: None,
            policy,
        };
        Err(relay_link::run(options, engine).await.into())
    }
}

/// What the relay's extension list shows about this host (docs/protocol.md §2.1), for a
/// browser whose product is `Name/version` (CDP's `Browser.getVersion`).
pub fn meta(product: &str, mode: &str) -> HostMeta {
    let (browser, browser_version) = product.split_once('/').unwrap_or((product, ""));
    HostMeta {
        browser: Some(browser.to_owned()),
        browser_version: Some(browser_version.to_owned()),
        os: Some(std::env::consts::OS.to_owned()),
        hostname: Some(tether_os::host_name()),
        host_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        mode: Some(mode.to_owned()),
        actions: Some(ActionName::ALL.iter().map(|a| a.as_str().to_owned()).collect()),
        ..HostMeta::default()
    }
}

fn has_display() -> bool {
    cfg!(target_os = "macos")
        || cfg!(windows)
        || std::env::var_os("DISPLAY").is_some()
        || std::env::var_os("WAYLAND_DISPLAY").is_some()
}
