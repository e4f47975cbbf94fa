//! Extension mode: Chrome starts `tether-host chrome-extension://<id>/` when the extension
//! opens its native-messaging port. The host checks the caller against its config, speaks
//! framed JSON on stdio (nothing else ever goes to stdout), drives tabs through the
//! extension's `chrome.debugger` bridge ([`transport::ExtensionTransport`]), forwards the
//! extension's twin reports, and serves the relay like a worker. It ends when Chrome closes
//! the port.
//!
//! Messages (extension <-> host; documented in extension/README.md):
//! - extension -> host: `hello`, `full_state_sync`, `tab_event`, `reply`, `cdp.event`,
//!   `cdp.detached`, `stop_all`, `ping`;
//! - host -> extension: `call` (`tabs.*`, `debugger.*`, `twin.sync`), `status`, `pong`.

pub mod transport;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use async_trait::async_trait;
use tether_protocol::framing::{self, FrameError, BROWSER_TO_HOST_MAX, HOST_TO_BROWSER_MAX};
use tether_protocol::messages::{ClientSettings, Confirmation, HandoffAnswer, Message, SessionMessage};
use tether_protocol::native::{ExtensionCall, FromExtension, HostStatus, ToExtension};
use tether_protocol::twin::FullState;
use tokio::sync::{broadcast, mpsc, watch};

use crate::engine::policy::Policy;
use crate::modes::config::{self, HostConfig};
use crate::modes::relay_link::{self, LinkOptions};
use crate::modes::twin_report::{TwinChange, TwinSource};
use crate::parts::artifacts::RelayStore;
use crate::Engine;
use transport::ExtensionTransport;

/// How long the extension has to say hello before the host joins the relay without knowing
/// the browser's version.
const HELLO_WAIT: Duration = Duration::from_secs(5);
const STATUS_EVERY: Duration = Duration::from_secs(2);

/// The twin as the extension reports it; after a (re)join the host asks it for a full state.
struct ExtensionTwin {
    to_extension: mpsc::UnboundedSender<ToExtension>,
    changes: broadcast::Sender<TwinChange>,
}

#[async_trait]
impl TwinSource for ExtensionTwin {
    async fn full_state(&self) -> Option<FullState> {
        // The extension answers with a full_state_sync message, which flows through changes;
        // the reply to this call (id 0) is not awaited.
        let _ = self.to_extension.send(ToExtension::Call {
            id: 0,
            call: ExtensionCall::TwinSync {},
        });
        None
    }

    fn changes(&self) -> broadcast::Receiver<TwinChange> {
        self.changes.subscribe()
    }
}

pub async fn main(origin: String) -> ExitCode {
    let config = match HostConfig::load() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("tether-host: {e:#}");
            return ExitCode::from(1);
        }
    };
    if !config.allows(&origin) {
        eprintln!(
            "tether-host: {origin} may not start this host (allowed: {:?}; see tether-host install)",
            config.allowed_origins
        );
        return ExitCode::from(1);
    }
    match serve(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tether-host: {e:#}");
            ExitCode::from(1)
        }
    }
}

