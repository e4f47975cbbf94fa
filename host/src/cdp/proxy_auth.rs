//! Gives a session's proxy the credentials it asks for (docs/protocol.md §21), in worker mode.
//!
//! Chromium takes a context's proxy as `scheme://host:port` only; the credentials are answered
//! through CDP's `Fetch.authRequired`, which the browser sends only for requests it paused.
//! So every target of a context whose proxy names credentials (its pages, their cross-origin
//! frames and workers, its service workers) gets a session of this module's own with `Fetch`
//! enabled for every request, each paused request is continued at once, and a proxy's challenge
//! is answered with the context's credentials, once per request: a second challenge means the
//! proxy refused them, and the request fails (`net::ERR_INVALID_AUTH_CREDENTIALS`). Contexts
//! without credentials pay nothing but one round trip as each new target starts, and only
//! while some context has them.
//!
//! A new target must be held before its first request: the browser-wide auto-attach with
//! `waitForDebuggerOnStart` holds every new page (and each of ours holds its children) until
//! it is readied or let go. A tab opened by the host is opened on `about:blank` and navigated
//! from here once readied: a page created on a URL sends its first request unheld.
//!
//! The events come through the connection's tap, never missed: a paused request nobody
//! continues would stall its page for good. Credentials are held here and in the browser
//! only, never logged (`Credentials` has no `Debug`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::fetch::{
    AuthChallengeResponse, AuthChallengeResponseResponse, ContinueRequestParams, ContinueWithAuthParams,
    EnableParams, EventAuthRequired, EventRequestPaused, RequestPattern,
};
use chromiumoxide::cdp::browser_protocol::target::{
    DetachFromTargetParams, EventAttachedToTarget, EventDetachedFromTarget, SetAutoAttachParams,
};
use chromiumoxide::cdp::js_protocol::runtime::RunIfWaitingForDebuggerParams;
use serde_json::{json, Value};
use tokio::sync::watch;

use super::connection::{CdpConnection, RawEvent, WeakCdpConnection};
use super::{typed, CdpError};

/// How long a tab the host opened may take to be readied for its proxy's credentials.
const READY_WITHIN: Duration = Duration::from_secs(10);
/// The most requests remembered as given credentials; past it the memory starts again (a
/// request given them again is at worst challenged once more).
const TRIED_MAX: usize = 1024;
/// The kinds of target whose requests go through their context's proxy.
const NETWORKED: [&str; 5] = ["page", "iframe", "worker", "shared_worker", "service_worker"];

/// A proxy's user name and password.
pub struct Credentials {
    pub username: String,
    pub password: String,
}

#[derive(Default)]
struct State {
    /// The credentials of each context whose proxy asks for them.
    contexts: HashMap<String, Credentials>,
    /// This module's sessions on those contexts' targets, and the context each is in.
    sessions: HashMap<String, String>,
    /// The session of each readied page, by target id.
    ready: HashMap<String, String>,
    /// The requests already given credentials.
    tried: HashSet<String>,
}

/// Answers the credentials of the contexts vouched for.
pub struct ProxyAuth {
    cdp: CdpConnection,
    state: Arc<Mutex<State>>,
    readied: watch::Sender<u64>,
}

