//! Idempotency keys on SQLite (the rules are `crate::idempotency`'s): placing an order,
//! adjusting stock, changing or completing an order and cancelling one. The first request
//! with a key is processed and its outcome kept, with a fingerprint of the request, for
//! [`KEY_LIFETIME`]; a retry gets that outcome again and changes nothing.
//!
//! The lookup, the command and the key's record are one `BEGIN IMMEDIATE` transaction on
//! the one writer connection. So two requests with the same key at once are serialised by
//! SQLite and the second finds the first's record and replays it (the draft's "request in
//! progress" 409 is never needed), and a crash keeps both the change and its record or
//! neither: never a change that a retry would make a second time.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};

use super::{Store, inventory, orders};
use crate::domain::{Actor, CounterAnswer, CounterWrite, Timestamp};
use crate::error::Result;
#[cfg(doc)]
use crate::idempotency::KEY_LIFETIME;
use crate::idempotency::{self, IdempotencyKey, Once, PURGE_BATCH, Record, Request};

/// `Database::once` on SQLite: runs `write` once per `key`, the first time for real, later
/// (until the key expires at `now` + [`KEY_LIFETIME`]) by returning the first outcome. The
/// same key with a different request is refused with `idempotency_key_reused`.
///
/// Kept: the answer, and the shop's refusals (`invalid_reference`, `pet_not_available`,
/// `insufficient_stock`, ...), which are the request's real outcome. Not kept: an internal
/// failure, which rolls everything back so that a retry is processed afresh.
pub(super) async fn once(
    store: &Store,
    key: IdempotencyKey,
    write: CounterWrite,
    now: DateTime<Utc>,
) -> Result<Once<CounterAnswer>> {
    let request = Request::of(&write)?;
    let by = store.actor.clone();
    store.write(write.change(), move |tx| run_once(tx, &key, &request, now, |c| apply(c, write, &by))).await
}

/// `write` by the shop's rules, as `by`'s, on the writer's connection. A retry answered
/// from the record never comes here, so it records nothing new (nor logs anything).
fn apply(c: &Connection, write: CounterWrite, by: &Actor) -> Result<CounterAnswer> {
    Ok(match write {
        CounterWrite::Place(new) => CounterAnswer::Order(orders::place(c, &new, by)?),
        CounterWrite::Update { order, patch } => CounterAnswer::Order(orders::update(c, order, &patch, by)?),
        CounterWrite::Cancel(order) => CounterAnswer::Order(orders::cancel(c, order, by)?),
        CounterWrite::Delete(order) => {
            orders::delete(c, order, by)?;
            CounterAnswer::Done
        }
        CounterWrite::Adjust { pet, adjustment } => {
            CounterAnswer::Item(inventory::adjust(c, pet, &adjustment, by)?)
        }
    })
}

fn run_once(
    conn: &Connection,
    key: &IdempotencyKey,
    request: &Request,
    now: DateTime<Utc>,
    command: impl FnOnce(&Connection) -> Result<CounterAnswer>,
) -> Result<Once<CounterAnswer>> {
    adopt(conn, key)?;
    if let Some(first) = find(conn, key, now)? {
        return idempotency::replay(key, &first, request);
    }
    let outcome = attempt(conn, command)?;
    record(conn, key, request, &outcome, now)?;
    Ok(Once { outcome, replayed: false })
}

/// Runs the command inside a savepoint. The shop's refusal becomes the outcome (and
/// whatever the attempt wrote is undone); an internal failure fails the transaction.
fn attempt<T>(conn: &Connection, command: impl FnOnce(&Connection) -> Result<T>) -> Result<Result<T>> {
    conn.execute_batch("SAVEPOINT idempotent_command")?;
    match command(conn) {
        Ok(answer) => {
            conn.execute_batch("RELEASE idempotent_command")?;
            Ok(Ok(answer))
        }
        Err(e) if !idempotency::is_kept(&e) => Err(e),
        Err(refusal) => {
            conn.execute_batch("ROLLBACK TO idempotent_command; RELEASE idempotent_command")?;
            Ok(Err(refusal))
        }
    }
}

/// Moves the key's record kept under the scope of its client's secret, from before keys
/// were scoped by identity, to the identity's scope: once the client's key has been
/// rotated only the identity will know it. (The secret is needed to recognise such a
/// record, so no migration can move them all at once; they expire within the window.)
fn adopt(conn: &Connection, key: &IdempotencyKey) -> Result<()> {
    if let Some(secret_scope) = key.secret_scope() {
        conn.prepare_cached(
            "UPDATE OR IGNORE idempotency_keys SET scope = ?1, by_secret = 0
             WHERE scope = ?2 AND key = ?3 AND by_secret",
        )?
        .execute(params![&key.scope()[..], &secret_scope[..], key.key()])?;
    }
    Ok(())
}

