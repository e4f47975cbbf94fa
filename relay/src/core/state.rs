//! Everything the relay holds, in one place every handler reaches: settings, tokens, the
//! registry of browsers, sessions, twins, events, pending confirmations, artifacts, metrics.

use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tether_protocol::actions;
use tether_protocol::between_relays::{ConfirmAnswer, ConfirmOutcome};
use tether_protocol::descriptors::ActionDescriptor;
use tether_protocol::messages::{Binding, ClientList, Message, SessionStatus, StreamEnd};
use tether_protocol::{ActionError, ErrorCode};

use crate::config::{Settings, Tokens};
use crate::core::confirmations::Confirmations;
use crate::core::host_link::Link;
use crate::core::job::Job;
use crate::core::registry::Registry;
use crate::core::sessions::{Changed, Fact, Sessions};
use crate::core::twin::Twins;
use crate::parts::metrics::Metrics;
use crate::parts::origins::Origins;
use crate::parts::shutdown::{Phase, Shutdown};
use crate::stores::artifacts::{ArtifactStore, Limits};
use crate::stores::events::{Events, Logged};
use crate::stores::session_log::{Direction, SessionLog};
use crate::stores::store::Store;

mod deployment;
pub use deployment::{Deployment, RunHere, Standalone};

pub struct Relay {
    pub settings: Settings,
    pub tokens: Tokens,
    pub catalog: &'static [ActionDescriptor],
    pub registry: Registry,
    pub sessions: Sessions<Job>,
    pub twins: Twins,
    pub events: Events,
    pub confirmations: Confirmations,
    /// The handoffs waiting for a person.
    pub handoffs: crate::core::handoffs_waiting::Waiting,
    /// The sessions someone watches live in the console.
    pub live_views: crate::core::live_view::LiveViews,
    pub artifacts: ArtifactStore,
    pub metrics: Metrics,
    pub shutdown: Shutdown,
    /// Where the relay is, and which pages may talk to its socket (docs/protocol.md §15).
    pub origins: Origins,
    /// Where the relay runs: alone, or as one of several (docs/protocol.md §14).
    pub deployment: Box<dyn Deployment>,
}

impl Relay {
    pub fn new(
        settings: Settings,
        tokens: Tokens,
        artifacts: ArtifactStore,
        log: SessionLog,
        sessions: Sessions<Job>,
    ) -> Self {
        let origins = Origins::new(settings.public_urls.clone(), settings.allowed_origins.clone());
        Self {
            settings,
            tokens,
            catalog: actions::catalog(),
            registry: Registry::default(),
            sessions,
            twins: Twins::default(),
            events: Events::new(log),
            confirmations: Confirmations::default(),
            handoffs: Default::default(),
            live_views: Default::default(),
            artifacts,
            metrics: Metrics::default(),
            shutdown: Shutdown::default(),
            origins,
            deployment: Box::new(Standalone),
        }
    }

    /// A relay keeping its artifacts, session logs and sessions in `data_dir`, with what it
    /// kept there before it stopped: what `main` runs, and what the test kit starts. A journal
    /// an earlier version kept there is imported first (docs/protocol.md §22).
    pub fn open(
        settings: Settings,
        mut tokens: Tokens,
        data_dir: &Path,
        limits: Limits,
    ) -> anyhow::Result<Self> {
        tether_os::at_rest::private_dir(data_dir)?;
        tokens.bound = Arc::new(crate::stores::host_tokens::HostTokens::open(data_dir));
        let artifacts = ArtifactStore::open(data_dir, limits)?;
        let log = SessionLog::new(data_dir)?;
        let store = Arc::new(Store::open(data_dir)?);
        let started = std::time::Instant::now();
        let imported = crate::core::sessions::import_journal(data_dir, &store)?;
        if imported.records > 0 {
            tracing::info!(
                records = imported.records,
                skipped = imported.skipped,
                "imported the journal of an earlier version in {} ms",
                started.elapsed().as_millis()
            );
        }
        Ok(Self::new(settings, tokens, artifacts, log, Sessions::new(store)))
    }

    /// The `extension.list` payload: every browser that has joined, with its sessions.
    pub fn clients(&self) -> ClientList {
        self.forget_offline_browsers();
        let mut clients = self.deployment.clients(self);
        for client in &mut clients {
            client.sessions = self.sessions.bound_to(&client.client_id);
        }
        ClientList { clients }
    }

    /// Forgets the browsers offline for `--forget-offline-after` and bound to no session that
    /// is still going, and the oldest offline past `--max-offline-browsers`.
    pub fn forget_offline_browsers(&self) {
        let Some(cutoff) = chrono::Duration::from_std(self.settings.forget_offline_after)
            .ok()
            .and_then(|after| chrono::Utc::now().checked_sub_signed(after))
        else {
            return;
        };
        self.registry.forget_offline(
            cutoff,
            self.settings.max_offline_browsers,
            |client_id| !self.sessions.going_bound_to(client_id).is_empty(),
            |client_id| self.tokens.bound.is_bound(client_id),
        );
    }

