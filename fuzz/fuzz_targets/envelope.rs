//! Relay frames (docs/protocol.md §2): any text is an envelope or an `INVALID_MESSAGE`; an envelope
//! is, for each role, a message it may send or an error with the spec's code; a
//! `browser_action` payload is a request, the action's own error, or not an action. A message
//! read back is written out and read again unchanged. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_protocol::messages::Role;
use tether_protocol::{Envelope, ErrorCode};
use tether_relay::core::request::Request;

fuzz_target!(|data: &[u8]| {
    if let Ok(envelope) = serde_json::from_slice::<Envelope>(data) {
        for role in [Role::Orchestrator, Role::Host, Role::Observer] {
            match envelope.clone().read(role) {
                Ok(message) => {
                    let again = Envelope::of(message.clone())
                        .message()
                        .expect("a message reads back");
                    assert_eq!(again.kind(), message.kind());
                }
                Err(unreadable) => {
                    let error = unreadable.error(role);
                    assert!(matches!(
                        error.code,
                        ErrorCode::InvalidMessage | ErrorCode::Forbidden | ErrorCode::InvalidParams
                    ));
                }
            }
        }
    }
    if let Ok(payload) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = Request::read(&payload);
    }
});
