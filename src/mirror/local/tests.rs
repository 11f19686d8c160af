//! The mirror's own schema: a new file gets it whole; a till's file from before the mirror
//! had migrations (tests/fixtures/mirror/mirror-v0.db, made by that code: tests/fixtures/README.md)
//! is upgraded by the first migration and keeps its outbox, its remembered keys and its
//! provisional orders, and that outbox still reaches the server; a file from a newer
//! Petstore is refused untouched.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::Connection;

use super::{Local, MIRROR_SCHEMA_VERSION, Proofs, Queued};
use crate::api::KeyRing;
use crate::client::{Client, ClientConfig};
use crate::clock::Clock;
use crate::domain::*;
use crate::mirror::Mirror;
use crate::server::{Application, ServerConfig};
use crate::{Petstore, Store};

const PROVISIONAL: i64 = PROVISIONAL_ORDER_IDS;
const KEY: &str = "psk_mirror-upgrade-key-0123456789abcdef0123456";

/// A copy of the fixture in `dir`, as `name`.
fn fixture(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mirror/mirror-v0.db"), &path).unwrap();
    path
}

fn mirror_version(path: &Path) -> Option<i64> {
    let conn = Connection::open(path).unwrap();
    conn.query_row("SELECT version FROM mirror_schema", [], |r| r.get(0)).ok()
}

fn parse<T: serde::de::DeserializeOwned>(json: &str) -> T {
    serde_json::from_str(json).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_mirror_gets_the_mirror_schema_whole_and_opening_it_again_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("till.db");
    let local = Local::new(Store::open(&path).unwrap());
    assert_eq!(local.open("http://shop.example:8080").await.unwrap(), None, "no copy yet");
    assert_eq!(local.open("http://shop.example:8080").await.unwrap(), None);
    let other = local.open("http://other.example").await.unwrap_err();
    assert!(other.message.contains("mirrors http://shop.example:8080"), "{}", other.message);
    assert!(local.outbox().await.unwrap().is_empty());
    drop(local);
    assert_eq!(mirror_version(&path), Some(MIRROR_SCHEMA_VERSION as i64));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_of_a_newer_mirror_schema_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("till.db");
    let local = Local::new(Store::open(&path).unwrap());
    local.open("http://shop.example").await.unwrap();
    drop(local);
    let newer = MIRROR_SCHEMA_VERSION as i64 + 1;
    Connection::open(&path).unwrap().execute("UPDATE mirror_schema SET version = ?1", [newer]).unwrap();

    let local = Local::new(Store::open(&path).unwrap());
    let refused = local.open("http://shop.example").await.unwrap_err();
    assert!(refused.message.contains("newer than this Petstore understands"), "{}", refused.message);
    drop(local);
    assert_eq!(mirror_version(&path), Some(newer));
}