    /// Binds a session to a browser that has joined (seed 002: select_my_browser). A session
    /// waiting for a browser goes back to idle.
    pub async fn bind(&self, session_id: &str, client_id: &str) -> Result<Binding, ActionError> {
        if !self.knows_client(client_id) {
            return Err(ActionError::new(
                ErrorCode::InvalidParams,
                format!("no browser with clientId {client_id:?} has joined this relay; see extension.list"),
            ));
        }
        let bound = Binding {
            session_id: session_id.to_owned(),
            client_id: client_id.to_owned(),
        };
        self.events
            .record(session_id, Direction::In, Message::SessionBind(bound.clone()));
        let (changed, kept) = self
            .sessions
            .keep(session_id, |s| (s.bind(client_id), Fact::head()));
        kept.wait().await;
        self.events
            .record(session_id, Direction::Out, Message::SessionBound(bound.clone()));
        self.publish_state(changed);
        Ok(bound)
    }

    /// Tells a session's subscribers its new state; a completed session's stream ends.
    pub fn publish_state(&self, changed: Changed) {
        if let Some(state) = &changed {
            let session_id = state.session_id.clone();
            self.events.session_all(&session_id, state_events(changed));
        }
    }

    /// Stops as `shutdown` describes: refuse new actions, let running ones finish within
    /// `grace` (queued ones then end, in order, without running), end the rest, then let the
    /// sockets close.
    pub async fn shut_down(&self, grace: Duration) {
        self.shutdown.enter(Phase::Draining);
        if tokio::time::timeout(grace, self.idle()).await.is_err() {
            tracing::warn!("actions still running after {grace:?}; ending them");
            self.shutdown.enter(Phase::Aborting);
            // Each ends at once now; the bound only guards against a bug.
            let _ = tokio::time::timeout(Duration::from_secs(5), self.idle()).await;
        }
        self.shutdown.enter(Phase::Closed);
    }

    /// Resolves when no session has an action running.
    async fn idle(&self) {
        loop {
            let woken = self.shutdown.idle.notified();
            if self.sessions.running() == 0 {
                return;
            }
            woken.await;
        }
    }

    /// Publishes a browser's event to its subscribers and the sessions bound to it, on every
    /// relay of the deployment.
    pub fn client_event(&self, client_id: &str, event: Message) {
        self.deployment.client_event(self, client_id, event);
    }

    /// Publishes a browser's event to this relay's subscribers and sessions; the twin of a
    /// browser another relay holds is kept from its events.
    pub fn local_client_event(&self, client_id: &str, event: Message) {
        if let Message::TwinStateSync(sync) = &event {
            if !self.registry.holds(client_id) {
                self.twins.adopt(sync.clone());
            }
        }
        // Only the sessions still going: an ended session's log and stream are done, and a
        // browser's every tab change written into each session it ever served grew the logs
        // by sessions x changes (1.3 MB for a session 2 minutes old, soak bench).
        let sessions = self.sessions.going_bound_to(client_id);
        self.events.client(client_id, event, &sessions);
    }

    /// Whether a browser has joined (this relay, or any of the deployment).
    pub fn knows_client(&self, client_id: &str) -> bool {
        self.deployment.knows_client(self, client_id)
    }

    /// A browser's meta and whether it is online, wherever it joined.
    pub fn client_meta(&self, client_id: &str) -> Option<(serde_json::Value, bool)> {
        self.deployment.client_meta(self, client_id)
    }

    /// The browsers online now, sorted.
    pub fn online_clients(&self) -> Vec<String> {
        self.deployment.online_clients(self)
    }

    /// The link to a browser: its socket here, or through the relay of the deployment that
    /// holds it.
    pub fn link_to(&self, client_id: &str) -> Option<Link> {
        self.registry
            .link(client_id)
            .or_else(|| self.deployment.link_elsewhere(client_id))
    }

    /// Whether the owner of a browser approves each of its actions (§12).
    pub fn owner_confirms(&self, client_id: &str) -> bool {
        self.deployment.owner_confirms(self, client_id)
    }

    /// A person's answer to a confirmation this relay asked (§12), within the answer's limits:
    /// the sessions it may answer for.
    pub fn answer_confirmation(&self, answer: &ConfirmAnswer) -> ConfirmOutcome {
        self.confirmations.answer(
            &answer.request_id,
            answer.approved,
            |session| {
                answer.only_session.as_deref().is_none_or(|only| only == session)
                    && answer
                        .only_client
                        .as_deref()
                        .is_none_or(|client| self.sessions.is_bound_to(session, client))
            },
            &answer.refused,
        )
    }
}

/// What axum hands every handler: the one [`Relay`].
#[derive(Clone)]
pub struct AppState(pub Arc<Relay>);

impl Deref for AppState {
    type Target = Arc<Relay>;

    fn deref(&self) -> &Arc<Relay> {
        &self.0
    }
}

impl axum::extract::FromRef<AppState> for Tokens {
    fn from_ref(state: &AppState) -> Tokens {
        state.tokens.clone()
    }
}

/// The events that tell a session's new state, if it changed: its state, then the end of its
/// stream if it completed.
pub fn state_events(changed: Changed) -> Vec<Logged> {
    let Some(state) = changed else {
        return Vec::new();
    };
    let completed = (state.status == SessionStatus::Completed).then(|| state.session_id.clone());
    let mut events = vec![Logged::of(Direction::Internal, &Message::SessionState(state))];
    if let Some(session_id) = completed {
        let end = StreamEnd {
            session_id,
            reason: "session_stop".into(),
        };
        events.push(Logged::of(Direction::Internal, &Message::StreamEnd(end)));
    }
    events
}
