//! The twin as a Live Screen (seed 004): a Markdown block an orchestrator pastes into a
//! model's context, at three levels of detail.
//! - `live`: the browser now: every window and tab, the groups, the active tab.
//! - `recent`: `live` plus the latest changes, newest last.
//! - `gist`: one line, for a context that is nearly full.

use std::fmt::Write;

use serde_json::Value;
pub use tether_protocol::actions::browser_snapshot::Detail;
use tether_protocol::twin::Tab;

use crate::core::twin::Twin;

/// What the Live Screen says about the browser besides its twin.
pub struct Browser<'a> {
    pub client_id: &'a str,
    pub online: bool,
    pub meta: &'a Value,
}

pub fn render(browser: &Browser, twin: &Twin, detail: Detail) -> String {
    let mut out = String::new();
    if detail == Detail::Gist {
        let _ = writeln!(out, "{}", gist(browser, twin));
        return out;
    }
    let _ = writeln!(out, "## Browser `{}`\n", browser.client_id);
    let _ = writeln!(out, "{}\n", describe(browser, twin));
    match twin.active_tab() {
        Some(tab) => {
            let _ = writeln!(out, "Active tab: {}\n", tab_line(tab));
        }
        None => out.push_str("No active tab.\n\n"),
    }
    for window in window_ids(twin) {
        let _ = writeln!(out, "### Window {window}");
        for tab in twin.tabs.iter().filter(|t| t.window_id == window) {
            let _ = writeln!(out, "- {}", tab_line_with_group(tab, twin));
        }
        out.push('\n');
    }
    if !twin.groups.is_empty() {
        out.push_str("### Tab groups\n");
        for group in &twin.groups {
            let id = group.group_id;
            let members: Vec<String> = twin
                .tabs
                .iter()
                .filter(|t| t.group_id == Some(id))
                .map(|t| t.tab_id.to_string())
                .collect();
            let _ = writeln!(
                out,
                "- group {id} \"{}\": tabs {}",
                one_line(&group.title),
                if members.is_empty() {
                    "none".into()
                } else {
                    members.join(", ")
                }
            );
        }
        out.push('\n');
    }
    if detail == Detail::Recent && !twin.recent.is_empty() {
        out.push_str("### Recent changes\n");
        for change in &twin.recent {
            let _ = writeln!(out, "- {} {}", change.at.format("%H:%M:%S"), change.text);
        }
        out.push('\n');
    }
    out
}

fn describe(browser: &Browser, twin: &Twin) -> String {
    let name = [
        text(browser.meta, "browser"),
        text(browser.meta, "browserVersion"),
    ]
    .iter()
    .filter(|s| !s.is_empty())
    .cloned()
    .collect::<Vec<_>>()
    .join(" ");
    let mode = text(browser.meta, "mode");
    format!(
        "{}{}{}, twin version {}: {} windows, {} tabs.",
        if name.is_empty() {
            "A browser".to_owned()
        } else {
            name
        },
        if mode.is_empty() {
            String::new()
        } else {
            format!(" ({mode} mode)")
        },
        if browser.online {
            ", online"
        } else {
            ", offline (last known state)"
        },
        twin.version,
        window_ids(twin).len(),
        twin.tabs.len()
    )
}

fn gist(browser: &Browser, twin: &Twin) -> String {
    let active = twin
        .active_tab()
        .map(|t| format!("; active: {}", tab_line(t)))
        .unwrap_or_default();
    format!(
        "Browser `{}` ({}): {} tabs in {} windows{active}.",
        browser.client_id,
        if browser.online { "online" } else { "offline" },
        twin.tabs.len(),
        window_ids(twin).len()
    )
}

/// Windows in the order the browser listed them, then any only their tabs mention.
fn window_ids(twin: &Twin) -> Vec<i64> {
    let mut ids: Vec<i64> = twin.windows.iter().map(|w| w.window_id).collect();
    for tab in &twin.tabs {
        if !ids.contains(&tab.window_id) {
            ids.push(tab.window_id);
        }
    }
    ids
}

fn tab_line(tab: &Tab) -> String {
    let title = if tab.title.is_empty() {
        "(untitled)"
    } else {
        tab.title.as_str()
    };
    let loading = if tab.status == "complete" {
        ""
    } else {
        " (loading)"
    };
    format!("tab {} \"{}\" {}{loading}", tab.tab_id, one_line(title), tab.url)
}

fn tab_line_with_group(tab: &Tab, twin: &Twin) -> String {
    let mut line = tab_line(tab);
    if let Some(group) = tab.group_id {
        let title = twin
            .groups
            .iter()
            .find(|g| g.group_id == group)
            .map(|g| one_line(&g.title))
            .unwrap_or_default();
        let _ = write!(line, " [group \"{title}\"]");
    }
    if tab.active {
        line.push_str(" (active)");
    }
    line
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Titles come from pages: keep each on one line of the block.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