async fn serve(config: HostConfig) -> anyhow::Result<()> {
    let (to_extension, outgoing) = mpsc::unbounded_channel::<ToExtension>();
    let writer = tokio::spawn(write_frames(outgoing));
    let transport = Arc::new(ExtensionTransport::new(to_extension.clone()));
    let twin = Arc::new(ExtensionTwin {
        to_extension: to_extension.clone(),
        changes: broadcast::channel(1024).0,
    });
    let mut incoming = read_frames();

    // The extension says hello first; its user agent names the browser for the relay.
    let hello = tokio::time::timeout(HELLO_WAIT, incoming.recv())
        .await
        .ok()
        .flatten();
    let product = match &hello {
        Some(FromExtension::Hello { user_agent, .. }) => product_of(user_agent),
        _ => None,
    }
    .unwrap_or_else(|| "Chrome/unknown".into());

    let client_id = match &config.client_id {
        Some(id) => id.clone(),
        None => config::stored_client_id()?,
    };
    let (ws_url, http_base) = relay_link::relay_urls(&config.relay);
    let policy = Policy::new(&config.forbid_urls).map_err(anyhow::Error::msg)?;
    policy.add_relay_origin(&http_base);
    let tls = crate::parts::tls::client_config(config.ca_file.as_deref())?;
    let store = RelayStore::new(&http_base, &config.token, &tls)
        .context("cannot make a folder for files to upload")?;
    let engine = Arc::new(Engine::new(
        transport.clone(),
        Arc::new(store),
        policy.clone(),
        client_id.clone(),
    ));

    let (owner_settings, settings_rx) = watch::channel(ClientSettings::default());
    let (owner_says, says_rx) = mpsc::unbounded_channel();
    let status = Status {
        to_extension: to_extension.clone(),
        engine: engine.clone(),
        client_id: client_id.clone(),
        relay: Arc::default(),
        unreadable_sites: Arc::default(),
        secrets_error: Arc::default(),
        owner_settings: Arc::new(owner_settings),
        owner_says,
    };
    let owner = relay_link::Owner {
        settings: settings_rx,
        says: Arc::new(tokio::sync::Mutex::new(says_rx)),
        told: {
            let to_extension = to_extension.clone();
            Arc::new(move |message| {
                let for_popup = match message {
                    Message::ConfirmationRequested(asking) => ToExtension::ConfirmationRequested(asking),
                    Message::AgentMessage(words) => ToExtension::AgentMessage(words),
                    _ => return,
                };
                let _ = to_extension.send(for_popup);
            })
        },
    };
    let on_link = {
        let status = status.clone();
        Arc::new(move |joined: bool| {
            status.relay.store(joined, std::sync::atomic::Ordering::Relaxed);
            status.send();
        })
    };
    let options = LinkOptions {
        ws_urls: vec![ws_url],
        token: config.token.clone(),
        client_id,
        meta: crate::modes::worker::meta(&product, "extension"),
        twin: twin.clone(),
        on_link: Some(on_link),
        tls,
        owner: Some(owner),
        policy,
    };
    let link = tokio::spawn(relay_link::run(options, engine.clone()));
    let pulse = tokio::spawn(status.clone().every(STATUS_EVERY));
    let handoffs = tokio::spawn(status.clone().on_handoffs());

    let dispatch = |message: FromExtension| dispatch(message, &transport, &twin, &status);
    if let Some(hello) = hello {
        dispatch(hello);
    }
    while let Some(message) = incoming.recv().await {
        dispatch(message);
    }
    // Chrome closed the port (or the browser is gone): stop, so the next connect starts anew.
    transport.close();
    link.abort();
    pulse.abort();
    handoffs.abort();
    // Whatever is still queued has no reader now; give the writer a moment, no more.
    let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
    Ok(())
}

/// Messages from the extension, read by a task of their own (a frame is never cut by a
/// timeout); the channel ends when the pipe ends or is out of step.
fn read_frames() -> mpsc::UnboundedReceiver<FromExtension> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut stdin = tokio::io::stdin();
        loop {
            match framing::read_frame::<_, FromExtension>(&mut stdin, BROWSER_TO_HOST_MAX).await {
                Ok(Some(message)) => {
                    if tx.send(message).is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                // The whole body was read: the stream is still in step, skip this one.
                Err(e @ (FrameError::InvalidJson(_) | FrameError::InvalidUtf8(_))) => {
                    tracing::error!("a frame from the extension was dropped: {e}");
                }
                Err(e) => {
                    tracing::error!("the pipe from the browser is unusable: {e}");
                    return;
                }
            }
        }
    });
    rx
}

async fn write_frames(mut outgoing: mpsc::UnboundedReceiver<ToExtension>) {
    let mut stdout = tokio::io::stdout();
    while let Some(message) = outgoing.recv().await {
        match framing::write_frame(&mut stdout, &message, HOST_TO_BROWSER_MAX).await {
            Ok(()) => {}
            Err(FrameError::Io(e)) => {
                tracing::error!("cannot write to the browser: {e}");
                return;
            }
            // Never sent, so the port lives: the caller was told by the size check.
            Err(e) => tracing::error!("a message to the extension was not sent: {e}"),
        }
    }
}

