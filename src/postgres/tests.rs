//! The PostgreSQL store against a throwaway PostgreSQL server of its own: `initdb` into a
//! temporary folder, started on a free loopback port, stopped when the tests end (the shared
//! harness of tests/support/pg_server.rs). Each test gets a database of its own.
//!
//! What they check: the same answers as the SQLite store for the same calls (values,
//! codes and messages), no oversell and one order per idempotency key with two replicas at
//! once, migrations applied once by replicas starting together and a newer schema refused
//! untouched, and the news of a commit reaching another replica.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use super::*;
use crate::api::parse_body;
use crate::api_key::{KeyMatch, Scope};
use crate::domain::*;
use crate::engine::{Database, Imports, Keys, Petstore, Seeding};
use crate::error::ErrorCode;
use crate::idempotency::IdempotencyKey;
use crate::store::Store;

// The shared throwaway server of every test suite (tests/support/pg_server.rs): one per test
// process, stopped and removed at exit even after a failure or a SIGKILL.
#[path = "../../tests/support/pg_server.rs"]
mod pg_server;

/// A new, empty database on the test server (the harness panics, saying how to install
/// PostgreSQL, when it is missing). `Option` for the callers' `let Some(..) else`.
async fn database() -> Option<PgTarget> {
    let db = pg_server::database();
    let target = PgTarget::parse_with_password(&format!("{}?sslmode=disable", db.url), None).unwrap();
    // The database goes with the server at exit; dropping the guard now would drop it.
    std::mem::forget(db);
    Some(target)
}

fn body<T: serde::de::DeserializeOwned>(json: &str) -> T {
    parse_body(json.as_bytes()).unwrap()
}

fn id<T: TryFrom<i64, Error = String>>(n: i64) -> T {
    T::try_from(n).unwrap()
}

