//! The relay's command line and settings (docs/protocol.md §8), and its two tokens: given on the
//! command line or in the environment, or else generated on first start and kept in the data
//! dir, so hosts and orchestrators configured once keep working across restarts. Its own floor:
//! uses `parts` and `stores` (whose limits and host tokens it sets up); the core and the edge
//! read it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::stores::artifacts::Limits;
use tether_os::at_rest;

/// When the relay asks a person before an action runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ConfirmMode {
    Never,
    First,
    Every,
}

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "tether-relay",
    version,
    about = "Tether's relay: orchestrators and browser hosts dial in here",
    args_conflicts_with_subcommands = true
)]
pub struct RelayArgs {
    #[command(subcommand)]
    pub command: Option<RelayCommand>,
    /// A TOML file of settings, each key a flag's long name (`tether-relay config
    /// --print-default` writes one); flags and their environment variables win over it.
    #[arg(long, value_name = "FILE", env = "TETHER_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on. Loopback by default: exposing the relay is a deliberate choice.
    #[arg(long, default_value = "127.0.0.1:17800")]
    pub listen: SocketAddr,
    /// Where tokens, session logs and artifacts are kept.
    #[arg(long, default_value = "tether-data")]
    pub data_dir: PathBuf,
    /// The token orchestrators present.
    #[arg(long, env = "TETHER_ORCHESTRATOR_TOKEN", hide_env_values = true)]
    pub orchestrator_token: Option<String>,
    /// The token browser hosts present.
    #[arg(long, env = "TETHER_HOST_TOKEN", hide_env_values = true)]
    pub host_token: Option<String>,
    /// The token people's consoles present: reads, binds and confirms; never dispatches.
    #[arg(long, env = "TETHER_OBSERVER_TOKEN", hide_env_values = true)]
    pub observer_token: Option<String>,
    /// The token a metrics scraper presents: `GET /metrics` and nothing else
    /// (`tether-relay metrics-token` prints the kept one).
    #[arg(long, env = "TETHER_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// Ask for confirmation before the first action of a session, every action, or never.
    #[arg(long, value_enum, default_value = "never")]
    pub confirm: ConfirmMode,
    /// How long a host has to acknowledge an action before it fails with ACK_TIMEOUT.
    #[arg(long, default_value_t = 5000, value_name = "MS")]
    pub ack_timeout_ms: u64,
    /// How long an action may run when its request names no timeoutMs (ACTION_TIMEOUT).
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    pub action_timeout_ms: u64,
    /// How many actions may wait behind the running one in a session (QUEUE_FULL beyond).
    #[arg(long, default_value_t = 64)]
    pub queue_limit: usize,
    /// How many actions may wait in all sessions together (QUEUE_FULL beyond, for a session
    /// that is running one): the bound on what a burst over many sessions makes the relay hold.
    #[arg(long, default_value_t = 10_000)]
    pub waiting_limit: usize,
    /// The largest artifact a host may upload, in bytes.
    #[arg(long, default_value_t = 64 << 20, value_name = "BYTES")]
    pub artifact_max_bytes: u64,
    /// The most all stored artifacts may take together, in bytes.
    #[arg(long, default_value_t = 2 << 30, value_name = "BYTES")]
    pub artifact_total_bytes: u64,
    /// How long an artifact is kept, in seconds.
    #[arg(long, default_value_t = 24 * 3600, value_name = "SECONDS")]
    pub artifact_ttl_secs: u64,
    /// The largest WebSocket message or HTTP request body accepted, in bytes.
    #[arg(long, default_value_t = 16 << 20, value_name = "BYTES")]
    pub max_message_bytes: usize,
    /// On SIGTERM or Ctrl-C, how long running actions may finish before they are ended.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub shutdown_grace_ms: u64,
    /// A Host (or Origin host) `/mcp` accepts besides loopback ones, e.g. relay.example.com;
    /// repeatable. Others are refused, against DNS rebinding.
    #[arg(long = "mcp-allowed-host", value_name = "HOST")]
    pub mcp_allowed_hosts: Vec<String>,
    /// Join the other relays of this deployment through this NATS server (with JetStream),
    /// e.g. nats://127.0.0.1:4222. Without it, the relay stands alone (docs/protocol.md §14).
    #[arg(long, value_name = "URL")]
    pub nats: Option<String>,
    /// A URL this relay is reached at besides its listener, e.g. https://relay.example (behind
    /// a TLS proxy); repeatable. Hosts refuse it as a target, and `/ws` admits its pages.
    #[arg(long = "public-url", value_name = "URL")]
    pub public_urls: Vec<String>,
    /// A web origin whose pages may open `/ws` besides the relay's own, e.g.
    /// https://console.example; repeatable. Other pages get 403.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// The most connections served at once (fewer when the open-file limit leaves room for
    /// fewer); past it, only /healthz is answered.
    #[arg(long, default_value_t = 10_000)]
    pub max_connections: usize,
    /// Keep what browser_type and forms type in the session logs; by default a log says only
    /// how many characters were typed (logs outlive passwords typed into pages).
    #[arg(long)]
    pub log_typed_text: bool,
    /// The most MCP sessions open at once on /mcp; an initialize past it is refused.
    #[arg(long, default_value_t = 1000)]
    pub mcp_max_sessions: usize,
    /// How long a browser may stay offline, bound to no session still going, before the relay
    /// forgets it: 7d, 12h, 30m, 90s (or a number of seconds).
    #[arg(long, default_value = "7d", value_parser = parse_duration)]
    pub forget_offline_after: Duration,
    /// The most offline browsers the relay remembers; past it those seen longest ago are
    /// forgotten first, browsers with a host token of their own last.
    #[arg(long, default_value_t = 1000)]
    pub max_offline_browsers: usize,
    /// How long a session is kept once nothing happens in it (ended, stopped, or left by its
    /// orchestrator), so its actionIds can still be replayed: 24h, 30m, 90s. Then it is
    /// deleted from the relay's store (docs/protocol.md §22).
    #[arg(long, default_value = "24h", value_parser = parse_duration)]
    pub session_retention: Duration,
    /// Session logs not written for this many days are removed.
    #[arg(long, default_value_t = 30, value_name = "DAYS")]
    pub log_retention_days: u64,
    /// The most the session logs may take together, in bytes: past it the logs written least
    /// recently are removed (a running session's never), checked hourly.
    #[arg(long, default_value_t = 10 << 30, value_name = "BYTES")]
    pub log_total_bytes: u64,
    /// How the relay's own log lines (on stderr) are written: text, or a JSON object a line
    /// for a log store. `RUST_LOG` filters them (default `info`).
    #[arg(long, value_enum, default_value = "text", env = "TETHER_LOG_FORMAT")]
    pub log_format: tether_os::logs::LogFormat,
}