fn dispatch(message: FromExtension, transport: &ExtensionTransport, twin: &ExtensionTwin, status: &Status) {
    match message {
        FromExtension::FullStateSync { payload } => {
            transport.full_state(&payload);
            let _ = twin.changes.send(TwinChange::Full(Some(payload)));
        }
        FromExtension::TabEvent { payload } => {
            transport.tab_event(&payload);
            let _ = twin.changes.send(TwinChange::Event(payload));
        }
        FromExtension::Reply { id, result, error } => transport.reply(id, result, error),
        FromExtension::CdpEvent {
            tab_id,
            session_id,
            method,
            params,
        } => transport.cdp_event(tab_id, session_id.is_some(), method, params),
        FromExtension::CdpDetached { tab_id, reason } => transport.detached(tab_id, reason),
        FromExtension::Ping => {
            let _ = status.to_extension.send(ToExtension::Pong);
        }
        FromExtension::Hello {
            extension_version,
            user_agent,
        } => tracing::info!(extension_version, user_agent, "extension says hello"),
        FromExtension::Settings {
            allow_evaluate,
            allow_storage_state,
            blocked_sites,
            confirm_every_action,
            secrets,
        } => {
            tracing::info!(
                allow_evaluate,
                allow_storage_state,
                ?blocked_sites,
                confirm_every_action,
                "the browser's owner changed Tether's settings"
            );
            let policy = status.engine.policy();
            policy.set_allow_evaluate(allow_evaluate);
            policy.set_allow_storage_state(allow_storage_state);
            let given = secrets
                .into_iter()
                .map(|s| (s.name, s.value, s.origins))
                .collect();
            let refused = policy.secrets().set(given).err().map(|e| {
                tracing::warn!("the owner's secrets are refused: {e}");
                let _ = policy.secrets().set(Vec::new());
                e.to_string()
            });
            *status.secrets_error.lock().unwrap_or_else(|p| p.into_inner()) = refused;
            let unreadable = policy.set_blocked_sites(&blocked_sites);
            *status.unreadable_sites.lock().unwrap_or_else(|p| p.into_inner()) = unreadable;
            let secrets = policy.secrets().named().into_iter().map(|s| s.name).collect();
            status.owner_settings.send_replace(ClientSettings {
                confirm_every_action,
                secrets: Some(secrets),
            });
            status.send();
        }
        FromExtension::UserMessage { session_id, text } => {
            let words = SessionMessage { session_id, text };
            let _ = status.owner_says.send(Message::UserMessage(words));
        }
        FromExtension::HandoffAnswer {
            session_id,
            action_id,
            outcome,
            note,
        } => {
            let answer = HandoffAnswer {
                session_id,
                action_id,
                outcome,
                note,
            };
            if !status.engine.handoffs().answer(answer) {
                tracing::info!("the owner answered a handoff that no longer waits");
            }
        }
        FromExtension::Confirm { request_id, approved } => {
            let answer = Confirmation { request_id, approved };
            let _ = status.owner_says.send(Message::Confirm(answer));
        }
        FromExtension::StopSession { session_id } => {
            let stopped = status.engine.stop_session(&session_id);
            tracing::warn!(
                session_id,
                stopped,
                "the user stopped a session from the extension"
            );
            status.send();
        }
        FromExtension::StopAll => {
            let stopped = status.engine.stop_all();
            tracing::warn!(?stopped, "the user stopped every session from the extension");
            status.send();
        }
    }
}

/// What the popup shows: the relay link, this browser's id, the sessions and their tabs.
#[derive(Clone)]
struct Status {
    to_extension: mpsc::UnboundedSender<ToExtension>,
    engine: Arc<Engine>,
    client_id: String,
    relay: Arc<std::sync::atomic::AtomicBool>,
    /// The owner's blocked sites that are not match patterns, with why: the popup shows them.
    unreadable_sites: Arc<std::sync::Mutex<Vec<String>>>,
    /// Why the owner's secrets were refused, if they were.
    secrets_error: Arc<std::sync::Mutex<Option<String>>>,
    /// What the owner asks of the relay (the relay link sends it).
    owner_settings: Arc<watch::Sender<ClientSettings>>,
    /// The owner's answers, for the relay link to send.
    owner_says: mpsc::UnboundedSender<Message>,
}

impl Status {
    fn send(&self) {
        let joined = self.relay.load(std::sync::atomic::Ordering::Relaxed);
        let sessions = self.engine.sessions_for_owner();
        let _ = self.to_extension.send(ToExtension::Status(HostStatus {
            relay: if joined { "connected" } else { "disconnected" }.into(),
            client_id: self.client_id.clone(),
            sessions,
            allow_evaluate: self.engine.policy().allows_evaluate(),
            allow_storage_state: self.engine.policy().allows_storage_state(),
            secrets: self.engine.policy().secrets().named(),
            secrets_error: self
                .secrets_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            blocked_sites: self.engine.policy().blocked_sites(),
            confirm_every_action: self.owner_settings.borrow().confirm_every_action,
            unreadable_sites: self
                .unreadable_sites
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            handoffs: self.engine.handoffs().waiting(),
        }));
    }

    async fn every(self, period: Duration) {
        let mut tick = tokio::time::interval(period);
        loop {
            tick.tick().await;
            self.send();
        }
    }

    /// Tells the popup at once of each handoff that starts or ends.
    async fn on_handoffs(self) {
        let mut changes = self.engine.handoffs().follow();
        while changes.changed().await.is_ok() {
            self.send();
        }
    }
}

/// `Chrome/156.0.1.2` (or `Edge/...`) from a user agent.
fn product_of(user_agent: &str) -> Option<String> {
    let version = |name: &str| {
        user_agent
            .split_whitespace()
            .find_map(|part| part.strip_prefix(name))
            .map(|v| v.to_owned())
    };
    if let Some(v) = version("Edg/") {
        return Some(format!("Edge/{v}"));
    }
    let chrome = version("Chrome/").or_else(|| version("HeadlessChrome/"))?;
    let name = if user_agent.contains("HeadlessChrome") {
        "HeadlessChrome"
    } else {
        "Chrome"
    };
    Some(format!("{name}/{chrome}"))
}
