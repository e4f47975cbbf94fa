//! CDP commands typed here rather than taken from chromiumoxide_cdp, each saying why: the crate
//! is generated from one protocol revision and leaves out what it marks deprecated, and its
//! enums have no catch-all. Each is the same JSON the browser takes; [`super::typed`] sends
//! them as it sends the crate's.

use chromiumoxide::types::{Command, Method, MethodId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Makes `$name` a command sent as `$method`, answered with `$response`, as the crate's are.
macro_rules! command {
    ($name:ident, $method:literal, $response:ty) => {
        impl $name {
            pub const IDENTIFIER: &'static str = $method;
        }

        impl Method for $name {
            fn identifier(&self) -> MethodId {
                Self::IDENTIFIER.into()
            }
        }

        impl Command for $name {
            type Response = $response;
        }
    };
}

/// `Network.getAllCookies`: every cookie of the tab's browser context. Deprecated in the
/// protocol (for `Storage.getCookies`, which names a context instead of following the tab's),
/// so absent from the crate; Chromium 148 still answers it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GetAllCookies {}

command!(GetAllCookies, "Network.getAllCookies", AllCookies);

/// Its answer: the cookies as CDP `Network.Cookie` objects, read by the caller's own type
/// (their `sameSite`, `priority` and `sourceScheme` are enums Chromium extends).
#[derive(Debug, Clone, Deserialize)]
pub struct AllCookies {
    pub cookies: Vec<Value>,
}

/// `Network.setCookies` with the cookies as saved (`Network.CookieParam` objects from a
/// storage state file): the crate's `CookieParam` would refuse an enum value it does not know
/// that the browser that saved the file wrote.
#[derive(Debug, Clone, Serialize)]
pub struct SetCookies {
    pub cookies: Vec<Value>,
}

command!(SetCookies, "Network.setCookies", Value);

/// `Storage.setCookies` with the cookies as saved, into a browser context (as [`SetCookies`]
/// into a tab's, and for the same reason).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetContextCookies {
    pub cookies: Vec<Value>,
    pub browser_context_id: String,
}

command!(SetContextCookies, "Storage.setCookies", Value);

/// `Page.downloadWillBegin`: a download the tab started. Deprecated in the protocol for
/// `Browser.downloadWillBegin`, which names no tab, so absent from the crate; Chromium 148 still
/// sends it to the tab's session, which is what ties a download to its session.
pub struct EventDownloadWillBegin;

impl EventDownloadWillBegin {
    pub const IDENTIFIER: &'static str = "Page.downloadWillBegin";
}

/// `Page.downloadProgress`: the same, for a download's progress and end.
pub struct EventDownloadProgress;

impl EventDownloadProgress {
    pub const IDENTIFIER: &'static str = "Page.downloadProgress";
}

/// `Page.frameClearedScheduledNavigation`: a navigation the page scheduled will not happen.
/// Deprecated in the protocol, absent from the crate; Chromium 148 still sends it.
pub struct EventFrameClearedScheduledNavigation;

impl EventFrameClearedScheduledNavigation {
    pub const IDENTIFIER: &'static str = "Page.frameClearedScheduledNavigation";
}
