//! Wrong keys are slowed down: after too many from one client, its requests without a right
//! key get `429` with `Retry-After` until the window has passed, while a right key always
//! gets through (on loopback every program shares 127.0.0.1).

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use petstore::api::FailureLimit;
use petstore::clock::Clock;
use petstore::domain::Name;
use petstore::store::Scope;
use reqwest::Method;

use crate::support::{KEY, Reply, TestApp, spawn_app_limited};

/// A clock the test moves by hand.
#[derive(Clone)]
struct HandClock(Arc<Mutex<DateTime<Utc>>>);

impl HandClock {
    fn new() -> (Self, Clock) {
        let hand = Self(Arc::new(Mutex::new(Utc::now())));
        let read = hand.clone();
        (hand, Clock::from_fn(move || *read.0.lock().unwrap()))
    }

    fn advance(&self, by: Duration) {
        *self.0.lock().unwrap() += by;
    }
}

const WINDOW: Duration = Duration::from_secs(60);

async fn with_key(app: &TestApp, key: &str) -> Reply {
    app.send(app.anonymous(Method::GET, "/pets").bearer_auth(key)).await
}

async fn wrong(app: &TestApp) -> Reply {
    with_key(app, "psk_not-a-key-0123456789abcdef").await
}

fn retry_after(reply: &Reply) -> u64 {
    reply.header("retry-after").parse().unwrap_or_else(|_| panic!("Retry-After: {:?}", reply.headers))
}

#[tokio::test]
async fn after_ten_wrong_keys_the_client_waits_but_a_right_key_never_does() {
    let (hand, clock) = HandClock::new();
    let app = spawn_app_limited(clock, FailureLimit::default()).await;
    let store = app.db.open().await;
    let till = store.create_key(Name::parse("till").unwrap(), Scope::Read).await.unwrap();

    for attempt in 1..=10 {
        assert_eq!(wrong(&app).await.status, 401, "wrong key {attempt} is only refused");
        assert_eq!(with_key(&app, KEY).await.status, 200, "right keys do not reset or count");
    }
    let slowed = wrong(&app).await;
    assert_eq!((slowed.status.as_u16(), slowed.code()), (429, "rate_limited"));
    assert_eq!(retry_after(&slowed), 60);
    let no_key = app.send(app.anonymous(Method::GET, "/pets")).await;
    assert_eq!((no_key.status.as_u16(), retry_after(&no_key)), (429, 60), "no key is refused too");

    // In the middle of it, both kinds of right key get through.
    assert_eq!(with_key(&app, KEY).await.status, 200);
    assert_eq!(with_key(&app, till.secret.expose()).await.status, 200);
    let write = app.request(Method::POST, "/categories").json(&serde_json::json!({ "name": "Dogs" }));
    assert_eq!(app.send(write).await.status, 201);

    hand.advance(Duration::from_secs(45));
    assert_eq!(retry_after(&wrong(&app).await), 15, "the window is fixed; waiting does not extend it");
    hand.advance(Duration::from_secs(15));
    assert_eq!(wrong(&app).await.status, 401, "after the window a wrong key is only refused again");
    let no_key = app.send(app.anonymous(Method::GET, "/pets")).await;
    assert_eq!(no_key.status, 401);
}

#[tokio::test]
async fn missing_keys_and_revoked_keys_count_as_they_should() {
    let limit = FailureLimit { max_failures: 2, window: WINDOW };
    let (_hand, clock) = HandClock::new();
    let app = spawn_app_limited(clock, limit).await;
    for _ in 0..20 {
        let no_key = app.send(app.anonymous(Method::GET, "/pets")).await;
        assert_eq!(no_key.status, 401, "a request without a key is no guess and is not counted");
    }
    let store = app.db.open().await;
    let gone = store.create_key(Name::parse("old till").unwrap(), Scope::Write).await.unwrap();
    store.revoke_key("old till").await.unwrap();
    for _ in 0..2 {
        assert_eq!(with_key(&app, gone.secret.expose()).await.status, 401);
    }
    assert_eq!(with_key(&app, gone.secret.expose()).await.status, 429, "a revoked key counts as wrong");
}

#[tokio::test]
async fn each_client_address_is_counted_on_its_own() {
    let (_hand, clock) = HandClock::new();
    let app = spawn_app_limited(clock, FailureLimit { max_failures: 1, window: WINDOW }).await;
    assert_eq!(wrong(&app).await.status, 401, "the first wrong key is only refused");
    assert_eq!(wrong(&app).await.status, 429);

    // 127.0.0.2 is loopback too, but another client.
    let other: IpAddr = "127.0.0.2".parse().unwrap();
    let neighbour = reqwest::Client::builder().local_address(other).build().unwrap();
    let request =
        neighbour.get(format!("{}/pets", app.base_url)).bearer_auth("psk_wrong-0123456789abcdefghij");
    assert_eq!(request.send().await.unwrap().status(), 401);
    assert_eq!(wrong(&app).await.status, 429, "the first client still waits");
}

#[tokio::test]
async fn every_operation_that_needs_a_key_answers_429_as_documented() {
    let (_hand, clock) = HandClock::new();
    let app = spawn_app_limited(clock, FailureLimit { max_failures: 1, window: WINDOW }).await;
    assert_eq!(wrong(&app).await.status, 401, "the first wrong key is only refused");
    for (method, path, secured) in crate::support::openapi::operations() {
        let request = app.anonymous(method.clone(), &path).bearer_auth("psk_wrong-0123456789abcdefghij");
        let reply = app.send(request.json(&serde_json::json!({}))).await;
        if secured {
            // `send` holds the reply against the document: 429 and Retry-After documented.
            assert_eq!((reply.status.as_u16(), reply.code()), (429, "rate_limited"), "{method} {path}");
            assert!(retry_after(&reply) >= 1);
        } else {
            assert_eq!(reply.status, 200, "{method} {path} needs no key");
        }
    }
}
