//! A `browser_action` the relay accepted (docs/protocol.md §2.2, §3), checked: it names a session
//! and an action, has an `actionId`, and its params are what the action takes. A payload that
//! names no session or action is not an action at all; anything else wrong with it becomes
//! the action's error result, so orchestrators handle one shape.

use std::num::NonZeroU64;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use tether_protocol::messages::ActionRequest;
use tether_protocol::result::ActionHeader;
use tether_protocol::{ActionCall, ActionError, ActionName, ActionResult, ErrorCode};

#[derive(Debug, Clone)]
pub struct Request {
    pub session_id: String,
    pub client_id: Option<String>,
    pub action_id: String,
    pub action: Named,
    pub params: Value,
    pub timeout: Option<Duration>,
    /// A person's look at the session (screen.md), never an orchestrator's: see
    /// `ActionRequest::peek`.
    pub peek: bool,
}

/// The action a request names: one of the catalog's, or a name it does not have (said back in
/// the request's `UNKNOWN_ACTION` result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    Action(ActionName),
    Unknown(String),
}

impl Named {
    pub fn new(name: String) -> Self {
        match name.parse() {
            Ok(action) => Self::Action(action),
            Err(_) => Self::Unknown(name),
        }
    }

    /// The name on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Action(action) => action.as_str(),
            Self::Unknown(name) => name,
        }
    }

    pub fn action(&self) -> Option<ActionName> {
        match self {
            Self::Action(action) => Some(*action),
            Self::Unknown(_) => None,
        }
    }

    pub fn is(&self, action: ActionName) -> bool {
        self.action() == Some(action)
    }
}

impl std::fmt::Display for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request the relay answers with an error result instead of running it.
pub type Refused = (Request, ActionError);

/// Reads a payload: `Err` when it is no action at all (INVALID_MESSAGE), `Ok(Err)` when it is
/// one that fails before it runs.
pub type Read = Result<Result<Request, Refused>, ActionError>;

impl Request {
    /// Reads a `browser_action` payload.
    pub fn read(payload: &Value) -> Read {
        match tether_protocol::read::from_value::<ActionRequest>(payload) {
            Ok(wire) => Self::accept(wire),
            Err(e) => Self::malformed(payload, format!("browser_action: {e}")),
        }
    }

    /// Checks a typed `browser_action` payload.
    pub fn accept(wire: ActionRequest) -> Read {
        if wire.session_id.is_empty() {
            return Err(not_an_action("\"sessionId\" must not be empty"));
        }
        // A look (peek) comes only from the relay's own Live Screen routes, never from a payload.
        let request = Request {
            peek: false,
            ..Self::from_forwarded(wire)
        };
        // The relay checks params with the host's own types, so a bad call fails fast and the
        // same way whichever browser would have run it. A tab left out is the session's
        // current one, named when the action starts (`name_current_tab`).
        match ActionCall::parse_leaving_tab(request.action.as_str(), &request.params) {
            Ok(call) => Ok(Ok(Request {
                timeout: own_timeout(&call).or(request.timeout),
                ..request
            })),
            Err(error) => Ok(Err((request, error))),
        }
    }

    /// Whether the action takes a tab and the request names none.
    fn lacks_tab(&self) -> bool {
        match (&self.action, self.params.as_object()) {
            (Named::Action(action), Some(params)) => action.lacks_tab(params),
            _ => false,
        }
    }

    /// Names the session's current tab where the request names none (docs/protocol.md §3); an
    /// error saying what to do when the session has no tab yet.
    pub fn name_current_tab(&mut self, current: Option<i64>) -> Result<(), ActionError> {
        if !self.lacks_tab() {
            return Ok(());
        }
        let tab = current.ok_or_else(|| {
            ActionError::invalid_params(format!(
                "session {} has no tab yet: start it with session_start (or browser_tabs open), or pass tabId",
                self.session_id
            ))
        })?;
        self.params["tabId"] = tab.into();
        Ok(())
    }

    /// A request another relay of the deployment accepted and checked (docs/protocol.md §14), as
    /// it was sent (a person's look stays one); without an actionId, it gets one.
    pub fn from_forwarded(wire: ActionRequest) -> Self {
        Request {
            session_id: wire.session_id,
            client_id: wire.client_id,
            action_id: wire
                .action_id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(new_action_id),
            action: Named::new(wire.action_name),
            params: wire.params,
            timeout: wire.timeout_ms.map(|ms| Duration::from_millis(ms.get())),
            peek: wire.peek,
        }
    }