/// The till's file as the code before the mirror's migrations left it: opened as the
/// mirror's task opens it, upgraded, with every queued write, the remembered key and the
/// provisional numbering as they were, and still usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_from_before_the_mirror_had_migrations_is_upgraded_and_keeps_its_outbox() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path(), "till.db");
    assert_eq!(mirror_version(&path), None, "the fixture has no mirror version");
    let (origin, remembered): (String, String) = {
        let conn = Connection::open(&path).unwrap();
        let origin = conn.query_row("SELECT origin FROM mirror_state", [], |r| r.get(0)).unwrap();
        (origin, conn.query_row("SELECT key FROM outbox_sent", [], |r| r.get(0)).unwrap())
    };

    let local = Local::new(Store::open(&path).unwrap());
    assert_eq!(local.open(&origin).await.unwrap(), Some(7), "its place in the feed is kept");
    let outbox = local.outbox().await.unwrap();
    let kinds: Vec<_> = outbox
        .iter()
        .map(|e| (e.seq, e.state, e.pet_name.as_ref().map(|n| n.as_str().to_owned()), e.command.clone()))
        .map(|(seq, state, pet, command)| {
            let kind = match command {
                Command::PlaceOrder { order_id, order } => {
                    format!("place {} as {}", order.quantity.get(), order_id.get() - PROVISIONAL)
                }
                Command::CompleteOrder { order_id, .. } => {
                    format!("complete {}", order_id.get() - PROVISIONAL)
                }
                Command::CancelOrder { order_id } => format!("cancel {}", order_id.get() - PROVISIONAL),
                Command::AdjustInventory { adjustment, .. } => format!("adjust {}", adjustment.delta.get()),
            };
            (seq, state, pet.unwrap_or_default(), kind)
        })
        .collect();
    let pending = OutboxState::Pending;
    assert_eq!(
        kinds,
        [
            (1, pending, "Bella".to_owned(), "place 2 as 0".to_owned()),
            (2, pending, "Bella".to_owned(), "complete 0".to_owned()),
            (3, pending, "Kiwi".to_owned(), "place 1 as 1".to_owned()),
            (4, pending, "Kiwi".to_owned(), "cancel 1".to_owned()),
            (5, pending, "Rex".to_owned(), "adjust -1".to_owned()),
        ]
    );
    assert_eq!(local.outbox_counts().await.unwrap(), OutboxCounts { pending: 5, attention: 0 });

    // The sale the server took online, sent again under its key: the server's order, and
    // nothing queued.
    let rex = PetId::try_from(1).unwrap();
    let again = Command::place(parse(&format!(r#"{{"petId": {rex}, "quantity": 1}}"#)));
    let (answer, _) = local.queue(remembered, again, false, Proofs::default()).await.unwrap();
    assert!(matches!(&answer, Queued::Order(o) if o.id.get() == 1), "{answer:?}");
    assert_eq!(local.outbox_counts().await.unwrap().pending, 5);

    // A new sale offline: numbered after the two the file holds, its stock reserved.
    let sale = Command::place(parse(&format!(r#"{{"petId": {rex}, "quantity": 1}}"#)));
    let (answer, _) = local.queue("after-the-upgrade".into(), sale, false, Proofs::default()).await.unwrap();
    assert!(matches!(&answer, Queued::Order(o) if o.id.get() == PROVISIONAL + 2), "{answer:?}");
    assert_eq!(local.store().get_inventory(rex).await.unwrap().quantity, 3);
    assert_eq!(local.outbox_counts().await.unwrap().pending, 6);
    drop(local);
    assert_eq!(mirror_version(&path), Some(MIRROR_SCHEMA_VERSION as i64));
}

/// The same file in a till that comes back online: the server (the shop the fixture
/// copied, made again, its clock soon after the writes were taken) gets every queued write
/// once, in order. The file takes the name and origin of this server's port, as a till's
/// file of that server has them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outbox_of_a_mirror_from_before_the_mirror_had_migrations_reaches_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = Store::open(dir.path().join("server.db")).unwrap();
    let dogs = server.create_category(parse(r#"{"name": "Dogs"}"#)).await.unwrap();
    let mut pets = Vec::new();
    for name in ["Rex", "Bella", "Kiwi"] {
        let body = format!(r#"{{"name": "{name}", "categoryId": {}, "status": "available"}}"#, dogs.id);
        let pet = server.create_pet(parse(&body)).await.unwrap();
        server.set_inventory(pet.id, parse(r#"{"quantity": 5}"#)).await.unwrap();
        pets.push(pet.id);
    }
    server.place_order(parse(&format!(r#"{{"petId": {}, "quantity": 1}}"#, pets[0]))).await.unwrap();

    let mut config = ServerConfig::new(([127, 0, 0, 1], 0).into(), KeyRing::from_secrets([KEY]));
    config.clock = Clock::fixed(Timestamp::parse("2026-11-27T10:05:00Z").unwrap().as_datetime());
    let app = Application::bind(crate::Served::all_of(Arc::new(server.clone())), config).await.unwrap();
    let base = format!("http://{}", app.local_addr());
    let served = tokio::spawn(app.run_until(std::future::pending()));

    let mirrors = dir.path().join("mirrors");
    std::fs::create_dir(&mirrors).unwrap();
    let origin = crate::client::origin_of(&base).unwrap();
    let path =
        fixture(&mirrors, &super::super::file_for(&mirrors, &origin).file_name().unwrap().to_string_lossy());
    Connection::open(&path).unwrap().execute("UPDATE mirror_state SET origin = ?1", [&origin]).unwrap();

    let client_config = ClientConfig::default()
        .connect_timeout(Duration::from_millis(500))
        .request_timeout(Duration::from_secs(2));
    let mirror = Mirror::open(&mirrors, Client::with_config(&base, KEY, client_config).unwrap()).unwrap();
    assert!(mirror.settle(Duration::from_secs(20)).await, "{:?}", *mirror.status().borrow());
    assert!(mirror.outbox().await.unwrap().is_empty(), "{:?}", mirror.outbox().await);

    let all = Page::new(100, 0).unwrap();
    let stock = |store: Store, pet: PetId| async move { store.get_inventory(pet).await.unwrap().quantity };
    assert_eq!(
        [
            stock(server.clone(), pets[0]).await,
            stock(server.clone(), pets[1]).await,
            stock(server.clone(), pets[2]).await
        ],
        [3, 3, 5],
        "Rex sold one online and lost one, Bella sold two, Kiwi's sale was cancelled"
    );
    let orders = server.list_orders(OrderFilter::default(), all).await.unwrap().items;
    let cancelled = OrderFilter { cancelled: true, ..OrderFilter::default() };
    let cancelled = server.list_orders(cancelled, all).await.unwrap().items;
    assert_eq!(
        orders.iter().map(|o| (o.pet_id, o.quantity, o.complete)).collect::<Vec<_>>(),
        [(pets[1], 2, true), (pets[0], 1, false)],
        "newest first: the sale taken offline, then the one sent online"
    );
    assert_eq!(cancelled.iter().map(|o| (o.pet_id, o.quantity)).collect::<Vec<_>>(), [(pets[2], 1)]);
    assert_eq!(mirror.list_orders(OrderFilter::default(), all).await.unwrap().items, orders);
    drop(mirror);
    served.abort();
}
