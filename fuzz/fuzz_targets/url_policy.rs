//! The URL policy (docs/protocol.md §15) on any string an agent or a page could hand it: never a
//! panic; whatever the browser would read as `javascript:` is refused, file URLs are refused
//! unless allowed, and a refusal's message names what was refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_protocol::targets::{refusal, scheme, Refused, RelayOrigins};

fuzz_target!(|data: &[u8]| {
    let Ok(url) = std::str::from_utf8(data) else {
        return;
    };
    let mut relay = RelayOrigins::default();
    relay.add("ws://127.0.0.1:17800/ws");
    relay.add(url);
    for allow_files in [false, true] {
        let refused = refusal(url, allow_files, &relay);
        if scheme(url).as_deref() == Some("javascript") {
            assert_eq!(refused, Some(Refused::Script), "{url:?}");
        }
        if let Some(refused) = &refused {
            assert!(!refused.message(url).is_empty());
        }
    }
    let _ = relay.reaches(url);
});
