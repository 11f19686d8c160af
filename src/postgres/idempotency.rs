//! Idempotency keys for placing orders on PostgreSQL (the rules are `crate::idempotency`'s),
//! unique across replicas.
//!
//! The transaction that places the order first CLAIMS the key: `INSERT ... ON CONFLICT DO
//! NOTHING` of a record still without an outcome. A second request with the same key, on
//! any replica, then waits on the unique index until the first transaction ends: if it
//! committed, the second finds the record and replays the first answer; if it rolled back
//! (an internal failure, which is not kept), the second claims the key and places afresh.
//! The claim, the order and the outcome commit together, so a crash keeps both or neither.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;

use super::orders;
use super::types::col;
use super::{PgStore, pg};
use crate::backend::Change;
use crate::domain::{NewOrder, Order, Timestamp};
use crate::error::{Error, Result};
use crate::idempotency::{self, IdempotencyKey, PURGE_BATCH, Placed, Record, fingerprint};

impl PgStore {
    /// Places `new` once per `key` across every replica: the first time for real, later
    /// (until the key expires) by returning the first outcome. Kept: the order and the
    /// shop's refusals; not kept: an internal failure, which rolls everything back.
    pub async fn place_order_once(
        &self,
        key: IdempotencyKey,
        new: NewOrder,
        now: DateTime<Utc>,
    ) -> Result<Placed> {
        let fingerprint = fingerprint(&new)?;
        let mut client = self.client().await?;
        // A record that another transaction purged between our claim and our look can only
        // be met a few times in a row.
        for _ in 0..3 {
            let tx = client.transaction().await.map_err(pg)?;
            let placed = match claim(&tx, &key, &fingerprint, now).await? {
                Claim::Ours(id) => place(&tx, id, &new, &fingerprint, now, key.expires_at(now)).await?,
                Claim::Recorded(first) => idempotency::replay(&key, &first, &fingerprint)?,
                Claim::Gone => continue,
            };
            tx.commit().await.map_err(pg)?;
            if !placed.replayed && placed.outcome.is_ok() {
                self.inner.notifier.announce(Change::Orders);
            }
            return Ok(placed);
        }
        Err(Error::internal("an idempotency record kept disappearing"))
    }
}

enum Claim {
    /// This transaction holds the key's record (its id): new, or expired and locked.
    Ours(i64),
    /// The key's live record, committed by an earlier request.
    Recorded(Record),
    /// The record was deleted between the claim and the look; try again.
    Gone,
}

async fn claim(
    c: &impl GenericClient,
    key: &IdempotencyKey,
    fingerprint: &[u8; 32],
    now: DateTime<Utc>,
) -> Result<Claim> {
    let sql = "INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_at, expires_at)
               VALUES ($1, $2, $3, 0, '', $4, $5)
               ON CONFLICT (scope, key) DO NOTHING
               RETURNING id";
    let claimed = c
        .query_opt(
            &c.prepare_cached(sql).await.map_err(pg)?,
            &[
                &&key.scope()[..],
                &key.key(),
                &&fingerprint[..],
                &Timestamp::from(now).to_string(),
                &key.expires_at(now),
            ],
        )
        .await
        .map_err(pg)?;
    if let Some(row) = claimed {
        return Ok(Claim::Ours(col(&row, 0)?));
    }
    // Another request's record, committed: locked, so that of two requests finding it
    // expired only one places anew and the other replays what that one placed.
    let sql = "SELECT id, fingerprint, status, body, created_at, expires_at FROM idempotency_keys
               WHERE scope = $1 AND key = $2 FOR UPDATE";
    let found = c
        .query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[&&key.scope()[..], &key.key()])
        .await
        .map_err(pg)?;
    let Some(row) = found else { return Ok(Claim::Gone) };
    if col::<i64>(&row, 5)? <= now.timestamp() {
        return Ok(Claim::Ours(col(&row, 0)?));
    }
    Ok(Claim::Recorded(Record {
        fingerprint: col(&row, 1)?,
        status: u16::try_from(col::<i32>(&row, 2)?).map_err(Error::internal)?,
        body: col(&row, 3)?,
        created_at: col(&row, 4)?,
    }))
}

/// Places the order under the claimed record `id` and keeps its outcome there.
async fn place(
    c: &impl GenericClient,
    id: i64,
    new: &NewOrder,
    fingerprint: &[u8; 32],
    now: DateTime<Utc>,
    expires_at: i64,
) -> Result<Placed> {
    let outcome = attempt(c, new).await?;
    let (status, body) = idempotency::encode(&outcome)?;
    let sql = "UPDATE idempotency_keys SET fingerprint = $2, status = $3, body = $4, created_at = $5,
                                          expires_at = $6
               WHERE id = $1";
    c.execute(
        &c.prepare_cached(sql).await.map_err(pg)?,
        &[&id, &&fingerprint[..], &i32::from(status), &body, &Timestamp::from(now).to_string(), &expires_at],
    )
    .await
    .map_err(pg)?;
    // A few expired records of any client go with each new one. Those another
    // transaction holds (its own expired key, being replaced) are skipped, not waited for.
    let sql = "DELETE FROM idempotency_keys WHERE id IN
                 (SELECT id FROM idempotency_keys WHERE expires_at <= $1 AND id <> $3
                  ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)";
    c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&now.timestamp(), &PURGE_BATCH, &id])
        .await
        .map_err(pg)?;
    Ok(Placed { outcome, replayed: false })
}

/// The order, or the shop's refusal as the outcome. Every refusal of `orders::place` comes
/// before it writes anything, so a refusal needs no savepoint to undo; an internal failure
/// fails the whole transaction, claim included.
async fn attempt(c: &impl GenericClient, new: &NewOrder) -> Result<Result<Order>> {
    let placed = match orders::place_fast(c, new).await? {
        Some(order) => Ok(order),
        None => orders::place(c, new).await,
    };
    match placed {
        Err(e) if !idempotency::is_kept(&e) => Err(e),
        outcome => Ok(outcome),
    }
}
