//! What Tether refuses: pages it never touches (`FORBIDDEN_TARGET`: the browser's own pages,
//! and the control UI's pages, given as Chrome match patterns (`https://app.example.com/*`,
//! `*://*.example.com/*`), like an extension's `externally_connectable.matches`), and whether
//! an agent's own JavaScript may run (`browser_evaluate`, off unless the browser's owner
//! allows it; docs/security.md says why). The browser's owner may also block sites of their
//! own (match patterns set in the extension, docs/protocol.md §12), refused the same way. The
//! rules no configuration lifts (`javascript:`, local files, the relay's own origin under any
//! spelling: docs/protocol.md §15) are `tether_protocol::targets`'; this policy holds what they need
//! (whether file URLs are allowed, the relay's origins).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use tether_protocol::targets::{self, RelayOrigins};
use url::Url;

#[derive(Debug, Clone, Default)]
pub struct Policy {
    patterns: Vec<MatchPattern>,
    /// Shared by the policy's clones: in extension mode the owner changes it while the host runs.
    evaluate: Arc<AtomicBool>,
    /// Whether `browser_storage_state` may run: set for a worker's own browser, by the owner
    /// for a person's.
    storage_state: Arc<AtomicBool>,
    /// The secrets the owner holds for agents (`secrets.rs`), shared the same way.
    secrets: crate::engine::secrets::Secrets,
    /// The owner's blocked sites, shared the same way.
    blocked: Arc<RwLock<Vec<MatchPattern>>>,
    /// Whether `file:` and `filesystem:` URLs may be opened (`--allow-file-urls`).
    file_urls: bool,
    /// Whether the host keeps none of its pages' console and requests (`--no-page-log`).
    no_page_log: bool,
    /// Where the relay is: the URLs the host dials, and those the relay says it is known by.
    relay: Arc<RwLock<RelayOrigins>>,
}

impl Policy {
    /// A policy that refuses internal pages and every URL matching one of `patterns`.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Self, String> {
        let patterns = patterns
            .iter()
            .map(|p| MatchPattern::parse(p.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            patterns,
            ..Self::default()
        })
    }

    /// Lets agents open `file:` and `filesystem:` URLs (worker, exec and mcp's
    /// `--allow-file-urls`; never in extension mode).
    pub fn allow_file_urls(mut self, allowed: bool) -> Self {
        self.file_urls = allowed;
        self
    }

    /// Keeps none of the pages' console messages and requests (worker, exec and mcp's
    /// `--no-page-log`): the tabs are prepared without them, and `browser_console` and
    /// `browser_network` are refused.
    pub fn without_page_log(mut self, off: bool) -> Self {
        self.no_page_log = off;
        self
    }

    pub fn keeps_page_log(&self) -> bool {
        !self.no_page_log
    }

    /// Refuses the relay at `url` (as dialed, or as the relay says it is known) under every
    /// spelling that reaches it.
    pub fn add_relay_origin(&self, url: &str) {
        self.relay.write().unwrap_or_else(|p| p.into_inner()).add(url);
    }

    /// Sets the browser owner's blocked sites; the patterns that are not match patterns are
    /// left out, and answered with why.
    pub fn set_blocked_sites<S: AsRef<str>>(&self, patterns: &[S]) -> Vec<String> {
        let (mut blocked, mut wrong) = (Vec::new(), Vec::new());
        for pattern in patterns
            .iter()
            .map(AsRef::as_ref)
            .filter(|p| !p.trim().is_empty())
        {
            match MatchPattern::parse(pattern.trim()) {
                Ok(parsed) => blocked.push(parsed),
                Err(why) => wrong.push(why),
            }
        }
        *self.blocked.write().unwrap_or_else(|p| p.into_inner()) = blocked;
        wrong
    }

    /// The owner's blocked sites as they were given.
    pub fn blocked_sites(&self) -> Vec<String> {
        let blocked = self.blocked.read().unwrap_or_else(|p| p.into_inner());
        blocked.iter().map(|p| p.source.clone()).collect()
    }

    /// Whether `browser_evaluate` may run the agent's JavaScript.
    pub fn allows_evaluate(&self) -> bool {
        self.evaluate.load(Ordering::Relaxed)
    }

    pub fn set_allow_evaluate(&self, allowed: bool) {
        self.evaluate.store(allowed, Ordering::Relaxed);
    }

    /// Whether `browser_storage_state` may save and load the browser's cookies and storage:
    /// a worker's own browser, yes; a person's, only as its owner allowed.
    pub fn allows_storage_state(&self) -> bool {
        self.storage_state.load(Ordering::Relaxed)
    }

    pub fn set_allow_storage_state(&self, allowed: bool) {
        self.storage_state.store(allowed, Ordering::Relaxed);
    }

    /// The secrets agents may have typed (never read).
    pub fn secrets(&self) -> &crate::engine::secrets::Secrets {
        &self.secrets
    }

    /// Why Tether will not act on `url`, or `None` when it may.
    pub fn refusal(&self, url: &str) -> Option<String> {
        let relay = self.relay.read().unwrap_or_else(|p| p.into_inner());
        if let Some(refused) = targets::refusal(url, self.file_urls, &relay) {
            return Some(refused.message(url));
        }
        drop(relay);
        let parsed = Url::parse(url).ok()?;
        if let Some(p) = self.patterns.iter().find(|p| p.matches(&parsed)) {
            return Some(format!(
                "{url} belongs to the control UI (matches {}); Tether never acts on it",
                p.source
            ));
        }
        let blocked = self.blocked.read().unwrap_or_else(|p| p.into_inner());
        blocked.iter().find(|p| p.matches(&parsed)).map(|p| {
            format!(
                "{url} is on this browser's blocked sites (matches {}): its owner does not let Tether act there",
                p.source
            )
        })
    }
}

