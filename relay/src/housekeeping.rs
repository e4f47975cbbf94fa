//! What keeps a relay that runs for months the size of what it serves (docs/protocol.md §19):
//! sessions idle past `--session-retention` (ended, stopped, or left by their orchestrator)
//! are forgotten, in memory and with their log's open file; the journal is compacted once it
//! forgot some, or as soon as it has grown (`journal.rs`); session logs no one wrote for
//! `--log-retention-days` are removed, and past `--log-total-bytes` those written least
//! recently. Runs as long as the relay serves.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::state::Relay;

/// How often the relay looks, at most: a quarter of the retention, so a session is forgotten
/// at most a quarter late.
const EVERY: Duration = Duration::from_secs(60);

/// How often old session logs are looked for.
const LOGS_EVERY: Duration = Duration::from_secs(3600);

/// What one round did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub sessions_forgotten: usize,
    pub compacted: bool,
}

/// Sweeps now and then until the process ends.
pub async fn run(relay: Arc<Relay>) {
    let every = (relay.settings.session_retention / 4).clamp(Duration::from_millis(100), EVERY);
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut logs_looked_at: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            () = relay.journal.outgrown() => {}
        }
        let worker = relay.clone();
        let look_at_logs = logs_looked_at.is_none_or(|at| at.elapsed() >= LOGS_EVERY);
        if look_at_logs {
            logs_looked_at = Some(tokio::time::Instant::now());
        }
        // Files and a rewrite: off the runtime's threads.
        let _ = tokio::task::spawn_blocking(move || {
            sweep(&worker);
            if look_at_logs {
                remove_old_logs(&worker);
            }
        })
        .await;
    }
}

/// One round: forgets the sessions idle past their retention, then compacts the journal if
/// that forgot any or it has grown.
pub fn sweep(relay: &Relay) -> Swept {
    let retention =
        chrono::Duration::from_std(relay.settings.session_retention).unwrap_or(chrono::Duration::MAX);
    let cutoff = chrono::Utc::now()
        .checked_sub_signed(retention)
        .map_or(i64::MIN, |t| t.timestamp_millis());
    let forgotten = relay.sessions.forget_idle(cutoff);
    for session_id in &forgotten {
        relay.events.log().forget(session_id);
    }
    let mut swept = Swept {
        sessions_forgotten: forgotten.len(),
        compacted: false,
    };
    if !forgotten.is_empty() || relay.journal.wants_compaction() {
        match relay.journal.compact(|out| relay.sessions.write_snapshots(out)) {
            Ok(()) => swept.compacted = true,
            Err(e) => tracing::error!("cannot compact the journal (it keeps growing until this works): {e}"),
        }
    }
    if swept != Swept::default() {
        tracing::info!(
            forgotten = swept.sessions_forgotten,
            compacted = swept.compacted,
            sessions = relay.sessions.count(),
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
