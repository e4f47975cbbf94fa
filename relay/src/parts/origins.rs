//! Where the relay is (docs/protocol.md §15): the address it listens on, the public URLs it is
//! known by (`--public-url`), and the other origins a person let talk to its socket
//! (`--allowed-origin`). Hosts are told the relay's origins so they never act on its pages;
//! `/ws` refuses a browser page of any other origin.

use std::net::SocketAddr;
use std::sync::OnceLock;

use tether_protocol::targets::RelayOrigins;

#[derive(Debug, Default)]
pub struct Origins {
    /// Set once the listener is bound (`server::serve`).
    listen: OnceLock<SocketAddr>,
    /// `--public-url`s, as given.
    public: Vec<String>,
    /// `--allowed-origin`s, without a trailing slash.
    allowed: Vec<String>,
}

impl Origins {
    pub fn new(public: Vec<String>, allowed: Vec<String>) -> Self {
        let allowed = allowed
            .into_iter()
            .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
            .collect();
        Self {
            listen: OnceLock::new(),
            public,
            allowed,
        }
    }

    /// Records the listener's address (once; later calls are ignored).
    pub fn listening_on(&self, addr: SocketAddr) {
        let _ = self.listen.set(addr);
    }

    /// The listener's port, once bound.
    pub fn port(&self) -> Option<u16> {
        self.listen.get().map(SocketAddr::port)
    }

    /// The relay's own origins, for a host to refuse: the listener (on loopback, which stands
    /// for every loopback spelling) and each public URL.
    pub fn for_hosts(&self) -> Vec<String> {
        let listen = self.port().map(|port| format!("http://127.0.0.1:{port}"));
        listen.into_iter().chain(self.public.iter().cloned()).collect()
    }

    /// Whether a `/ws` upgrade's `Origin` may talk to the socket: absent (not a browser page),
    /// the relay's own origin under any spelling (its console), or one `--allowed-origin` names.
    pub fn admits(&self, origin: Option<&str>) -> bool {
        let Some(origin) = origin else {
            return true;
        };
        let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        if self.allowed.contains(&origin) {
            return true;
        }
        let mut own = RelayOrigins::default();
        for url in self.for_hosts() {
            own.add(&url);
        }
        own.reaches(&origin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_relays_own_origins_and_allowed_ones_are_admitted() {
        let origins = Origins::new(
            vec!["https://relay.example".into()],
            vec!["https://console.example/".into()],
        );
        origins.listening_on("127.0.0.1:17800".parse().unwrap());
        for ok in [
            None,
            Some("http://127.0.0.1:17800"),
            Some("http://localhost:17800"),
            Some("https://relay.example"),
            Some("https://CONSOLE.example"),
        ] {
            assert!(origins.admits(ok), "{ok:?}");
        }
        for refused in [
            "https://evil.example",
            "http://127.0.0.1:8080",
            "http://evil.example:17800",
            "null",
        ] {
            assert!(!origins.admits(Some(refused)), "{refused}");
        }
        assert_eq!(
            origins.for_hosts(),
            ["http://127.0.0.1:17800", "https://relay.example"]
        );
    }
}
