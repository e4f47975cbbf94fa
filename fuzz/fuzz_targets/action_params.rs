//! Every action's params (docs/protocol.md §4): any JSON given to any action parses into a typed
//! call or an `INVALID_PARAMS` / `UNKNOWN_ACTION` error that says what is wrong. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_protocol::{ActionCall, ActionName, ErrorCode};

fuzz_target!(|data: &[u8]| {
    let Ok(params) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for name in ActionName::ALL {
        if let Err(error) = ActionCall::parse(name.as_str(), &params) {
            assert_eq!(
                error.code,
                ErrorCode::InvalidParams,
                "{}: {}",
                name.as_str(),
                error.message
            );
            assert!(!error.message.is_empty());
        }
    }
    let unknown = ActionCall::parse("no_such_action", &params).unwrap_err();
    assert_eq!(unknown.code, ErrorCode::UnknownAction);
});
