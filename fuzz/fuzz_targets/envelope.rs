//! Relay frames (PROTOCOL.md §2): any text is an envelope or an `INVALID_MESSAGE`; an envelope's
//! `browser_action` payload is a request, the action's own error, or not an action. Never a
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_protocol::Envelope;
use tether_relay::scheduler;

fuzz_target!(|data: &[u8]| {
    if let Ok(envelope) = serde_json::from_slice::<Envelope>(data) {
        let _ = scheduler::parse(&envelope.payload);
        let _ = serde_json::to_string(&envelope);
    }
    if let Ok(payload) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = scheduler::parse(&payload);
    }
});
