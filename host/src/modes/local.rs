//! A browser this process drives for itself (`exec`, `mcp` without a relay): the flags they
//! share, and the policy, artifact folder and Chromium launch those flags make.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::browser::chromium::LaunchOptions;
use crate::engine::policy::Policy;
use crate::engine::Engine;
use crate::parts::artifacts::LocalDir;

#[derive(clap::Args, Debug, Clone)]
pub struct LocalBrowserArgs {
    /// The Chromium binary to launch (default: $TETHER_CHROMIUM, then the usual places).
    #[arg(long)]
    pub chromium: Option<PathBuf>,
    /// A flag for the launched Chromium, e.g. --chromium-arg=--lang=de; repeatable.
    #[arg(long = "chromium-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub chromium_args: Vec<String>,
    /// Where screenshots, HTML and long text go (default: <temp dir>/tether-artifacts).
    #[arg(long)]
    pub artifact_dir: Option<PathBuf>,
    /// A page pattern to refuse like the control UI (Chrome match pattern); repeatable.
    #[arg(long = "forbid-url", value_name = "PATTERN")]
    pub forbid_urls: Vec<String>,
    /// Let actions run their own JavaScript in pages (browser_evaluate); refused without it.
    #[arg(long)]
    pub allow_evaluate: bool,
    /// Let actions open file: URLs, which read this machine's disk; refused without it.
    #[arg(long)]
    pub allow_file_urls: bool,
    /// Keep none of the pages' console messages and requests (browser_console and
    /// browser_network are then refused; results still report navigations and downloads).
    #[arg(long)]
    pub no_page_log: bool,
    /// Keep the launched Chromium's profile (cookies, storage, logins of the sessions that name
    /// the profile "default") in DIR, from one run to the next; default: a fresh profile,
    /// removed at exit.
    #[arg(long, value_name = "DIR")]
    pub user_data_dir: Option<PathBuf>,
    /// Where named profiles are kept (DIR/profiles/NAME.json); default: the host's config dir.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Secrets actions may type but never show: a JSON file
    /// {"name": {"value": "...", "origins": ["https://site.example"]}}, readable by its owner
    /// alone (chmod 600).
    #[arg(long, value_name = "FILE")]
    pub secrets: Option<PathBuf>,
}

impl LocalBrowserArgs {
    pub fn policy(&self) -> Result<Policy> {
        let policy = Policy::new(&self.forbid_urls)
            .map_err(anyhow::Error::msg)?
            .allow_file_urls(self.allow_file_urls)
            .without_page_log(self.no_page_log);
        policy.set_allow_evaluate(self.allow_evaluate);
        // The browser is the host's own: its cookies are no person's.
        policy.set_allow_storage_state(true);
        if let Some(path) = &self.secrets {
            policy
                .secrets()
                .set_from(&crate::engine::secrets::Secrets::load(path)?);
        }
        Ok(policy)
    }

    /// An engine on `transport` keeping named profiles in the data dir.
    pub fn engine(
        &self,
        transport: Arc<dyn crate::cdp::Transport>,
        store: LocalDir,
        policy: Policy,
        client_id: &str,
    ) -> Engine {
        let data_dir = self
            .data_dir
            .clone()
            .unwrap_or_else(crate::modes::config::config_dir);
        Engine::new(transport, Arc::new(store), policy, client_id).keeping_profiles_in(&data_dir)
    }

    pub fn store(&self) -> Result<LocalDir> {
        let dir = self
            .artifact_dir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("tether-artifacts"));
        LocalDir::new(&dir).with_context(|| format!("cannot use {}", dir.display()))
    }

    pub fn launch_options(&self, headless: bool) -> LaunchOptions {
        LaunchOptions {
            executable: self.chromium.clone(),
            headless,
            extra_args: self.chromium_args.clone(),
            user_data_dir: self.user_data_dir.clone(),
            ..LaunchOptions::default()
        }
    }
}
