//! `session_start`: opens the session's tab in the background, in its tab group, and
//! navigates it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{check_url, TabId};
use super::{About, ActionParams, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Start session",
    category: Category::Session,
    description: "Opens the session's tab in the background (the user's tab keeps the focus), in a tab group where the browser has groups, and navigates it. Returns once the navigation committed; call browser_wait_for_loaded before reading the page.",
    waits_for: Some("is opening the session's tab"),
    reads_as: ReadsAs::Json,
    example: Some(r#"{"url": "https://example.com"}"#),
};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The page to open; about:blank when absent.
    #[serde(default, deserialize_with = "super::fields::typed_url_opt")]
    pub url: Option<String>,
    /// Reuse the session's tab if it is still open, instead of opening another.
    #[serde(default)]
    pub reuse_existing_tab: bool,
    /// Title of the tab group the session's tabs go in.
    #[serde(default)]
    pub group_title: Option<String>,
    /// A named profile to run in (1-64 of A-Za-z0-9_.-): one browser context shared by every
    /// running session that names it, whose cookies and storage outlive them; "default" is the
    /// browser's own. Absent: a context of the session's own, gone when it ends. Worker mode
    /// only, but for "default".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64), pattern(r"^[A-Za-z0-9_.-]+$"))]
    pub profile: Option<String>,
    /// The proxy the session's browser context goes through. Worker mode only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<Proxy>,
}

/// The most characters of a profile's name.
pub const PROFILE_MAX: usize = 64;

/// The profile that is the browser's own default context.
pub const DEFAULT_PROFILE: &str = "default";

/// A proxy for a session's browser context (docs/protocol.md §21). Its credentials never appear
/// in a result, a log line or an event: its `Debug` leaves them out.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Proxy {
    /// "http://host:port", "https://host:port", "socks5://host:port" or "socks4://host:port".
    pub server: String,
    /// Hosts that go around the proxy, comma-separated as Chrome's --proxy-bypass-list
    /// ("localhost,*.internal").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bypass: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

fn is_socks(scheme: &str) -> bool {
    scheme.starts_with("socks")
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("server", &self.server)
            .field("bypass", &self.bypass)
            .field("credentials", &self.username.as_ref().map(|_| "(kept back)"))
            .finish()
    }
}

impl Proxy {
    /// The proxy as settings without its credentials (which go to the browser only when it
    /// asks).
    pub fn without_credentials(&self) -> Proxy {
        Proxy {
            username: None,
            password: None,
            ..self.clone()
        }
    }

    /// Whether the server is a SOCKS proxy (`socks4://`, `socks5://`), to which Chromium never
    /// signs in.
    pub fn is_socks(&self) -> bool {
        url::Url::parse(&self.server).is_ok_and(|parsed| is_socks(parsed.scheme()))
    }

    fn check(&self) -> Result<(), String> {
        let parsed = url::Url::parse(&self.server).map_err(|e| {
            format!(
                "proxy.server must be scheme://host:port, got {:?} ({e})",
                self.server
            )
        })?;
        if !["http", "https", "socks4", "socks5"].contains(&parsed.scheme()) {
            return Err(format!(
                "proxy.server's scheme must be http, https, socks4 or socks5, got {:?}",
                parsed.scheme()
            ));
        }
        if parsed.host_str().is_none_or(str::is_empty) || parsed.port().is_none() && is_socks(parsed.scheme())
        {
            return Err(format!(
                "proxy.server must name a host and port, got {:?}",
                self.server
            ));
        }
        if !parsed.username().is_empty()
            || parsed.password().is_some()
            || parsed.path() != "/" && !parsed.path().is_empty()
        {
            return Err("proxy.server is scheme://host:port only: pass credentials as proxy.username and proxy.password".into());
        }
        if self.password.is_some() && self.username.is_none() {
            return Err("proxy.password needs proxy.username".into());
        }
        Ok(())
    }
}

/// Checks a profile's name: 1-64 of A-Za-z0-9_.- (it names a file in the host's data dir).
pub fn check_profile(name: &str) -> Result<(), String> {
    // The file is NAME.json in the profiles folder: no name of these characters leaves it.
    let fits = (1..=PROFILE_MAX).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    match fits {
        true => Ok(()),
        false => Err(format!(
            "profile must be 1-{PROFILE_MAX} of A-Za-z0-9_.-, got {name:?}"
        )),
    }
}

impl ActionParams for Params {
    fn tab_id(&self) -> Option<TabId> {
        None
    }

    fn check(&self) -> Result<(), String> {
        self.url.as_deref().map_or(Ok(()), check_url)?;
        self.profile.as_deref().map_or(Ok(()), check_profile)?;
        self.proxy.as_ref().map_or(Ok(()), Proxy::check)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The session's tab: pass it to every other action.
    pub tab_id: TabId,
    /// The tab's window (-1 when the browser names none).
    pub window_id: i64,
    /// The tab group, where the browser has groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<i64>,
    /// The URL the tab shows.
    pub url: String,
    /// The page title, when it already has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The named profile the session runs in; absent for a context of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}