/// `7d`, `12h`, `30m`, `90s`, or a number of seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("{text:?} is not a duration like 7d, 12h, 30m or 90s")),
    };
    number
        .parse::<u64>()
        .map(|n| Duration::from_secs(n.saturating_mul(seconds)))
        .map_err(|_| format!("{text:?} is not a duration like 7d, 12h, 30m or 90s"))
}

/// What `tether-relay` does instead of serving.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum RelayCommand {
    /// Mints a host token bound to one browser (printed once), revokes one, or lists the
    /// browsers that have one (never their tokens). A running relay sees the change at once.
    HostToken {
        /// The browser's clientId to mint a token for (a second mint replaces its token).
        #[arg(long, value_name = "ID", required_unless_present_any = ["revoke", "list"])]
        client_id: Option<String>,
        /// Ends this browser's token.
        #[arg(long, value_name = "ID", conflicts_with_all = ["client_id", "list"])]
        revoke: Option<String>,
        /// Lists the browsers that have a token of their own.
        #[arg(long, conflicts_with = "client_id")]
        list: bool,
        /// The relay's data dir.
        #[arg(long, default_value = "tether-data")]
        data_dir: PathBuf,
    },
    /// Prints a config file (TOML) with every setting, its help and its default, for
    /// `--config FILE`.
    Config {
        /// Every setting with its default.
        #[arg(long, required = true)]
        print_default: bool,
    },
    /// Prints the token a metrics scraper (Prometheus) presents at /metrics, which reads the
    /// metrics and nothing else; made and kept in the data dir's tokens.json if it is not there.
    MetricsToken {
        /// The relay's data dir.
        #[arg(long, default_value = "tether-data")]
        data_dir: PathBuf,
    },
    /// Prints the Markdown an agent needs to drive a relay (as GET /api/agent.md), or writes it
    /// into an instructions file (CLAUDE.md, AGENTS.md) between <!-- tether:start --> and
    /// <!-- tether:end -->.
    AgentDocs {
        /// The file to write the docs into; only the marked section changes.
        #[arg(long, value_name = "FILE")]
        inject: Option<PathBuf>,
        /// The relay's URL as the agent reaches it.
        #[arg(long, default_value = "http://127.0.0.1:17800")]
        relay_url: String,
    },
}

