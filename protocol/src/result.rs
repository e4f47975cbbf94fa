//! The `browser_action.result` payload (docs/protocol.md §2.3): what every action ends in.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::actions::ActionName;
use crate::envelope::{payload, Payload};
use crate::error::ActionError;

/// An action's output as the JSON text its browser wrote. A relay passes it on (to the log,
/// the journal, the orchestrator) without reading it into a tree and writing it out again:
/// a scan's 20 KB was read and written four times on its way. Whoever looks inside
/// reads it with [`Output::value`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Output(Payload);

impl Output {
    pub fn of(value: &impl Serialize) -> Self {
        Self(payload(value))
    }

    /// The output read as JSON.
    pub fn value(&self) -> Value {
        // It was read as JSON on its way in, or written as JSON.
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }

    /// The output read as `T`.
    pub fn read<T: serde::de::DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(self.0.get())
    }

    /// The JSON text.
    pub fn text(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for Output {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultStatus {
    Success,
    Error,
}

/// How an action ended, before the bookkeeping fields are added: its output already written
/// as the text it travels as (a typed output goes straight to text: through a `Value` tree
/// it cost a 20,000-element scan ~15 ms more).
pub type ActionOutcome = Result<Output, ActionError>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionResult {
    pub action_id: String,
    pub action_name: String,
    pub session_id: String,
    pub client_id: String,
    pub status: ResultStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Output>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ActionError>,
    pub started_at: String,
    pub finished_at: String,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed: Option<bool>,
}

/// Identifies one action for its result: who asked, for what.
#[derive(Debug, Clone)]
pub struct ActionHeader {
    pub action_id: String,
    pub action_name: String,
    pub session_id: String,
    pub client_id: String,
}

impl ActionResult {
    pub fn new(
        header: ActionHeader,
        started: DateTime<Utc>,
        finished: DateTime<Utc>,
        outcome: ActionOutcome,
    ) -> Self {
        let (status, result, error) = match outcome {
            Ok(output) => (ResultStatus::Success, Some(output), None),
            Err(e) => (ResultStatus::Error, None, Some(e)),
        };
        Self {
            action_id: header.action_id,
            action_name: header.action_name,
            session_id: header.session_id,
            client_id: header.client_id,
            status,
            result,
            error,
            started_at: rfc3339_ms(started),
            finished_at: rfc3339_ms(finished),
            duration_ms: (finished - started).num_milliseconds().max(0) as u64,
            replayed: None,
        }
    }

    /// The result of an action that never reached a browser: its caller could not hand it on
    /// (a relay out of reach, a refused token). No action id, no browser.
    pub fn unsent(session_id: &str, action_name: &str, error: ActionError) -> Self {
        let now = Utc::now();
        let header = ActionHeader {
            action_id: String::new(),
            action_name: action_name.to_owned(),
            session_id: session_id.to_owned(),
            client_id: String::new(),
        };
        Self::new(header, now, now, Err(error))
    }

    pub fn is_success(&self) -> bool {
        self.status == ResultStatus::Success
    }

    /// A session's current tab after this result of an action called with `params`
    /// (docs/protocol.md §11): the last tab it opened, else the tab it started or ran on; none
    /// after `session_stop`; unchanged after a failure or an action on no tab.
    pub fn current_tab_after(&self, params: &Value, current: Option<i64>) -> Option<i64> {
        if !self.is_success() {
            return current;
        }
        if self.action_name == ActionName::SessionStop.as_str() {
            return None;
        }
        /// What an action's output says of tabs.
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Tabs {
            opened_tab_ids: Option<Value>,
            tab_id: Option<Value>,
            /// browser_tabs: the session's tabs after it.
            tabs: Option<Vec<Listed>>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Listed {
            tab_id: i64,
        }
        let output = self.result.as_ref().and_then(|r| r.read::<Tabs>().ok());
        let opened = output
            .as_ref()
            .and_then(|o| o.opened_tab_ids.as_ref()?.as_array()?.last()?.as_i64());
        let named = output.as_ref().and_then(|o| o.tab_id.as_ref()?.as_i64());
        let listed = output.and_then(|o| o.tabs);
        // A browser_tabs list names no tab of its own: the current one stays (a close's tabId
        // is the tab gone).
        let asked = match listed {
            Some(_) => None,
            None => params.get("tabId").and_then(Value::as_i64),
        };
        let now = opened.or(named).or(asked).or(current);
        match listed {
            // The current tab closed: the last one the session still has.
            Some(tabs) if !tabs.iter().any(|t| Some(t.tab_id) == now) => tabs.last().map(|t| t.tab_id),
            _ => now,
        }
    }
}

/// `2026-02-13T10:22:17.123Z`: the spec's time format.
pub fn rfc3339_ms(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn after_browser_tabs_the_current_tab_is_the_one_selected_or_one_still_open() {
        let tabs = |output: &str| ActionResult {
            status: ResultStatus::Success,
            error: None,
            result: Some(serde_json::from_str(output).unwrap()),
            ..ActionResult::unsent("s", "browser_tabs", crate::ActionError::internal("unsent"))
        };
        let listed = r#"{"tabs":[{"tabId":3},{"tabId":5}]}"#;
        let selected = r#"{"tabs":[{"tabId":3},{"tabId":5}],"tabId":3}"#;
        let select = serde_json::json!({ "action": "select", "tabId": 3 });
        assert_eq!(tabs(selected).current_tab_after(&select, Some(5)), Some(3));
        assert_eq!(tabs(listed).current_tab_after(&Value::Null, Some(3)), Some(3));
        // The current tab closed: the session's last one.
        let close = serde_json::json!({ "action": "close", "tabId": 7 });
        assert_eq!(tabs(listed).current_tab_after(&close, Some(7)), Some(5));
        // Another tab closed: the current one stays.
        let close = serde_json::json!({ "action": "close", "tabId": 5 });
        let one = r#"{"tabs":[{"tabId":3}]}"#;
        assert_eq!(tabs(one).current_tab_after(&close, Some(3)), Some(3));
    }

    #[test]
    fn results_carry_spec_fields_and_formats() {
        let start = DateTime::parse_from_rfc3339("2026-02-13T10:22:17.123Z")
            .unwrap()
            .to_utc();
        let end = start + chrono::Duration::milliseconds(1500);
        let header = ActionHeader {
            action_id: "a1".into(),
            action_name: "browser_click".into(),
            session_id: "s".into(),
            client_id: "c".into(),
        };
        let r = ActionResult::new(
            header,
            start,
            end,
            Err(ActionError::new(ErrorCode::ElementNotFound, "no")),
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["startedAt"], "2026-02-13T10:22:17.123Z");
        assert_eq!(json["finishedAt"], "2026-02-13T10:22:18.623Z");
        assert_eq!(json["durationMs"], 1500);
        assert_eq!(json["status"], "error");
        assert_eq!(json["error"]["code"], "ELEMENT_NOT_FOUND");
        assert!(json.get("result").is_none() && json.get("replayed").is_none());
    }

    #[test]
    fn an_output_passes_through_as_the_browser_wrote_it() {
        let text = r#"{"actionId":"a","actionName":"browser_tabs","sessionId":"s","clientId":"c","status":"success","result":{"z":1,"tabId":7,"a":[1.50,"x"]},"startedAt":"t","finishedAt":"t","durationMs":0}"#;
        let result: ActionResult = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            text,
            "not re-ordered or re-formatted"
        );
        assert_eq!(result.result.as_ref().unwrap().value()["tabId"], 7);
        assert_eq!(result.current_tab_after(&Value::Null, Some(3)), Some(7));
        let opened = r#"{"openedTabIds":[8,9],"tabId":7}"#;
        let with_opened = ActionResult {
            result: Some(serde_json::from_str(opened).unwrap()),
            ..result.clone()
        };
        assert_eq!(with_opened.current_tab_after(&Value::Null, None), Some(9));
        let no_tab = ActionResult {
            result: Some(Output::of(&"a string")),
            ..result
        };
        let params = serde_json::json!({ "tabId": 4 });
        assert_eq!(no_tab.current_tab_after(&params, Some(3)), Some(4));
    }
}
