//! The MCP server handler: `tools/list` from the catalog, `tools/call` as one action in the
//! agent's session. [`McpSessions`] is what a transport keeps (the browser, the tools, each
//! session's current tab); it makes a [`TetherMcp`] per MCP session, each with a Tether
//! session of its own (`mcp-<random>`), which ends with it: when the MCP session ends (the
//! client's DELETE, its idle time running out, stdio closing), `session_stop` with `closeTab:
//! false` lets go of its tabs (the debugger leaves them; they stay for the person to see) and
//! completes the session. A session named by a `sessionId` argument is shared and outlives the
//! MCP session.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rand::RngCore;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};
use tether_protocol::{ActionError, ActionName, ActionResult};
use tokio_util::task::TaskTracker;

use crate::call::Call;
use crate::caps::{Caps, Group};
use crate::{reply, tools};

use crate::browser::Browser;

const INSTRUCTIONS: &str = "These tools drive a real browser. Open a page with browser_navigate {url}; \
read it with browser_snapshot, which writes every element you can act on as [eN] role \"name\" (inside iframes too, \
another site's included); act on one by its ref (browser_click {ref: \"e12\"}, browser_type {ref, text}, \
browser_fill_form {fields}). An action that changes the page answers once the page settled, with what changed \
(its screen: the snapshot's lines that came and went, new refs included) and with what happened meanwhile \
(observed: console errors, failed requests, downloads, a navigation), so act, read that, and act again; take a \
whole browser_snapshot only when you need the page anew. tabId is optional: actions go to the current tab, the \
last one an action ran on or opened. You have a session of your own; it ends, and its tabs close, with this \
connection.";

/// The header that chooses an MCP session's tool groups on the relay's `/mcp` (or its query's
/// `caps`).
pub const CAPS_HEADER: &str = "tether-caps";

/// What every MCP session of one transport shares.
#[derive(Clone)]
pub struct McpSessions {
    browser: Arc<dyn Browser>,
    /// The tool groups served unless a request chooses others.
    caps: Caps,
    /// The secrets the browser holds, when known up front (`tether-host mcp --secrets`).
    secret_names: Arc<[String]>,
    tools: Arc<[Tool]>,
    /// Each Tether session's current tab, as this server's calls moved it.
    current_tabs: Arc<Mutex<HashMap<String, i64>>>,
    /// The `session_stop`s of ended MCP sessions still running.
    ending: TaskTracker,
}

impl McpSessions {
    pub fn new(browser: Arc<dyn Browser>) -> Self {
        Self {
            browser,
            caps: Caps::default(),
            secret_names: Arc::new([]),
            tools: tools::tools().into(),
            current_tabs: Arc::default(),
            ending: TaskTracker::new(),
        }
    }

    /// The tool groups it serves (the default: `Caps::default()`).
    pub fn with_caps(mut self, caps: Caps) -> Self {
        self.caps = caps;
        self.tools = tools::listed(caps, &[]).into();
        self
    }

    /// Its tools name the secrets the browser holds (names, never values).
    pub fn with_secret_names(mut self, names: &[String]) -> Self {
        self.secret_names = names.into();
        self
    }

