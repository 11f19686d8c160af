//! The change feed on PostgreSQL: reading it, purging it, and the sequencer that numbers
//! the rows the triggers of migration 0002 write (that file says why they are numbered
//! after their commit rather than in their transaction).
//!
//! Every replica runs a sequencer task. It wakes on each commit notice the replica hears
//! (every replica hears every commit, see `changes.rs`), numbers what it may, and only then
//! passes the notice on to the replica's feed reader, so that the reader woken reads the
//! new numbers. It numbers every row committed when it runs, whatever else is still
//! running (see [`number`]); rows committed while it ran are tried again shortly, and a
//! quiet feed is checked every second anyway: a notice can be lost (a replica that dies
//! between its commit and its notice).

use std::time::Duration;

use deadpool_postgres::{GenericClient, Pool};
use tokio::sync::broadcast;

use super::pg;
use super::types::col;
use crate::domain::{FeedBounds, FeedChange, FeedPage, FeedScope, Timestamp, purge_through};
use crate::engine::Change;
use crate::error::{Error, Result};

/// Rows numbered, or purged, by one transaction at most.
pub(super) const BATCH: i64 = 10_000;

/// How soon rows held back by a running transaction are tried again.
const RETRY: Duration = Duration::from_millis(20);

/// How often a quiet feed is checked for rows nobody announced.
const SWEEP: Duration = Duration::from_secs(1);

/// The bounds, and up to `limit` changes after `since` in `scope`, in one statement: one
/// snapshot, so a purge or a sequencer committing meanwhile is wholly seen or not at all.
pub(super) async fn since(
    c: &impl GenericClient,
    since: u64,
    limit: u32,
    scope: FeedScope,
) -> Result<FeedPage> {
    let sql = "SELECT h.purged_through, f.last, c.seq, c.entity, c.entity_id, c.action, c.at
               FROM change_horizon h CROSS JOIN feed_counter f
               LEFT JOIN LATERAL (SELECT seq, entity, entity_id, action, at FROM changes
                                  WHERE seq > $1 AND ($3 OR entity <> 'activity')
                                  ORDER BY seq LIMIT $2) c ON true
               WHERE h.id = 1 AND f.id = 1";
    let after = i64::try_from(since).unwrap_or(i64::MAX);
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
        [&after, &i64::from(limit), &scope.with_activity()];
    let rows = c.query(&c.prepare_cached(sql).await.map_err(pg)?, &params).await.map_err(pg)?;
    let first =
        rows.first().ok_or_else(|| Error::internal("the change feed's bookkeeping rows are missing"))?;
    FeedBounds::from_stored(col(first, 0)?, Some(col(first, 1)?)).check(since)?;
    let mut changes = Vec::with_capacity(rows.len());
    for row in &rows {
        let Some(seq) = col::<Option<i64>>(row, 2)? else { continue };
        let (entity, action): (String, String) = (col(row, 3)?, col(row, 5)?);
        changes.push(FeedChange::from_stored(seq, &entity, col(row, 4)?, &action, col(row, 6)?)?);
    }
    Ok(FeedPage::after(since, changes))
}

/// The last change a reader in `scope` is given, else the horizon: the last number given,
/// or the newest of the data's (the numbers' index walked back past the log's entries).
pub(super) async fn head(c: &impl GenericClient, scope: FeedScope) -> Result<u64> {
    if scope.with_activity() {
        return Ok(bounds(c).await?.head);
    }
    let sql = "SELECT h.purged_through,
                      (SELECT seq FROM changes WHERE seq IS NOT NULL AND entity <> 'activity'
                       ORDER BY seq DESC LIMIT 1)
               FROM change_horizon h WHERE h.id = 1";
    let row = c.query_one(&c.prepare_cached(sql).await.map_err(pg)?, &[]).await.map_err(pg)?;
    Ok(FeedBounds::from_stored(col(&row, 0)?, col(&row, 1)?).head)
}

pub(super) async fn bounds(c: &impl GenericClient) -> Result<FeedBounds> {
    let sql = "SELECT h.purged_through, f.last FROM change_horizon h CROSS JOIN feed_counter f
               WHERE h.id = 1 AND f.id = 1";
    let row = c.query_one(&c.prepare_cached(sql).await.map_err(pg)?, &[]).await.map_err(pg)?;
    Ok(FeedBounds::from_stored(col(&row, 0)?, Some(col(&row, 1)?)))
}

