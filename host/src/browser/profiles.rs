//! Named profiles kept on disk (docs/protocol.md §21): a profile's cookies and the
//! localStorage and IndexedDB of the origins its tabs showed (and how to read and write an
//! origin's, `js/origin_state.js`), in `profiles/NAME.json` under the host's data
//! dir (0600, in a 0700 folder; Playwright's `storageState` shape, as `browser_storage_state`
//! writes), saved while sessions run in it and when its last one ends, and read when a session
//! names it again, after a restart or a kill -9 too. A file is replaced whole (written beside,
//! then renamed), so a kill mid-save leaves the previous one. No value is ever logged.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tether_protocol::actions::browser_storage_state::{origin_of, Cookie, Item, OriginStorage, StorageState};

use crate::cdp::{CdpError, Transport};

/// Reads and writes an origin's localStorage and IndexedDB in a page of it.
const ORIGIN_STATE: &str = include_str!("../js/origin_state.js");

/// The expression that reads the state of the origin of the page it runs in, as JSON text
/// (awaited).
pub fn read_origin() -> String {
    format!("({}).read()", ORIGIN_STATE.trim_end())
}

/// The expression that puts `saved` back in a page of its origin (awaited).
pub fn write_origin(saved: &OriginStorage) -> String {
    let local: Vec<(&str, &str)> = saved
        .local_storage
        .iter()
        .map(|i| (i.name.as_str(), i.value.as_str()))
        .collect();
    let state = json!({ "local": local, "indexedDB": saved.indexed_db });
    format!("({}).write({state})", ORIGIN_STATE.trim_end())
}

/// What [`read_origin`] answered in a page of `origin`, as its saved state.
pub fn origin_read(origin: String, answer: &Value) -> Result<OriginStorage, String> {
    #[derive(serde::Deserialize)]
    struct Read {
        local: Vec<(String, String)>,
        #[serde(rename = "indexedDB", default)]
        indexed_db: Vec<Value>,
    }
    let read: Read = serde_json::from_str(answer.as_str().unwrap_or_default())
        .map_err(|e| format!("{origin}'s storage did not read as expected: {e}"))?;
    let local_storage = read
        .local
        .into_iter()
        .map(|(name, value)| Item { name, value })
        .collect();
    Ok(OriginStorage {
        origin,
        local_storage,
        indexed_db: read.indexed_db,
    })
}

/// The largest profile file read back: a bigger one is a damaged or foreign file.
const MAX_PROFILE_BYTES: u64 = 64 * 1024 * 1024;

/// Where a host keeps its named profiles.
#[derive(Debug, Clone)]
pub struct ProfileStore {
    dir: PathBuf,
}

impl ProfileStore {
    /// The store in `data_dir/profiles`.
    pub fn in_data_dir(data_dir: &Path) -> Self {
        Self {
            dir: data_dir.join("profiles"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    /// What was saved of profile `name`, if anything was (a file that does not read as a
    /// storage state is logged, by name only, and taken as nothing).
    pub async fn read(&self, name: &str) -> Option<StorageState> {
        let path = self.path(name);
        let size = tokio::fs::metadata(&path).await.ok()?.len();
        if size > MAX_PROFILE_BYTES {
            tracing::warn!(
                profile = name,
                "the profile's file is {size} bytes, over {MAX_PROFILE_BYTES}: not loaded"
            );
            return None;
        }
        let bytes = tokio::fs::read(&path).await.ok()?;
        match serde_json::from_slice(&bytes) {
            Ok(state) => Some(state),
            Err(e) => {
                tracing::warn!(
                    profile = name,
                    "the profile's file does not read as a saved state ({e}): not loaded"
                );
                None
            }
        }
    }

    /// Replaces what is saved of profile `name`.
    pub async fn write(&self, name: &str, state: &StorageState) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(state).map_err(std::io::Error::other)?;
        let (dir, path) = (self.dir.clone(), self.path(name));
        tokio::task::spawn_blocking(move || write_private(&dir, &path, &bytes))
            .await
            .map_err(std::io::Error::other)?
    }
}

/// Writes `bytes` to `path` readable by its owner only, whole or not at all.
fn write_private(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    tether_os::at_rest::private_dir(dir)?;
    let beside = path.with_extension("json.saving");
    let mut file = tether_os::at_rest::private_file()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&beside)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&beside, path)
}

/// The state of `context` now: its cookies, and the localStorage of the origins its attached
/// tabs show, over what `before` kept of the origins none shows now.
pub async fn capture(
    transport: &dyn Transport,
    context: &str,
    before: Option<StorageState>,
) -> Result<StorageState, CdpError> {
    let cookies = transport.context_cookies(context).await?;
    let cookies = cookies
        .into_iter()
        .filter_map(|c| serde_json::from_value::<Cookie>(c).ok())
        .collect();
    let mut origins: Vec<OriginStorage> = Vec::new();
    for tab in transport.tabs().await? {
        let origin = url::Url::parse(&tab.url)
            .ok()
            .and_then(|u| origin_of(&u.origin().ascii_serialization()).ok());
        let Some(origin) = origin.filter(|_| tab.context.as_deref() == Some(context)) else {
            continue;
        };
        if origins.iter().any(|o| o.origin == origin) || !transport.is_attached(tab.tab_id) {
            continue;
        }
        if let Some(saved) = origin_state_of(transport, tab.tab_id, origin).await {
            origins.push(saved);
        }
    }
    for kept in before.map(|b| b.origins).unwrap_or_default() {
        if !origins.iter().any(|o| o.origin == kept.origin) {
            origins.push(kept);
        }
    }
    Ok(StorageState { cookies, origins })
}

/// Captures `context` (see [`capture`]) and writes it as profile `name`: what was saved.
pub async fn save(
    transport: &dyn Transport,
    store: &ProfileStore,
    name: &str,
    context: &str,
    before: Option<StorageState>,
) -> Result<StorageState, String> {
    let state = capture(transport, context, before)
        .await
        .map_err(|e| format!("cannot read the profile's context: {e}"))?;
    store
        .write(name, &state)
        .await
        .map_err(|e| format!("cannot write the profile's file: {e}"))?;
    Ok(state)
}

/// The state of the origin of the page a tab shows, read in the page (the page's own values:
/// a page that lies about them lies about its own).
async fn origin_state_of(transport: &dyn Transport, tab: i64, origin: String) -> Option<OriginStorage> {
    let read = crate::cdp::typed::evaluation(read_origin());
    let reply = crate::cdp::typed::command_json(transport, tab, read).await.ok()?;
    let answer = reply.pointer("/result/value")?;
    origin_read(origin, answer)
        .map_err(|e| tracing::debug!(tab, "{e}"))
        .ok()
}

/// A saved cookie as `Network.setCookies` takes it (a session cookie without `expires`).
pub fn cookie_param(cookie: &Cookie) -> Value {
    let mut param = json!({
        "name": cookie.name,
        "value": cookie.value,
        "domain": cookie.domain,
        "path": cookie.path,
        "httpOnly": cookie.http_only,
        "secure": cookie.secure,
    });
    if cookie.expires > 0.0 {
        param["expires"] = json!(cookie.expires);
    }
    if let Some(same_site) = &cookie.same_site {
        param["sameSite"] = json!(same_site);
    }
    param
}
