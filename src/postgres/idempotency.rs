//! Idempotency keys on PostgreSQL (the rules are `crate::idempotency`'s): placing an order,
//! adjusting stock, changing or completing an order and cancelling one, each once per key
//! across every replica.
//!
//! The transaction that runs the command first CLAIMS the key: `INSERT ... ON CONFLICT DO
//! NOTHING` of a record still without an outcome. A second request with the same key, on
//! any replica, then waits on the unique index until the first transaction ends: if it
//! committed, the second finds the record and replays the first answer; if it rolled back
//! (an internal failure, which is not kept), the second claims the key and runs afresh.
//! The claim, the change and the outcome commit together, so a crash keeps both or neither.

use chrono::{DateTime, Utc};
use deadpool_postgres::{GenericClient, Transaction};

use super::types::col;
use super::{PgStore, inventory, orders, pg};
use crate::admission::WriteAdmission;
use crate::domain::{Actor, CounterAnswer, CounterWrite, NewOrder, Order, Timestamp};
use crate::error::{Error, Result};
use crate::idempotency::{self, IdempotencyKey, Once, PURGE_BATCH, Record, Request};

/// `Database::once` on PostgreSQL: runs `write` once per `key` across every replica,
/// the first time for real, later (until the key expires) by returning the first
/// outcome. Kept: the answer and the shop's refusals; not kept: an internal failure,
/// which rolls everything back. It claims the key, or replays its record, in a
/// transaction that also keeps the write's outcome; a change made is announced, as
/// orders are, just after its commit (see `changes.rs`).
pub(super) async fn once(
    store: &PgStore,
    key: IdempotencyKey,
    write: CounterWrite,
    now: DateTime<Utc>,
) -> Result<Once<CounterAnswer>> {
    let request = Request::of(&write)?;
    let mut client = store.client().await?;
    // A record that another transaction purged between our claim and our look can only
    // be met a few times in a row.
    let mut tries = 0;
    let (tx, id) = loop {
        let tx = client.transaction().await.map_err(pg)?;
        let by_secret = store.inner.by_secret.load(std::sync::atomic::Ordering::Relaxed);
        match claim(&tx, by_secret, &key, &request, now).await? {
            Claim::Ours(id) => break (tx, id),
            Claim::Recorded(first) => {
                let replayed = idempotency::replay(&key, &first, &request)?;
                tx.commit().await.map_err(pg)?;
                return Ok(replayed);
            }
            Claim::Gone if tries < 2 => tries += 1,
            Claim::Gone => return Err(Error::internal("an idempotency record kept disappearing")),
        }
    };
    let change = write.change();
    let outcome = apply(&tx, write, &store.actor).await?;
    keep(&tx, id, &request, &outcome, now, key.expires_at(now)).await?;
    // Past this point the command may be applied (see `crate::admission`).
    WriteAdmission::begin_current()?;
    tx.commit().await.map_err(pg)?;
    if outcome.is_ok() {
        store.inner.notifier.announce(change);
    }
    Ok(Once { outcome, replayed: false })
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
    by_secret: bool,
    key: &IdempotencyKey,
    request: &Request,
    now: DateTime<Utc>,
) -> Result<Claim> {
    // A record of this key kept under the scope of the client's secret, from before keys
    // were scoped by identity, moves to the identity's scope first (see `crate::idempotency`
    // and `src/store/idempotency.rs`).
    // Only while records of that kind may be left (`by_secret`): a statement more per
    // command, for the one window after the upgrade.
    if let Some(secret_scope) = key.secret_scope().filter(|_| by_secret) {
        let sql = "UPDATE idempotency_keys SET scope = $1, by_secret = false WHERE scope = $2 AND key = $3
                     AND by_secret
                     AND NOT EXISTS (SELECT 1 FROM idempotency_keys WHERE scope = $1 AND key = $3)";
        c.execute(
            &c.prepare_cached(sql).await.map_err(pg)?,
            &[&&key.scope()[..], &&secret_scope[..], &key.key()],
        )
        .await
        .map_err(pg)?;
    }
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
                &&request.fingerprint()[..],
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
    // expired only one runs anew and the other replays what that one did.
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

/// Whether records scoped by a secret are left (see `claim`).
pub(super) async fn any_by_secret(c: &impl GenericClient) -> Result<bool> {
    let sql = "SELECT EXISTS (SELECT 1 FROM idempotency_keys WHERE by_secret)";
    col(&c.query_one(sql, &[]).await.map_err(pg)?, 0)
}

/// Moves every record of the scope `from` to the scope `to`, but a key `to` holds already.
pub(super) async fn move_scope(c: &impl GenericClient, from: &[u8; 32], to: &[u8; 32]) -> Result<u64> {
    let sql =
        "UPDATE idempotency_keys AS old SET scope = $2, by_secret = false WHERE scope = $1 AND by_secret
                 AND NOT EXISTS (SELECT 1 FROM idempotency_keys WHERE scope = $2 AND key = old.key)";
    c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&&from[..], &&to[..]]).await.map_err(pg)
}

