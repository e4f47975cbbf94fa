//! The database's tables and the statements that read and change them.
//!
//! `sessions` holds a row a session; `actions` a row for each action kept of it, keyed by the
//! session's row: its result (null while the browser has it: an action that may have run),
//! and the tab its params named. A session's results are in the order their actions started
//! (`actions.rowid`), which is the order they finished: a session runs one action at a time.

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde_json::value::RawValue;

use super::{Cursor, Head, Loaded, Standing, Stored, Unsettled};

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT NOT NULL UNIQUE,
    client_id TEXT,
    current_tab INTEGER,
    standing INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    confirmed INTEGER NOT NULL DEFAULT 0,
    active_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_client ON sessions (client_id) WHERE client_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS sessions_by_activity ON sessions (active_at);
CREATE TABLE IF NOT EXISTS actions (
    session INTEGER NOT NULL,
    action_id TEXT NOT NULL,
    tab_id INTEGER,
    result TEXT,
    UNIQUE (session, action_id)
);
";

/// Opens a connection: WAL, so readers never wait for the writer nor it for them, and a
/// commit is one `write` without `fsync` (`synchronous=NORMAL`; the module doc of `store`).
pub fn connect(url: &str) -> rusqlite::Result<Connection> {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
        | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
        | rusqlite::OpenFlags::SQLITE_OPEN_URI
        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(url, flags)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Copying the WAL into the database every 1,000 pages (SQLite's default) took as much as
    // the writes themselves: a page that many actions touch is copied once a checkpoint, so
    // fewer checkpoints copy less (20,000 actions over 1000 sessions, 64 a commit: 17.0 us an
    // action at 1,000 pages, 10.6 at 10,000). The WAL file is then up to 40 MB.
    conn.pragma_update(None, "wal_autocheckpoint", 10_000)?;
    // A reader may meet the writer's checkpoint; waiting a little beats an error.
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}

pub fn create(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(TABLES)
}

/// The session's row, made if it has none; its head written if given.
pub fn session_row(
    tx: &Transaction<'_>,
    session_id: &str,
    head: Option<&super::Head>,
) -> rusqlite::Result<i64> {
    match head {
        Some(head) => {
            let last_error = head
                .last_error
                .as_ref()
                .and_then(|e| serde_json::to_string(e).ok());
            tx.prepare_cached(
                "INSERT INTO sessions (id, client_id, current_tab, standing, last_error, confirmed, active_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (id) DO UPDATE SET client_id = excluded.client_id,
                   current_tab = excluded.current_tab, standing = excluded.standing,
                   last_error = excluded.last_error, confirmed = excluded.confirmed,
                   active_at = excluded.active_at
                 RETURNING rowid",
            )?
            .query_row(
                params![
                    session_id,
                    head.client_id,
                    head.current_tab,
                    head.standing.code(),
                    last_error,
                    head.confirmed,
                    head.active_at
                ],
                |row| row.get(0),
            )
        }
        None => tx
            .prepare_cached(
                "INSERT INTO sessions (id, active_at)
                 VALUES (?1, CAST(unixepoch('subsec') * 1000 AS INTEGER))
                 ON CONFLICT (id) DO UPDATE SET active_at = max(active_at, excluded.active_at)
                 RETURNING rowid",
            )?
            .query_row(params![session_id], |row| row.get(0)),
    }
}

/// An action's row: its result, or none yet (it went to the browser).
pub fn put_action(
    tx: &Transaction<'_>,
    session: i64,
    action_id: &str,
    tab_id: Option<i64>,
    result: Option<&str>,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO actions (session, action_id, tab_id, result) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (session, action_id) DO UPDATE SET result = excluded.result,
           tab_id = coalesce(excluded.tab_id, tab_id)",
    )?
    .execute(params![session, action_id, tab_id, result])?;
    Ok(())
}

pub fn forget_action(tx: &Transaction<'_>, session: i64, action_id: &str) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM actions WHERE session = ?1 AND action_id = ?2")?
        .execute(params![session, action_id])?;
    Ok(())
}

/// Deletes a session's row and its actions.
pub fn delete(tx: &Transaction<'_>, session_id: &str) -> rusqlite::Result<Option<i64>> {
    let row: Option<i64> = tx
        .prepare_cached("DELETE FROM sessions WHERE id = ?1 RETURNING rowid")?
        .query_row(params![session_id], |row| row.get(0))
        .optional()?;
    if let Some(row) = row {
        tx.prepare_cached("DELETE FROM actions WHERE session = ?1")?
            .execute(params![row])?;
    }
    Ok(row)
}

