//! The keys of writes the server has taken (`outbox_sent`), kept for as long as the server
//! keeps them, so that a write sent again under one while the server cannot be reached
//! answers what the server did instead of being taken a second time.

use rusqlite::{Connection, OptionalExtension, params};

use crate::domain::{Command, OrderId, Timestamp};
use crate::error::{Error, Result};

/// How long a sent write's key is remembered: the server's default idempotency window.
const SENT_KEPT_DAYS: i64 = 7;

/// The server took `command` under `key`: the key is remembered for as long as the server
/// keeps it, with the order it placed or completed, and keys older than that go.
pub(super) fn keep(tx: &Connection, key: &str, command: &Command, order_id: Option<OrderId>) -> Result<()> {
    let json = serde_json::to_string(command).map_err(Error::internal)?;
    let now = chrono::Utc::now();
    tx.prepare_cached(
        "INSERT OR REPLACE INTO outbox_sent (key, command, order_id, sent_at) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![key, json, order_id, Timestamp::from(now)])?;
    let horizon = Timestamp::from(now - chrono::TimeDelta::days(SENT_KEPT_DAYS));
    tx.prepare_cached("DELETE FROM outbox_sent WHERE sent_at < ?1")?.execute([horizon])?;
    Ok(())
}

/// The write the server took under `key`, and its id of the order it placed or completed.
pub(super) fn find(tx: &Connection, key: &str) -> Result<Option<(Command, Option<OrderId>)>> {
    let sent = tx
        .prepare_cached("SELECT command, order_id FROM outbox_sent WHERE key = ?1")?
        .query_row([key], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<OrderId>>(1)?)))
        .optional()?;
    let Some((command, order_id)) = sent else { return Ok(None) };
    let command = serde_json::from_str(&command).map_err(Error::internal)?;
    Ok(Some((command, order_id)))
}
