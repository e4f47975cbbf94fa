//! Stopping without losing a result (SIGTERM, Ctrl-C). In order:
//! 1. `Draining`: new actions are refused; running ones may finish, for a grace period; queued
//!    ones then end with an error result, in their order, without running;
//! 2. `Aborting`: the ones still running end with an error result;
//! 3. `Closed`: every result has gone out; sockets close after what is queued on them.
//!
//! The session log needs no flushing: the lines it holds for an action are written with the
//! action's end, and every action has ended before `Closed`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{watch, Notify};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    Running,
    Draining,
    Aborting,
    Closed,
}

pub struct Shutdown {
    phase: watch::Sender<Phase>,
    /// Woken whenever a session's runner ends.
    pub(crate) idle: Notify,
    /// WebSocket connections open now, and a wake-up when one closes.
    sockets: AtomicUsize,
    socket_closed: Notify,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self {
            phase: watch::channel(Phase::Running).0,
            idle: Notify::new(),
            sockets: AtomicUsize::new(0),
            socket_closed: Notify::new(),
        }
    }
}

impl Shutdown {
    pub fn phase(&self) -> Phase {
        *self.phase.borrow()
    }

    pub(crate) fn enter(&self, phase: Phase) {
        self.phase.send_if_modified(|now| {
            let later = phase > *now;
            if later {
                *now = phase;
            }
            later
        });
    }

    /// Resolves once the relay is at `phase` or past it.
    pub async fn reached(&self, phase: Phase) {
        let mut watch = self.phase.subscribe();
        let _ = watch.wait_for(|now| *now >= phase).await;
    }
}

impl Shutdown {
    /// Counts a WebSocket connection for as long as the guard lives.
    pub fn socket(&self) -> SocketGuard<'_> {
        self.sockets.fetch_add(1, Ordering::SeqCst);
        SocketGuard(self)
    }

    /// Resolves when every WebSocket connection has closed (or after `bound`).
    pub async fn sockets_closed(&self, bound: Duration) {
        let all_closed = async {
            loop {
                let woken = self.socket_closed.notified();
                if self.sockets.load(Ordering::SeqCst) == 0 {
                    return;
                }
                woken.await;
            }
        };
        let _ = tokio::time::timeout(bound, all_closed).await;
    }
}

pub struct SocketGuard<'a>(&'a Shutdown);

impl Drop for SocketGuard<'_> {
    fn drop(&mut self) {
        self.0.sockets.fetch_sub(1, Ordering::SeqCst);
        self.0.socket_closed.notify_waiters();
    }
}