/// Writes a whole session over what was kept of it.
pub fn replace(tx: &Transaction<'_>, session_id: &str, loaded: &Loaded) -> rusqlite::Result<i64> {
    delete(tx, session_id)?;
    let row = session_row(tx, session_id, Some(&loaded.head))?;
    for (action_id, result) in &loaded.results {
        put_action(tx, row, action_id, None, Some(result.get()))?;
    }
    for unsettled in &loaded.unsettled {
        put_action(tx, row, &unsettled.action_id, unsettled.tab_id, None)?;
    }
    Ok(row)
}

pub fn load(conn: &Connection, session_id: &str) -> rusqlite::Result<Option<Loaded>> {
    let found = conn
        .prepare_cached(
            "SELECT rowid, client_id, current_tab, standing, last_error, confirmed, active_at
             FROM sessions WHERE id = ?1",
        )?
        .query_row(params![session_id], |row| Ok((row.get::<_, i64>(0)?, head(row)?)))
        .optional()?;
    let Some((row, head)) = found else {
        return Ok(None);
    };
    let mut loaded = Loaded {
        head,
        ..Loaded::default()
    };
    let mut actions = conn
        .prepare_cached("SELECT action_id, tab_id, result FROM actions WHERE session = ?1 ORDER BY rowid")?;
    let mut rows = actions.query(params![row])?;
    while let Some(row) = rows.next()? {
        let action_id: String = row.get(0)?;
        match row.get::<_, Option<String>>(2)? {
            Some(text) => match RawValue::from_string(text) {
                Ok(raw) => loaded.results.push((action_id, Stored::from(raw))),
                Err(e) => tracing::warn!(session_id, action_id, "an unreadable kept result: {e}"),
            },
            None => loaded.unsettled.push(Unsettled {
                action_id,
                tab_id: row.get(1)?,
            }),
        }
    }
    Ok(Some(loaded))
}

pub fn bound_to(conn: &Connection, client_id: &str, going: bool) -> rusqlite::Result<Vec<String>> {
    let sql = if going {
        "SELECT id FROM sessions WHERE client_id = ?1 AND standing != 3 ORDER BY id"
    } else {
        "SELECT id FROM sessions WHERE client_id = ?1 ORDER BY id"
    };
    let mut statement = conn.prepare_cached(sql)?;
    let ids = statement.query_map(params![client_id], |row| row.get(0))?;
    ids.collect()
}

pub fn latest(conn: &Connection, limit: usize) -> rusqlite::Result<Vec<(String, Head)>> {
    let mut statement = conn.prepare_cached(
        "SELECT id, client_id, current_tab, standing, last_error, confirmed, active_at
         FROM sessions ORDER BY active_at DESC LIMIT ?1",
    )?;
    let rows = statement.query_map(params![limit as i64], |row| Ok((row.get(0)?, head(row)?)))?;
    rows.collect()
}

/// A session's head from columns 1 to 6 of a row: client_id, current_tab, standing,
/// last_error, confirmed, active_at.
fn head(row: &rusqlite::Row<'_>) -> rusqlite::Result<Head> {
    let last_error: Option<String> = row.get(4)?;
    Ok(Head {
        client_id: row.get(1)?,
        current_tab: row.get(2)?,
        standing: Standing::from_code(row.get(3)?),
        last_error: last_error.and_then(|text| serde_json::from_str(&text).ok()),
        confirmed: row.get(5)?,
        active_at: row.get(6)?,
    })
}

/// Up to `limit` sessions idle since before `cutoff`, after `from`, oldest first.
pub fn idle_before(
    conn: &Connection,
    cutoff: i64,
    from: Cursor,
    limit: usize,
) -> rusqlite::Result<Vec<(Cursor, String)>> {
    let mut statement = conn.prepare_cached(
        "SELECT active_at, rowid, id FROM sessions
         WHERE active_at < ?1 AND (active_at, rowid) > (?2, ?3)
         ORDER BY active_at, rowid LIMIT ?4",
    )?;
    let rows = statement.query_map(params![cutoff, from.0, from.1, limit as i64], |row| {
        Ok(((row.get(0)?, row.get(1)?), row.get(2)?))
    })?;
    rows.collect()
}