/// The relay's timing and queueing rules.
#[derive(Debug, Clone)]
pub struct Settings {
    pub confirm: ConfirmMode,
    pub ack_timeout: Duration,
    pub action_timeout: Duration,
    pub queue_limit: usize,
    pub waiting_limit: usize,
    /// How often an idle event stream says it is alive.
    pub heartbeat: Duration,
    /// The largest WebSocket message or HTTP body the relay reads; a larger one is refused
    /// with `PAYLOAD_TOO_LARGE` before it is buffered. Big outputs travel as artifacts.
    pub max_message_bytes: usize,
    /// Hosts `/mcp` accepts in `Host` and `Origin` besides loopback ones.
    pub mcp_allowed_hosts: Vec<String>,
    /// URLs the relay is reached at besides its listener (`--public-url`).
    pub public_urls: Vec<String>,
    /// Web origins whose pages may open `/ws` besides the relay's own (`--allowed-origin`).
    pub allowed_origins: Vec<String>,
    /// The most connections served at once (`--max-connections`).
    pub max_connections: usize,
    /// Whether session logs keep typed text (`--log-typed-text`).
    pub log_typed_text: bool,
    /// The most MCP sessions open at once (`--mcp-max-sessions`).
    pub mcp_max_sessions: usize,
    /// How long an offline browser bound to no going session is kept (`--forget-offline-after`).
    pub forget_offline_after: Duration,
    /// The most offline browsers kept (`--max-offline-browsers`).
    pub max_offline_browsers: usize,
    /// How long an idle session is kept (`--session-retention`).
    pub session_retention: Duration,
    /// How long a session log no one writes is kept (`--log-retention-days`).
    pub log_retention: Duration,
    /// The most the session logs may take together (`--log-total-bytes`).
    pub log_total_bytes: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            confirm: ConfirmMode::Never,
            ack_timeout: Duration::from_secs(5),
            action_timeout: Duration::from_secs(30),
            queue_limit: 64,
            waiting_limit: 10_000,
            heartbeat: Duration::from_secs(15),
            max_message_bytes: tether_protocol::envelope::MAX_ENVELOPE_BYTES,
            mcp_allowed_hosts: Vec::new(),
            public_urls: Vec::new(),
            allowed_origins: Vec::new(),
            max_connections: 10_000,
            log_typed_text: false,
            mcp_max_sessions: 1000,
            forget_offline_after: Duration::from_secs(7 * 86_400),
            max_offline_browsers: 1000,
            session_retention: Duration::from_secs(86_400),
            log_retention: Duration::from_secs(30 * 86_400),
            log_total_bytes: 10 << 30,
        }
    }
}

impl RelayArgs {
    pub fn settings(&self) -> Settings {
        Settings {
            confirm: self.confirm,
            ack_timeout: Duration::from_millis(self.ack_timeout_ms),
            action_timeout: Duration::from_millis(self.action_timeout_ms),
            queue_limit: self.queue_limit,
            waiting_limit: self.waiting_limit,
            max_message_bytes: self.max_message_bytes,
            mcp_allowed_hosts: self.mcp_allowed_hosts.clone(),
            public_urls: self.public_urls.clone(),
            allowed_origins: self.allowed_origins.clone(),
            max_connections: self.max_connections,
            log_typed_text: self.log_typed_text,
            mcp_max_sessions: self.mcp_max_sessions,
            forget_offline_after: self.forget_offline_after,
            max_offline_browsers: self.max_offline_browsers,
            session_retention: self.session_retention,
            log_retention: Duration::from_secs(self.log_retention_days.saturating_mul(86_400)),
            log_total_bytes: self.log_total_bytes,
            ..Settings::default()
        }
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_millis(self.shutdown_grace_ms)
    }

