//! Named profiles kept on disk (docs/protocol.md §21): a profile's cookies and the
//! localStorage of the origins its tabs showed, in `profiles/NAME.json` under the host's data
//! dir (0600, in a 0700 folder; Playwright's `storageState` shape, as `browser_storage_state`
//! writes), saved while sessions run in it and when its last one ends, and read when a session
//! names it again, after a restart or a kill -9 too. A file is replaced whole (written beside,
//! then renamed), so a kill mid-save leaves the previous one. No value is ever logged.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tether_protocol::actions::browser_storage_state::{origin_of, Cookie, Item, OriginStorage, StorageState};

use crate::cdp::{CdpError, Transport};

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
    let mut folder = std::fs::DirBuilder::new();
    folder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut folder, 0o700);
    folder.create(dir)?;
    let beside = path.with_extension("json.saving");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&beside)?;
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
        if let Some(local_storage) = local_storage_of(transport, tab.tab_id).await {
            origins.push(OriginStorage {
                origin,
                local_storage,
            });
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

/// The localStorage of the page a tab shows, read in the page (the page's own values: a page
/// that lies about them lies about its own).
async fn local_storage_of(transport: &dyn Transport, tab: i64) -> Option<Vec<Item>> {
    let read = json!({
        "expression": "JSON.stringify(Object.entries(localStorage))",
        "returnByValue": true,
    });
    let reply = transport.send(tab, "Runtime.evaluate", read).await.ok()?;
    let text = reply.pointer("/result/value").and_then(Value::as_str)?;
    let entries: Vec<(String, String)> = serde_json::from_str(text).ok()?;
    Some(
        entries
            .into_iter()
            .map(|(name, value)| Item { name, value })
            .collect(),
    )
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
