//! An HTTP proxy on loopback for the tests of a session's proxy (docs/protocol.md §21): it
//! speaks the proxy side of HTTP/1.1 as Chromium does (a request line naming the whole URL),
//! answers every request itself with a page titled "Through the proxy", and keeps the URLs it
//! was asked for, so a test sees which session's requests went through it. One started with a
//! login asks for it (`407` with a Basic challenge) and answers only requests that carry it.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The most a request's head may take before the proxy hangs up.
const HEAD_MAX: usize = 64 * 1024;

const PAGE: &str = "<!doctype html><title>Through the proxy</title><p>Answered by the test proxy.</p>";

pub struct TestProxy {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
    refused: Arc<Mutex<Vec<String>>>,
}

impl TestProxy {
    pub async fn start() -> Self {
        Self::asking(None).await
    }

    /// A proxy that lets in only requests signed in as `username` with `password`.
    pub async fn with_login(username: &str, password: &str) -> Self {
        use base64::Engine;
        let pair = base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
        Self::asking(Some(format!("Basic {pair}"))).await
    }

    async fn asking(login: Option<String>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the test proxy");
        let addr = listener.local_addr().expect("the test proxy's address");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let refused = Arc::new(Mutex::new(Vec::new()));
        let kept = Kept {
            login: login.map(Arc::from),
            seen: seen.clone(),
            refused: refused.clone(),
        };
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(answer(stream, kept.clone()));
            }
        });
        Self { addr, seen, refused }
    }

    /// As `session_start`'s `proxy.server` names it.
    pub fn server(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The URLs asked of it so far (and let in).
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }

    /// The URLs asked of it without its login, or with another.
    pub fn refused(&self) -> Vec<String> {
        self.refused.lock().unwrap().clone()
    }
}

#[derive(Clone)]
struct Kept {
    /// The `Proxy-Authorization` value it asks for, if any.
    login: Option<Arc<str>>,
    seen: Arc<Mutex<Vec<String>>>,
    refused: Arc<Mutex<Vec<String>>>,
}

/// Reads one request's head and answers it with the page, then closes.
async fn answer(mut stream: TcpStream, kept: Kept) {
    let mut head = Vec::new();
    let mut chunk = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
        if head.len() > HEAD_MAX {
            return;
        }
    }
    let text = String::from_utf8_lossy(&head);
    let target = text.split_whitespace().nth(1).unwrap_or_default().to_owned();
    let signed_in = |login: &str| {
        text.lines().any(|line| {
            line.split_once(':').is_some_and(|(name, value)| {
                name.eq_ignore_ascii_case("proxy-authorization") && value.trim() == login
            })
        })
    };
    if kept.login.as_deref().is_some_and(|login| !signed_in(login)) {
        kept.refused.lock().unwrap().push(target);
        let ask = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        let _ = stream.write_all(ask.as_bytes()).await;
        let _ = stream.shutdown().await;
        return;
    }
    kept.seen.lock().unwrap().push(target);
    let reply = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{PAGE}",
        PAGE.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}
