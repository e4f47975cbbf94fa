//! What the host tells the relay about its browser's tabs (docs/protocol.md §2.5): a
//! `full_state_sync` when it joins, then a `tab_event` for each change the transport sees.
//!
//! A worker's headless browser has no person looking at it, so no tab is reported `active`.

use std::sync::Arc;

use async_trait::async_trait;
use tether_protocol::twin::{FullState, Tab, TabEvent, Window, WINDOW_ID_NONE};
use tokio::sync::broadcast;

use crate::cdp::{BrowserEvent, TabInfo, Transport};

/// One report for the relay's twin.
#[derive(Debug, Clone)]
pub enum TwinChange {
    Event(TabEvent),
    /// A whole state; `None` asks the link to send one (reports were missed).
    Full(Option<FullState>),
}

/// Where a host's twin reports come from: the transport's own tab events (worker), or the
/// extension's reports (extension mode).
#[async_trait]
pub trait TwinSource: Send + Sync {
    /// What to report right after joining the relay. `None` when the source sends a full
    /// state of its own accord, through [`Self::changes`].
    async fn full_state(&self) -> Option<FullState>;
    fn changes(&self) -> broadcast::Receiver<TwinChange>;
}

/// The twin of a browser the host drives over CDP alone: its page targets.
pub struct TransportTwin {
    transport: Arc<dyn Transport>,
    changes: broadcast::Sender<TwinChange>,
}

impl TransportTwin {
    pub fn new(transport: Arc<dyn Transport>) -> Arc<Self> {
        let (changes, _) = broadcast::channel(1024);
        let mut events = transport.events();
        let feed = changes.clone();
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(event) => {
                        if let Some(change) = tab_event(&event) {
                            let _ = feed.send(TwinChange::Event(change));
                        }
                    }
                    // Missed events: the link sends a full state instead.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let _ = feed.send(TwinChange::Full(None));
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        Arc::new(Self { transport, changes })
    }
}

#[async_trait]
impl TwinSource for TransportTwin {
    async fn full_state(&self) -> Option<FullState> {
        Some(full_state(self.transport.as_ref()).await)
    }

    fn changes(&self) -> broadcast::Receiver<TwinChange> {
        self.changes.subscribe()
    }
}

fn tab(info: &TabInfo) -> Tab {
    Tab {
        tab_id: info.tab_id,
        window_id: info.window_id.unwrap_or(WINDOW_ID_NONE),
        group_id: info.group_id,
        opener_tab_id: info.opener_tab_id,
        url: info.url.clone(),
        title: info.title.clone(),
        active: false,
        status: "complete".into(),
    }
}

/// The `full_state_sync` payload for the browser as it is now.
pub async fn full_state(transport: &dyn Transport) -> FullState {
    let tabs = transport.tabs().await.unwrap_or_else(|e| {
        tracing::warn!("cannot list tabs for the twin: {e}");
        Vec::new()
    });
    let mut windows: Vec<i64> = tabs.iter().filter_map(|t| t.window_id).collect();
    windows.sort_unstable();
    windows.dedup();
    FullState {
        windows: windows
            .into_iter()
            .map(|window_id| Window {
                window_id,
                focused: false,
                kind: None,
                state: None,
            })
            .collect(),
        tabs: tabs.iter().map(tab).collect(),
        groups: Vec::new(),
    }
}

/// The `tab_event` for a browser event, if the twin cares about it.
pub fn tab_event(event: &BrowserEvent) -> Option<TabEvent> {
    match event {
        BrowserEvent::TabCreated(info) => Some(TabEvent::Created { tab: tab(info) }),
        BrowserEvent::TabUpdated(info) => Some(TabEvent::Updated { tab: tab(info) }),
        BrowserEvent::TabRemoved { tab } => Some(TabEvent::Removed {
            tab_id: *tab,
            window_id: None,
        }),
        BrowserEvent::Cdp { .. } | BrowserEvent::FrameCdp { .. } | BrowserEvent::Detached { .. } => None,
    }
}
