//! `Idempotency-Key` on `POST /store/orders`: a retry gets the first response and places
//! nothing; another body under the same key is 422; keys are per API key and live 7 days, or the server's
//! `--idempotency-window`.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use reqwest::Method;
use reqwest::header::HeaderValue;
use serde_json::{Value, json};
use tokio::sync::Barrier;
use tokio::task::JoinSet;

use petstore::api::KeyRing;
use petstore::api_key::Scope;
use petstore::domain::Name;

use crate::support::{
    Engine, KEY, OTHER_KEY, Reply, TestApp, settable_clock, spawn_app, spawn_app_configured,
};

/// Sends `body` exactly as written (so tests can spell one order two ways) under `key`.
async fn order(app: &TestApp, key: Option<&str>, body: &str) -> Reply {
    let mut request = app
        .request(Method::POST, "/store/orders")
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    app.send(request).await
}

/// Status, body and Location: what a replay must repeat exactly.
fn response(reply: &Reply) -> (u16, Value, String) {
    (reply.status.as_u16(), reply.body.clone(), reply.header("location").to_owned())
}

async fn orders_placed(app: &TestApp) -> usize {
    app.get("/store/orders").await.header("x-total-count").parse().unwrap()
}

async fn stock(app: &TestApp, pet: i64) -> i64 {
    app.get(&format!("/store/inventory/{pet}")).await.body["quantity"].as_i64().unwrap()
}

