//! `Idempotency-Key` on the commands a till replays besides placing an order (a
//! replay sent again after a lost answer must not apply twice): `POST /store/inventory/{petId}/adjustments`, `PATCH` (completing) and `DELETE`
//! (deleting) `/store/orders/{orderId}` and `POST /store/orders/{orderId}/cancel`. The rules are the orders' (`idempotency.rs`): a
//! retry gets the first response and changes nothing; one key is one request (operation,
//! id and body), so a key sent for anything else is `422 idempotency_key_reused`; keys are
//! per API key and live the server's window; concurrent retries, on two replicas too,
//! apply once. And the client sends these commands, and orders, under a key of its caller.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use petstore::Petstore;
use petstore::api::parse_body;
use petstore::client::Client;
use petstore::domain::{
    CounterAnswer, CounterWrite, NewInventoryAdjustment, NewOrder, OrderId, OrderPatch, PetId,
};
use petstore::error::ErrorCode;
use reqwest::Method;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Barrier;
use tokio::task::JoinSet;

use crate::support::{
    KEY, OTHER_KEY, Reply, TestApp, openapi, settable_clock, spawn_app, spawn_app_configured,
};

/// `method path` with `body` exactly as written (if any), under `key` (if any).
async fn command(app: &TestApp, method: Method, path: &str, key: Option<&str>, body: Option<&str>) -> Reply {
    app.send(request(app, KEY, method, path, key, body)).await
}

fn request(
    app: &TestApp,
    credential: &str,
    method: Method,
    path: &str,
    key: Option<&str>,
    body: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut request = app.anonymous(method, path).bearer_auth(credential);
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_owned());
    }
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    request
}

async fn adjust(app: &TestApp, pet: i64, key: Option<&str>, body: &str) -> Reply {
    command(app, Method::POST, &format!("/store/inventory/{pet}/adjustments"), key, Some(body)).await
}

