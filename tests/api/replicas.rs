//! Two servers on one database in two processes, as a chain runs several `petstore-server`
//! replicas behind a load balancer on one PostgreSQL database (on SQLite: two processes on
//! one file): the test's own server, and a `petstore-server serve` process beside it
//! ([`TestApp::replica_process`]). The shop's rules hold across them: no oversell, one order
//! per idempotency key whichever replica gets the retry, a revoked key refused by every
//! replica from its next request, and every replica hearing of every commit.

use std::time::Duration;

use petstore::api_key::Scope;
use petstore::domain::Name;
use petstore::engine::Change;
use reqwest::Method;
use serde_json::json;
use tokio::task::JoinSet;

use crate::support::{KEY, TestApp, TestDb, spawn_app, spawn_app_process};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_clients_through_two_replicas_buy_a_stock_of_forty_exactly_forty_times() {
    let a = spawn_app().await;
    let b = a.replica_process().await;
    let pet = a.pet_with_stock("Last litter", 40).await;

    let mut clients = JoinSet::new();
    for client in 0..200 {
        let (base, http) = (if client % 2 == 0 { &a } else { &b }.base_url.clone(), a.http.clone());
        clients.spawn(async move {
            let reply = http
                .post(format!("{base}/store/orders"))
                .bearer_auth(KEY)
                .json(&json!({ "petId": pet, "quantity": 1 }))
                .send()
                .await
                .unwrap();
            let status = reply.status().as_u16();
            (status, reply.text().await.unwrap())
        });
    }
    let (mut placed, mut refused) = (0, 0);
    while let Some(done) = clients.join_next().await {
        let (status, body) = done.unwrap();
        match status {
            201 => placed += 1,
            409 => {
                assert!(body.contains("insufficient_stock") || body.contains("pet_not_available"), "{body}");
                refused += 1;
            }
            other => panic!("a client got {other}: {body}"),
        }
    }
    assert_eq!((placed, refused), (40, 160));

    for replica in [&a, &b] {
        let stock = replica.get(&format!("/store/inventory/{pet}")).await.expect_status(200);
        assert_eq!(stock.body["quantity"], 0);
        let orders = replica.get(&format!("/store/orders?petId={pet}&limit=1")).await.expect_status(200);
        assert_eq!(orders.header("X-Total-Count"), "40");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_sent_to_both_replicas_at_once_places_one_order() {
    let a = spawn_app().await;
    let b = a.replica_process().await;
    let pet = a.pet_with_stock("Twin", 100).await;

    const KEYS: usize = 10;
    for n in 0..KEYS {
        let order = json!({ "petId": pet, "quantity": 2 });
        let send = |replica: &TestApp| {
            replica
                .request(Method::POST, "/store/orders")
                .header("Idempotency-Key", format!("till-7-sale-{n}"))
                .json(&order)
                .send()
        };
        let (first, second) = tokio::join!(send(&a), send(&b));
        let (first, second) = (first.unwrap(), second.unwrap());
        assert_eq!((first.status().as_u16(), second.status().as_u16()), (201, 201));
        let first: serde_json::Value = first.json().await.unwrap();
        let second: serde_json::Value = second.json().await.unwrap();
        assert_eq!(first["id"], second["id"], "key {n}: both replicas answer with the one order");
    }
    let orders = b.get(&format!("/store/orders?petId={pet}&limit=1")).await.expect_status(200);
    assert_eq!(orders.header("X-Total-Count"), KEYS.to_string());
    let stock = a.get(&format!("/store/inventory/{pet}")).await.expect_status(200);
    assert_eq!(stock.body["quantity"], 100 - 2 * KEYS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_revoked_or_rotated_through_one_replica_is_refused_by_the_other_at_once() {
    let a = spawn_app().await;
    let b = a.replica_process().await;
    let admin = a.db.open().await;
    let till = admin.create_key(Name::parse("till").unwrap(), Scope::Write).await.unwrap();
    let printer = admin.create_key(Name::parse("printer").unwrap(), Scope::Read).await.unwrap();
    let status = |replica: &TestApp, secret: String| {
        let request = replica.anonymous(Method::GET, "/pets").bearer_auth(secret);
        async move { request.send().await.unwrap().status().as_u16() }
    };
    for replica in [&a, &b] {
        assert_eq!(status(replica, till.secret.expose().to_owned()).await, 200);
        assert_eq!(status(replica, printer.secret.expose().to_owned()).await, 200);
    }

    admin.revoke_key("till").await.unwrap();
    let rotated = admin.rotate_key("printer").await.unwrap();
    for replica in [&a, &b] {
        assert_eq!(status(replica, till.secret.expose().to_owned()).await, 401, "revoked");
        assert_eq!(status(replica, printer.secret.expose().to_owned()).await, 401, "rotated away");
        assert_eq!(status(replica, rotated.secret.expose().to_owned()).await, 200, "the new secret");
    }
}

/// On PostgreSQL whatever the engine under test: a SQLite store hears only its own
/// process's commits (see `Database::subscribe`). The commits are made through a
/// `petstore-server` process; the store that hears them is this process's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_postgres_replica_hears_of_a_commit_made_through_another() {
    let db = TestDb::postgres();
    let listening = db.open().await;
    let mut changes = listening.subscribe();
    let other = spawn_app_process(db).await;
    let pet = other.pet_with_stock("Heard of", 3).await;
    other.post("/store/orders", json!({ "petId": pet })).await.expect_status(201);

    let mut heard = Vec::new();
    while !(heard.contains(&Change::Pets)
        && heard.contains(&Change::Inventory)
        && heard.contains(&Change::Orders))
    {
        match tokio::time::timeout(Duration::from_secs(5), changes.recv()).await {
            Ok(Ok(change)) => heard.push(change),
            Ok(Err(e)) => panic!("the change feed broke: {e}"),
            Err(_) => panic!("within 5 s the store in this process heard only {heard:?}"),
        }
    }
}