/// Removes up to [`BATCH`] of the oldest numbered changes made before `before`, never the
/// newest (`domain::purge_through` decides, as on SQLite), and moves the horizon past them,
/// in one transaction; answers how many it removed. Two replicas purging at once remove
/// each row once: the second's `DELETE` waits for the first's and then finds them gone.
pub(super) async fn purge(c: &mut deadpool_postgres::Object, before: Timestamp) -> Result<u64> {
    let tx = c.transaction().await.map_err(pg)?;
    // Among the oldest numbered rows only: those before `before` are a prefix of the feed.
    let sql = "SELECT (SELECT max(seq) FROM (SELECT seq, at FROM changes WHERE seq IS NOT NULL
                                            ORDER BY seq LIMIT $2) oldest WHERE at < $1),
                      (SELECT max(seq) FROM changes)";
    let row = tx
        .query_one(&tx.prepare_cached(sql).await.map_err(pg)?, &[&before.to_string(), &BATCH])
        .await
        .map_err(pg)?;
    let Some(through) = purge_through(col(&row, 0)?, col(&row, 1)?) else { return Ok(0) };
    let removed = tx.execute("DELETE FROM changes WHERE seq <= $1", &[&through]).await.map_err(pg)?;
    if removed > 0 {
        let sql = "UPDATE change_horizon SET purged_through = greatest(purged_through, $1) WHERE id = 1";
        tx.execute(sql, &[&through]).await.map_err(pg)?;
    }
    tx.commit().await.map_err(pg)?;
    Ok(removed)
}

/// Numbers the rows of committed transactions not numbered yet, up to [`BATCH`], after the
/// last number given. Answers whether unnumbered rows are left that it could see (rows
/// committed while it ran, or past the batch): then it should run again soon.
async fn number(c: &mut deadpool_postgres::Object) -> Result<bool> {
    let tx = c.transaction().await.map_err(pg)?;
    // The row lock is the one-sequencer-at-a-time rule: another replica's run waits here and
    // then sees this one's numbers.
    let last: i64 = col(
        &tx.query_one("SELECT last FROM feed_counter WHERE id = 1 FOR UPDATE", &[]).await.map_err(pg)?,
        0,
    )?;
    // A new snapshot for this statement (READ COMMITTED): it sees the rows of every
    // transaction committed before it, and numbers all of them. A transaction still running
    // (in this database, or in another of the same cluster, whose ids share the counter)
    // holds nothing back: its rows, once committed, get numbers after every number given
    // now, so a reader that has read up to N still misses nothing. This statement once took
    // only the rows below the snapshot's xmin, which is cluster-wide: a transaction left
    // open in another database held the feed back on every replica (20.5 s, measured).
    let sql = "WITH ready AS (
                   SELECT id, row_number() OVER (ORDER BY xid, id) AS n FROM changes
                   WHERE seq IS NULL
                   ORDER BY xid, id LIMIT $2),
               numbered AS (UPDATE changes c SET seq = $1 + ready.n FROM ready WHERE c.id = ready.id
                            RETURNING c.seq)
               SELECT coalesce(max(seq), $1) FROM numbered";
    let row = tx.query_one(&tx.prepare_cached(sql).await.map_err(pg)?, &[&last, &BATCH]).await.map_err(pg)?;
    let now_last: i64 = col(&row, 0)?;
    if now_last != last {
        tx.execute("UPDATE feed_counter SET last = $1 WHERE id = 1", &[&now_last]).await.map_err(pg)?;
    }
    let left: bool = col(
        &tx.query_one("SELECT EXISTS (SELECT 1 FROM changes WHERE seq IS NULL)", &[]).await.map_err(pg)?,
        0,
    )?;
    tx.commit().await.map_err(pg)?;
    Ok(left || now_last - last == BATCH)
}

/// The sequencer task of one replica: numbers on each commit notice from `notices`, then
/// passes the notice on to `followers`.
pub(super) fn start(
    pool: Pool,
    mut notices: broadcast::Receiver<Change>,
    followers: broadcast::Sender<Change>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut again = false;
        loop {
            let wait = if again { RETRY } else { SWEEP };
            let mut heard = Vec::new();
            match tokio::time::timeout(wait, notices.recv()).await {
                Ok(Ok(change)) => heard.push(change),
                // Missed notices: every kind, as the listener does after a reconnection.
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => {
                    heard.extend(Change::ALL);
                }
                Ok(Err(broadcast::error::RecvError::Closed)) => return,
                Err(_) => {}
            }
            while let Ok(change) = notices.try_recv() {
                heard.push(change);
            }
            again = match pool.get().await {
                Ok(mut client) => number(&mut client).await.unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "numbering the change feed failed; trying again");
                    true
                }),
                Err(e) => {
                    tracing::warn!(error = %e, "numbering the change feed: no PostgreSQL connection");
                    true
                }
            };
            // Rows numbered on a sweep reach the followers at their own next read (they read
            // every second when nothing wakes them).
            heard.sort_by_key(|c| *c as u8);
            heard.dedup();
            for change in heard {
                let _ = followers.send(change);
            }
        }
    })
}