async fn complete(app: &TestApp, order: i64, key: Option<&str>) -> Reply {
    command(app, Method::PATCH, &format!("/store/orders/{order}"), key, Some(r#"{"complete": true}"#)).await
}

async fn cancel(app: &TestApp, order: i64, key: Option<&str>) -> Reply {
    command(app, Method::POST, &format!("/store/orders/{order}/cancel"), key, None).await
}

/// Status and body: what a replay must repeat exactly.
fn response(reply: &Reply) -> (u16, Value) {
    (reply.status.as_u16(), reply.body.clone())
}

async fn stock(app: &TestApp, pet: i64) -> i64 {
    app.get(&format!("/store/inventory/{pet}")).await.expect_status(200).body["quantity"].as_i64().unwrap()
}

async fn adjustments(app: &TestApp, pet: i64) -> usize {
    let reply = app.get(&format!("/store/inventory/{pet}/adjustments")).await.expect_status(200);
    reply.header("x-total-count").parse().unwrap()
}

async fn orders_placed(app: &TestApp) -> usize {
    app.get("/store/orders").await.expect_status(200).header("x-total-count").parse().unwrap()
}

/// Places an open order of `quantity` of `pet` without a key; its id.
async fn open_order(app: &TestApp, pet: i64, quantity: i64) -> i64 {
    let body = serde_json::json!({ "petId": pet, "quantity": quantity });
    app.post("/store/orders", body).await.expect_status(201).body["id"].as_i64().unwrap()
}

#[tokio::test]
async fn a_retried_adjustment_applies_once_and_answers_the_same_item() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;
    let trail = adjustments(&app, pet).await;

    let first = adjust(&app, pet, Some("till-1-0001"), r#"{"delta": 3, "reason": "Delivery"}"#).await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    assert_eq!(first.body["quantity"], 8);
    // The same adjustment spelled otherwise, and the key as an sf-string, is the same request.
    for (key, body) in [
        ("till-1-0001", r#"{"delta": 3, "reason": "Delivery"}"#),
        (r#""till-1-0001""#, r#"{ "reason":"Delivery", "delta":3 }"#),
    ] {
        assert_eq!(response(&adjust(&app, pet, Some(key), body).await), response(&first), "{key} {body}");
    }
    assert_eq!(stock(&app, pet).await, 8);
    assert_eq!(adjustments(&app, pet).await, trail + 1, "one entry in the audit trail");

    // The replay says what the request did, not what the stock is now.
    app.put(&format!("/store/inventory/{pet}"), serde_json::json!({ "quantity": 20 }))
        .await
        .expect_status(200);
    let retry = adjust(&app, pet, Some("till-1-0001"), r#"{"delta": 3, "reason": "Delivery"}"#).await;
    assert_eq!(response(&retry), response(&first));
    assert_eq!(stock(&app, pet).await, 20);

    // A refusal is the outcome too: replayed once the stock is there, and nothing taken.
    let loss = r#"{"delta": -30, "reason": "Returned to the breeder"}"#;
    let refused = adjust(&app, pet, Some("till-1-0002"), loss).await;
    assert_eq!((refused.status.as_u16(), refused.code()), (409, "insufficient_stock"));
    app.put(&format!("/store/inventory/{pet}"), serde_json::json!({ "quantity": 50 }))
        .await
        .expect_status(200);
    assert_eq!(response(&adjust(&app, pet, Some("till-1-0002"), loss).await), response(&refused));
    assert_eq!(stock(&app, pet).await, 50);

    // Without a key every request is applied.
    for _ in 0..2 {
        adjust(&app, pet, None, r#"{"delta": 1, "reason": "Found one"}"#).await.expect_status(200);
    }
    assert_eq!(stock(&app, pet).await, 52);
}

#[tokio::test]
async fn a_retried_completion_answers_the_same_order() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;
    let order = open_order(&app, pet, 2).await;

    let first = complete(&app, order, Some("complete-1")).await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    assert_eq!(first.body["complete"], true);
    let retry = complete(&app, order, Some("complete-1")).await;
    assert_eq!(response(&retry), response(&first), "the first answer, not 409 order_completed");
    // Without the key (or under another) the order is completed already.
    assert_eq!(complete(&app, order, Some("complete-2")).await.code(), "order_completed");
    assert_eq!(complete(&app, order, None).await.code(), "order_completed");
    assert_eq!(stock(&app, pet).await, 3);

    // A change of quantity under a key takes the stock once.
    let other = open_order(&app, pet, 1).await;
    let path = format!("/store/orders/{other}");
    let more = r#"{"quantity": 3}"#;
    let first = command(&app, Method::PATCH, &path, Some("more-1"), Some(more)).await.expect_status(200);
    let retry = command(&app, Method::PATCH, &path, Some("more-1"), Some(more)).await;
    assert_eq!(response(&retry), response(&first));
    assert_eq!(stock(&app, pet).await, 0);
}

#[tokio::test]
async fn a_retried_cancellation_answers_the_cancelled_order_again_and_not_409() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;
    let order = open_order(&app, pet, 2).await;
    assert_eq!(stock(&app, pet).await, 3);

    let first = cancel(&app, order, Some("cancel-1")).await.expect_status(200);
    assert!(first.body["cancelledAt"].is_string(), "{}", first.body);
    for _ in 0..2 {
        assert_eq!(response(&cancel(&app, order, Some("cancel-1")).await), response(&first));
    }
    assert_eq!(stock(&app, pet).await, 5, "the stock returned once");
    assert_eq!(orders_placed(&app).await, 0);
    assert_eq!(cancel(&app, order, None).await.code(), "order_cancelled");
    assert_eq!(cancel(&app, order, Some("cancel-2")).await.code(), "order_cancelled");
    // That refusal is kept under its key too.
    assert_eq!(cancel(&app, order, Some("cancel-2")).await.code(), "order_cancelled");
}

/// Cancelling stamps the order before it finds that the returned stock would be above
/// the maximum: the refusal is kept, and the stamp undone with it.
#[tokio::test]
async fn a_refusal_found_after_the_change_began_is_kept_and_the_change_undone() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 10).await;
    let order = open_order(&app, pet, 3).await;
    let full = serde_json::json!({ "quantity": 1_000_000 });
    app.put(&format!("/store/inventory/{pet}"), full).await.expect_status(200);

    let first = cancel(&app, order, Some("cancel-too-many")).await;
    assert_eq!((first.status.as_u16(), first.code()), (400, "validation_failed"), "{:?}", first.body);
    app.get(&format!("/store/orders/{order}")).await.expect_status(200);
    assert_eq!(stock(&app, pet).await, 1_000_000);

    // Room made: the same key still answers what the request came to; a new key cancels.
    let room = serde_json::json!({ "quantity": 10 });
    app.put(&format!("/store/inventory/{pet}"), room).await.expect_status(200);
    assert_eq!(response(&cancel(&app, order, Some("cancel-too-many")).await), response(&first));
    app.get(&format!("/store/orders/{order}")).await.expect_status(200);
    assert_eq!(cancel(&app, order, Some("cancel-again")).await.status, 200);
    assert_eq!(stock(&app, pet).await, 13);
}

#[tokio::test]
async fn a_key_is_one_request_and_another_operation_id_or_body_under_it_is_refused() {
    let app = spawn_app().await;
    let (pet, other_pet) = (app.pet_with_stock("Rex", 10).await, app.pet_with_stock("Fido", 10).await);
    let order = open_order(&app, pet, 1).await;
    let delivery = r#"{"delta": 2, "reason": "Delivery"}"#;
    let first = adjust(&app, pet, Some("k-1"), delivery).await.expect_status(200);

    let orders = "/store/orders";
    let order_body = format!(r#"{{"petId": {pet}}}"#);
    let reused = [
        adjust(&app, pet, Some("k-1"), r#"{"delta": 3, "reason": "Delivery"}"#).await,
        adjust(&app, pet, Some("k-1"), r#"{"delta": 2, "reason": "Delivery!"}"#).await,
        adjust(&app, other_pet, Some("k-1"), delivery).await,
        complete(&app, order, Some("k-1")).await,
        cancel(&app, order, Some("k-1")).await,
        command(&app, Method::POST, orders, Some("k-1"), Some(&order_body)).await,
    ];
    for reply in &reused {
        assert_eq!(
            (reply.status.as_u16(), reply.code()),
            (422, "idempotency_key_reused"),
            "{:?}",
            reply.body
        );
        let message = reply.body["message"].as_str().unwrap();
        assert!(message.contains("\"k-1\"") && message.contains("new key"), "{message}");
    }
    // An order's key is refused for a cancellation too, and a cancellation's for an order.
    command(&app, Method::POST, orders, Some("k-order"), Some(&order_body)).await.expect_status(201);
    assert_eq!(cancel(&app, order, Some("k-order")).await.code(), "idempotency_key_reused");
    cancel(&app, order, Some("k-cancel")).await.expect_status(200);
    let as_order = command(&app, Method::POST, orders, Some("k-cancel"), Some(&order_body)).await;
    assert_eq!(as_order.code(), "idempotency_key_reused");
    let as_other_cancel = cancel(&app, order + 1, Some("k-cancel")).await;
    assert_eq!(as_other_cancel.code(), "idempotency_key_reused");

    // Nothing changed by the refused ones (10, less the open order, plus the delivery, less
    // the order placed, plus the cancelled one); the key still stands for its adjustment.
    assert_eq!((stock(&app, pet).await, stock(&app, other_pet).await), (11, 10));
    assert_eq!(response(&adjust(&app, pet, Some("k-1"), delivery).await), response(&first));

    // Another API key's "k-1" is its own.
    let path = format!("/store/inventory/{other_pet}/adjustments");
    let theirs = app.send(request(&app, OTHER_KEY, Method::POST, &path, Some("k-1"), Some(delivery))).await;
    assert_eq!(theirs.status, 200, "processed, not refused as reused: {:?}", theirs.body);
    assert_eq!(stock(&app, other_pet).await, 12);
}

/// Rounds of 16 clients sending one command under one key at the same instant, half to
/// each of two servers on one database (two replicas on PostgreSQL, two processes on one
/// SQLite file): each round applies once and every client gets its response.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_with_one_key_apply_once_across_two_replicas() {
    let a = Arc::new(spawn_app().await);
    let b = Arc::new(a.replica().await);
    let pet = a.pet_with_stock("Popular", 100).await;
    let clients = 16;

    let burst = |round: String, method: Method, path: String, body: Option<String>| {
        let (a, b) = (a.clone(), b.clone());
        async move {
            let start = Arc::new(Barrier::new(clients));
            let mut requests = JoinSet::new();
            for client in 0..clients {
                let app = if client % 2 == 0 { a.clone() } else { b.clone() };
                let (start, round, method, path, body) =
                    (start.clone(), round.clone(), method.clone(), path.clone(), body.clone());
                requests.spawn(async move {
                    start.wait().await;
                    response(&command(&app, method, &path, Some(&round), body.as_deref()).await)
                });
            }
            let replies = requests.join_all().await;
            assert!(replies.iter().all(|r| *r == replies[0]), "{round}: one response for all: {replies:?}");
            replies.into_iter().next().unwrap()
        }
    };

    let trail = adjustments(&a, pet).await;
    for round in 0..3 {
        let path = format!("/store/inventory/{pet}/adjustments");
        let body = r#"{"delta": -2, "reason": "Breakage"}"#.to_owned();
        let (status, _) = burst(format!("adjust-{round}"), Method::POST, path, Some(body)).await;
        assert_eq!(status, 200);
    }
    assert_eq!(stock(&a, pet).await, 94);
    assert_eq!(adjustments(&a, pet).await, trail + 3);

    for round in 0..3 {
        let order = open_order(&a, pet, 2).await;
        let path = format!("/store/orders/{order}");
        let (status, body) = burst(
            format!("complete-{round}"),
            Method::PATCH,
            path.clone(),
            Some(r#"{"complete": true}"#.to_owned()),
        )
        .await;
        assert_eq!((status, &body["complete"]), (200, &Value::Bool(true)));
        let order = open_order(&a, pet, 3).await;
        let (status, _) =
            burst(format!("cancel-{round}"), Method::POST, format!("/store/orders/{order}/cancel"), None)
                .await;
        assert_eq!(status, 200);
    }
    assert_eq!(
        stock(&b, pet).await,
        94 - 3 * 2,
        "completed orders took theirs, cancelled ones gave theirs back"
    );
    assert_eq!(orders_placed(&b).await, 3);
}

/// A key is remembered for the server's window, on these commands as on orders.
#[tokio::test]
async fn a_key_is_remembered_for_the_servers_window_then_the_command_is_new() {
    let start: DateTime<Utc> = Utc.with_ymd_and_hms(2026, 11, 22, 9, 0, 0).unwrap();
    let (now, clock) = settable_clock(start);
    let app = spawn_app_configured(|config| {
        config.clock = clock;
        config.idempotency_window = std::time::Duration::from_secs(3600);
    })
    .await;
    let pet = app.pet_with_stock("Rex", 10).await;
    let body = r#"{"delta": 1, "reason": "Delivery"}"#;
    let set = |at: DateTime<Utc>| *now.lock().unwrap() = at;

    let first = adjust(&app, pet, Some("hourly"), body).await.expect_status(200);
    set(start + TimeDelta::hours(1) - TimeDelta::seconds(1));
    assert_eq!(response(&adjust(&app, pet, Some("hourly"), body).await), response(&first));
    assert_eq!(stock(&app, pet).await, 11);
    set(start + TimeDelta::hours(1));
    adjust(&app, pet, Some("hourly"), body).await.expect_status(200);
    assert_eq!(stock(&app, pet).await, 12, "an expired key is a new command");
}

#[test]
fn the_operations_take_the_documented_key() {
    let orders = &openapi::operation(&Method::POST, "/store/orders").unwrap()["parameters"][0];
    let shared = &openapi::DOC["components"]["parameters"]["IdempotencyKey"];
    assert_eq!(shared["name"], "Idempotency-Key");
    assert_eq!(shared["schema"], orders["schema"], "one grammar for the five operations");
    for (method, template) in [
        (Method::POST, "/store/inventory/{petId}/adjustments"),
        (Method::PATCH, "/store/orders/{orderId}"),
        (Method::DELETE, "/store/orders/{orderId}"),
        (Method::POST, "/store/orders/{orderId}/cancel"),
    ] {
        let operation = openapi::operation(&method, template).unwrap();
        let parameters: Vec<&Value> =
            operation["parameters"].as_array().unwrap().iter().map(openapi::resolve).collect();
        assert!(parameters.iter().any(|p| p["name"] == "Idempotency-Key"), "{method} {template}");
        assert!(operation["responses"].get("422").is_some(), "{method} {template}");
    }
}

/// The client's counter writes (`Client::once`) against the real server: each is sent
/// under its key, so a retry is answered, not applied again.
#[tokio::test]
async fn the_client_sends_each_command_under_its_key() {
    let app = spawn_app().await;
    let client = Client::new(&app.base_url, KEY).unwrap();
    let pet_id = app.pet_with_stock("Rex", 10).await;
    let pet = PetId::try_from(pet_id).unwrap();
    let new: NewOrder = parse_body(format!(r#"{{"petId": {pet_id}, "quantity": 2}}"#).as_bytes()).unwrap();
    let twice = async |key: &str, write: CounterWrite| {
        let first = client.once(key, &write).await.unwrap();
        assert_eq!(client.once(key, &write).await.unwrap(), first, "{write:?}");
        first
    };

    let placed = twice("c-order", CounterWrite::Place(new)).await.into_order().unwrap();
    assert_eq!(orders_placed(&app).await, 1);

    let adjustment: NewInventoryAdjustment = parse_body(br#"{"delta": 5, "reason": "Delivery"}"#).unwrap();
    twice("c-adjust", CounterWrite::Adjust { pet, adjustment }).await.into_item().unwrap();
    assert_eq!(stock(&app, pet_id).await, 13);

    let patch: OrderPatch = parse_body(br#"{"complete": true}"#).unwrap();
    let completed = twice("c-complete", CounterWrite::Update { order: placed.id, patch }).await;
    assert!(completed.into_order().unwrap().complete);

    // A key with a quote, a backslash and spaces arrives as it was given.
    let open = OrderId::try_from(open_order(&app, pet_id, 1).await).unwrap();
    let cancelled = twice(r#"cancel "one" \ now"#, CounterWrite::Cancel(open)).await.into_order().unwrap();
    assert!(cancelled.cancelled_at.is_some(), "{cancelled:?}");
    assert_eq!(stock(&app, pet_id).await, 13);
    assert_eq!(twice("c-delete", CounterWrite::Delete(open)).await, CounterAnswer::Done);
    assert_eq!(client.get_order(open).await.unwrap_err().code, ErrorCode::NotFound);

    let reused = client.once("c-adjust", &CounterWrite::Cancel(open)).await.unwrap_err();
    assert_eq!(reused.code, ErrorCode::IdempotencyKeyReused, "{reused:?}");
    let bad = client.once("caf\u{e9}", &CounterWrite::Cancel(open)).await.unwrap_err();
    assert_eq!(bad.code, ErrorCode::ValidationFailed, "refused before it is sent");
}

/// What the client puts on the wire: the key as an RFC 8941 string, on each command.
#[tokio::test]
async fn the_client_sends_the_key_as_an_sf_string_header() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let mut heads = Vec::new();
        for _ in 0..2 {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap();
                assert!(n > 0, "the request ended early");
                head.extend_from_slice(&buf[..n]);
            }
            socket.write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n").await.unwrap();
            heads.push(String::from_utf8_lossy(&head).to_lowercase());
        }
        heads
    });
    let client = Client::new(&base, KEY).unwrap();
    let order = OrderId::try_from(7).unwrap();
    client.once("8e03978e-40d5", &CounterWrite::Delete(order)).await.unwrap();
    client.once(r#"a "b""#, &CounterWrite::Delete(order)).await.unwrap();
    let heads = server.await.unwrap();
    assert!(heads[0].starts_with("delete /store/orders/7 "), "{}", heads[0]);
    assert!(heads[0].contains("\r\nidempotency-key: \"8e03978e-40d5\"\r\n"), "{}", heads[0]);
    assert!(heads[1].contains("\r\nidempotency-key: \"a \\\"b\\\"\"\r\n"), "{}", heads[1]);
}
