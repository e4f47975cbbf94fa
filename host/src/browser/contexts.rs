//! Which browser context each session's tabs open in (docs/protocol.md §21). Where the
//! transport has contexts (worker mode), a session runs in a context of its own, created as it
//! starts and disposed as it ends with its tabs closed: nothing of its cookies, storage, cache
//! or service workers is seen by another session. A session that names a profile joins that
//! profile's one context, shared by every running session that names it; `"default"` is the
//! browser's own context. A named profile's state is kept on disk where the host keeps profiles
//! (`profiles.rs`): put back as its context is made, saved shortly after each action of its
//! sessions, every minute while one runs, and as its last one ends. Where the transport lends
//! one person's profile (extension mode), sessions share it by design, and a named profile or a
//! proxy is `UNSUPPORTED`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tether_protocol::actions::browser_storage_state::StorageState;
use tether_protocol::actions::session_start::{Proxy, DEFAULT_PROFILE};
use tether_protocol::{ActionError, ErrorCode};
use tokio::sync::Notify;

use crate::browser::profiles::{self, cookie_param, ProfileStore};
use crate::cdp::Transport;

/// How often a running profile is saved however little its sessions do (docs/protocol.md §21).
const SAVE_EVERY: Duration = Duration::from_secs(60);
/// How long after an action of its sessions a profile is saved: what the page's handlers
/// wrote reaches the browser's cookie store a moment after (and more actions fold into one save).
const SAVE_AFTER_ACTION: Duration = Duration::from_millis(250);

/// Where a session's tabs open.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Placement {
    /// The person's own profile, lent through the extension.
    Lent,
    /// The browser's default context, named as the profile `"default"`.
    Default,
    /// A context of the session's own.
    Own(String),
    /// The context of a named profile.
    Profile(String),
}

/// A named profile's context while sessions run in it.
struct Running {
    context: String,
    /// The proxy the session that created it named: another session naming the profile names
    /// the same (every field) or none.
    proxy: Option<Proxy>,
    sessions: usize,
    /// Keeps it on disk, where the host keeps profiles.
    saver: Option<Saver>,
}

#[derive(Default)]
pub struct Contexts {
    inner: Mutex<Inner>,
    store: Option<ProfileStore>,
}

#[derive(Default)]
struct Inner {
    sessions: HashMap<String, Placement>,
    profiles: HashMap<String, Running>,
}

/// What a session asked to run in (`session_start`'s `profile` and `proxy`).
pub struct Wanted<'p> {
    pub profile: Option<&'p str>,
    pub proxy: Option<&'p Proxy>,
}