    /// A payload without the shape of a `browser_action`: still an action (with an
    /// INVALID_PARAMS result) if it names its session and action.
    pub fn malformed(payload: &Value, why: String) -> Read {
        let text = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(session_id), Some(action_name)) = (text("sessionId"), text("actionName")) else {
            return Err(not_an_action(
                "a browser_action payload needs \"sessionId\" and \"actionName\" strings",
            ));
        };
        if session_id.is_empty() {
            return Err(not_an_action("\"sessionId\" must not be empty"));
        }
        let request = Request {
            session_id,
            client_id: None,
            action_id: text("actionId")
                .filter(|id| !id.is_empty())
                .unwrap_or_else(new_action_id),
            action: Named::new(action_name),
            params: payload.get("params").cloned().unwrap_or(Value::Null),
            timeout: None,
            peek: false,
        };
        Ok(Err((request, ActionError::invalid_params(why))))
    }

    pub fn header(&self, client_id: Option<&str>) -> ActionHeader {
        ActionHeader {
            action_id: self.action_id.clone(),
            action_name: self.action.as_str().to_owned(),
            session_id: self.session_id.clone(),
            client_id: client_id
                .or(self.client_id.as_deref())
                .unwrap_or_default()
                .to_owned(),
        }
    }

    /// A result the relay decided itself, without the browser.
    pub fn failed(
        &self,
        client_id: Option<&str>,
        started: DateTime<Utc>,
        error: ActionError,
    ) -> ActionResult {
        ActionResult::new(self.header(client_id), started, Utc::now(), Err(error))
    }

    /// The request as it came in (for another relay of the deployment to run).
    pub fn as_received(&self) -> ActionRequest {
        self.wire(self.client_id.clone(), self.timeout)
    }

    /// The request as the session log and the session's subscribers see it: what a person's
    /// keyboard would type is `"<typed: N chars>"` unless `typed_text` (docs/protocol.md §15),
    /// and a proxy's credentials are never in it (§21).
    pub fn logged(&self, typed_text: bool) -> ActionRequest {
        let mut request = self.as_received();
        if !typed_text {
            hide_typed_text(&mut request.params);
        }
        hide_credentials(&mut request.params);
        request
    }

    /// The request as forwarded to the host: its browser, and the time left.
    pub fn forwarded(&self, client_id: &str, left: Duration) -> ActionRequest {
        self.wire(Some(client_id.to_owned()), Some(left))
    }

    fn wire(&self, client_id: Option<String>, timeout: Option<Duration>) -> ActionRequest {
        ActionRequest {
            session_id: self.session_id.clone(),
            client_id,
            action_id: Some(self.action_id.clone()),
            action_name: self.action.as_str().to_owned(),
            params: self.params.clone(),
            // A deadline already passed still sends 1 ms: the host answers ACTION_TIMEOUT.
            timeout_ms: timeout.map(|t| {
                NonZeroU64::new(u64::try_from(t.as_millis()).unwrap_or(u64::MAX)).unwrap_or(NonZeroU64::MIN)
            }),
            peek: self.peek,
        }
    }
}

/// How long past its own wait a handoff's result may take to come back.
const HANDOFF_GRACE: Duration = Duration::from_secs(5);

/// An action whose params say how long it may take, standing in for the envelope's
/// `timeoutMs`: a handoff waits for a person for its own `timeoutMs` (docs/protocol.md §18),
/// and ends itself with ACTION_TIMEOUT then, before the relay's deadline.
fn own_timeout(call: &ActionCall) -> Option<Duration> {
    match call {
        ActionCall::BrowserHandoff(p) => Some(Duration::from_millis(p.waits_ms()) + HANDOFF_GRACE),
        _ => None,
    }
}

/// Replaces a session's proxy credentials (`session_start`'s `proxy.username` and
/// `proxy.password`) with a mark that they were given.
fn hide_credentials(params: &mut Value) {
    if let Some(Value::Object(proxy)) = params.get_mut("proxy") {
        for key in ["username", "password"] {
            if let Some(value) = proxy.get_mut(key) {
                *value = Value::String("<kept back>".into());
            }
        }
    }
}

/// Replaces typed text in an action's params with its length: `text` (browser_type), each
/// field's `value` (browser_fill_form), and a dialog's `promptText`.
fn hide_typed_text(params: &mut Value) {
    let hide = |value: &mut Value| {
        if let Value::String(text) = value {
            *value = Value::String(format!("<typed: {} chars>", text.chars().count()));
        }
    };
    if let Some(text) = params.get_mut("text") {
        hide(text);
    }
    if let Some(Value::Array(fields)) = params.get_mut("fields") {
        for field in fields {
            if let Some(value) = field.get_mut("value") {
                hide(value);
            }
        }
    }
    if let Some(answer) = params.pointer_mut("/dialog/promptText") {
        hide(answer);
    }
}

fn new_action_id() -> String {
    format!("act-{}", crate::parts::ids::random_hex(8))
}

fn not_an_action(why: &str) -> ActionError {
    ActionError::new(ErrorCode::InvalidMessage, why)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::hide_typed_text;

    #[test]
    fn typed_text_is_logged_as_its_length() {
        let mut params = json!({
            "tabId": 1, "xpath": "//input", "text": "hunter2 ü",
            "fields": [{ "ref": "e1", "value": "secret" }, { "ref": "e2", "value": true }],
            "dialog": { "accept": true, "promptText": "yes" }
        });
        hide_typed_text(&mut params);
        assert_eq!(params["text"], "<typed: 9 chars>");
        assert_eq!(params["fields"][0]["value"], "<typed: 6 chars>");
        assert_eq!(params["fields"][1]["value"], true);
        assert_eq!(params["dialog"]["promptText"], "<typed: 3 chars>");
        assert_eq!(params["xpath"], "//input");
    }
}