    pub fn artifact_limits(&self) -> Limits {
        Limits {
            max_artifact_bytes: self.artifact_max_bytes,
            max_store_bytes: self.artifact_total_bytes,
            ttl: Duration::from_secs(self.artifact_ttl_secs),
        }
    }
}

/// The secrets, one per role (docs/protocol.md §2.1, §12, and a metrics scraper's). They must
/// differ: a host's, an observer's or a scraper's token must never pass as an orchestrator's.
#[derive(Clone, Serialize, Deserialize)]
pub struct Tokens {
    pub orchestrator: String,
    pub host: String,
    /// Absent from a tokens file written before observers had a token of their own.
    #[serde(default)]
    pub observer: String,
    /// A metrics scraper's: `/metrics` only. Absent from a tokens file written before it was;
    /// empty when none (the three others given, this one not).
    #[serde(default)]
    pub metrics: String,
    /// Host tokens bound to one browser each (`tether-relay host-token`), kept apart.
    #[serde(skip)]
    pub bound: std::sync::Arc<crate::stores::host_tokens::HostTokens>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokens { .. }")
    }
}

const TOKENS_FILE: &str = "tokens.json";

impl Tokens {
    /// Each token from the arguments, else from `<data_dir>/tokens.json`, else a new one; the
    /// file keeps them all unless all were given. Returns where they were kept.
    pub fn resolve(args: &RelayArgs) -> Result<(Self, Option<PathBuf>)> {
        let given = [
            &args.orchestrator_token,
            &args.host_token,
            &args.observer_token,
            &args.metrics_token,
        ];
        Self::resolve_in(&args.data_dir, given)
    }

    /// [`Self::resolve`] for the data dir `data_dir` and the tokens `given` (orchestrator,
    /// host, observer, metrics).
    pub fn resolve_in(data_dir: &Path, given: [&Option<String>; 4]) -> Result<(Self, Option<PathBuf>)> {
        let path = data_dir.join(TOKENS_FILE);
        let stored = read(&path)?;
        let pick = |given: &Option<String>, stored: Option<&String>| {
            given
                .clone()
                .or_else(|| stored.filter(|t| !t.is_empty()).cloned())
                .unwrap_or_else(new_token)
        };
        let [orchestrator, host, observer, metrics] = given;
        // With the three roles' tokens given, nothing is written to disk: a metrics token is
        // then only one given too (else /metrics takes the orchestrator's alone).
        let nothing_kept = orchestrator.is_some() && host.is_some() && observer.is_some();
        let tokens = Self {
            orchestrator: pick(orchestrator, stored.as_ref().map(|t| &t.orchestrator)),
            host: pick(host, stored.as_ref().map(|t| &t.host)),
            observer: pick(observer, stored.as_ref().map(|t| &t.observer)),
            metrics: match nothing_kept {
                true => metrics.clone().unwrap_or_default(),
                false => pick(metrics, stored.as_ref().map(|t| &t.metrics)),
            },
            bound: Default::default(),
        };
        // A token made here is never empty; a given one must not be either.
        anyhow::ensure!(
            given.iter().all(|t| t.as_deref() != Some("")),
            "tokens must not be empty"
        );
        // The metrics token alone may be absent (empty).
        let all: Vec<&str> = tokens.all().into_iter().filter(|t| !t.is_empty()).collect();
        let distinct: std::collections::HashSet<&str> = all.iter().copied().collect();
        anyhow::ensure!(
            distinct.len() == all.len(),
            "the orchestrator, host, observer and metrics tokens must differ: each role has its own"
        );
        if nothing_kept {
            return Ok((tokens, None));
        }
        if stored.as_ref().map(Self::all) != Some(tokens.all()) {
            write(&path, &tokens)?;
        }
        Ok((tokens, Some(path)))
    }

    fn all(&self) -> [&str; 4] {
        [&self.orchestrator, &self.host, &self.observer, &self.metrics]
    }
}