/// Moves every record of each `(from, to)` scope pair, but a key `to` holds already.
pub(super) fn move_scopes(conn: &Connection, moves: &[([u8; 32], [u8; 32])]) -> Result<u64> {
    let mut moved = 0;
    for (from, to) in moves {
        moved += conn
            .prepare_cached(
                "UPDATE OR IGNORE idempotency_keys SET scope = ?2, by_secret = 0 WHERE scope = ?1 AND by_secret",
            )?
            .execute(params![&from[..], &to[..]])? as u64;
    }
    Ok(moved)
}

fn find(conn: &Connection, key: &IdempotencyKey, now: DateTime<Utc>) -> Result<Option<Record>> {
    let record = conn
        .prepare_cached(
            "SELECT fingerprint, status, body, created_at FROM idempotency_keys
             WHERE scope = ?1 AND key = ?2 AND expires_at > ?3",
        )?
        .query_row(params![&key.scope()[..], key.key(), now.timestamp()], |r| {
            Ok(Record { fingerprint: r.get(0)?, status: r.get(1)?, body: r.get(2)?, created_at: r.get(3)? })
        })
        .optional()?;
    Ok(record)
}

/// Keeps `outcome` under `key`, replacing the key's expired record if there is one, and
/// clears a few expired records of any client.
fn record(
    conn: &Connection,
    key: &IdempotencyKey,
    request: &Request,
    outcome: &Result<CounterAnswer>,
    now: DateTime<Utc>,
) -> Result<()> {
    let (status, body) = idempotency::encode(request, outcome)?;
    conn.prepare_cached(
        "DELETE FROM idempotency_keys WHERE id IN
           (SELECT id FROM idempotency_keys WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2)",
    )?
    .execute(params![now.timestamp(), PURGE_BATCH])?;
    conn.prepare_cached(
        "INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint,
           status = excluded.status, body = excluded.body, created_at = excluded.created_at,
           expires_at = excluded.expires_at",
    )?
    .execute(params![
        &key.scope()[..],
        key.key(),
        &request.fingerprint()[..],
        status,
        body,
        Timestamp::from(now),
        key.expires_at(now),
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, TimeZone};

    use super::*;
    use crate::api::parse_body;
    use crate::domain::{InventoryUpdate, NewInventoryAdjustment, NewOrder, NewPet, OrderPatch, PetId};
    use crate::engine::{Database, Petstore};
    use crate::error::ErrorCode;

    fn at(hours: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).unwrap() + TimeDelta::hours(hours)
    }

    fn order(json: &str) -> NewOrder {
        parse_body(json.as_bytes()).unwrap()
    }

    async fn shop(stock: i64) -> (tempfile::TempDir, Store, PetId) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("p.db")).unwrap();
        let pet = store.create_pet(parse_body::<NewPet>(br#"{"name": "Rex"}"#).unwrap()).await.unwrap();
        let update = parse_body::<InventoryUpdate>(format!(r#"{{"quantity": {stock}}}"#).as_bytes()).unwrap();
        store.set_inventory(pet.id, update).await.unwrap();
        (dir, store, pet.id)
    }

    async fn count(store: &Store, sql: &'static str) -> i64 {
        store.read(move |c| Ok(c.query_row(sql, [], |r| r.get(0))?)).await.unwrap()
    }

    #[tokio::test]
    async fn a_key_lives_its_window_then_places_anew_and_old_records_are_purged() {
        let (_dir, store, pet) = shop(10).await;
        let key = || IdempotencyKey::new("cred", "k1").unwrap().kept_for(TimeDelta::hours(24));
        let new = order(&format!(r#"{{"petId": {pet}}}"#));

        let first = store.once(key(), CounterWrite::Place(new.clone()), at(0)).await.unwrap();
        assert!(!first.replayed);
        let again = store
            .once(key(), CounterWrite::Place(new.clone()), at(24) - TimeDelta::seconds(1))
            .await
            .unwrap();
        assert!(again.replayed);
        assert_eq!(again.outcome.unwrap(), *first.outcome.as_ref().unwrap());
        assert_eq!(count(&store, "SELECT count(*) FROM orders").await, 1);

        let later = store.once(key(), CounterWrite::Place(new.clone()), at(24)).await.unwrap();
        assert!(!later.replayed, "at the end of its 24 hours the key is forgotten");
        assert_ne!(later.outcome.unwrap().order_id(), first.outcome.unwrap().order_id());
        assert_eq!(count(&store, "SELECT count(*) FROM orders").await, 2);
        assert_eq!(count(&store, "SELECT count(*) FROM idempotency_keys").await, 1, "replaced, not added");

        // Forty keys used at hour 30, then one more a day later: the new record clears a
        // bounded batch of the expired ones, oldest first, and the rest go with later ones.
        for i in 0..40 {
            let key =
                IdempotencyKey::new("cred", &format!("old-{i}")).unwrap().kept_for(TimeDelta::hours(24));
            store.once(key, CounterWrite::Place(order(r#"{"petId": 999}"#)), at(30)).await.unwrap();
        }
        assert_eq!(count(&store, "SELECT count(*) FROM idempotency_keys").await, 41);
        store
            .once(
                IdempotencyKey::new("cred", "new").unwrap().kept_for(TimeDelta::hours(24)),
                CounterWrite::Place(new.clone()),
                at(55),
            )
            .await
            .unwrap();
        assert_eq!(count(&store, "SELECT count(*) FROM idempotency_keys").await, 41 - PURGE_BATCH + 1);
        for i in 0..3 {
            let key =
                IdempotencyKey::new("cred", &format!("newer-{i}")).unwrap().kept_for(TimeDelta::hours(24));
            store.once(key, CounterWrite::Place(new.clone()), at(55)).await.unwrap();
        }
        assert_eq!(count(&store, "SELECT count(*) FROM idempotency_keys").await, 4, "only the live keys");
    }

    #[tokio::test]
    async fn a_refusal_is_kept_and_replayed_even_once_the_stock_is_there() {
        let (_dir, store, pet) = shop(1).await;
        let key = || IdempotencyKey::new("cred", "k").unwrap();
        let new = order(&format!(r#"{{"petId": {pet}, "quantity": 2}}"#));
        let first = store.once(key(), CounterWrite::Place(new.clone()), at(0)).await.unwrap();
        assert_eq!(first.outcome.as_ref().unwrap_err().code, ErrorCode::InsufficientStock);

        let update = parse_body::<InventoryUpdate>(br#"{"quantity": 5}"#).unwrap();
        store.set_inventory(pet, update).await.unwrap();
        let again = store.once(key(), CounterWrite::Place(new), at(1)).await.unwrap();
        assert!(again.replayed);
        assert_eq!(again.outcome.unwrap_err(), first.outcome.unwrap_err());
        assert_eq!(count(&store, "SELECT count(*) FROM orders").await, 0);
        assert_eq!(count(&store, "SELECT stock FROM pets").await, 5);
    }

    #[tokio::test]
    async fn another_order_under_the_same_key_is_refused_and_changes_nothing() {
        let (_dir, store, pet) = shop(10).await;
        let key = || IdempotencyKey::new("cred", "k").unwrap();
        store
            .once(key(), CounterWrite::Place(order(&format!(r#"{{"petId": {pet}}}"#))), at(0))
            .await
            .unwrap();
        let other = order(&format!(r#"{{"petId": {pet}, "quantity": 3}}"#));
        let error = store.once(key(), CounterWrite::Place(other.clone()), at(1)).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::IdempotencyKeyReused);
        assert!(error.message.contains("\"k\""), "{}", error.message);
        assert_eq!(count(&store, "SELECT stock FROM pets").await, 9);

        let elsewhere = IdempotencyKey::new("another credential", "k").unwrap();
        let placed = store.once(elsewhere, CounterWrite::Place(other), at(1)).await.unwrap();
        assert_eq!(
            placed.outcome.unwrap().into_order().unwrap().quantity,
            3,
            "another client's key is its own"
        );
    }

    #[tokio::test]
    async fn every_command_runs_once_per_key_and_a_key_is_one_command() {
        let (_dir, store, pet) = shop(10).await;
        let key = |k: &str| IdempotencyKey::new("cred", k).unwrap();
        let delivery =
            parse_body::<NewInventoryAdjustment>(br#"{"delta": 5, "reason": "Delivery"}"#).unwrap();
        let first = store
            .once(key("adjust"), CounterWrite::Adjust { pet, adjustment: delivery.clone() }, at(0))
            .await
            .unwrap();
        let again = store
            .once(key("adjust"), CounterWrite::Adjust { pet, adjustment: delivery.clone() }, at(1))
            .await
            .unwrap();
        assert!(!first.replayed && again.replayed);
        assert_eq!(again.outcome.unwrap(), first.outcome.unwrap());
        assert_eq!(count(&store, "SELECT stock FROM pets").await, 15);
        assert_eq!(
            count(&store, "SELECT count(*) FROM inventory_adjustments").await,
            2,
            "the count set, one delivery"
        );

        let placed =
            store.place_order(order(&format!(r#"{{"petId": {pet}, "quantity": 2}}"#))).await.unwrap();
        let complete = parse_body::<OrderPatch>(br#"{"complete": true}"#).unwrap();
        let done = store
            .once(key("complete"), CounterWrite::Update { order: placed.id, patch: complete.clone() }, at(0))
            .await
            .unwrap();
        let again = store
            .once(key("complete"), CounterWrite::Update { order: placed.id, patch: complete.clone() }, at(1))
            .await
            .unwrap();
        assert!(again.replayed, "not order_completed: the first answer");
        assert_eq!(again.outcome.unwrap(), done.outcome.unwrap());

        let open = store.place_order(order(&format!(r#"{{"petId": {pet}}}"#))).await.unwrap();
        let cancelled =
            store.once(key("cancel"), CounterWrite::Cancel(open.id), at(0)).await.unwrap().outcome.unwrap();
        assert!(cancelled.clone().into_order().unwrap().cancelled_at.is_some());
        let again = store.once(key("cancel"), CounterWrite::Cancel(open.id), at(1)).await.unwrap();
        assert!(again.replayed, "not order_cancelled: the first answer");
        assert_eq!(again.outcome, Ok(cancelled));
        assert_eq!(count(&store, "SELECT stock FROM pets").await, 13);

        let deleted = store.place_order(order(&format!(r#"{{"petId": {pet}}}"#))).await.unwrap();
        assert_eq!(
            store.once(key("delete"), CounterWrite::Delete(deleted.id), at(0)).await.unwrap().outcome,
            Ok(CounterAnswer::Done)
        );
        let again = store.once(key("delete"), CounterWrite::Delete(deleted.id), at(1)).await.unwrap();
        assert!(again.replayed, "not not_found: the first answer");
        assert_eq!(again.outcome, Ok(CounterAnswer::Done));
        assert_eq!(count(&store, "SELECT stock FROM pets").await, 13, "its stock returned");
        assert_eq!(store.get_order(deleted.id).await.unwrap_err().code, ErrorCode::NotFound);

        // Each key stands for its one command, whatever else is sent under it.
        let reused = [
            store.once(key("adjust"), CounterWrite::Cancel(open.id), at(2)).await.map(drop),
            store
                .once(key("cancel"), CounterWrite::Update { order: open.id, patch: complete.clone() }, at(2))
                .await
                .map(drop),
            store.once(key("complete"), CounterWrite::Cancel(placed.id), at(2)).await.map(drop),
            store
                .once(
                    key("adjust"),
                    CounterWrite::Adjust { pet: PetId::try_from(999).unwrap(), adjustment: delivery },
                    at(2),
                )
                .await
                .map(drop),
        ];
        for error in reused {
            assert_eq!(error.unwrap_err().code, ErrorCode::IdempotencyKeyReused);
        }
    }

    #[tokio::test]
    async fn a_refusal_after_a_write_keeps_the_refusal_and_undoes_the_write() {
        let (_dir, store, pet) = shop(10).await;
        let open = store.place_order(order(&format!(r#"{{"petId": {pet}, "quantity": 3}}"#))).await.unwrap();
        let full = parse_body::<InventoryUpdate>(br#"{"quantity": 1000000}"#).unwrap();
        store.set_inventory(pet, full).await.unwrap();
        // The order is deleted before its returned stock is found to be above the maximum.
        let key = || IdempotencyKey::new("cred", "cancel").unwrap();
        let first = store.once(key(), CounterWrite::Cancel(open.id), at(0)).await.unwrap();
        assert_eq!(first.outcome.unwrap_err().code, ErrorCode::ValidationFailed);
        assert_eq!(store.get_order(open.id).await.unwrap(), open, "the deletion was undone");
        let again = store.once(key(), CounterWrite::Cancel(open.id), at(1)).await.unwrap();
        assert!(again.replayed);
        assert_eq!(again.outcome.unwrap_err().code, ErrorCode::ValidationFailed);
    }
}
