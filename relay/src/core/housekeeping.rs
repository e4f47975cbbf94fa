//! What keeps a relay that runs for months the size of what it serves (docs/protocol.md §19,
//! §22): sessions idle for half a minute leave memory (the store has them; they come back when
//! named), and the least recently active idle ones past a count; sessions idle past
//! `--session-retention` (ended, stopped, or left by their orchestrator) are deleted from the
//! store in short batches, with their log's open file; session logs no one wrote for
//! `--log-retention-days` are removed, and past `--log-total-bytes` those written least
//! recently. Runs as long as the relay serves.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::core::state::Relay;
use crate::stores::store::FIRST;

/// How often the relay looks, at most: a quarter of the retention, so a session is forgotten
/// at most a quarter late.
const EVERY: Duration = Duration::from_secs(10);

/// How long an idle session stays in memory.
const IN_MEMORY_FOR: Duration = Duration::from_secs(30);

/// Idle sessions memory holds at most (a few kB each): a burst of sessions that end at once
/// leaves memory at the next round.
const IDLE_IN_MEMORY: usize = 4096;

/// Sessions deleted from the store in one transaction: a few milliseconds, so actions'
/// writes queued behind it wait no longer than that.
const EXPIRE_BATCH: usize = 500;

/// How often old session logs are looked for.
const LOGS_EVERY: Duration = Duration::from_secs(3600);

/// What one round did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Sessions that left memory.
    pub evicted: usize,
    /// Sessions deleted from the store.
    pub expired: usize,
}

/// Sweeps now and then until the process ends.
pub async fn run(relay: Arc<Relay>) {
    let every = (relay.settings.session_retention / 4).clamp(Duration::from_millis(100), EVERY);
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut logs_looked_at: Option<tokio::time::Instant> = None;
    loop {
        ticks.tick().await;
        sweep(&relay).await;
        if logs_looked_at.is_none_or(|at| at.elapsed() >= LOGS_EVERY) {
            logs_looked_at = Some(tokio::time::Instant::now());
            let worker = relay.clone();
            // Files: off the runtime's threads.
            let _ = tokio::task::spawn_blocking(move || remove_old_logs(&worker)).await;
        }
    }
}

/// One round: lets go of the sessions idle in memory, then deletes those idle past their
/// retention from the store, a batch at a time.
pub async fn sweep(relay: &Relay) -> Swept {
    let now = chrono::Utc::now();
    let ago = |how_long: Duration| {
        chrono::Duration::from_std(how_long)
            .ok()
            .and_then(|d| now.checked_sub_signed(d))
            .map_or(i64::MIN, |t| t.timestamp_millis())
    };
    let retained = ago(relay.settings.session_retention);
    // Out of memory no later than out of the store.
    let evicted = relay
        .sessions
        .evict_idle(ago(IN_MEMORY_FOR).max(retained), IDLE_IN_MEMORY);
    for session_id in &evicted {
        relay.events.log().forget(session_id);
    }
    let mut swept = Swept {
        evicted: evicted.len(),
        expired: 0,
    };
    let mut from = Some(FIRST);
    while let Some(cursor) = from {
        let expired = relay
            .sessions
            .store()
            .expire(retained, cursor, EXPIRE_BATCH, |id| {
                relay.sessions.active_since(id, retained)
            })
            .await;
        for session_id in &expired.ids {
            relay.events.log().forget(session_id);
        }
        swept.expired += expired.ids.len();
        from = expired.next;
    }
    if swept.expired > 0 {
        tracing::info!(
            evicted = swept.evicted,
            expired = swept.expired,
            in_memory = relay.sessions.count(),
            "housekeeping"
        );
    } else if swept.evicted > 0 {
        tracing::debug!(
            evicted = swept.evicted,
            in_memory = relay.sessions.count(),
            "housekeeping"
        );
    }
    swept
}

/// Removes the session logs no one wrote for the log retention, then the least recently
/// written past the logs' size bound.
fn remove_old_logs(relay: &Relay) {
    let cutoff = SystemTime::now().checked_sub(relay.settings.log_retention);
    match relay
        .events
        .log()
        .remove_old(cutoff, relay.settings.log_total_bytes)
    {
        Ok(removed) => {
            if removed.past_retention > 0 {
                tracing::info!(
                    removed = removed.past_retention,
                    "removed session logs past their retention"
                );
            }
            if removed.past_bound > 0 {
                tracing::info!(
                    removed = removed.past_bound,
                    bytes = relay.settings.log_total_bytes,
                    "removed the oldest session logs past --log-total-bytes"
                );
            }
        }
        Err(e) => tracing::warn!("cannot look at the session logs: {e}"),
    }
}