/// 256 random bits, hex.
fn new_token() -> String {
    crate::parts::ids::random_hex(32)
}

fn read(path: &Path) -> Result<Option<Tokens>> {
    match at_rest::loosened(path) {
        Ok(true) => tracing::warn!(
            "{} was readable by other users; it is now its owner's alone. Whoever read it may hold the tokens: consider new ones",
            path.display()
        ),
        Ok(false) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!("cannot check who may read {}: {e}", path.display()),
    }
    match std::fs::read_to_string(path) {
        Ok(text) => {
            Ok(Some(serde_json::from_str(&text).with_context(|| {
                format!("{} is not a tokens file", path.display())
            })?))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn write(path: &Path, tokens: &Tokens) -> Result<()> {
    if let Some(dir) = path.parent() {
        at_rest::private_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(tokens)?;
    at_rest::write_private(path, text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(dir: &Path, extra: &[&str]) -> RelayArgs {
        let mut argv = vec!["tether-relay", "--data-dir", dir.to_str().unwrap()];
        argv.extend_from_slice(extra);
        RelayArgs::try_parse_from(argv).unwrap()
    }

    #[test]
    fn generated_tokens_are_kept_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let (first, kept) = Tokens::resolve(&args(dir.path(), &[])).unwrap();
        assert_eq!(kept.as_deref(), Some(dir.path().join(TOKENS_FILE).as_path()));
        assert_eq!(first.orchestrator.len(), 64);
        assert_ne!(first.orchestrator, first.host);
        let (again, _) = Tokens::resolve(&args(dir.path(), &[])).unwrap();
        assert_eq!(again.all(), first.all());
        assert_eq!(first.metrics.len(), 64);
        assert_ne!(first.observer, first.orchestrator);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(TOKENS_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "the tokens file is private");
        }
    }

    #[test]
    fn given_tokens_win_and_must_differ() {
        let dir = tempfile::tempdir().unwrap();
        let all = [
            "--orchestrator-token",
            "o",
            "--host-token",
            "h",
            "--observer-token",
            "w",
        ];
        let (tokens, kept) = Tokens::resolve(&args(dir.path(), &all)).unwrap();
        assert_eq!((&tokens.all()[..3], kept), (&["o", "h", "w"][..], None));
        assert_eq!(
            tokens.metrics, "",
            "no metrics token is made where nothing is kept"
        );
        let err = Tokens::resolve(&args(
            dir.path(),
            &["--orchestrator-token", "same", "--host-token", "same"],
        ))
        .unwrap_err();
        assert!(err.to_string().contains("must differ"), "{err}");
    }

    #[test]
    fn an_observer_token_is_generated_beside_given_ones_and_added_to_an_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let (tokens, kept) = Tokens::resolve(&args(
            dir.path(),
            &["--orchestrator-token", "o", "--host-token", "h"],
        ))
        .unwrap();
        assert!(kept.is_some(), "the generated observer token is kept");
        assert_eq!(tokens.observer.len(), 64);
        let (again, _) = Tokens::resolve(&args(
            dir.path(),
            &["--orchestrator-token", "o", "--host-token", "h"],
        ))
        .unwrap();
        assert_eq!(again.observer, tokens.observer);

        let old = tempfile::tempdir().unwrap();
        std::fs::write(
            old.path().join(TOKENS_FILE),
            r#"{"orchestrator":"o1","host":"h1"}"#,
        )
        .unwrap();
        let (upgraded, _) = Tokens::resolve(&args(old.path(), &[])).unwrap();
        assert_eq!(
            (upgraded.orchestrator.as_str(), upgraded.host.as_str()),
            ("o1", "h1")
        );
        assert_eq!(upgraded.observer.len(), 64);
    }

    #[test]
    fn durations_read_with_their_units() {
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(604_800)));
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert!(parse_duration("7 days").is_err() && parse_duration("h").is_err());
    }

    #[test]
    fn defaults_follow_the_spec() {
        let a = RelayArgs::try_parse_from(["tether-relay"]).unwrap();
        assert_eq!(a.listen.to_string(), "127.0.0.1:17800");
        assert_eq!(a.confirm, ConfirmMode::Never);
    }
}
