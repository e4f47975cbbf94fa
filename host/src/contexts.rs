//! Which browser context each session's tabs open in (docs/protocol.md §21). Where the
//! transport has contexts (worker mode), a session runs in a context of its own, created as it
//! starts and disposed as it ends with its tabs closed: nothing of its cookies, storage, cache
//! or service workers is seen by another session. A session that names a profile joins that
//! profile's one context, shared by every running session that names it; `"default"` is the
//! browser's own context. Where the transport lends one person's profile (extension mode),
//! sessions share it by design, and a named profile or a proxy is `UNSUPPORTED`.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use tether_protocol::actions::session_start::{Proxy, DEFAULT_PROFILE};
use tether_protocol::{ActionError, ErrorCode};

use crate::cdp::Transport;

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
}

#[derive(Default)]
pub struct Contexts {
    inner: Mutex<Inner>,
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
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The context the session's tabs open in (`None`: the browser's default), made or joined
    /// as the session first asks. A session keeps the context it started in: a later
    /// `session_start` naming another profile or proxy is refused.
    pub async fn for_session(
        &self,
        transport: &dyn Transport,
        session_id: &str,
        wanted: Wanted<'_>,
    ) -> Result<Option<String>, ActionError> {
        if let Some(placed) = self.lock().sessions.get(session_id).cloned() {
            return self
                .same_as_before(&placed, &wanted)
                .map(|()| self.context_of(&placed));
        }
        if !transport.has_contexts() {
            return match (wanted.profile, wanted.proxy) {
                (None | Some(DEFAULT_PROFILE), None) => {
                    let placed = match wanted.profile {
                        Some(_) => Placement::Default,
                        None => Placement::Lent,
                    };
                    self.lock().sessions.insert(session_id.to_owned(), placed);
                    Ok(None)
                }
                _ => Err(ActionError::new(
                    ErrorCode::Unsupported,
                    "this browser is a person's own, lent through the extension: its sessions share its one profile, so neither another profile nor a proxy can be chosen here (run a worker for those)",
                )),
            };
        }
        let placed = match wanted.profile {
            Some(DEFAULT_PROFILE) if wanted.proxy.is_some() => {
                return Err(ActionError::invalid_params(
                    "the default profile goes through the browser's own network settings: a proxy needs a context of its own (leave out profile) or a named profile",
                ))
            }
            Some(DEFAULT_PROFILE) => Placement::Default,
            Some(name) => {
                self.join_profile(transport, name, wanted.proxy).await?;
                Placement::Profile(name.to_owned())
            }
            None => Placement::Own(create(transport, wanted.proxy).await?),
        };
        let context = self.context_of(&placed);
        self.lock().sessions.insert(session_id.to_owned(), placed);
        Ok(context)
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

    async fn join_profile(
        &self,
        transport: &dyn Transport,
        name: &str,
        proxy: Option<&Proxy>,
    ) -> Result<(), ActionError> {
        {
            let mut inner = self.lock();
            if let Some(running) = inner.profiles.get_mut(name) {
                if proxy.is_some() && running.proxy.as_ref() != proxy {
                    return Err(ActionError::invalid_params(format!(
                        "profile {name:?} is running through another proxy (set by the session that opened it): name the same proxy, or none"
                    )));
                }
                running.sessions += 1;
                return Ok(());
            }
        }
        let context = create(transport, proxy).await?;
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
                    };
                    inner.profiles.insert(name.to_owned(), running);
                    false
                }
            }
        };
        // Another session opened it meanwhile: this one joined that, and the new one goes.
        if opened_meanwhile {
            let _ = transport.dispose_context(&context).await;
        }
        Ok(())
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
