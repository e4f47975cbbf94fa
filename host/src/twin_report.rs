//! What the host tells the relay about its browser's tabs (PROTOCOL.md §2.5): a
//! `full_state_sync` when it joins, then a `tab_event` for each change the transport sees.
//!
//! A worker's headless browser has no person looking at it, so no tab is reported `active`.

use serde_json::{json, Value};

use crate::cdp::{BrowserEvent, TabInfo, Transport};

fn tab(info: &TabInfo) -> Value {
    let mut tab = json!({
        "tabId": info.tab_id,
        "windowId": info.window_id.unwrap_or(-1),
        "url": info.url,
        "title": info.title,
        "active": false,
        "status": "complete",
    });
    if let Some(group) = info.group_id {
        tab["groupId"] = json!(group);
    }
    tab
}

/// The `full_state_sync` payload for the browser as it is now.
pub async fn full_state(transport: &dyn Transport) -> Value {
    let tabs = transport.tabs().await.unwrap_or_else(|e| {
        tracing::warn!("cannot list tabs for the twin: {e}");
        Vec::new()
    });
    let mut windows: Vec<i64> = tabs.iter().filter_map(|t| t.window_id).collect();
    windows.sort_unstable();
    windows.dedup();
    json!({
        "windows": windows.iter().map(|w| json!({ "windowId": w, "focused": false })).collect::<Vec<_>>(),
        "tabs": tabs.iter().map(tab).collect::<Vec<_>>(),
        "groups": [],
    })
}

/// The `tab_event` payload for a browser event, if the twin cares about it.
pub fn tab_event(event: &BrowserEvent) -> Option<Value> {
    match event {
        BrowserEvent::TabCreated(info) => Some(json!({ "event": "created", "tab": tab(info) })),
        BrowserEvent::TabUpdated(info) => Some(json!({ "event": "updated", "tab": tab(info) })),
        BrowserEvent::TabRemoved { tab } => Some(json!({ "event": "removed", "tabId": tab })),
        BrowserEvent::Cdp { .. } | BrowserEvent::Detached { .. } => None,
    }
}
