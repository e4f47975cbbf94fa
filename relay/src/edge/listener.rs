//! The relay's accept loop (docs/protocol.md §15, "bounded before it is known"): what a stranger
//! on the port can cost the relay before it knows who they are. A request's headers must
//! arrive within 10 s (a keep-alive connection waiting for its next request is held to the
//! same deadline); at most `max_connections` connections are served, and past that a few more
//! are let in to reach `/healthz` only, the oldest of them closed when yet another comes; the
//! open-file limit is raised to the hard limit with a reserve kept for the files and peers the
//! relay already serves; a failing `accept` (no file descriptor left) backs off instead of
//! spinning. Each connection counts the bytes it reads, so `/ws` can bound what a peer sends
//! before it has joined ([`ReadBudget`]).

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::response::IntoResponse;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::{AbortHandle, JoinSet};
use tower::ServiceExt;

/// How long a request's headers may take to arrive.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// File descriptors kept back from connections: session logs, artifacts, the database, NATS,
/// and the connections let in past the cap to reach `/healthz`.
const FD_RESERVE: u64 = 256;

/// Connections let in past the cap, for `/healthz` only.
const OVERFLOW: usize = 32;

/// How long an overflow connection may take to send its one request.
const OVERFLOW_HEADER_TIMEOUT: Duration = Duration::from_secs(2);

/// What the listener bounds.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// `--max-connections`; fewer when the open-file limit leaves room for fewer.
    pub max_connections: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            max_connections: 10_000,
        }
    }
}

/// `GET /healthz`: no token, and served even when every connection slot is taken.
pub async fn healthz() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({ "status": "ok" }))
}

/// The connections this process can serve: `wanted`, or fewer when the open-file limit minus
/// the reserve is lower.
fn connection_slots(wanted: usize) -> usize {
    let Some(limit) = crate::parts::open_files::limit() else {
        return wanted;
    };
    let room = limit.saturating_sub(FD_RESERVE).max(16);
    wanted.min(usize::try_from(room).unwrap_or(usize::MAX))
}

/// Serves `app` on `listener` until `shutdown` resolves; then stops accepting, lets the
/// requests in flight end (5 s at most) and returns.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    bounds: Bounds,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let mut served = Served::new(app, bounds);
    let mut backoff = Duration::ZERO;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut shutdown => break,
        };
        match accepted {
            Ok((tcp, _)) => {
                backoff = Duration::ZERO;
                served.take(tcp);
            }
            Err(e) if is_connection_error(&e) => {}
            Err(e) => {
                // Out of file descriptors (or memory): wait for some to be given back.
                backoff = (backoff * 2).clamp(Duration::from_millis(10), Duration::from_secs(1));
                tracing::warn!("cannot accept a connection ({e}); retrying in {backoff:?}");
                tokio::time::sleep(backoff).await;
            }
        }
    }
    drop(listener);
    served.drain().await;
    Ok(())
}

/// The connections being served, and how a new one is.
struct Served {
    app: Router,
    /// The answer to a connection past the cap: `/healthz`, or 503.
    healthz_only: Router,
    slots: Arc<Semaphore>,
    overflow: Overflow,
    main: hyper::server::conn::http1::Builder,
    last_resort: hyper::server::conn::http1::Builder,
    stop: tokio::sync::watch::Sender<()>,
    connections: JoinSet<()>,
}

impl Served {
    fn new(app: Router, bounds: Bounds) -> Self {
        let slots = connection_slots(bounds.max_connections);
        if slots < bounds.max_connections {
            tracing::warn!(
                "serving at most {slots} connections: the open-file limit leaves room for no more (raise it with ulimit -n)"
            );
        }
        let mut main = hyper::server::conn::http1::Builder::new();
        main.timer(TokioTimer::new())
            .header_read_timeout(HEADER_TIMEOUT)
            .max_headers(100);
        let mut last_resort = main.clone();
        last_resort
            .header_read_timeout(OVERFLOW_HEADER_TIMEOUT)
            .keep_alive(false);
        let healthz_only = Router::new()
            .route("/healthz", axum::routing::get(healthz))
            .fallback(|| async {
                let error = tether_protocol::ActionError::new(
                    tether_protocol::ErrorCode::Internal,
                    "the relay is serving as many connections as it may; try again shortly",
                );
                (StatusCode::SERVICE_UNAVAILABLE, axum::Json(error)).into_response()
            });
        Self {
            app,
            healthz_only,
            slots: Arc::new(Semaphore::new(slots)),
            overflow: Overflow::default(),
            main,
            last_resort,
            stop: tokio::sync::watch::channel(()).0,
            connections: JoinSet::new(),
        }
    }

