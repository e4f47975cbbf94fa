//! An HTTP proxy on loopback for the tests of a session's proxy (docs/protocol.md §21): it
//! speaks the proxy side of HTTP/1.1 as Chromium does (a request line naming the whole URL),
//! answers every request itself with a page titled "Through the proxy", and keeps the URLs it
//! was asked for, so a test sees which session's requests went through it. One started with a
//! login asks for it (`407` with a Basic challenge) and answers only requests that carry it.
//! A URL ending in `/site-asks` is answered as a site asking for a login of its own would (`401`
//! with a Basic challenge), and the `Authorization` each such request carried is kept.

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
    site_logins: Arc<Mutex<Vec<String>>>,
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
        let site_logins = Arc::new(Mutex::new(Vec::new()));
        let kept = Kept {
            login: login.map(Arc::from),
            seen: seen.clone(),
            refused: refused.clone(),
            site_logins: site_logins.clone(),
        };
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(answer(stream, kept.clone()));
            }
        });
        Self {
            addr,
            seen,
            refused,
            site_logins,
        }
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

    /// The `Authorization` values the `/site-asks` requests carried (`""`: none).
    pub fn site_logins(&self) -> Vec<String> {
        self.site_logins.lock().unwrap().clone()
    }
}

#[derive(Clone)]
struct Kept {
    /// The `Proxy-Authorization` value it asks for, if any.
    login: Option<Arc<str>>,
    seen: Arc<Mutex<Vec<String>>>,
    refused: Arc<Mutex<Vec<String>>>,
    site_logins: Arc<Mutex<Vec<String>>>,
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
    let header = |wanted: &str| {
        text.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case(wanted).then(|| value.trim().to_owned())
        })
    };
    if kept
        .login
        .as_deref()
        .is_some_and(|login| header("proxy-authorization").as_deref() != Some(login))
    {
        kept.refused.lock().unwrap().push(target);
        let ask = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        let _ = stream.write_all(ask.as_bytes()).await;
        let _ = stream.shutdown().await;
        return;
    }
    if target.ends_with("/site-asks") {
        let carried = header("authorization").unwrap_or_default();
        kept.site_logins.lock().unwrap().push(carried);
        let ask = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"site\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
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
