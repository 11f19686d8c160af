//! The change feed's SQL: the rows the triggers of migration 0008 write in the same
//! transaction as each change, read by number, and purged past the retention window.

use rusqlite::{Connection, params};

use crate::domain::{FeedBounds, FeedChange, FeedPage, FeedScope, Timestamp, purge_through};
use crate::error::Result;

/// Rows removed by one purge transaction: the writer's other work waits for no more.
pub(super) const PURGE_BATCH: u32 = 10_000;

pub(super) fn bounds(conn: &Connection) -> Result<FeedBounds> {
    let (purged_through, last): (i64, Option<i64>) = conn.query_row(
        "SELECT purged_through, (SELECT max(seq) FROM changes) FROM change_horizon WHERE id = 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(FeedBounds::from_stored(purged_through, last))
}

/// The last change a reader in `scope` is given, else the horizon: the newest row, or the
/// newest of the data's (walking back past the log's entries after it, the rowid's order).
pub(super) fn head(conn: &Connection, scope: FeedScope) -> Result<u64> {
    let (purged_through, last): (i64, Option<i64>) = conn.query_row(
        "SELECT purged_through,
                (SELECT seq FROM changes WHERE ?1 OR entity <> 'activity' ORDER BY seq DESC LIMIT 1)
         FROM change_horizon WHERE id = 1",
        [scope.with_activity()],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(FeedBounds::from_stored(purged_through, last).head)
}

/// Up to `limit` changes after `since` in `scope`, read in one snapshot with the bounds they
/// are checked against.
pub(super) fn since(conn: &Connection, since: u64, limit: u32, scope: FeedScope) -> Result<FeedPage> {
    bounds(conn)?.check(since)?;
    let mut statement = conn.prepare_cached(
        "SELECT seq, entity, entity_id, action, at FROM changes
         WHERE seq > ?1 AND (?3 OR entity <> 'activity') ORDER BY seq LIMIT ?2",
    )?;
    let after = i64::try_from(since).unwrap_or(i64::MAX);
    let changes = statement
        .query_map(params![after, limit, scope.with_activity()], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get(2)?, r.get::<_, String>(3)?, r.get(4)?))
        })?
        .map(|row| {
            let (seq, entity, id, action, at) = row?;
            FeedChange::from_stored(seq, &entity, id, &action, at)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(FeedPage::after(since, changes))
}

/// Removes up to [`PURGE_BATCH`] of the oldest changes made before `before`, never the
/// newest (`domain::purge_through` decides; the next number is the largest plus one, see
/// migration 0008), and moves the horizon past them; answers how many it removed.
pub(super) fn purge(tx: &Connection, before: Timestamp) -> Result<u64> {
    let (old, newest): (Option<i64>, Option<i64>) = tx.query_row(
        // Among the oldest rows only: those before `before` are a prefix of the feed (its
        // times follow its numbers), and an index on `at` would cost every write.
        "SELECT (SELECT max(seq) FROM (SELECT seq, at FROM changes ORDER BY seq LIMIT ?2) WHERE at < ?1),
                (SELECT max(seq) FROM changes)",
        params![before, PURGE_BATCH],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let Some(through) = purge_through(old, newest) else { return Ok(0) };
    let removed = tx.execute("DELETE FROM changes WHERE seq <= ?1", [through])?;
    if removed > 0 {
        tx.execute(
            "UPDATE change_horizon SET purged_through = max(purged_through, ?1) WHERE id = 1",
            [through],
        )?;
    }
    Ok(removed as u64)
}
