//! A stranger's first frames on `/ws` (docs/protocol.md §15): before any token is looked at, a frame
//! is an envelope or not, and an envelope is a `relay.join` or an error with the spec's code
//! (`INVALID_MESSAGE` or `UNAUTHORIZED`) and a message. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_protocol::{Envelope, ErrorCode};
use tether_relay::edge::ws::join;

fuzz_target!(|data: &[u8]| {
    let Ok(envelope) = serde_json::from_slice::<Envelope>(data) else {
        return;
    };
    match join::read(envelope) {
        Ok(join) => {
            let _ = (join.role, join.token, join.client_id);
        }
        Err(error) => {
            assert!(matches!(
                error.code,
                ErrorCode::InvalidMessage | ErrorCode::Unauthorized
            ));
            assert!(!error.message.is_empty());
        }
    }
});