#[derive(Debug, Clone)]
struct MatchPattern {
    source: String,
    scheme: String,
    host: String,
    path: String,
}

impl MatchPattern {
    fn parse(source: &str) -> Result<Self, String> {
        let bad =
            || format!("{source:?} is not a match pattern like https://example.com/* or *://*.example.com/*");
        let (scheme, rest) = source.split_once("://").ok_or_else(bad)?;
        let (host, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/*"),
        };
        if scheme.is_empty()
            || host.is_empty()
            || (host.contains('*') && host != "*" && !host.starts_with("*."))
        {
            return Err(bad());
        }
        Ok(Self {
            source: source.to_owned(),
            scheme: scheme.to_ascii_lowercase(),
            host: host.to_ascii_lowercase(),
            path: path.to_owned(),
        })
    }

    fn matches(&self, url: &Url) -> bool {
        let scheme_ok = match self.scheme.as_str() {
            "*" => matches!(url.scheme(), "http" | "https"),
            s => s == url.scheme(),
        };
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        // A pattern may name a port (`localhost:8080`); compare against host:port then.
        let host_port = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.clone(),
        };
        let host_ok = match self.host.as_str() {
            "*" => true,
            h if h.starts_with("*.") => {
                let base = &h[2..];
                host == base || host.ends_with(&format!(".{base}"))
            }
            h if h.contains(':') => h == host_port,
            h => h == host,
        };
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        scheme_ok && host_ok && crate::parts::glob::glob(&self.path, &path)
    }
}

impl crate::parts::rules::Rules for Policy {
    fn refusal(&self, url: &str) -> Option<String> {
        Policy::refusal(self, url)
    }

    fn allows_evaluate(&self) -> bool {
        Policy::allows_evaluate(self)
    }

    fn allows_storage_state(&self) -> bool {
        Policy::allows_storage_state(self)
    }

    fn keeps_page_log(&self) -> bool {
        Policy::keeps_page_log(self)
    }

    fn secret_names(&self) -> Vec<tether_protocol::actions::browser_secrets::Named> {
        self.secrets.named()
    }

    fn secret_for(&self, name: &str, page_url: &str) -> Result<String, tether_protocol::ActionError> {
        self.secrets.value_for(name, page_url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owners_blocked_sites_are_refused_and_bad_patterns_named() {
        let policy = Policy::new(&["https://console.example/*"]).unwrap();
        let copy = policy.clone();
        let wrong = policy.set_blocked_sites(&["*://*.bank.example/*", "bank", " "]);
        assert_eq!(wrong.len(), 1, "{wrong:?}");
        assert!(wrong[0].contains("\"bank\""), "{wrong:?}");
        let why = copy.refusal("https://www.bank.example/login").unwrap();
        assert!(why.contains("blocked sites"), "{why}");
        assert!(copy
            .refusal("https://console.example/x")
            .unwrap()
            .contains("control UI"));
        assert_eq!(copy.blocked_sites(), ["*://*.bank.example/*"]);
        policy.set_blocked_sites::<&str>(&[]);
        assert!(copy.refusal("https://www.bank.example/login").is_none());
    }

    #[test]
    fn internal_pages_are_always_refused() {
        let policy = Policy::default();
        for url in [
            "chrome://settings",
            "chrome-extension://abc/popup.html",
            "devtools://devtools/x",
            "VIEW-SOURCE:https://a",
        ] {
            assert!(policy.refusal(url).is_some(), "{url}");
        }
        for url in ["https://example.com/", "about:blank", "data:text/html,hi"] {
            assert!(policy.refusal(url).is_none(), "{url}");
        }
    }

    #[test]
    fn script_local_files_and_the_relay_are_refused_whatever_the_patterns() {
        let policy = Policy::default();
        policy.add_relay_origin("ws://127.0.0.1:17800");
        let why = policy.refusal("JavaScript:alert(document.cookie)").unwrap();
        assert!(why.contains("browser_evaluate"), "{why}");
        let why = policy.refusal("file:///etc/passwd").unwrap();
        assert!(why.contains("--allow-file-urls"), "{why}");
        let why = policy.refusal("http://localhost:17800/").unwrap();
        assert!(why.contains("relay"), "{why}");
        let files = Policy::default().allow_file_urls(true);
        assert!(files.refusal("file:///tmp/page.html").is_none());
        assert!(files.refusal("javascript:1").is_some());
    }

    #[test]
    fn control_ui_patterns_follow_chrome_match_pattern_rules() {
        let policy = Policy::new(&[
            "https://app.example.com/*",
            "*://*.control.test/ui/*",
            "http://127.0.0.1:17800/*",
        ])
        .unwrap();
        assert!(policy.refusal("https://app.example.com/").is_some());
        assert!(policy.refusal("https://app.example.com/tasks?id=1").is_some());
        assert!(
            policy.refusal("http://app.example.com/").is_none(),
            "scheme must match"
        );
        assert!(
            policy.refusal("https://control.test/ui/x").is_some(),
            "*. covers the bare domain"
        );
        assert!(policy.refusal("http://a.b.control.test/ui/").is_some());
        assert!(policy.refusal("https://control.test/other").is_none());
        assert!(policy.refusal("https://evilcontrol.test/ui/x").is_none());
        assert!(policy.refusal("http://127.0.0.1:17800/api/actions").is_some());
        assert!(policy.refusal("http://127.0.0.1:9999/").is_none());
        let refusal = policy.refusal("https://app.example.com/").unwrap();
        assert!(refusal.contains("control UI"), "{refusal}");
    }

    #[test]
    fn bad_patterns_are_explained() {
        let err = Policy::new(&["example.com"]).unwrap_err();
        assert!(err.contains("match pattern"), "{err}");
        assert!(Policy::new(&["https://ex*ample.com/"]).is_err());
    }
}
