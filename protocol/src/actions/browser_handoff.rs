//! `browser_handoff`: the agent asks the person to act in a tab themselves (a login, a
//! CAPTCHA, a choice the agent must not make) and waits until they hand it back.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::TabId;
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Hand over to the person",
    category: Category::Session,
    description: "Asks the person watching (the relay's console, or the browser owner's popup) to act in the tab themselves: a login, a CAPTCHA, a second factor, a choice the agent must not make. message says what to do. Waits until they press Done (handedBack: true, with their note if they wrote one) or Decline (USER_DENIED), or timeoutMs passes (ACTION_TIMEOUT; 1 s to 1 h, default 10 min). Look at the page again afterwards: the person may have changed it.",
    waits_for: Some("is waiting for the person"),
    reads_as: ReadsAs::Json,
    example: Some(r#"{"tabId": 123, "message": "Please solve the CAPTCHA, then press Done"}"#),
};

/// How long a handoff may wait for the person, in milliseconds.
pub const TIMEOUTS_MS: std::ops::RangeInclusive<u64> = 1_000..=3_600_000;
pub const DEFAULT_TIMEOUT_MS: u64 = 600_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// What the person is asked to do, shown to them as written.
    pub message: String,
    /// How long to wait for the person, 1000 to 3600000 ms. It stands in for the action's
    /// own timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 600000))]
    #[schemars(range(min = 1000, max = 3_600_000))]
    pub timeout_ms: Option<u64>,
}

impl Params {
    /// How long to wait for the person.
    pub fn waits_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)
    }
}

/// The longest message shown to the person, in characters.
pub const MAX_MESSAGE_CHARS: usize = 2_000;

crate::tab_action_params!(
    check = |p| {
        if p.message.trim().is_empty() {
            return Err("message must say what the person is asked to do".into());
        }
        if p.message.chars().count() > MAX_MESSAGE_CHARS {
            return Err(format!("message must be at most {MAX_MESSAGE_CHARS} characters"));
        }
        match p.timeout_ms {
            Some(t) if !TIMEOUTS_MS.contains(&t) => Err(format!(
                "timeoutMs must be between {} and {} (1 s to 1 h), got {t}",
                TIMEOUTS_MS.start(),
                TIMEOUTS_MS.end()
            )),
            _ => Ok(()),
        }
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true: a person who declines ends the action with USER_DENIED.
    pub handed_back: bool,
    /// What the person wrote beside Done, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