/// Keeps the outcome in the claimed record `id`, and clears a few expired records.
async fn keep(
    c: &impl GenericClient,
    id: i64,
    request: &Request,
    outcome: &Result<CounterAnswer>,
    now: DateTime<Utc>,
    expires_at: i64,
) -> Result<()> {
    let (status, body) = idempotency::encode(request, outcome)?;
    let sql = "UPDATE idempotency_keys SET fingerprint = $2, status = $3, body = $4, created_at = $5,
                                          expires_at = $6
               WHERE id = $1";
    c.execute(
        &c.prepare_cached(sql).await.map_err(pg)?,
        &[
            &id,
            &&request.fingerprint()[..],
            &i32::from(status),
            &body,
            &Timestamp::from(now).to_string(),
            &expires_at,
        ],
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
    Ok(())
}

/// `write` by the shop's rules, as `by`'s, in the transaction that holds its key: its
/// answer, or the shop's refusal as the outcome with whatever it wrote undone. A retry
/// answered from the record never comes here, so it records nothing new (nor logs).
async fn apply(tx: &Transaction<'_>, write: CounterWrite, by: &Actor) -> Result<Result<CounterAnswer>> {
    Ok(match write {
        CounterWrite::Place(new) => place(tx, &new, by).await?.map(CounterAnswer::Order),
        CounterWrite::Update { order, patch } => {
            undone_if_refused(tx, orders::update(tx, order, &patch, by)).await?.map(CounterAnswer::Order)
        }
        CounterWrite::Cancel(order) => {
            undone_if_refused(tx, orders::cancel(tx, order, by)).await?.map(CounterAnswer::Order)
        }
        CounterWrite::Delete(order) => {
            undone_if_refused(tx, orders::delete(tx, order, by)).await?.map(|()| CounterAnswer::Done)
        }
        CounterWrite::Adjust { pet, adjustment } => {
            undone_if_refused(tx, inventory::adjust(tx, pet, &adjustment, by)).await?.map(CounterAnswer::Item)
        }
    })
}

/// The order, or the shop's refusal as the outcome. Every refusal of `orders::place` comes
/// before it writes anything, so a refusal needs no savepoint to undo (placing orders is
/// the hot write a till's queue replays).
async fn place(c: &impl GenericClient, new: &NewOrder, by: &Actor) -> Result<Result<Order>> {
    let placed = match orders::place_fast(c, new, by).await? {
        orders::Fast::Placed(order) => Ok(order),
        orders::Fast::Refused(refused) => Err(refused),
        orders::Fast::Undecided => orders::place(c, new, by).await,
    };
    kept(placed)
}

/// Runs `command` in a savepoint: its refusal becomes the outcome with whatever it wrote
/// undone. The plans of `domain::order_plan` and `domain::stock_plan` refuse before
/// anything is written, so today there is nothing to undo; the savepoint keeps a refusal
/// that some later change makes after a write from committing half of it (only the hot
/// `place` goes without). `command` has not started yet: a future does nothing until
/// awaited.
async fn undone_if_refused<T>(
    c: &impl GenericClient,
    command: impl Future<Output = Result<T>>,
) -> Result<Result<T>> {
    c.batch_execute("SAVEPOINT idempotent_command").await.map_err(pg)?;
    let outcome = kept(command.await)?;
    let end = if outcome.is_ok() {
        "RELEASE idempotent_command"
    } else {
        "ROLLBACK TO idempotent_command; RELEASE idempotent_command"
    };
    c.batch_execute(end).await.map_err(pg)?;
    Ok(outcome)
}

/// The outcome to keep, or the failure that is not one.
fn kept<T>(result: Result<T>) -> Result<Result<T>> {
    match result {
        Err(e) if !idempotency::is_kept(&e) => Err(e),
        outcome => Ok(outcome),
    }
}
