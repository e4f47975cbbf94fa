//! Which URLs are never a target (docs/protocol.md §4, §15): the one place that reads a URL as
//! the browser will, and says whether Tether may go there. The browser's own pages (`chrome:`,
//! `devtools:`, `view-source:`, ...) are always refused; `javascript:` runs page script, so it
//! is always refused; `file:` and `filesystem:` read the host's own disk, so they are refused
//! unless the host allows them; the relay's own origin is refused under every spelling that
//! reaches it (any loopback name or address with its port, and each public URL it is known by).
//!
//! URLs are read with the WHATWG parser (`url`), as Chromium reads them: leading and trailing
//! spaces and control characters are stripped, tabs and newlines inside are dropped, the
//! scheme's case is ignored, and `http://0x7f.1:17800/` is `127.0.0.1`. Every rule judges that
//! parsed URL, never the string as given: `" chrome://settings"` is `chrome://settings/`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// Schemes of the browser's own pages, refused whatever the configuration says. `view-source:`
/// wraps any URL in the browser's source viewer, a browser page too.
pub const INTERNAL_SCHEMES: &[&str] = &[
    "about-internal",
    "brave",
    "chrome",
    "chrome-devtools",
    "chrome-error",
    "chrome-extension",
    "chrome-native",
    "chrome-search",
    "chrome-untrusted",
    "devtools",
    "edge",
    "isolated-app",
    "opera",
    "view-source",
    "vivaldi",
];

/// Why a URL is no target, worded for the agent that asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The browser's own pages (settings, passwords, extensions, DevTools).
    Internal,
    /// `javascript:`: page script, which runs only through `browser_evaluate`.
    Script,
    /// `file:` or `filesystem:` without `--allow-file-urls`.
    LocalFile,
    /// The relay's own pages (its console, its API, its artifacts).
    Relay,
}

impl Refused {
    /// The refusal's message: what was refused, and what the agent may do instead.
    pub fn message(&self, url: &str) -> String {
        let shown = shorten(url);
        match self {
            Self::Internal => {
                format!("{shown} is a browser-internal page; Tether never acts on those")
            }
            Self::Script => format!(
                "{shown} is a javascript: URL: javascript: URLs run page script; use browser_evaluate where the host allows it"
            ),
            Self::LocalFile => format!(
                "{shown} is a local file: file: and filesystem: URLs read the host's own disk and are refused unless the host runs with --allow-file-urls (never in extension mode)"
            ),
            Self::Relay => format!(
                "{shown} is the Tether relay's own origin (its console and API): Tether never acts on it"
            ),
        }
    }
}

/// What a host knows of where its relay is: the origins it was given and told, as ports on
/// loopback (any spelling) and exact host:port pairs elsewhere.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelayOrigins {
    loopback_ports: Vec<u16>,
    remote: Vec<(String, u16)>,
}

impl RelayOrigins {
    /// Adds the relay at `url` (`http(s)://` or `ws(s)://`, with or without a path). A URL on a
    /// loopback address adds its port on every loopback spelling. Unreadable URLs add nothing.
    pub fn add(&mut self, url: &str) {
        let Ok(parsed) = Url::parse(url.trim()) else {
            return;
        };
        let Some(port) = parsed.port_or_known_default() else {
            return;
        };
        match parsed.host() {
            Some(host) if is_loopback(&host) && !self.loopback_ports.contains(&port) => {
                self.loopback_ports.push(port);
            }
            Some(host) if is_loopback(&host) => {}
            Some(host) => {
                let entry = (host.to_string().to_ascii_lowercase(), port);
                if !self.remote.contains(&entry) {
                    self.remote.push(entry);
                }
            }
            None => {}
        }
    }

    /// Whether the URL or origin `url` reaches one of the relay's origins.
    pub fn reaches(&self, url: &str) -> bool {
        Url::parse(url).is_ok_and(|u| self.contains(&u))
    }

    fn contains(&self, url: &Url) -> bool {
        let (Some(host), Some(port)) = (url.host(), url.port_or_known_default()) else {
            return false;
        };
        if is_loopback(&host) {
            return self.loopback_ports.contains(&port);
        }
        let name = host.to_string().to_ascii_lowercase();
        self.remote.iter().any(|(h, p)| *p == port && *h == name)
    }
}

/// Why Tether will not go to `url`, or `None` when these rules let it. The URL is judged as the
/// browser parses it. Other rules (control-UI patterns, the owner's blocked sites) are the
/// host's policy's.
pub fn refusal(url: &str, allow_file_urls: bool, relay: &RelayOrigins) -> Option<Refused> {
    let Ok(parsed) = Url::parse(url) else {
        // Not a URL the parser reads: the browser will not load it either, but its scheme is
        // still read the browser's way, so that nothing that looks like one slips by.
        return scheme(url).and_then(|s| scheme_refusal(&s, allow_file_urls));
    };
    if let Some(refused) = scheme_refusal(parsed.scheme(), allow_file_urls) {
        return Some(refused);
    }
    // Chromium opens `about:settings`, `about:version`, ... as the `chrome:` page of that name;
    // only `about:blank` and `about:srcdoc` are pages of their own.
    if parsed.scheme() == "about" && !matches!(parsed.path(), "blank" | "srcdoc") {
        return Some(Refused::Internal);
    }
    // `filesystem:http://host/...` and `blob:http://host/...` carry the origin inside.
    let inner = match parsed.scheme() {
        "blob" | "filesystem" => Url::parse(parsed.path()).ok(),
        _ => None,
    };
    let reaches_relay = relay.contains(&parsed) || inner.as_ref().is_some_and(|u| relay.contains(u));
    reaches_relay.then_some(Refused::Relay)
}

