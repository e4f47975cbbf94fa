//! The URL policy (docs/protocol.md §4, §15) on any string an agent or a page could hand it:
//! never a panic; a string is judged as its parsed form is (what the browser will load), so a
//! spelling never lets through what the parsed URL would be refused for; whatever the browser
//! reads as `javascript:` or one of its own pages is always refused; a refusal says what.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_protocol::targets::{refusal, scheme, Refused, RelayOrigins, INTERNAL_SCHEMES};

fuzz_target!(|data: &[u8]| {
    let Ok(url) = std::str::from_utf8(data) else {
        return;
    };
    let mut relay = RelayOrigins::default();
    relay.add("ws://127.0.0.1:17800/ws");
    relay.add(url);
    let parsed = url::Url::parse(url).ok();
    for allow_files in [false, true] {
        let refused = refusal(url, allow_files, &relay);
        let read_as = scheme(url);
        if read_as.as_deref() == Some("javascript") {
            assert_eq!(refused, Some(Refused::Script), "{url:?}");
        }
        if read_as.is_some_and(|s| INTERNAL_SCHEMES.contains(&s.as_str())) {
            assert!(refused.is_some(), "an internal page let through: {url:?}");
        }
        if let Some(parsed) = &parsed {
            // The oracle: the string is allowed only if the URL the browser loads is.
            let of_parsed = refusal(parsed.as_str(), allow_files, &relay);
            assert_eq!(refused, of_parsed, "{url:?} judged unlike {:?}", parsed.as_str());
        }
        if let Some(refused) = &refused {
            assert!(!refused.message(url).is_empty());
        }
    }
    let _ = relay.reaches(url);
});
