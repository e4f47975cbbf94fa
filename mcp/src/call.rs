//! A `tools/call` read as an action: which one, in which session, with which params. What
//! the agent left out is filled in here (docs/protocol.md §11): its own session, the session's
//! current tab, screenshots no wider than 1280 pixels, and `observe: "recent"` on the tools
//! that change the page (§17). Arguments that are wrong are an error naming the problem,
//! before anything runs.

use rmcp::model::JsonObject;
use serde_json::Value;
use tether_protocol::actions::ReadsAs;
use tether_protocol::{ActionCall, ActionError, ActionName};

/// How wide a screenshot comes back unless the call says otherwise: an agent's context takes
/// images by the pixel.
pub const SCREENSHOT_MAX_WIDTH: u64 = 1280;

/// What an action that changes the page shows of it unless the call says otherwise.
pub const OBSERVE: &str = "recent";

/// An action as an agent called it, not yet given a tab.
#[derive(Debug)]
pub struct Call {
    pub session_id: String,
    pub action: ActionName,
    pub params: JsonObject,
}

impl Call {
    /// Reads a tool call; `own_session` is the MCP session's own Tether session.
    pub fn read(
        action: ActionName,
        arguments: Option<JsonObject>,
        own_session: &str,
    ) -> Result<Self, ActionError> {
        let tool = action.as_str();
        let mut params = arguments.unwrap_or_default();
        let session_id = match params.remove("sessionId") {
            None | Some(Value::Null) => own_session.to_owned(),
            Some(Value::String(id)) if !id.trim().is_empty() => id,
            Some(other) => {
                return Err(ActionError::invalid_params(format!(
                    "{tool}: sessionId must be a non-empty string, got {other}"
                )))
            }
        };
        if action.about().reads_as == ReadsAs::Image {
            params.entry("maxWidth").or_insert(SCREENSHOT_MAX_WIDTH.into());
        }
        // An agent reads what its step did in the same reply (docs/protocol.md §17).
        if action.descriptor().params.contains_key("observe") {
            params.entry("observe").or_insert(OBSERVE.into());
        }
        let call = Self {
            session_id,
            action,
            params,
        };
        call.check()?;
        Ok(call)
    }

    /// Whether the action needs a tab the agent did not name.
    pub fn lacks_tab(&self) -> bool {
        self.action.lacks_tab(&self.params)
    }

    pub fn set_tab(&mut self, tab: i64) {
        self.params.insert("tabId".into(), tab.into());
    }

    /// Checks the params with the action's own types, as the host would; a tab left out is
    /// not an error here (it is filled in later).
    fn check(&self) -> Result<(), ActionError> {
        let params = Value::Object(self.params.clone());
        ActionCall::parse_leaving_tab(self.action.as_str(), &params).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Option<JsonObject> {
        v.as_object().cloned()
    }

    #[test]
    fn defaults_fill_what_the_agent_left_out() {
        let call = Call::read(ActionName::BrowserScreenshot, None, "mcp-1").unwrap();
        assert_eq!(call.session_id, "mcp-1");
        assert!(call.lacks_tab());
        assert_eq!(call.params["maxWidth"], json!(1280));

        let call = Call::read(
            ActionName::BrowserScreenshot,
            args(json!({"maxWidth": 300, "sessionId": "s", "tabId": 4})),
            "mcp-1",
        )
        .unwrap();
        assert_eq!(
            (call.session_id.as_str(), call.params["maxWidth"].clone()),
            ("s", json!(300))
        );
        assert!(!call.lacks_tab() && !call.params.contains_key("sessionId"));
    }

    #[test]
    fn wrong_arguments_are_errors_that_name_the_problem() {
        let e = Call::read(ActionName::BrowserNavigate, args(json!({"url": "example"})), "m").unwrap_err();
        assert!(e.message.contains("absolute"), "{}", e.message);
        let e = Call::read(
            ActionName::BrowserClick,
            args(json!({"ref": "e1", "xPath": "//a"})),
            "m",
        )
        .unwrap_err();
        assert!(e.message.contains("xPath"), "{}", e.message);
        let e = Call::read(ActionName::BrowserTabs, args(json!({"sessionId": 7})), "m").unwrap_err();
        assert!(e.message.contains("sessionId"), "{}", e.message);
    }
}