/// The rules a URL's scheme alone decides (`scheme` in lower case).
fn scheme_refusal(scheme: &str, allow_file_urls: bool) -> Option<Refused> {
    match scheme {
        "javascript" => Some(Refused::Script),
        "file" | "filesystem" if !allow_file_urls => Some(Refused::LocalFile),
        s if INTERNAL_SCHEMES.contains(&s) => Some(Refused::Internal),
        _ => None,
    }
}

/// The scheme of a URL (what comes before its first `:`), read as a browser would: leading C0
/// controls and spaces stripped, tabs and newlines dropped, in lower case.
pub fn scheme(url: &str) -> Option<String> {
    let cleaned: String = url
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .take(64)
        .collect();
    let (scheme, _) = cleaned.split_once(':')?;
    Some(scheme.to_ascii_lowercase())
}

/// Whether a host names this machine: `localhost` (and `*.localhost`, which Chromium resolves
/// to loopback), `127.0.0.0/8`, `0.0.0.0`, `[::1]`, `[::]`, and IPv4 loopback mapped into IPv6.
pub fn is_loopback(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        Host::Ipv4(ip) => is_loopback_ip(IpAddr::V4(*ip)),
        Host::Ipv6(ip) => is_loopback_ip(IpAddr::V6(*ip)),
    }
}

fn is_loopback_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4 == Ipv4Addr::UNSPECIFIED,
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6 == Ipv6Addr::UNSPECIFIED
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| is_loopback_ip(IpAddr::V4(v4)))
        }
    }
}

/// A URL as a message shows it: at most 200 characters.
fn shorten(url: &str) -> String {
    const MAX: usize = 200;
    match url.char_indices().nth(MAX) {
        Some((at, _)) => format!("{:?}…", &url[..at]),
        None => format!("{url:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relay() -> RelayOrigins {
        let mut origins = RelayOrigins::default();
        origins.add("ws://127.0.0.1:17800/ws");
        origins.add("https://relay.example");
        origins
    }

    #[test]
    fn javascript_urls_are_refused_in_every_spelling() {
        for url in [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            " \u{1}javascript:alert(1)",
            "java\tscript:alert(1)",
            "java\nscript:void(0)",
            "javascript:",
        ] {
            assert_eq!(refusal(url, true, &relay()), Some(Refused::Script), "{url:?}");
        }
        let message = Refused::Script.message("javascript:x");
        assert!(message.contains("browser_evaluate"), "{message}");
    }

    #[test]
    fn local_files_need_the_hosts_leave() {
        for url in [
            "file:///etc/passwd",
            "FILE:///tmp/a",
            "filesystem:http://a.test/temporary/x",
        ] {
            assert_eq!(refusal(url, false, &relay()), Some(Refused::LocalFile), "{url}");
        }
        assert_eq!(refusal("file:///tmp/page.html", true, &relay()), None);
    }

    #[test]
    fn the_relay_is_refused_under_every_loopback_spelling() {
        for url in [
            "http://127.0.0.1:17800/",
            "http://localhost:17800/api/actions",
            "http://LOCALHOST.:17800/",
            "http://app.localhost:17800/",
            "http://0.0.0.0:17800/",
            "http://127.1:17800/",
            "http://0x7f.0.0.1:17800/",
            "http://2130706433:17800/",
            "http://127.9.9.9:17800/",
            "http://[::1]:17800/",
            "http://[::]:17800/",
            "http://[::ffff:127.0.0.1]:17800/",
            "ws://localhost:17800/ws",
            "blob:http://localhost:17800/abc",
            "https://relay.example/artifacts/x",
            "https://RELAY.example:443/",
        ] {
            assert_eq!(refusal(url, false, &relay()), Some(Refused::Relay), "{url}");
        }
        for url in [
            "http://127.0.0.1:17801/",
            "http://localhost/",
            "https://example.com:17800/",
            "http://relay.example/",
            "about:blank",
            "data:text/html,hi",
        ] {
            assert_eq!(refusal(url, false, &relay()), None, "{url}");
        }
    }

    #[test]
    fn internal_pages_are_refused_as_the_browser_parses_them() {
        for url in [
            "chrome://version",
            " chrome://version",
            "\tchrome://version",
            "\n\r chrome://password-manager",
            "chr\tome://settings",
            "ch\nrome://settings",
            "CHROME://settings",
            "Chrome-Extension://abc/x.html",
            "\u{1}\u{1f}chrome://version \u{7}",
            "view-source:https://example.com/",
            "  VIEW-SOURCE:chrome://settings",
            "devtools://devtools/bundled/inspector.html",
            "chrome:settings",
            "edge://settings",
            "about:settings",
            " ABOUT:version",
        ] {
            assert_eq!(refusal(url, true, &relay()), Some(Refused::Internal), "{url:?}");
        }
        let message = Refused::Internal.message(" chrome://version");
        assert!(message.contains("browser-internal"), "{message}");
    }

    #[test]
    fn unreadable_strings_are_let_through_to_fail_in_the_browser() {
        assert_eq!(refusal("not a url", false, &relay()), None);
        assert_eq!(refusal("", false, &relay()), None);
    }
}
