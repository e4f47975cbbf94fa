//! Native-messaging frames from the browser (docs/protocol.md §1): any bytes decode to a message,
//! "need more", or a typed error; never a panic, and never an allocation the length prefix
//! asks for before it is checked against the cap (a 4 GiB prefix must not allocate 4 GiB).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_protocol::framing::{decode, BROWSER_TO_HOST_MAX, HOST_TO_BROWSER_MAX};

fuzz_target!(|data: &[u8]| {
    for cap in [BROWSER_TO_HOST_MAX, HOST_TO_BROWSER_MAX, 16] {
        let mut rest = data;
        // A stream of frames: decode until the bytes run out or one is refused.
        while let Ok(Some((_message, used))) = decode::<serde_json::Value>(rest, cap) {
            assert!(used >= 4 && used <= rest.len());
            rest = &rest[used..];
        }
    }
});
