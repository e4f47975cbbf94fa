//! Who watches which session's tab live (docs/protocol.md §18), by connection: the table the
//! relay keeps; `ws/live_view.rs` starts, stops and feeds the views.

use std::collections::HashMap;
use std::sync::Mutex;

use tether_protocol::actions::TabId;

use crate::parts::outbox::Outbox;

/// A session watched: its browser and tab, and each watcher's outbox by connection.
pub struct Watched {
    pub client_id: String,
    pub tab: TabId,
    pub viewers: HashMap<String, Outbox>,
}

/// The sessions someone watches live.
#[derive(Default)]
pub struct LiveViews(Mutex<HashMap<String, Watched>>);

impl LiveViews {
    /// The watched sessions, by id.
    pub fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Watched>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}