    /// The groups a request chose (`?caps=` or the `Tether-Caps` header on HTTP), else the
    /// server's.
    fn caps_of(&self, context: &RequestContext<RoleServer>) -> Result<Caps, ErrorData> {
        let Some(parts) = context.extensions.get::<http::request::Parts>() else {
            return Ok(self.caps);
        };
        let query = url::form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes());
        let asked = query
            .into_iter()
            .find_map(|(key, value)| (key == "caps").then(|| value.into_owned()))
            .or_else(|| Some(parts.headers.get(CAPS_HEADER)?.to_str().ok()?.to_owned()));
        match asked {
            Some(text) => Caps::parse(&text).map_err(|e| ErrorData::invalid_params(e, None)),
            None => Ok(self.caps),
        }
    }

    /// Waits for the `session_stop`s of the MCP sessions that ended (before a process exits).
    pub async fn ended(&self) {
        self.ending.close();
        self.ending.wait().await;
    }

    /// Ends an MCP session's own Tether session and closes its tabs.
    async fn end(&self, own_session: &str) {
        let stopped = self
            .browser
            .act(own_session, ActionName::SessionStop, json!({ "closeTab": true }))
            .await;
        if let Some(error) = stopped.error {
            tracing::warn!(
                session = own_session,
                "ending the MCP session's own session: {}",
                error.message
            );
        }
    }

    /// The handler of a new MCP session.
    pub fn session(&self) -> TetherMcp {
        let mut bytes = [0u8; 8];
        rand::rng().fill_bytes(&mut bytes);
        TetherMcp {
            shared: self.clone(),
            own_session: format!("mcp-{}", hex::encode(bytes)),
            own_session_open: AtomicBool::new(false),
        }
    }

    fn current_tab(&self, session_id: &str) -> Option<i64> {
        self.tabs().get(session_id).copied()
    }

    fn follow(&self, session_id: &str, params: &Value, result: &ActionResult) {
        let mut tabs = self.tabs();
        let now = result.current_tab_after(params, tabs.get(session_id).copied());
        match now {
            Some(tab) => tabs.insert(session_id.to_owned(), tab),
            None => tabs.remove(session_id),
        };
    }

    fn tabs(&self) -> std::sync::MutexGuard<'_, HashMap<String, i64>> {
        self.current_tabs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// One MCP session's server.
pub struct TetherMcp {
    shared: McpSessions,
    own_session: String,
    /// Whether its own session ran an action and was not stopped since: one to end with it.
    own_session_open: AtomicBool,
}

impl TetherMcp {
    /// Runs a call: gives it the current tab (opening the session's first tab for
    /// browser_navigate), runs it, and follows where the session's tab went.
    async fn run(&self, mut call: Call) -> CallToolResult {
        let shared = &self.shared;
        if call.lacks_tab() {
            match shared.current_tab(&call.session_id) {
                Some(tab) => call.set_tab(tab),
                None if call.action == ActionName::BrowserNavigate => match self.open_tab(&call).await {
                    Ok(tab) => call.set_tab(tab),
                    Err(refused) => return refused,
                },
                None => {
                    let missing = ActionError::invalid_params(
                        "this session has no tab yet: open one with browser_navigate {url} (or session_start), or pass tabId",
                    );
                    let unsent = ActionResult::unsent(&call.session_id, call.action.as_str(), missing);
                    return reply::render(shared.browser.as_ref(), call.action, unsent, None).await;
                }
            }
        }
        let params = Value::Object(call.params);
        let result = self.act(&call.session_id, call.action, params.clone()).await;
        shared.follow(&call.session_id, &params, &result);
        if call.action == ActionName::SessionStop
            && result.error.is_none()
            && call.session_id == self.own_session
        {
            // Ended by the agent itself: nothing left to end with the MCP session.
            self.own_session_open.store(false, Ordering::Relaxed);
        }
        // The tab it acted on: the one it was given, else the one it started.
        // (The output is read only for an action not given a tab: it can be a scan's megabyte.)
        let tab = params
            .get("tabId")
            .and_then(Value::as_i64)
            .or_else(|| result.result.as_ref()?.value().get("tabId")?.as_i64());
        let mut reply = reply::render(shared.browser.as_ref(), call.action, result, tab).await;
        let now = shared.current_tab(&call.session_id);
        if let Some(moved) = moved(call.action, tab, now) {
            reply.content.push(ContentBlock::text(moved));
        }
        reply
    }

    /// The tool groups of a request: those chosen, and the secrets' when the browser's owner
    /// gave it secrets for agents.
    fn caps(&self, context: &RequestContext<RoleServer>, secret_names: &[String]) -> Result<Caps, ErrorData> {
        let caps = self.shared.caps_of(context)?;
        Ok(match secret_names.is_empty() {
            true => caps,
            false => caps.with(Group::Secrets),
        })
    }