fn locked(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

impl ProxyAuth {
    /// Starts answering on `cdp`; stops when the connection closes.
    pub fn start(cdp: &CdpConnection) -> Self {
        let events = cdp.tap(|method| {
            matches!(
                method,
                EventAttachedToTarget::IDENTIFIER
                    | EventDetachedFromTarget::IDENTIFIER
                    | EventRequestPaused::IDENTIFIER
                    | EventAuthRequired::IDENTIFIER
            )
        });
        let state = Arc::new(Mutex::new(State::default()));
        let (readied, _) = watch::channel(0);
        let answering = Answering {
            cdp: cdp.downgrade(),
            state: state.clone(),
            readied: readied.clone(),
        };
        tokio::spawn(answering.run(events));
        Self {
            cdp: cdp.clone(),
            state,
            readied,
        }
    }

    /// Whether `context`'s proxy asks for credentials answered here.
    pub fn asks(&self, context: &str) -> bool {
        locked(&self.state).contexts.contains_key(context)
    }

    /// Answers `context`'s proxy with `credentials` from now on; the context must have no
    /// target yet.
    pub async fn vouch(&self, context: &str, credentials: Credentials) -> Result<(), CdpError> {
        let first = {
            let mut state = locked(&self.state);
            state.contexts.insert(context.to_owned(), credentials);
            state.contexts.len() == 1
        };
        if first {
            self.hold_new_targets(true).await?;
        }
        Ok(())
    }

    /// Forgets `context` (disposed of).
    pub async fn forget(&self, context: &str) {
        let last = {
            let mut state = locked(&self.state);
            if state.contexts.remove(context).is_none() {
                return;
            }
            state.sessions.retain(|_, c| c != context);
            state.contexts.is_empty()
        };
        if last {
            if let Err(e) = self.hold_new_targets(false).await {
                tracing::debug!("new targets could not be let start unheld: {e}");
            }
        }
    }

    /// The session of this module's own on page `target_id`, once readied.
    pub async fn ready(&self, target_id: &str) -> Result<String, CdpError> {
        let mut readied = self.readied.subscribe();
        let wait = async {
            loop {
                if let Some(session) = locked(&self.state).ready.get(target_id) {
                    return Ok(session.clone());
                }
                if readied.changed().await.is_err() {
                    return Err(CdpError::Disconnected);
                }
            }
        };
        tokio::time::timeout(READY_WITHIN, wait)
            .await
            .unwrap_or_else(|_| {
                Err(CdpError::Other(format!(
                    "the new tab was not readied for its proxy's credentials within {} s",
                    READY_WITHIN.as_secs()
                )))
            })
    }

    async fn hold_new_targets(&self, hold: bool) -> Result<(), CdpError> {
        self.cdp.command(None, holding(hold)).await.map(|_| ())
    }
}

/// The task that takes the tapped events.
struct Answering {
    cdp: WeakCdpConnection,
    state: Arc<Mutex<State>>,
    readied: watch::Sender<u64>,
}

impl Answering {
    async fn run(self, mut events: tokio::sync::mpsc::UnboundedReceiver<RawEvent>) {
        while let Some(event) = events.recv().await {
            let Some(cdp) = self.cdp.upgrade() else { break };
            let (method, params) = (event.method.as_str(), &event.params);
            let session = event.session_id.as_deref();
            match method {
                EventAttachedToTarget::IDENTIFIER => {
                    if let Some(attached) = typed::event(method, params) {
                        self.attached(cdp, session, attached);
                    }
                }
                EventDetachedFromTarget::IDENTIFIER => {
                    if let Some(detached) = typed::event(method, params) {
                        self.detached(&detached);
                    }
                }
                EventRequestPaused::IDENTIFIER => self.paused(cdp, session, params),
                EventAuthRequired::IDENTIFIER => self.challenged(cdp, session, params),
                _ => {}
            }
        }
    }

    /// A target held as it started, by the browser-wide auto-attach (`parent: None`) or one of
    /// this module's sessions: readied if its context's proxy asks for credentials, else let go.
    fn attached(&self, cdp: CdpConnection, parent: Option<&str>, attached: EventAttachedToTarget) {
        let session: String = attached.session_id.into();
        let info = attached.target_info;
        let (kind, target): (&str, String) = (&info.r#type, info.target_id.into());
        if !attached.waiting_for_debugger {
            // Not held: an attach of the host's own (its tab sessions), or a target that
            // existed as holding began; not this module's.
            return;
        }
        let context = {
            let mut state = locked(&self.state);
            let context = match parent {
                None => info.browser_context_id.map(Into::into),
                Some(parent) => match state.sessions.get(parent) {
                    Some(context) => Some(context.clone()),
                    // A child of another session (a tab's own frames): not this module's.
                    None => return,
                },
            };
            let context = context.filter(|c| state.contexts.contains_key(c) && NETWORKED.contains(&kind));
            if let Some(context) = &context {
                state.sessions.insert(session.clone(), context.clone());
            }
            context
        };
        let let_go = parent.is_none() && context.is_none();
        let is_page = kind == "page";
        // A page's and a frame's children (frames, workers) are held too.
        let has_children = matches!(kind, "page" | "iframe");
        let state = self.state.clone();
        let readied = self.readied.clone();
        tokio::spawn(async move {
            if context.is_some() {
                ready(&cdp, &session, has_children).await;
            }
            let run = cdp.command(Some(&session), RunIfWaitingForDebuggerParams::default());
            if let Err(e) = run.await {
                tracing::debug!("a held target could not be let run (it may have gone): {e}");
            }
            if let_go {
                let detach = DetachFromTargetParams {
                    session_id: Some(session.into()),
                };
                let _ = cdp.command(None, detach).await;
            } else if is_page {
                locked(&state).ready.insert(target, session);
                readied.send_modify(|n| *n += 1);
            }
        });
    }

    fn detached(&self, detached: &EventDetachedFromTarget) {
        let session: &str = detached.session_id.as_ref();
        let mut state = locked(&self.state);
        if state.sessions.remove(session).is_some() {
            state.ready.retain(|_, s| s != session);
        }
    }

    /// Continues a request paused by one of this module's sessions.
    fn paused(&self, cdp: CdpConnection, session: Option<&str>, params: &Value) {
        let request = params.get("requestId").and_then(Value::as_str);
        let (Some(session), Some(request)) = (self.ours(session), request) else {
            return;
        };
        let request = ContinueRequestParams::new(request.to_owned());
        tokio::spawn(async move {
            if let Err(e) = cdp.command(Some(&session), request).await {
                tracing::debug!("a paused request could not be continued (it may have gone): {e}");
            }
        });
    }

    /// Answers a challenge: a proxy's with its context's credentials, the first time for a
    /// request; a refused login (a second challenge) or a site's as the browser would alone
    /// (headless, it signs in to neither: `net::ERR_INVALID_AUTH_CREDENTIALS`), never with the
    /// proxy's login.
    fn challenged(&self, cdp: CdpConnection, session: Option<&str>, params: &Value) {
        let Some(session) = self.ours(session) else { return };
        let Some(request) = params.get("requestId").and_then(Value::as_str) else {
            return;
        };
        let from_proxy = params.pointer("/authChallenge/source") == Some(&json!("Proxy"));
        let answer = {
            let mut state = locked(&self.state);
            let credentials = state.sessions.get(&session).and_then(|c| state.contexts.get(c));
            let given = credentials.map(|c| AuthChallengeResponse {
                response: AuthChallengeResponseResponse::ProvideCredentials,
                username: Some(c.username.clone()),
                password: Some(c.password.clone()),
            });
            if state.tried.len() >= TRIED_MAX {
                state.tried.clear();
            }
            match given {
                Some(given) if from_proxy && state.tried.insert(request.to_owned()) => given,
                _ => AuthChallengeResponse::new(AuthChallengeResponseResponse::Default),
            }
        };
        let params = ContinueWithAuthParams::new(request.to_owned(), answer);
        tokio::spawn(async move {
            if let Err(e) = cdp.command(Some(&session), params).await {
                tracing::debug!("a proxy's challenge could not be answered (the request may have gone): {e}");
            }
        });
    }

    fn ours(&self, session: Option<&str>) -> Option<String> {
        let session = session?;
        locked(&self.state)
            .sessions
            .contains_key(session)
            .then(|| session.to_owned())
    }
}

/// Readies a held target: every request paused (the browser asks for credentials only for a
/// paused one), its children held as they start.
async fn ready(cdp: &CdpConnection, session: &str, children: bool) {
    let every = RequestPattern {
        url_pattern: Some("*".into()),
        ..Default::default()
    };
    let fetch = EnableParams {
        patterns: Some(vec![every]),
        handle_auth_requests: Some(true),
    };
    if let Err(e) = cdp.command(Some(session), fetch).await {
        tracing::debug!("a target's requests cannot be paused (it may have gone): {e}");
    }
    if children {
        if let Err(e) = cdp.command(Some(session), holding(true)).await {
            tracing::debug!("a target's children cannot be held (it may have gone): {e}");
        }
    }
}

/// `Target.setAutoAttach` that holds (or stops holding) every new target as it starts, on a
/// session of its own (flattened).
fn holding(hold: bool) -> SetAutoAttachParams {
    let mut params = SetAutoAttachParams::new(hold, hold);
    params.flatten = Some(true);
    params
}