#[tokio::test]
async fn a_retry_gets_the_first_response_and_places_nothing() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;

    let first = order(&app, Some("till-1-0001"), &format!(r#"{{"petId": {pet}, "quantity": 2}}"#)).await;
    assert_eq!(first.status, 201, "{:?}", first.body);
    let id = first.body["id"].as_i64().unwrap();
    assert_eq!(first.header("location"), format!("/store/orders/{id}"));

    // The same order spelled otherwise (key order, spacing, a default written out, the key
    // quoted as the draft's sf-string) is the same request.
    let spellings = [
        (r#"till-1-0001"#, format!(r#"{{"petId": {pet}, "quantity": 2}}"#)),
        (r#""till-1-0001""#, format!(r#"{{ "quantity":2,"complete":false, "petId":{pet} }}"#)),
    ];
    for (key, body) in &spellings {
        let retry = order(&app, Some(key), body).await;
        assert_eq!(response(&retry), response(&first), "{key} {body}");
    }
    assert_eq!(orders_placed(&app).await, 1);
    assert_eq!(stock(&app, pet).await, 3);

    // The replay is the first response even once the order has changed or gone: it says
    // what the request did, not what the order is now.
    assert_eq!(app.delete(&format!("/store/orders/{id}")).await.status, 204);
    let retry = order(&app, Some("till-1-0001"), &spellings[0].1).await;
    assert_eq!(response(&retry), response(&first));
    assert_eq!(orders_placed(&app).await, 0);
    assert_eq!(stock(&app, pet).await, 5);
}

#[tokio::test]
async fn the_shops_refusal_is_replayed_but_a_malformed_request_is_not_kept() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 1).await;
    let body = format!(r#"{{"petId": {pet}, "quantity": 2}}"#);

    let first = order(&app, Some("k-refused"), &body).await;
    assert_eq!((first.status.as_u16(), first.code()), (409, "insufficient_stock"));
    // Stock arrives; the retry still answers what the request came to.
    assert_eq!(app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 10 })).await.status, 200);
    let retry = order(&app, Some("k-refused"), &body).await;
    assert_eq!(response(&retry), response(&first));
    assert_eq!(orders_placed(&app).await, 0);
    assert_eq!(stock(&app, pet).await, 10);

    // A body the server could not read was never processed: nothing is kept, and the
    // corrected request under the same key is placed.
    let invalid = order(&app, Some("k-fixed"), &format!(r#"{{"petId": {pet}, "quantity": 0}}"#)).await;
    assert_eq!((invalid.status.as_u16(), invalid.code()), (400, "validation_failed"));
    let fixed = order(&app, Some("k-fixed"), &body).await;
    assert_eq!(fixed.status, 201, "{:?}", fixed.body);
    assert_eq!(orders_placed(&app).await, 1);
}

#[tokio::test]
async fn the_same_key_for_another_order_is_refused_with_422() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 10).await;
    let first = order(&app, Some("k-42"), &format!(r#"{{"petId": {pet}}}"#)).await;
    assert_eq!(first.status, 201);

    for other in
        [format!(r#"{{"petId": {pet}, "quantity": 3}}"#), format!(r#"{{"petId": {pet}, "complete": true}}"#)]
    {
        let reused = order(&app, Some("k-42"), &other).await;
        assert_eq!((reused.status.as_u16(), reused.code()), (422, "idempotency_key_reused"), "{other}");
        let message = reused.body["message"].as_str().unwrap();
        assert!(message.contains("\"k-42\"") && message.contains("new key"), "{message}");
    }
    assert_eq!(orders_placed(&app).await, 1);
    assert_eq!(stock(&app, pet).await, 9);
    // The key still stands for its first order.
    let retry = order(&app, Some("k-42"), &format!(r#"{{"petId": {pet}}}"#)).await;
    assert_eq!(response(&retry), response(&first));
}

#[tokio::test]
async fn without_a_key_every_request_is_a_new_order() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 10).await;
    let body = format!(r#"{{"petId": {pet}}}"#);
    let one = order(&app, None, &body).await;
    let two = order(&app, None, &body).await;
    assert_eq!((one.status.as_u16(), two.status.as_u16()), (201, 201));
    assert_ne!(one.body["id"], two.body["id"]);
    assert_eq!(orders_placed(&app).await, 2);
}

#[tokio::test]
async fn a_malformed_key_is_400_and_places_nothing() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 10).await;
    let body = format!(r#"{{"petId": {pet}}}"#);
    let too_long = "k".repeat(256);
    let quoted_too_long = format!("\"{}\"", "k".repeat(256));
    let malformed: Vec<HeaderValue> = [
        "",
        "\"\"",
        "a b",
        "a\"b",
        "\"unterminated",
        "\"a\"b",
        "\"bad \\escape\"",
        "\"key\";param=1",
        &too_long,
        &quoted_too_long,
    ]
    .into_iter()
    .map(|v| HeaderValue::from_str(v).unwrap())
    .chain([HeaderValue::from_bytes(b"caf\xe9").unwrap()])
    .collect();
    for value in malformed {
        let request = app
            .request(Method::POST, "/store/orders")
            .header("content-type", "application/json")
            .header("idempotency-key", value.clone())
            .body(body.clone());
        let reply = app.send(request).await;
        assert_eq!((reply.status.as_u16(), reply.code()), (400, "invalid_parameter"), "{value:?}");
        assert!(reply.body["message"].as_str().unwrap().contains("Idempotency-Key"), "{value:?}");
    }
    let twice = app
        .request(Method::POST, "/store/orders")
        .header("content-type", "application/json")
        .header("idempotency-key", "one")
        .header("idempotency-key", "two")
        .body(body.clone());
    let reply = app.send(twice).await;
    assert_eq!((reply.status.as_u16(), reply.code()), (400, "invalid_parameter"));
    assert_eq!(orders_placed(&app).await, 0);

    // The longest key there is, and a quoted one with escapes, are fine.
    assert_eq!(order(&app, Some(&"k".repeat(255)), &body).await.status, 201);
    assert_eq!(order(&app, Some(r#""a \"quoted\" key \\ with escapes""#), &body).await.status, 201);
}

/// Rounds of 32 clients sending one key at the same instant: each round places one order
/// and all 32 get its response. Several rounds, because a race lost once may be won once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_with_one_key_place_one_order() {
    let app = Arc::new(spawn_app().await);
    let pet = app.pet_with_stock("Popular", 100).await;
    let (clients, rounds) = (32, 4);
    for round in 1..=rounds {
        let start = Arc::new(Barrier::new(clients));
        let mut requests = JoinSet::new();
        for _ in 0..clients {
            let (app, start) = (app.clone(), start.clone());
            requests.spawn(async move {
                start.wait().await;
                let body = format!(r#"{{"petId": {pet}, "quantity": 3}}"#);
                response(&order(&app, Some(&format!("burst-{round}")), &body).await)
            });
        }
        let replies: Vec<_> = requests.join_all().await;
        assert_eq!(replies.len(), clients);
        assert_eq!(replies[0].0, 201, "{:?}", replies[0]);
        assert!(
            replies.iter().all(|r| *r == replies[0]),
            "round {round}: every response is the first one: {replies:?}"
        );
        assert_eq!(orders_placed(&app).await, round, "round {round}");
    }
    assert_eq!(stock(&app, pet).await, 100 - 3 * rounds as i64);
}

#[tokio::test]
async fn keys_belong_to_the_api_key_that_sent_them() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 10).await;
    let (mine, theirs) = (format!(r#"{{"petId": {pet}}}"#), format!(r#"{{"petId": {pet}, "quantity": 2}}"#));
    let as_other = |body: &str| {
        app.anonymous(Method::POST, "/store/orders")
            .bearer_auth(OTHER_KEY)
            .header("content-type", "application/json")
            .header("idempotency-key", "order-1")
            .body(body.to_owned())
    };

    let my_first = order(&app, Some("order-1"), &mine).await;
    let their_first = app.send(as_other(&theirs)).await;
    assert_eq!((my_first.status.as_u16(), their_first.status.as_u16()), (201, 201), "{:?}", their_first.body);
    assert_ne!(my_first.body["id"], their_first.body["id"]);

    assert_eq!(response(&order(&app, Some("order-1"), &mine).await), response(&my_first));
    assert_eq!(response(&app.send(as_other(&theirs)).await), response(&their_first));
    assert_eq!(app.send(as_other(&mine)).await.code(), "idempotency_key_reused");
    assert_eq!(orders_placed(&app).await, 2);
    assert_eq!(stock(&app, pet).await, 7);
}

#[tokio::test]
async fn a_key_is_remembered_for_7_days_by_default_then_it_is_a_new_order() {
    remembered_for(None, TimeDelta::days(7)).await;
}

#[tokio::test]
async fn a_key_is_remembered_for_the_window_the_server_is_given() {
    remembered_for(Some(std::time::Duration::from_secs(3600)), TimeDelta::hours(1)).await;
}

/// A key sent again just inside `window` is a replay, and at its end a new order.
async fn remembered_for(configured: Option<std::time::Duration>, window: TimeDelta) {
    let start: DateTime<Utc> = Utc.with_ymd_and_hms(2026, 11, 22, 9, 0, 0).unwrap();
    let (now, clock) = settable_clock(start);
    let app = spawn_app_configured(|config| {
        config.clock = clock;
        if let Some(window) = configured {
            config.idempotency_window = window;
        }
    })
    .await;
    let pet = app.pet_with_stock("Rex", 10).await;
    let body = format!(r#"{{"petId": {pet}}}"#);
    let set = |at: DateTime<Utc>| *now.lock().unwrap() = at;

    let first = order(&app, Some("daily"), &body).await;
    set(start + window - TimeDelta::seconds(1));
    assert_eq!(response(&order(&app, Some("daily"), &body).await), response(&first));
    assert_eq!(orders_placed(&app).await, 1);

    set(start + window);
    let later = order(&app, Some("daily"), &body).await;
    assert_eq!(later.status, 201);
    assert_ne!(later.body["id"], first.body["id"], "an expired key is a new order");
    // Expired, the key is free for another order too; and it now stands for the new one.
    set(start + window + TimeDelta::minutes(30));
    assert_eq!(response(&order(&app, Some("daily"), &body).await), response(&later));
    assert_eq!(orders_placed(&app).await, 2);

    let rows = app.db.one_i64("SELECT count(*) FROM idempotency_keys");
    assert_eq!(rows, 1, "the expired record was replaced, not kept beside the new one");
}

#[tokio::test]
async fn a_restart_keeps_the_keys() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 10).await;
    let body = format!(r#"{{"petId": {pet}, "quantity": 4}}"#);
    let first = order(&app, Some("before-restart"), &body).await;
    assert_eq!(first.status, 201);

    let app = app.restart().await;
    assert_eq!(response(&order(&app, Some("before-restart"), &body).await), response(&first));
    assert_eq!(orders_placed(&app).await, 1);
    assert_eq!(stock(&app, pet).await, 6);

    // Only a hash of the credential scopes the key: the key itself is nowhere in the files
    // (on SQLite, where the files are the test's own; on PostgreSQL, nowhere in the table).
    match app.db.engine() {
        Engine::Sqlite => {
            // The server is running, so its write-ahead log is there: a file missing is a
            // failure, never an empty file that would hold no key.
            let wal = format!("{}-wal", app.db_path().display());
            for file in [app.db_path().to_path_buf(), wal.into()] {
                let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "{}", file.display());
            }
        }
        Engine::Postgres => {
            let rows = app.db.query("SELECT * FROM idempotency_keys");
            assert!(!rows.concat().iter().any(|value| value.contains(KEY)), "{rows:?}");
        }
    }
}

/// The pattern openapi.yaml gives for the header (which schemathesis and other generators
/// follow) accepts exactly the values the server accepts: every short string over the
/// characters that matter, sent for real. Values with whitespace at either end are left
/// out: HTTP strips it before the server sees the value.
#[tokio::test]
async fn the_documented_pattern_is_exactly_what_the_server_accepts() {
    let parameter =
        &crate::support::openapi::operation(&Method::POST, "/store/orders").unwrap()["parameters"][0];
    assert_eq!(parameter["name"], "Idempotency-Key");
    let pattern = jsonschema::validator_for(&parameter["schema"]).unwrap();

    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 1000).await;
    let body = format!(r#"{{"petId": {pet}}}"#);
    let alphabet = ['a', '"', '\\', ' ', '\t'];
    let mut values = vec![String::new()];
    for len in 1..=4u32 {
        for n in 0..alphabet.len().pow(len) {
            let value: String =
                (0..len).map(|i| alphabet[n / alphabet.len().pow(i) % alphabet.len()]).collect();
            values.push(value);
        }
    }
    values.retain(|v| v.trim_matches([' ', '\t']) == v);
    let (mut accepted, mut refused) = (0, 0);
    for value in &values {
        let request = app
            .request(Method::POST, "/store/orders")
            .header("content-type", "application/json")
            .header("idempotency-key", value.as_str())
            .body(body.clone());
        let reply = app.send(request).await;
        let documented = pattern.is_valid(&Value::String(value.clone()));
        assert_eq!(reply.status != 400, documented, "{value:?}: {:?}", reply.body);
        if documented { accepted += 1 } else { refused += 1 }
    }
    assert!(accepted > 20 && refused > 20, "{accepted} accepted, {refused} refused");
}

/// `body` ordered under the idempotency key `key` by the client holding the API key `secret`.
async fn order_as(app: &TestApp, secret: &str, key: &str, body: &str) -> Reply {
    let request = app
        .anonymous(Method::POST, "/store/orders")
        .bearer_auth(secret)
        .header("content-type", "application/json")
        .header("idempotency-key", key)
        .body(body.to_owned());
    app.send(request).await
}

/// A till replays an unsure sale after its API key was rotated: the same client, so the
/// same request, answered with the first order and nothing placed again. Before, keys were
/// scoped by the secret: the retry was placed anew (201 with a new id; stock 96, not 98).
#[tokio::test]
async fn a_retry_after_the_api_key_was_rotated_is_the_same_request() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 100).await;
    let body = format!(r#"{{"petId": {pet}, "quantity": 2}}"#);
    let admin = app.db.open().await;
    let till = admin.create_key(Name::parse("till").unwrap(), Scope::Write).await.unwrap();

    let first = order_as(&app, till.secret.expose(), "sale-1", &body).await;
    assert_eq!(first.status, 201, "{:?}", first.body);
    let rotated = admin.rotate_key("till").await.unwrap();
    let retry = order_as(&app, rotated.secret.expose(), "sale-1", &body).await;
    assert_eq!(response(&retry), response(&first), "the rotated key's retry is the first order");
    assert_eq!((orders_placed(&app).await, stock(&app, pet).await), (1, 98));

    // Another named key's "sale-1" is still its own.
    let printer = admin.create_key(Name::parse("printer").unwrap(), Scope::Write).await.unwrap();
    let theirs = order_as(&app, printer.secret.expose(), "sale-1", &body).await;
    assert_eq!(theirs.status, 201, "{:?}", theirs.body);
    assert_ne!(theirs.body["id"], first.body["id"]);

    // The operator's key made anew (a new PETSTORE_API_KEY, the app's local key
    // regenerated): the server that holds it is the same operator.
    let operators = order_as(&app, KEY, "sale-2", &body).await;
    assert_eq!(operators.status, 201, "{:?}", operators.body);
    const NEW_KEY: &str = "new-operator-key-0123456789abcdefghij";
    let renewed = app.replica_configured(|config| config.keys = KeyRing::from_secrets([NEW_KEY])).await;
    let retry = order_as(&renewed, NEW_KEY, "sale-2", &body).await;
    assert_eq!(response(&retry), response(&operators), "the new operator key's retry");
    assert_eq!((orders_placed(&app).await, stock(&app, pet).await), (3, 94));
}

/// Records kept before keys were scoped by identity are scoped by a hash of the secret
/// (what the server kept until schema 11 on SQLite and 7 on PostgreSQL). A named key's
/// record moves to its identity at the client's next use of that key; the operator's, as
/// the server starts with that key. A retry after a rotation then still finds either.
#[tokio::test]
async fn records_kept_under_the_secret_before_the_upgrade_are_found_after_a_rotation() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 100).await;
    let body = format!(r#"{{"petId": {pet}}}"#);
    let admin = app.db.open().await;
    let till = admin.create_key(Name::parse("till").unwrap(), Scope::Write).await.unwrap();
    let tills = order_as(&app, till.secret.expose(), "till-before", &body).await;
    let operators = order_as(&app, KEY, "operator-before", &body).await;
    assert_eq!((tills.status.as_u16(), operators.status.as_u16()), (201, 201));

    // The records as the server before the upgrade kept them, marked by the upgrade's
    // migration (SQLite 0012, PostgreSQL 0008).
    for (secret, key) in [(till.secret.expose(), "till-before"), (KEY, "operator-before")] {
        let scope = hex(&petstore::idempotency::secret_scope(secret));
        let (scope, marked) = match app.db.engine() {
            Engine::Sqlite => (format!("X'{scope}'"), "1"),
            Engine::Postgres => (format!("'\\x{scope}'::bytea"), "true"),
        };
        let sql = format!(
            "UPDATE idempotency_keys SET scope = {scope}, by_secret = {marked} WHERE key = '{key}' RETURNING id"
        );
        assert_eq!(app.db.query(&sql).len(), 1, "{sql}");
    }

    // The server started again after the upgrade, with the operator's key; the till's next
    // use of its key.
    let upgraded = app.replica().await;
    let again = order_as(&upgraded, till.secret.expose(), "till-before", &body).await;
    assert_eq!(response(&again), response(&tills));

    let rotated = admin.rotate_key("till").await.unwrap();
    assert_eq!(
        response(&order_as(&app, rotated.secret.expose(), "till-before", &body).await),
        response(&tills)
    );
    const NEW_KEY: &str = "new-operator-key-0123456789abcdefghij";
    let renewed = app.replica_configured(|config| config.keys = KeyRing::from_secrets([NEW_KEY])).await;
    assert_eq!(response(&order_as(&renewed, NEW_KEY, "operator-before", &body).await), response(&operators));
    assert_eq!((orders_placed(&app).await, stock(&app, pet).await), (2, 98));
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