    /// The names of the secrets the browser holds.
    fn secret_names(&self) -> Vec<String> {
        match self.shared.secret_names.is_empty() {
            true => self.shared.browser.secret_names(&self.own_session),
            false => self.shared.secret_names.to_vec(),
        }
    }

    /// Runs one action in a session, noting that the MCP session's own session was used.
    async fn act(&self, session_id: &str, action: ActionName, params: Value) -> ActionResult {
        if session_id == self.own_session {
            self.own_session_open.store(true, Ordering::Relaxed);
        }
        self.shared.browser.act(session_id, action, params).await
    }

    /// `session_start` for a session that has no tab yet; its tab, or the error as a result.
    async fn open_tab(&self, call: &Call) -> Result<i64, CallToolResult> {
        let shared = &self.shared;
        let params = json!({});
        let started = self
            .act(&call.session_id, ActionName::SessionStart, params.clone())
            .await;
        shared.follow(&call.session_id, &params, &started);
        match started.current_tab_after(&params, None) {
            Some(tab) => Ok(tab),
            _ => Err(reply::render(shared.browser.as_ref(), ActionName::SessionStart, started, None).await),
        }
    }
}

/// What to tell the agent when its current tab is no longer the one the action ran on: the
/// action opened a tab (a link with target=_blank, a popup). Its next calls without a tabId go
/// there, and the refs it read belong to the tab they were read in.
fn moved(action: ActionName, acted_on: Option<i64>, now: Option<i64>) -> Option<String> {
    let (Some(was), Some(now)) = (acted_on, now) else {
        return None;
    };
    (was != now && action != ActionName::BrowserTabs).then(|| {
        format!(
            "The current tab is now {now}: this action opened it, and calls without tabId go there. \
             Tab {was} is still open; its refs work with tabId: {was} (browser_tabs select makes it current again)."
        )
    })
}

impl Drop for TetherMcp {
    /// The MCP session ended: so does its own Tether session.
    fn drop(&mut self) {
        self.shared.tabs().remove(&self.own_session);
        let open = self.own_session_open.load(Ordering::Relaxed);
        if open && tokio::runtime::Handle::try_current().is_ok() {
            let (shared, own) = (self.shared.clone(), std::mem::take(&mut self.own_session));
            self.shared.ending.spawn(async move { shared.end(&own).await });
        }
    }
}

impl ServerHandler for TetherMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tether", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    /// Versions with an initialize handshake, so every MCP session is named by its
    /// `Mcp-Session-Id` and keeps its own Tether session (2026-07-28 has no sessions).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let names = self.secret_names();
        let caps = self.caps(&context, &names)?;
        let tools = match names.is_empty() && caps == self.shared.caps {
            true => self.shared.tools.to_vec(),
            false => tools::listed(caps, &names),
        };
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caps = self.caps(&context, &self.secret_names())?;
        // An unknown tool is the client's fault; wrong arguments are the model's, so they
        // come back as a tool result it reads (most clients never show it a JSON-RPC error).
        let action: ActionName = request.name.parse().map_err(|_| {
            ErrorData::invalid_params(
                format!("unknown tool {:?}: tools/list names every tool", request.name),
                None,
            )
        })?;
        let refused = |error: ActionError| ActionResult::unsent(&self.own_session, action.as_str(), error);
        let browser = self.shared.browser.as_ref();
        if !caps.lists(action) {
            let why = format!(
                "{} is not among this server's tools (its groups: {caps}); its operator adds the group {:?} (--caps, or ?caps= on the relay's /mcp)",
                action.as_str(),
                Group::of(action).as_str()
            );
            return Ok(
                reply::render(browser, action, refused(ActionError::invalid_params(why)), None)
                    .await
                    .into(),
            );
        }
        match Call::read(action, request.arguments, &self.own_session) {
            Ok(call) => Ok(self.run(call).await.into()),
            Err(error) => Ok(reply::render(browser, action, refused(error), None).await.into()),
        }
    }
}