/// Every timestamp of a debug print blanked, so two runs compare.
fn without_times(text: String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("Timestamp(") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(')').map_or(rest.len(), |e| at + e + 1);
        out.push_str("Timestamp(_)");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// One scenario of every operation, its answers printed one per line.
async fn scenario(shop: &dyn Petstore) -> Vec<String> {
    let mut log = Vec::new();
    macro_rules! step {
        ($e:expr) => {
            log.push(without_times(format!("{} => {:?}", stringify!($e), $e)))
        };
    }
    step!(shop.create_category(body(r#"{"name": "Dogs", "description": "woof"}"#)).await);
    step!(shop.create_category(body(r#"{"name": "Cats"}"#)).await);
    step!(shop.get_category(id(2)).await);
    step!(shop.get_category(id(9)).await);
    step!(shop.create_pet(body(r#"{"name": "Rex", "categoryId": 1}"#)).await);
    step!(shop.create_pet(body(r#"{"name": "Élise", "categoryId": 2, "status": "pending"}"#)).await);
    step!(shop.create_pet(body(r#"{"name": "bella 50%_off", "categoryId": 1}"#)).await);
    step!(shop.create_pet(body(r#"{"name": "Alvaro"}"#)).await);
    step!(shop.create_pet(body(r#"{"name": "Ghost", "categoryId": 7}"#)).await);
    step!(shop.get_pet(id(2)).await);
    step!(shop.get_pet(id(99)).await);
    step!(shop.update_pet(id(1), body(r#"{"description": "good boy"}"#)).await);
    step!(shop.update_pet(id(1), body(r#"{}"#)).await);
    step!(shop.replace_pet(id(4), body(r#"{"name": "Álvaro", "categoryId": 2}"#)).await);
    step!(shop.replace_pet(id(40), body(r#"{"name": "Nobody"}"#)).await);
    for sort in [PetSort::Name, PetSort::NameDesc, PetSort::Id, PetSort::IdDesc] {
        step!(shop.list_pets(PetFilter { sort, ..PetFilter::default() }, Page::new(2, 1).unwrap()).await);
    }
    step!(
        shop.list_pets(
            PetFilter { name_contains: Some(Name::parse("ALV").unwrap()), ..PetFilter::default() },
            Page::default()
        )
        .await
    );
    step!(
        shop.list_pets(
            PetFilter { name_contains: Some(Name::parse("%_").unwrap()), ..PetFilter::default() },
            Page::default()
        )
        .await
    );
    step!(
        shop.list_pets(
            PetFilter { name_contains: Some(Name::parse("a%").unwrap()), ..PetFilter::default() },
            Page::default()
        )
        .await
    );
    step!(
        shop.list_pets(
            PetFilter {
                statuses: vec![PetStatus::Available],
                category_id: Some(id(1)),
                sort: PetSort::NameDesc,
                ..PetFilter::default()
            },
            Page::default()
        )
        .await
    );
    step!(
        shop.list_pets(
            PetFilter { statuses: vec![PetStatus::Pending, PetStatus::Sold], ..PetFilter::default() },
            Page::new(5, 7).unwrap()
        )
        .await
    );
    step!(
        shop.list_pets(
            PetFilter { ids: vec![id(3), id(1), id(77)], ..PetFilter::default() },
            Page::new(1, 1).unwrap()
        )
        .await
    );
    step!(
        shop.list_pets(
            PetFilter { ids: (1..=101).map(id).collect(), ..PetFilter::default() },
            Page::default()
        )
        .await
    );
    step!(shop.list_categories(Page::default()).await);

    step!(shop.set_inventory(id(1), body(r#"{"quantity": 5}"#)).await);
    step!(shop.place_order(body(r#"{"petId": 1, "quantity": 2}"#)).await);
    step!(shop.place_order(body(r#"{"petId": 1, "quantity": 4}"#)).await);
    step!(shop.place_order(body(r#"{"petId": 2}"#)).await);
    step!(shop.place_order(body(r#"{"petId": 99}"#)).await);
    step!(
        shop.place_order(body(r#"{"petId": 1, "quantity": 3, "shipDate": "2026-12-01T10:00:00+01:00"}"#))
            .await
    );
    step!(shop.get_pet(id(1)).await);
    step!(shop.get_inventory(id(1)).await);
    step!(shop.update_order(id(2), body(r#"{"quantity": 1}"#)).await);
    step!(shop.get_pet(id(1)).await);
    step!(shop.update_order(id(2), body(r#"{"quantity": 3}"#)).await);
    step!(shop.update_order(id(1), body(r#"{"complete": true, "shipDate": "2026-12-24T08:00:00Z"}"#)).await);
    step!(shop.update_order(id(1), body(r#"{"quantity": 1}"#)).await);
    step!(shop.cancel_order(id(1)).await);
    step!(shop.cancel_order(id(2)).await);
    step!(shop.cancel_order(id(2)).await);
    step!(shop.update_order(id(2), body(r#"{"complete": false}"#)).await);
    step!(shop.update_order(id(1), body(r#"{"complete": false}"#)).await);
    step!(shop.update_order(id(1), body(r#"{"complete": false, "quantity": 2}"#)).await);
    step!(shop.cancel_order(id(1)).await);
    step!(shop.get_order(id(1)).await);
    step!(shop.list_orders(OrderFilter { cancelled: true, ..OrderFilter::default() }, Page::default()).await);
    step!(shop.get_pet(id(1)).await);
    step!(shop.set_inventory(id(3), body(r#"{"quantity": 1}"#)).await);
    step!(shop.place_order(body(r#"{"petId": 3, "complete": true}"#)).await);
    step!(shop.get_pet(id(3)).await);
    step!(shop.adjust_inventory(id(3), body(r#"{"delta": -1, "reason": "lost"}"#)).await);
    step!(shop.adjust_inventory(id(3), body(r#"{"delta": 1000000, "reason": "found"}"#)).await);
    step!(shop.adjust_inventory(id(3), body(r#"{"delta": 4, "reason": "found"}"#)).await);
    step!(shop.adjust_inventory(id(3), body(r#"{"delta": 999999, "reason": "flood"}"#)).await);
    step!(shop.adjust_inventory(id(99), body(r#"{"delta": 1, "reason": "x"}"#)).await);
    step!(shop.get_pet(id(3)).await);
    step!(shop.list_adjustments(id(3), Page::default()).await);
    step!(shop.list_adjustments(id(1), Page::new(1, 1).unwrap()).await);
    step!(shop.list_adjustments(id(98), Page::default()).await);
    step!(shop.list_orders(OrderFilter::default(), Page::default()).await);
    step!(
        shop.list_orders(
            OrderFilter { pet_id: Some(id(3)), complete: Some(true), ..OrderFilter::default() },
            Page::default()
        )
        .await
    );
    step!(
        shop.list_orders(OrderFilter { complete: Some(false), ..OrderFilter::default() }, Page::default())
            .await
    );
    step!(shop.get_order(id(3)).await);
    step!(shop.get_order(id(30)).await);
    step!(shop.list_inventory(InventoryFilter::default(), Page::default()).await);
    step!(
        shop.list_inventory(
            InventoryFilter { statuses: vec![PetStatus::Available], below_quantity: Some(5) },
            Page::default()
        )
        .await
    );
    step!(
        shop.list_inventory(
            InventoryFilter { below_quantity: Some(-1), ..Default::default() },
            Page::default()
        )
        .await
    );
    step!(
        shop.list_inventory(
            InventoryFilter { statuses: vec![PetStatus::Sold], ..Default::default() },
            Page::default()
        )
        .await
    );
    step!(shop.delete_pet(id(3)).await);
    step!(shop.delete_category(id(1)).await);
    step!(shop.delete_pet(id(2)).await);
    step!(shop.delete_pet(id(2)).await);
    step!(shop.update_pet(id(4), body(r#"{"categoryId": null}"#)).await);
    step!(shop.delete_category(id(2)).await);
    step!(shop.list_categories(Page::default()).await);
    step!(shop.list_categories(Page::new(1, 5).unwrap()).await);
    step!(shop.create_category(body(r#"{"name": "DOGS"}"#)).await);
    step!(shop.create_category(body(r#"{"name": "Birds"}"#)).await);
    step!(shop.replace_category(id(1), body(r#"{"name": "CATS"}"#)).await);
    step!(shop.replace_category(id(1), body(r#"{"name": "Hounds"}"#)).await);
    step!(shop.replace_category(id(9), body(r#"{"name": "None"}"#)).await);
    log
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_answers_as_the_sqlite_store_does() {
    let Some(target) = database().await else { return };
    let pg = PgStore::connect(&target).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Store::open(dir.path().join("shop.db")).unwrap();
    let expected = scenario(&sqlite).await;
    let got = scenario(&pg).await;
    for (sqlite, pg) in expected.iter().zip(&got) {
        assert_eq!(pg, sqlite);
    }
    assert_eq!(got.len(), expected.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_answer_as_on_sqlite_and_count_from_the_next_request_on_every_replica() {
    let Some(target) = database().await else { return };
    let one = PgStore::connect(&target).await.unwrap();
    let two = PgStore::connect(&target).await.unwrap();
    let issued = one.create_key(Name::parse("Till").unwrap(), Scope::Read).await.unwrap();
    let hash = crate::api_key::hash(issued.secret.expose());
    assert!(matches!(two.find_key(hash).await.unwrap(), KeyMatch::Active(k) if k.name == "Till"));
    let taken = two.create_key(Name::parse("TILL").unwrap(), Scope::Write).await.unwrap_err();
    assert_eq!(
        (taken.code, taken.message.as_str()),
        (ErrorCode::DuplicateName, "an API key named \"TILL\" already exists")
    );
    let rotated = two.rotate_key("till").await.unwrap();
    assert_eq!(one.find_key(hash).await.unwrap(), KeyMatch::Unknown);
    let new_hash = crate::api_key::hash(rotated.secret.expose());
    two.revoke_key("TiLL").await.unwrap();
    assert!(matches!(one.find_key(new_hash).await.unwrap(), KeyMatch::Revoked { .. }));
    let again = one.revoke_key("till").await.unwrap_err();
    assert_eq!(again.code, ErrorCode::Gone);
    assert!(again.message.starts_with("the API key \"Till\" was revoked at "), "{}", again.message);
    let revoked = one.create_key(Name::parse("till").unwrap(), Scope::Read).await.unwrap_err();
    assert!(
        revoked.message.ends_with("already exists (revoked; names are not reused)"),
        "{}",
        revoked.message
    );
    assert_eq!(one.rotate_key("nobody").await.unwrap_err().message, "there is no API key named \"nobody\"");
    one.create_key(Name::parse("alpha").unwrap(), Scope::Write).await.unwrap();
    let names: Vec<_> = two.list_keys().await.unwrap().into_iter().map(|k| k.name).collect();
    assert_eq!(names, ["alpha", "Till"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_ordering_one_pet_at_once_never_oversell() {
    let Some(target) = database().await else { return };
    let replicas = [PgStore::connect(&target).await.unwrap(), PgStore::connect(&target).await.unwrap()];
    let pet = replicas[0].create_pet(body(r#"{"name": "Rex"}"#)).await.unwrap();
    replicas[0].set_inventory(pet.id, body(r#"{"quantity": 100}"#)).await.unwrap();
    let placed = Arc::new(AtomicU32::new(0));
    let tasks: Vec<_> = (0..64)
        .map(|n| {
            let store = replicas[n % 2].clone();
            let placed = placed.clone();
            tokio::spawn(async move {
                for _ in 0..5 {
                    match store.place_order(body(&format!(r#"{{"petId": {}, "quantity": 1}}"#, pet.id))).await
                    {
                        Ok(_) => {
                            placed.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => assert!(
                            matches!(e.code, ErrorCode::InsufficientStock | ErrorCode::PetNotAvailable),
                            "{e:?}"
                        ),
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(placed.load(Ordering::Relaxed), 100);
    let item = replicas[1].get_inventory(pet.id).await.unwrap();
    assert_eq!((item.quantity, item.status), (0, PetStatus::Pending));
    let orders = replicas[1].list_orders(OrderFilter::default(), Page::default()).await.unwrap();
    assert_eq!(orders.total, 100);
}

/// Orders have no foreign key to their pet since migration 0005; its trigger keeps a pet
/// with orders from being deleted by SQL that bypasses the API's own check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_refuses_to_delete_a_pet_with_orders() {
    let Some(target) = database().await else { return };
    let store = PgStore::connect(&target).await.unwrap();
    let (sold, unsold) = (
        store.create_pet(body(r#"{"name": "Rex"}"#)).await.unwrap(),
        store.create_pet(body(r#"{"name": "Nemo"}"#)).await.unwrap(),
    );
    store.set_inventory(sold.id, body(r#"{"quantity": 3}"#)).await.unwrap();
    store.place_order(body(&format!(r#"{{"petId": {}, "quantity": 1}}"#, sold.id))).await.unwrap();
    let (client, connection) = target.connect().await.unwrap();
    tokio::spawn(connection);
    let refused = client.execute("DELETE FROM pets WHERE id = $1", &[&sold.id.get()]).await.unwrap_err();
    let db = refused.as_db_error().unwrap();
    assert_eq!(db.code(), &tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION);
    assert_eq!(db.message(), format!("pet {} has orders and cannot be deleted", sold.id));
    assert_eq!(client.execute("DELETE FROM pets WHERE id = $1", &[&unsold.id.get()]).await.unwrap(), 1);
    assert_eq!(store.get_pet(sold.id).await.unwrap().name.as_str(), "Rex");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_idempotency_key_places_one_order_across_replicas() {
    let Some(target) = database().await else { return };
    let replicas = [PgStore::connect(&target).await.unwrap(), PgStore::connect(&target).await.unwrap()];
    let pet = replicas[0].create_pet(body(r#"{"name": "Rex"}"#)).await.unwrap();
    replicas[0].set_inventory(pet.id, body(r#"{"quantity": 10}"#)).await.unwrap();
    let now = chrono::Utc::now();
    let order = format!(r#"{{"petId": {}, "quantity": 2}}"#, pet.id);
    let tasks: Vec<_> = (0..32)
        .map(|n| {
            let store = replicas[n % 2].clone();
            let order: NewOrder = body(&order);
            tokio::spawn(async move {
                store
                    .once(IdempotencyKey::new("cred", "k1").unwrap(), CounterWrite::Place(order), now)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut first = Vec::new();
    for task in tasks {
        let placed = task.await.unwrap();
        if !placed.replayed {
            first.push(placed.outcome.clone());
        }
        assert_eq!(placed.outcome.unwrap().into_order().unwrap().quantity, 2);
    }
    assert_eq!(first.len(), 1, "one request placed, the others replayed");
    assert_eq!(replicas[1].get_inventory(pet.id).await.unwrap().quantity, 8);

    // A refusal is kept; another order under the key is refused; expiry places anew.
    let key = || IdempotencyKey::new("cred", "k2").unwrap();
    let big: NewOrder = body(&format!(r#"{{"petId": {}, "quantity": 9}}"#, pet.id));
    let refused = replicas[0].once(key(), CounterWrite::Place(big.clone()), now).await.unwrap();
    assert_eq!(refused.outcome.as_ref().unwrap_err().code, ErrorCode::InsufficientStock);
    replicas[0].set_inventory(pet.id, body(r#"{"quantity": 50}"#)).await.unwrap();
    let again = replicas[1].once(key(), CounterWrite::Place(big.clone()), now).await.unwrap();
    assert!(again.replayed);
    assert_eq!(again.outcome.unwrap_err(), refused.outcome.unwrap_err());
    let other = replicas[1].once(key(), CounterWrite::Place(body(&order)), now).await.unwrap_err();
    assert_eq!(other.code, ErrorCode::IdempotencyKeyReused);
    let later = now + crate::idempotency::KEY_LIFETIME;
    let anew = replicas[1].once(key(), CounterWrite::Place(big), later).await.unwrap();
    assert!(!anew.replayed);
    assert_eq!(anew.outcome.unwrap().into_order().unwrap().quantity, 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_starting_together_migrate_once_and_a_newer_schema_is_refused_untouched() {
    let Some(target) = database().await else { return };
    let starts: Vec<_> = (0..10)
        .map(|_| {
            let target = target.clone();
            tokio::spawn(async move { PgStore::connect(&target).await.map(|_| ()) })
        })
        .collect();
    for start in starts {
        start.await.unwrap().unwrap();
    }
    let (client, connection) = target.connect().await.unwrap();
    tokio::spawn(connection);
    let versions: Vec<i64> = client
        .query("SELECT version FROM schema_migrations ORDER BY version", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, (1..=PG_SCHEMA_VERSION).collect::<Vec<_>>(), "each migration once");

    client.batch_execute("INSERT INTO schema_migrations (version) VALUES (99)").await.unwrap();
    let tables = "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'";
    let before: i64 = client.query_one(tables, &[]).await.unwrap().get(0);
    let refused = PgStore::connect(&target).await.err().unwrap().to_string();
    assert_eq!(
        refused,
        format!(
            "the database {} has schema version 99, newer than this Petstore's {PG_SCHEMA_VERSION}; upgrade Petstore",
            target.database()
        )
    );
    assert_eq!(client.query_one(tables, &[]).await.unwrap().get::<_, i64>(0), before);
}

/// Schema 8 gives the orders completed before it with no planned ship date their
/// completion time as `shipDate`, leaves a planned one and an open order alone, and tells
/// the feed's followers once (a `reset` of the shop) instead of once per order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_8_ships_completed_orders_when_they_were_completed() {
    let Some(target) = database().await else { return };
    let (client, connection) = target.connect().await.unwrap();
    tokio::spawn(connection);
    client
        .batch_execute("CREATE TABLE schema_migrations (version bigint PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        .await
        .unwrap();
    for (version, sql) in (1_i64..).zip(super::migrations::up_to(7)) {
        client.batch_execute(sql).await.unwrap();
        client.execute("INSERT INTO schema_migrations (version) VALUES ($1)", &[&version]).await.unwrap();
    }
    client
        .batch_execute(
            "INSERT INTO pets (id, name, name_folded, status, stock, stock_updated_at, created_at, updated_at)
                 VALUES (1, 'Rex', 'rex', 'available', 5, '2026-11-01T09:00:00Z', '2026-11-01T09:00:00Z', '2026-11-01T09:00:00Z');
             INSERT INTO orders (id, pet_id, quantity, ship_date, complete, created_at, completed_at) VALUES
                 (1, 1, 1, NULL, true, '2026-11-02T09:00:00Z', '2026-11-02T10:00:00Z'),
                 (2, 1, 1, '2026-12-24T09:00:00Z', true, '2026-11-02T09:00:00Z', '2026-11-02T11:00:00Z'),
                 (3, 1, 1, NULL, false, '2026-11-02T09:00:00Z', NULL);",
        )
        .await
        .unwrap();
    let before: i64 = client.query_one("SELECT count(*) FROM changes", &[]).await.unwrap().get(0);

    let store = PgStore::connect(&target).await.unwrap();
    let mut shipped = Vec::new();
    for n in 1..=3 {
        shipped.push(store.get_order(id(n)).await.unwrap().ship_date.map(|t| t.to_string()));
    }
    let expected = [Some("2026-11-02T10:00:00Z"), Some("2026-12-24T09:00:00Z"), None];
    // Shipped when completed; the planned date stays; an open order has not shipped.
    assert_eq!(shipped.iter().map(Option::as_deref).collect::<Vec<_>>(), expected);
    let added: Vec<(String, String)> = client
        .query("SELECT entity, action FROM changes ORDER BY id OFFSET $1", &[&before])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(added, [("shop".to_owned(), "reset".to_owned())], "one change for the backfill");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_be_reached_or_a_missing_database_is_one_line() {
    let Some(target) = database().await else { return };
    let missing =
        PgTarget::parse_with_password(&target.to_string().replace(target.database(), "nowhere"), None)
            .unwrap();
    let message = PgStore::connect(&missing).await.err().unwrap().to_string();
    assert!(message.contains("database \"nowhere\" does not exist") && !message.contains('\n'), "{message}");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let closed =
        PgTarget::parse_with_password(&format!("postgres://u@127.0.0.1:{port}/d?sslmode=disable"), None)
            .unwrap();
    let message = PgStore::connect(&closed).await.err().unwrap().to_string();
    assert!(message.starts_with(&format!("cannot reach PostgreSQL at 127.0.0.1:{port}")), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_on_one_replica_is_news_on_another() {
    let Some(target) = database().await else { return };
    let one = PgStore::connect(&target).await.unwrap();
    let two = PgStore::connect(&target).await.unwrap();
    let mut news = two.subscribe();
    let pet = one.create_pet(body(r#"{"name": "Rex"}"#)).await.unwrap();
    one.set_inventory(pet.id, body(r#"{"quantity": 3}"#)).await.unwrap();
    one.place_order(body(&format!(r#"{{"petId": {}}}"#, pet.id))).await.unwrap();
    // A refusal commits nothing and is no news.
    one.place_order(body(r#"{"petId": 999}"#)).await.unwrap_err();
    one.create_category(body(r#"{"name": "Dogs"}"#)).await.unwrap();
    let mut heard = Vec::new();
    for _ in 0..4 {
        let next = tokio::time::timeout(std::time::Duration::from_secs(5), news.recv()).await;
        heard.push(next.unwrap().unwrap());
    }
    // An order is announced just after its commit (see changes.rs), so it may come later.
    heard.sort_by_key(|c| format!("{c:?}"));
    assert_eq!(heard, [Change::Categories, Change::Inventory, Change::Orders, Change::Pets]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_seed_keeps_the_counts_the_indexes_and_the_triggers() {
    let Some(target) = database().await else { return };
    let store = PgStore::connect(&target).await.unwrap();
    let report = store.seed(120_000, Box::new(|_| {})).await.unwrap();
    assert_eq!((report.pets, report.categories), (120_000, 6));
    let all = store.list_pets(PetFilter::default(), Page::default()).await.unwrap();
    assert_eq!(all.total, 120_000);
    let (client, connection) = target.connect().await.unwrap();
    tokio::spawn(connection);
    let counted: i64 = client
        .query_one("SELECT count(*) FROM pets WHERE category_id = 2 AND status = 'sold'", &[])
        .await
        .unwrap()
        .get(0);
    let filter =
        PetFilter { category_id: Some(id(2)), statuses: vec![PetStatus::Sold], ..PetFilter::default() };
    assert_eq!(store.list_pets(filter, Page::default()).await.unwrap().total, counted as u64);
    let indexes: i64 = client
        .query_one("SELECT count(*) FROM pg_indexes WHERE tablename = 'pets'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(indexes, 6, "the primary key, the four list indexes and the barcodes' unique index");
    assert_eq!(stock_order_mismatches(&client).await, 0, "the stock order holds every pet seeded");
    // The triggers are back: a new pet is counted, and in the stock order.
    store.create_pet(body(r#"{"name": "Rex", "categoryId": 2, "status": "sold"}"#)).await.unwrap();
    let filter =
        PetFilter { category_id: Some(id(2)), statuses: vec![PetStatus::Sold], ..PetFilter::default() };
    assert_eq!(store.list_pets(filter, Page::default()).await.unwrap().total, counted as u64 + 1);
    assert_eq!(stock_order_mismatches(&client).await, 0);
}

/// Pets whose (stock, id) is not in `stock_order`, and entries of it no pet has
/// (migrations/postgres/0007): the Inventory's "lowest stock first" reads that table.
async fn stock_order_mismatches(client: &tokio_postgres::Client) -> i64 {
    client
        .query_one(
            "SELECT count(*) FROM pets p FULL JOIN stock_order o ON o.pet = p.id AND o.level = p.stock
             WHERE o.pet IS NULL OR p.id IS NULL",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stock_order_follows_every_operation() {
    let Some(target) = database().await else { return };
    let pg = PgStore::connect(&target).await.unwrap();
    // Every operation of the shop (pets made, their stock set, adjusted, ordered, returned,
    // pets deleted), then an import of several pets in one statement.
    scenario(&pg).await;
    let csv = "name,category,stock\nAda,Imported,3\nBo,Imported,0\nCy,Imported,12\n";
    pg.import_pets(crate::domain::parse_pets_csv(csv.as_bytes()).unwrap(), true, false).await.unwrap();
    let (client, connection) = target.connect().await.unwrap();
    tokio::spawn(connection);
    let entries: i64 = client.query_one("SELECT count(*) FROM stock_order", &[]).await.unwrap().get(0);
    assert!(entries > 3, "{entries} entries");
    assert_eq!(stock_order_mismatches(&client).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pet_by_id_is_read_again_after_its_shared_connections_were_cut() {
    let Some(target) = database().await else { return };
    let store = PgStore::connect(&target).await.unwrap();
    let pet = store.create_pet(body(r#"{"name": "Rex"}"#)).await.unwrap();
    for _ in 0..4 {
        assert_eq!(store.get_pet(pet.id).await.unwrap(), pet);
    }
    assert_eq!(store.get_pet(id(pet.id.get() + 1)).await.unwrap_err().code, ErrorCode::NotFound);

    // PostgreSQL restarted, or an administrator ended every other session.
    let (admin, connection) = target.connect().await.unwrap();
    tokio::spawn(connection);
    admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    // A read that meets a dead connection is sent again on a new one: none fails. (Before,
    // a read could fail once per shared connection, and twice while the client had not
    // yet noticed the close: a CI run saw 3 of 6 fail.)
    for n in 1..=6 {
        assert_eq!(
            store.get_pet(pet.id).await.unwrap_or_else(|e| panic!("read {n} after the cut: {e}")),
            pet
        );
    }
    assert_eq!(store.get_pet(pet.id).await.unwrap(), pet);
}

/// Every session of the store is limited below the edge's timeout (`SessionLimits`), and a
/// pooled connection dropped by a request the edge abandoned, its statement still running,
/// is taken out of the pool with that statement cancelled. Before, it went back to the pool
/// with its statement running (a lock wait of minutes, when a `psql` session held the pet's row), and the next request
/// given it waited behind that statement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_requests_connection_has_its_statement_cancelled_and_leaves_the_pool() {
    let Some(target) = database().await else { return };
    let target = target.bounded_by(std::time::Duration::from_secs(90));
    let store = PgStore::connect(&target).await.unwrap();
    let c = store.client().await.unwrap();
    let shown = |name: &'static str| {
        let c = &c;
        async move { c.query_one(&format!("SHOW {name}"), &[]).await.unwrap().get::<_, String>(0) }
    };
    assert_eq!(shown("lock_timeout").await, "30s");
    assert_eq!(shown("statement_timeout").await, "1min");
    assert_eq!(shown("idle_in_transaction_session_timeout").await, "1min");
    assert_eq!(shown("client_connection_check_interval").await, "1s");
    drop(c);
    let pooled = store.inner.pool.status().size;

    let admission = crate::WriteAdmission::new();
    let mut request = Box::pin(admission.clone().scope(async {
        let c = store.client().await.unwrap();
        c.simple_query("SELECT pg_sleep(50) -- abandoned").await.map(|_| ())
    }));
    let (admin, connection) = target.connect().await.unwrap();
    tokio::spawn(connection);
    let running = || async {
        let sql =
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%-- abandoned' AND state = 'active'
                     AND pid <> pg_backend_pid()";
        admin.query_one(sql, &[]).await.unwrap().get::<_, i64>(0)
    };
    // The edge: the request is still running at its timeout, so its admission is closed
    // and its future dropped.
    assert!(tokio::time::timeout(std::time::Duration::from_millis(500), &mut request).await.is_err());
    assert_eq!(running().await, 1, "the statement runs");
    admission.close();
    drop(request);
    assert_eq!(store.inner.pool.status().size, pooled - 1, "the connection left the pool at once");

    let mut waited = 0;
    while running().await > 0 {
        assert!(waited < 100, "the abandoned statement still runs after 10 s");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        waited += 1;
    }
}

/// A database with no room for another session refuses it with SQLSTATE 53300; a request
/// that met that had sent nothing, so it is load to shed, `503 busy`, not a 500. The
/// refusal here is PostgreSQL's own: a role allowed no connection at all.
#[tokio::test]
async fn a_database_with_no_room_for_a_session_is_busy_not_an_internal_error() {
    let Some(target) = database().await else { return };
    let (admin, connection) = target.connect().await.unwrap();
    tokio::spawn(connection);
    let role = format!("no_room_{}", std::process::id());
    admin.batch_execute(&format!("CREATE ROLE {role} LOGIN CONNECTION LIMIT 0")).await.unwrap();
    let url = format!("postgres://{role}@{}/{}?sslmode=disable", target.address(), target.database());
    let refused = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.err().expect("refused");
    assert_eq!(refused.code(), Some(&tokio_postgres::error::SqlState::TOO_MANY_CONNECTIONS), "{refused}");
    let error = pg(refused);
    assert_eq!((error.code, error.code.status()), (ErrorCode::Busy, 503), "{}", error.message);
    assert!(error.message.contains("nothing was changed"), "{}", error.message);
    admin.batch_execute(&format!("DROP ROLE {role}")).await.unwrap();
}

/// A pool whose every connection stayed in use past its wait is busy too.
#[test]
fn a_pool_that_stayed_full_is_busy_not_an_internal_error() {
    let error = no_connection(deadpool_postgres::PoolError::Timeout(deadpool_postgres::TimeoutType::Wait));
    assert_eq!((error.code, error.code.status()), (ErrorCode::Busy, 503), "{}", error.message);
}

mod staff;