    /// Serves a new connection: in a slot of its own, or past the cap for `/healthz` only.
    fn take(&mut self, tcp: TcpStream) {
        // Frames are small and answered at once: Nagle's algorithm would hold each one back
        // for the peer's delayed ack (~40 ms a round trip).
        let _ = tcp.set_nodelay(true);
        while self.connections.try_join_next().is_some() {}
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            let (io, budget) = Counted::new(tcp, None);
            let conn = self
                .last_resort
                .serve_connection(TokioIo::new(io), service(&self.healthz_only, budget));
            let task = self.connections.spawn(async move {
                let _ = conn.await;
            });
            return self.overflow.admit(task);
        };
        let (io, budget) = Counted::new(tcp, Some(slot));
        let conn = self
            .main
            .serve_connection(TokioIo::new(io), service(&self.app, budget))
            .with_upgrades();
        let mut stopped = self.stop.subscribe();
        self.connections.spawn(async move {
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = stopped.changed() => conn.as_mut().graceful_shutdown(),
            }
            let _ = conn.await;
        });
    }

    /// Asks every connection to finish what it is doing, and waits for them (5 s at most).
    async fn drain(mut self) {
        let _ = self.stop.send(());
        let connections = &mut self.connections;
        let drained = async { while connections.join_next().await.is_some() {} };
        if tokio::time::timeout(Duration::from_secs(5), drained)
            .await
            .is_err()
        {
            self.connections.abort_all();
        }
    }
}

/// The router as a hyper service, each request carrying its connection's [`ReadBudget`].
fn service(
    app: &Router,
    budget: Arc<ReadBudget>,
) -> TowerToHyperService<
    tower::util::MapRequest<Router, impl FnMut(Request<Incoming>) -> Request<Body> + Clone>,
> {
    TowerToHyperService::new(app.clone().map_request(move |request: Request<Incoming>| {
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(budget.clone());
        request
    }))
}

/// Errors of one connection that came and went, not of the listener.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

/// The connections let in past the cap: when one more comes, the oldest is closed.
#[derive(Default)]
struct Overflow(Mutex<VecDeque<AbortHandle>>);

impl Overflow {
    fn admit(&self, task: AbortHandle) {
        let mut open = self.0.lock().unwrap_or_else(|p| p.into_inner());
        open.retain(|t| !t.is_finished());
        if open.len() >= OVERFLOW {
            if let Some(oldest) = open.pop_front() {
                oldest.abort();
            }
        }
        open.push_back(task);
    }
}

/// How many bytes a connection may still read: unbounded, unless a route set a limit (`/ws`
/// before `relay.join`). Reading past it fails with [`ReadBudget::EXCEEDED`].
#[derive(Debug)]
pub struct ReadBudget {
    read: AtomicU64,
    limit: AtomicU64,
}

impl ReadBudget {
    /// The error message a read past the limit fails with.
    pub const EXCEEDED: &'static str = "read budget exceeded";

    fn new() -> Self {
        Self {
            read: AtomicU64::new(0),
            limit: AtomicU64::new(u64::MAX),
        }
    }

    /// From now on the connection may read at most `bytes` more.
    pub fn allow_only(&self, bytes: u64) {
        let read = self.read.load(Ordering::Relaxed);
        self.limit.store(read.saturating_add(bytes), Ordering::Relaxed);
    }

    /// Lifts the limit.
    pub fn unbounded(&self) {
        self.limit.store(u64::MAX, Ordering::Relaxed);
    }

    /// A budget for a connection the listener did not make (in-process tests).
    pub fn detached() -> Arc<Self> {
        Arc::new(Self::new())
    }
}

/// A served TCP connection: it holds its connection slot for as long as the socket lives (an
/// upgraded WebSocket outlives the HTTP connection that made it), and counts what it reads.
struct Counted {
    tcp: TcpStream,
    budget: Arc<ReadBudget>,
    _slot: Option<OwnedSemaphorePermit>,
}

impl Counted {
    fn new(tcp: TcpStream, slot: Option<OwnedSemaphorePermit>) -> (Self, Arc<ReadBudget>) {
        let budget = Arc::new(ReadBudget::new());
        let io = Self {
            tcp,
            budget: budget.clone(),
            _slot: slot,
        };
        (io, budget)
    }
}

impl AsyncRead for Counted {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let limit = this.budget.limit.load(Ordering::Relaxed);
        if limit == u64::MAX {
            let before = buf.filled().len();
            let polled = Pin::new(&mut this.tcp).poll_read(cx, buf);
            let n = buf.filled().len() - before;
            this.budget.read.fetch_add(n as u64, Ordering::Relaxed);
            return polled;
        }
        let left = limit.saturating_sub(this.budget.read.load(Ordering::Relaxed));
        if left == 0 {
            return Poll::Ready(Err(io::Error::other(ReadBudget::EXCEEDED)));
        }
        // Never more than the budget allows, so the limit is exact.
        let room = usize::try_from(left).unwrap_or(usize::MAX).min(buf.remaining());
        let mut limited = ReadBuf::new(buf.initialize_unfilled_to(room));
        let polled = Pin::new(&mut this.tcp).poll_read(cx, &mut limited);
        let n = limited.filled().len();
        buf.advance(n);
        this.budget.read.fetch_add(n as u64, Ordering::Relaxed);
        polled
    }
}

impl AsyncWrite for Counted {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
}
