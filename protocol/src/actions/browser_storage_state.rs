//! `browser_storage_state`: the browser's cookies and some origins' localStorage saved to an
//! artifact, or loaded from one, so a login outlives a run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::TabId;
use super::{About, ActionParams, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Storage state",
    category: Category::Session,
    description: "save: stores the browser's cookies (every site's) and the localStorage and IndexedDB of the given origins (default: those the session's tabs show) in an artifact, in Playwright's storageState shape; the result counts them and never shows a value. load: puts an artifact saved so back (cookies, then each origin's localStorage and IndexedDB). In extension mode FORBIDDEN unless the browser's owner allowed it in the extension's popup.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: Some(r#"{"action": "save"}"#),
};

/// Save or load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Save,
    Load,
}

/// The most origins one call saves.
pub const MAX_ORIGINS: usize = 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// "save" or "load".
    pub action: Direction,
    /// load: the artifact a save made (or a Playwright storageState file stored as one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// save: the origins whose localStorage to keep (such as "https://example.com"); default
    /// the origins of the session's tabs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origins: Option<Vec<String>>,
}

impl ActionParams for Params {
    fn tab_id(&self) -> Option<TabId> {
        None
    }

    fn check(&self) -> Result<(), String> {
        match (self.action, &self.artifact_id, &self.origins) {
            (Direction::Load, None, _) => Err("load needs artifactId: the artifact a save made".into()),
            (Direction::Load, _, Some(_)) => {
                Err("origins is for save; load puts back what the artifact holds".into())
            }
            (Direction::Save, Some(_), _) => Err("artifactId is for load; save makes a new artifact".into()),
            (Direction::Save, _, Some(origins)) if origins.len() > MAX_ORIGINS => Err(format!(
                "origins may name at most {MAX_ORIGINS}, not {}",
                origins.len()
            )),
            (Direction::Save, _, Some(origins)) => origins.iter().try_for_each(|o| origin_of(o).map(drop)),
            _ => Ok(()),
        }
    }
}

/// `origin` as a web origin (`scheme://host[:port]`, no path), or what is wrong with it.
pub fn origin_of(origin: &str) -> Result<String, String> {
    let (scheme, rest) = origin
        .split_once("://")
        .ok_or_else(|| format!("{origin:?} is not an origin such as https://example.com"))?;
    let host = rest.strip_suffix('/').unwrap_or(rest);
    let fine =
        matches!(scheme, "http" | "https") && !host.is_empty() && !host.contains(['/', '?', '#', '@', ' ']);
    if fine {
        Ok(format!("{scheme}://{host}"))
    } else {
        Err(format!(
            "{origin:?} is not an http(s) origin such as https://example.com (no path)"
        ))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// save: the artifact holding the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// save: where to fetch it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// How many cookies were saved or loaded.
    pub cookies: u64,
    /// save: the origins whose localStorage was saved; load: how many origins were loaded.
    pub origins: OriginsDone,
}

/// What a save or a load did with origins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OriginsDone {
    Saved(Vec<String>),
    Loaded(u64),
}

/// The artifact's shape (Playwright's `storageState`): cookies as CDP's `Network.Cookie` fields
/// Playwright keeps, and each origin's localStorage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StorageState {
    pub cookies: Vec<Cookie>,
    pub origins: Vec<OriginStorage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cookie {
    pub name: String,
    pub value: String,
    pub domain: String,
    pub path: String,
    /// Seconds since the epoch; -1 for a session cookie.
    #[serde(default = "session_cookie")]
    pub expires: f64,
    #[serde(default)]
    pub http_only: bool,
    #[serde(default)]
    pub secure: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<String>,
}

fn session_cookie() -> f64 {
    -1.0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OriginStorage {
    pub origin: String,
    pub local_storage: Vec<Item>,
    /// Its IndexedDB databases, as the host's page script writes them (Playwright's shape:
    /// `{ name, version, stores: [{ name, keyPath, autoIncrement, indexes, records: [{ key,
    /// value }] }] }`), kept as JSON.
    #[serde(default, rename = "indexedDB", skip_serializing_if = "Vec::is_empty")]
    pub indexed_db: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub name: String,
    pub value: String,
}