impl Contexts {
    /// Contexts whose named profiles are kept in `store`.
    pub fn keeping_profiles_in(store: ProfileStore) -> Self {
        Self {
            store: Some(store),
            ..Self::default()
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Places the session's tabs (in a context made or joined as it first asks, or the
    /// browser's default); what a named profile kept that only a page of its origins can put
    /// back (its localStorage and IndexedDB), when the profile's context was just made from its file. A
    /// session keeps the context it started in: a later `session_start` naming another profile
    /// or proxy is refused.
    pub async fn for_session(
        &self,
        transport: &Arc<dyn Transport>,
        session_id: &str,
        wanted: Wanted<'_>,
    ) -> Result<Option<StorageState>, ActionError> {
        if let Some(placed) = self.lock().sessions.get(session_id).cloned() {
            return self.same_as_before(&placed, &wanted).map(|()| None);
        }
        if !transport.has_contexts() {
            return self.lent(session_id, &wanted).map(|()| None);
        }
        if wanted.proxy.is_some_and(|p| p.username.is_some() && p.is_socks()) {
            return Err(ActionError::new(
                ErrorCode::Unsupported,
                "Chromium does not sign in to SOCKS proxies: name an http or https proxy for credentials, or a SOCKS proxy that lets this host in without them",
            ));
        }
        let mut restore = None;
        let placed = match wanted.profile {
            Some(DEFAULT_PROFILE) if wanted.proxy.is_some() => {
                return Err(ActionError::invalid_params(
                    "the default profile goes through the browser's own network settings: a proxy needs a context of its own (leave out profile) or a named profile",
                ))
            }
            Some(DEFAULT_PROFILE) => Placement::Default,
            Some(name) => {
                restore = self.join_profile(transport, name, wanted.proxy).await?;
                Placement::Profile(name.to_owned())
            }
            None => Placement::Own(create(transport.as_ref(), wanted.proxy).await?),
        };
        self.lock().sessions.insert(session_id.to_owned(), placed);
        Ok(restore)
    }

    /// Places a session in the person's own profile, lent through the extension: the only
    /// one there is, so another profile or a proxy cannot be chosen.
    fn lent(&self, session_id: &str, wanted: &Wanted<'_>) -> Result<(), ActionError> {
        let placed = match (wanted.profile, wanted.proxy) {
            (None, None) => Placement::Lent,
            (Some(DEFAULT_PROFILE), None) => Placement::Default,
            _ => return Err(ActionError::new(
                ErrorCode::Unsupported,
                "this browser is a person's own, lent through the extension: its sessions share its one profile, so neither another profile nor a proxy can be chosen here (run a worker for those)",
            )),
        };
        self.lock().sessions.insert(session_id.to_owned(), placed);
        Ok(())
    }

    /// An action of the session ended: a profile it runs in is saved shortly.
    pub fn touched(&self, session_id: &str) {
        let inner = self.lock();
        if let Some(Placement::Profile(name)) = inner.sessions.get(session_id) {
            if let Some(saver) = inner.profiles.get(name).and_then(|r| r.saver.as_ref()) {
                saver.dirty.notify_one();
            }
        }
    }

    /// The session is about to end with its tabs closed: a profile it is the last session of
    /// is saved now, while its pages are still there to read.
    pub async fn leaving(&self, transport: &dyn Transport, session_id: &str) {
        let Some(store) = &self.store else {
            return;
        };
        let last = {
            let inner = self.lock();
            match inner.sessions.get(session_id) {
                Some(Placement::Profile(name)) => inner
                    .profiles
                    .get(name)
                    .filter(|r| r.sessions == 1)
                    .map(|r| (name.clone(), r.context.clone())),
                _ => None,
            }
        };
        if let Some((name, context)) = last {
            let before = store.read(&name).await;
            if let Err(e) = profiles::save(transport, store, &name, &context, before).await {
                tracing::warn!(
                    profile = name,
                    "the profile was not saved as its last session ended: {e}"
                );
            }
        }
    }

    /// The context of a session that already has one (`None`: the default, or none yet).
    pub fn of_session(&self, session_id: &str) -> Option<String> {
        let placed = self.lock().sessions.get(session_id).cloned()?;
        self.context_of(&placed)
    }

    /// The profile the session runs in, if it named one.
    pub fn profile_of(&self, session_id: &str) -> Option<String> {
        match self.lock().sessions.get(session_id)? {
            Placement::Profile(name) => Some(name.clone()),
            Placement::Default => Some(DEFAULT_PROFILE.to_owned()),
            Placement::Own(_) | Placement::Lent => None,
        }
    }

    /// The session ended with its tabs closed: its own context goes, and a profile's once its
    /// last session left.
    pub async fn release(&self, transport: &dyn Transport, session_id: &str) {
        let gone = {
            let mut inner = self.lock();
            match inner.sessions.remove(session_id) {
                Some(Placement::Own(context)) => Some(context),
                Some(Placement::Profile(name)) => {
                    let last = inner.profiles.get_mut(&name).is_some_and(|running| {
                        running.sessions -= 1;
                        running.sessions == 0
                    });
                    match last {
                        true => inner.profiles.remove(&name).map(|running| running.context),
                        false => None,
                    }
                }
                Some(Placement::Default | Placement::Lent) | None => None,
            }
        };
        if let Some(context) = gone {
            if let Err(e) = transport.dispose_context(&context).await {
                tracing::warn!(session_id, "a session's browser context was not disposed: {e}");
            }
        }
    }

    fn context_of(&self, placed: &Placement) -> Option<String> {
        match placed {
            Placement::Default | Placement::Lent => None,
            Placement::Own(context) => Some(context.clone()),
            Placement::Profile(name) => self.lock().profiles.get(name).map(|r| r.context.clone()),
        }
    }

    fn same_as_before(&self, placed: &Placement, wanted: &Wanted<'_>) -> Result<(), ActionError> {
        let named = match placed {
            Placement::Profile(name) => Some(name.as_str()),
            Placement::Default => Some(DEFAULT_PROFILE),
            Placement::Lent if wanted.profile == Some(DEFAULT_PROFILE) => Some(DEFAULT_PROFILE),
            _ => None,
        };
        match wanted.profile.is_none_or(|p| Some(p) == named) && wanted.proxy.is_none() {
            true => Ok(()),
            false => Err(ActionError::invalid_params(
                "this session already runs in its browser context: a profile or proxy is chosen by the session's first session_start (start another session for another)",
            )),
        }
    }

    /// Joins the session to profile `name`'s context, made (and filled from its file) if no
    /// session runs in it; the file's state when it was, for its localStorage.
    async fn join_profile(
        &self,
        transport: &Arc<dyn Transport>,
        name: &str,
        proxy: Option<&Proxy>,
    ) -> Result<Option<StorageState>, ActionError> {
        {
            let mut inner = self.lock();
            if let Some(running) = inner.profiles.get_mut(name) {
                if proxy.is_some() && running.proxy.as_ref() != proxy {
                    return Err(ActionError::invalid_params(format!(
                        "profile {name:?} is running through another proxy (set by the session that opened it): name the same proxy, or none"
                    )));
                }
                running.sessions += 1;
                return Ok(None);
            }
        }
        let context = create(transport.as_ref(), proxy).await?;
        let saved = match &self.store {
            Some(store) => store.read(name).await,
            None => None,
        };
        if let Some(state) = &saved {
            let cookies = state.cookies.iter().map(cookie_param).collect();
            if let Err(e) = transport.set_context_cookies(&context, cookies).await {
                tracing::warn!(profile = name, "the profile's cookies were not put back: {e}");
            }
        }
        let saver = self.store.clone().map(|store| {
            let keep = Keep {
                transport: transport.clone(),
                store,
                name: name.to_owned(),
                context: context.clone(),
            };
            Saver::start(keep, saved.clone())
        });
        let opened_meanwhile = {
            let mut inner = self.lock();
            match inner.profiles.get_mut(name) {
                Some(running) => {
                    running.sessions += 1;
                    true
                }
                None => {
                    let running = Running {
                        context: context.clone(),
                        proxy: proxy.cloned(),
                        sessions: 1,
                        saver,
                    };
                    inner.profiles.insert(name.to_owned(), running);
                    false
                }
            }
        };
        // Another session opened it meanwhile: this one joined that, and the new one goes.
        if opened_meanwhile {
            let _ = transport.dispose_context(&context).await;
            return Ok(None);
        }
        Ok(saved)
    }
}

/// What a running profile's saver saves, and where.
struct Keep {
    transport: Arc<dyn Transport>,
    store: ProfileStore,
    name: String,
    context: String,
}

/// Saves a running profile shortly after each action of its sessions and every
/// [`SAVE_EVERY`]; stops when dropped (its profile's last session ended).
struct Saver {
    dirty: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Saver {
    fn start(keep: Keep, saved: Option<StorageState>) -> Self {
        let dirty = Arc::new(Notify::new());
        let asked = dirty.clone();
        let task = tokio::spawn(async move {
            let mut kept = saved;
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(SAVE_EVERY) => {}
                    _ = asked.notified() => tokio::time::sleep(SAVE_AFTER_ACTION).await,
                }
                let Keep {
                    transport,
                    store,
                    name,
                    context,
                } = &keep;
                match profiles::save(transport.as_ref(), store, name, context, kept.clone()).await {
                    Ok(state) => kept = Some(state),
                    Err(e) => tracing::warn!(profile = name, "the profile was not saved: {e}"),
                }
            }
        });
        Self { dirty, task }
    }
}

impl Drop for Saver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn create(transport: &dyn Transport, proxy: Option<&Proxy>) -> Result<String, ActionError> {
    transport.create_context(proxy).await.map_err(|e| {
        ActionError::new(
            ErrorCode::CdpError,
            format!("the browser could not make the session a context of its own: {e}"),
        )
    })
}
