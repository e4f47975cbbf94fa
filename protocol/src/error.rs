//! The spec's error codes (docs/protocol.md §2.6) and the error body every failure carries.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every error code of the wire contract. Serialised as the exact SCREAMING_SNAKE names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    InvalidMessage,
    Unauthorized,
    Forbidden,
    UnknownAction,
    InvalidParams,
    NoClientSelected,
    ClientOffline,
    QueueFull,
    AckTimeout,
    ActionTimeout,
    SessionNotActive,
    TabNotFound,
    TabNotInSession,
    ForbiddenTarget,
    ElementNotFound,
    ElementNotInteractable,
    NavigationFailed,
    PayloadTooLarge,
    CdpError,
    UserDenied,
    /// The browser or mode cannot do this (§16); the message says which, and what would.
    Unsupported,
    Internal,
}

impl ErrorCode {
    /// The wire name, e.g. `"TAB_NOT_FOUND"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidMessage => "INVALID_MESSAGE",
            Self::Unauthorized => "UNAUTHORIZED",
            Self::Forbidden => "FORBIDDEN",
            Self::UnknownAction => "UNKNOWN_ACTION",
            Self::InvalidParams => "INVALID_PARAMS",
            Self::NoClientSelected => "NO_CLIENT_SELECTED",
            Self::ClientOffline => "CLIENT_OFFLINE",
            Self::QueueFull => "QUEUE_FULL",
            Self::AckTimeout => "ACK_TIMEOUT",
            Self::ActionTimeout => "ACTION_TIMEOUT",
            Self::SessionNotActive => "SESSION_NOT_ACTIVE",
            Self::TabNotFound => "TAB_NOT_FOUND",
            Self::TabNotInSession => "TAB_NOT_IN_SESSION",
            Self::ForbiddenTarget => "FORBIDDEN_TARGET",
            Self::ElementNotFound => "ELEMENT_NOT_FOUND",
            Self::ElementNotInteractable => "ELEMENT_NOT_INTERACTABLE",
            Self::NavigationFailed => "NAVIGATION_FAILED",
            Self::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            Self::CdpError => "CDP_ERROR",
            Self::UserDenied => "USER_DENIED",
            Self::Unsupported => "UNSUPPORTED",
            Self::Internal => "INTERNAL",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `{ "code", "message", "details"? }`: the payload of an `error` envelope and the `error`
/// of a failed action result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ActionError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ActionError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidParams, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_to_their_wire_names() {
        for code in [
            ErrorCode::TabNotInSession,
            ErrorCode::CdpError,
            ErrorCode::ElementNotInteractable,
            ErrorCode::AckTimeout,
        ] {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, Value::String(code.as_str().to_owned()));
            let back: ErrorCode = serde_json::from_value(json).unwrap();
            assert_eq!(back, code);
        }
    }
}
