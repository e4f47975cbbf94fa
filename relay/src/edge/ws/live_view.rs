//! The live view in the console (docs/protocol.md §18): a connection starts and stops
//! watching a session's tab, the host is told to stream that tab while anyone does (and to stop
//! once nobody does), and each frame goes to every watcher that keeps up. A watcher with frames
//! still unsent gets no more until it has caught up: a slow viewer costs a few frames of
//! memory, never a queue.
//!
//! In a deployment of several relays the console watches through the relay holding the
//! browser's socket (the frames arrive there).

use std::collections::HashMap;

use tether_protocol::messages::Message;
use tether_protocol::person::{LiveFrame, LiveView};
use tether_protocol::{ActionError, Envelope, ErrorCode};

use crate::core::live_view::Watched;
use crate::core::state::Relay;
use crate::parts::outbox::Outbox;

/// A watcher gets the next frame only while fewer than this many frames wait to go out to it
/// (at most ~0.5 MB at the frames' size): on loopback a watcher is never that far behind.
const FRAMES_WAITING: usize = 8;

/// A connection starts watching a session's current tab.
pub fn start(
    relay: &Relay,
    connection_id: &str,
    outbox: &Outbox,
    session_id: &str,
) -> Result<Message, ActionError> {
    let (Some(client_id), Some(tab)) = relay.sessions.screen_of(session_id) else {
        return Err(ActionError::invalid_params(format!(
            "session {session_id} has no tab to show yet: start it on a page first"
        )));
    };
    let link = relay.link_to(&client_id).ok_or_else(|| {
        ActionError::new(
            ErrorCode::ClientOffline,
            format!("the browser {client_id} is not connected to the relay"),
        )
    })?;
    let tell_host = {
        let mut views = relay.live_views.lock();
        let watched = views.entry(session_id.to_owned()).or_insert_with(|| Watched {
            client_id: client_id.clone(),
            tab,
            viewers: HashMap::new(),
        });
        let moved = watched.tab != tab || watched.client_id != client_id;
        let first = watched.viewers.is_empty();
        watched.tab = tab;
        watched.client_id.clone_from(&client_id);
        watched.viewers.insert(connection_id.to_owned(), outbox.clone());
        first || moved
    };
    let view = LiveView {
        session_id: session_id.to_owned(),
        tab_id: Some(tab),
    };
    if tell_host {
        link.send(Envelope::of(Message::LiveViewStart(view.clone())));
    }
    Ok(Message::LiveViewStart(view))
}

/// A connection stops watching a session (`None`: every session, it left).
pub fn stop(relay: &Relay, connection_id: &str, session_id: Option<&str>) {
    let unwatched: Vec<(String, String)> = {
        let mut views = relay.live_views.lock();
        let mut unwatched = Vec::new();
        views.retain(|session, watched| {
            if session_id.is_none_or(|only| only == session) {
                watched.viewers.remove(connection_id);
            }
            let left = watched.viewers.is_empty();
            if left {
                unwatched.push((session.clone(), watched.client_id.clone()));
            }
            !left
        });
        unwatched
    };
    for (session_id, client_id) in unwatched {
        if let Some(link) = relay.link_to(&client_id) {
            let view = LiveView {
                session_id,
                tab_id: None,
            };
            link.send(Envelope::of(Message::LiveViewStop(view)));
        }
    }
}

/// A frame from the browser `client_id`, for the watchers of its session.
pub fn frame(relay: &Relay, client_id: &str, frame: LiveFrame) {
    let viewers: Vec<Outbox> = {
        let views = relay.live_views.lock();
        match views.get(&frame.session_id) {
            Some(watched) if watched.client_id == client_id && watched.tab == frame.tab_id => {
                watched.viewers.values().cloned().collect()
            }
            _ => return,
        }
    };
    let envelope = Envelope::of(Message::LiveViewFrame(frame));
    for viewer in viewers.iter().filter(|v| v.queued() < FRAMES_WAITING) {
        viewer.send(envelope.clone());
    }
}
