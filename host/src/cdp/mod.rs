//! The one CDP seam. Every action is written against [`Transport`]: open/close/list tabs, send
//! a CDP command to a tab, receive its events. Worker mode implements it over a CDP WebSocket
//! ([`worker::WorkerTransport`]); extension mode over `chrome.debugger` relayed by the
//! extension. No action knows which one it runs on. The lowest floor, beside `parts`: uses
//! nothing of the crate.

pub mod connection;
pub mod ours;
pub mod proxy_auth;
pub mod typed;
pub mod worker;

use async_trait::async_trait;
use serde_json::Value;
use tether_protocol::actions::session_start::Proxy;
use tether_protocol::actions::TabId;
use tether_protocol::{ActionError, ErrorCode};
use tokio::sync::broadcast;

/// What the browser says about one tab.
#[derive(Debug, Clone, PartialEq)]
pub struct TabInfo {
    pub tab_id: TabId,
    pub window_id: Option<i64>,
    pub group_id: Option<i64>,
    pub opener_tab_id: Option<TabId>,
    pub url: String,
    pub title: String,
    /// The browser context it is in, where the browser has contexts to give (`None`: the
    /// default one).
    pub context: Option<String>,
}

/// Something that happened in the browser, in the order the transport saw it.
#[derive(Debug, Clone)]
pub enum BrowserEvent {
    /// A CDP event from an attached tab.
    Cdp {
        tab: TabId,
        method: String,
        params: Value,
    },
    /// An event of one of an attached tab's cross-origin frames, on the frame's own session.
    FrameCdp {
        tab: TabId,
        method: String,
        params: Value,
    },
    TabCreated(TabInfo),
    TabUpdated(TabInfo),
    TabRemoved {
        tab: TabId,
    },
    /// The debugger left the tab (closed, crashed, or the user cancelled debugging).
    Detached {
        tab: TabId,
        reason: String,
    },
}

/// Why a transport call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CdpError {
    #[error("the browser refused {method}: {message} (CDP error {code})")]
    Protocol {
        method: String,
        code: i64,
        message: String,
    },
    #[error("tab {0} does not exist (it may have been closed)")]
    TabGone(TabId),
    #[error("the debugger is not attached to tab {0}")]
    NotAttached(TabId),
    #[error("the debugger was detached from tab {tab} ({reason})")]
    Detached { tab: TabId, reason: String },
    #[error("the connection to the browser is closed")]
    Disconnected,
    #[error("{method} is {size} bytes, over the 1 MiB a message to the browser may carry")]
    TooLarge { method: String, size: usize },
    #[error("{0}")]
    Other(String),
}

impl From<CdpError> for ActionError {
    fn from(e: CdpError) -> Self {
        let code = match &e {
            CdpError::TabGone(_) => ErrorCode::TabNotFound,
            // The browser's owner pressed Stop: a person said no, not a browser failure.
            CdpError::Detached { reason, .. } if reason == tether_protocol::native::STOPPED_BY_USER => {
                ErrorCode::UserDenied
            }
            CdpError::TooLarge { .. } => ErrorCode::PayloadTooLarge,
            _ => ErrorCode::CdpError,
        };
        ActionError::new(code, e.to_string())
    }
}

/// The browser as the action catalog needs it.
#[async_trait]
pub trait Transport: Send + Sync + 'static {
    /// Opens a tab in the background (never focusing it or its window), in a tab group titled
    /// `group_title` where the browser has groups, in browser context `context` (`None`: the
    /// browser's default).
    async fn open_tab(
        &self,
        url: &str,
        group_title: Option<&str>,
        context: Option<&str>,
    ) -> Result<TabInfo, CdpError>;
    /// Whether sessions can have browser contexts of their own here: a browser of the host's
    /// own, not a person's lent through the extension (docs/protocol.md §21).
    fn has_contexts(&self) -> bool {
        false
    }
    /// Creates a browser context (cookies, storage, cache, service workers of its own, its
    /// downloads saved as the default context's are), going through `proxy`'s server.
    async fn create_context(&self, _proxy: Option<&Proxy>) -> Result<String, CdpError> {
        Err(CdpError::Other("this browser has no contexts to give".into()))
    }
    /// Disposes of a context, closing every tab in it.
    async fn dispose_context(&self, _context: &str) -> Result<(), CdpError> {
        Ok(())
    }
    /// The cookies of a context (CDP `Network.Cookie` objects).
    async fn context_cookies(&self, _context: &str) -> Result<Vec<Value>, CdpError> {
        Err(CdpError::Other("this browser has no contexts to give".into()))
    }
    /// Sets cookies (CDP `Network.CookieParam` objects) in a context.
    async fn set_context_cookies(&self, _context: &str, _cookies: Vec<Value>) -> Result<(), CdpError> {
        Err(CdpError::Other("this browser has no contexts to give".into()))
    }
    async fn close_tab(&self, tab: TabId) -> Result<(), CdpError>;
    /// What the transport knows of one tab, kept current by the browser's own events (so it
    /// costs no round trip); `Ok(None)` if it does not exist.
    async fn tab(&self, tab: TabId) -> Result<Option<TabInfo>, CdpError>;
    async fn tabs(&self) -> Result<Vec<TabInfo>, CdpError>;
    /// Attaches the debugger to the tab. Attaching an attached tab is a no-op.
    async fn attach(&self, tab: TabId) -> Result<(), CdpError>;
    async fn detach(&self, tab: TabId) -> Result<(), CdpError>;
    fn is_attached(&self, tab: TabId) -> bool;
    /// Sends one CDP command to an attached tab and returns its result.
    async fn send(&self, tab: TabId, method: &str, params: Value) -> Result<Value, CdpError>;
    /// Sends one CDP command to a child session of an attached tab (a cross-origin frame's,
    /// attached with the tab: `frames.rs`).
    async fn send_in(
        &self,
        tab: TabId,
        session: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError>;
    /// Every event from now on. Subscribe before sending the command whose events you await.
    fn events(&self) -> broadcast::Receiver<BrowserEvent>;
    /// Where the browser saved the finished download `guid` (begun at `url`, as a tab's
    /// `Page.downloadWillBegin` said).
    async fn downloaded(&self, guid: &str, url: &str) -> Result<Downloaded, CdpError>;
    /// Stops a download still in progress (its session ended). Where downloads are the
    /// person's (extension mode) they are left to the person.
    async fn cancel_download(&self, guid: &str) -> Result<(), CdpError>;
}

/// A finished download's file, as the transport found it.
#[derive(Debug, Clone)]
pub struct Downloaded {
    pub path: std::path::PathBuf,
    pub mime_type: Option<String>,
    /// Whether the file is in the host's own staging, to be removed once stored; a file in the
    /// person's download folder stays.
    pub staged: bool,
}
