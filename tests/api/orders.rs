//! The pet status and stock rules, through the HTTP API: an order takes its quantity from
//! stock at once; the last unit taken makes the pet `pending` while orders are open;
//! completing the last open order with no stock left sells it; cancelling returns the stock
//! and makes it `available`; a counter sale is an order placed completed.

use serde_json::json;

use crate::support::{TestApp, spawn_app};

async fn status_of(app: &TestApp, pet: i64) -> (String, i64) {
    let item = app.get(&format!("/store/inventory/{pet}")).await;
    (item.body["status"].as_str().unwrap().to_owned(), item.body["quantity"].as_i64().unwrap())
}

#[tokio::test]
async fn an_order_reserves_stock_and_the_last_one_makes_the_pet_pending() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 3).await;
    let first = app.post("/store/orders", json!({ "petId": pet, "quantity": 2 })).await;
    assert_eq!(first.status, 201);
    assert_eq!(first.header("location"), format!("/store/orders/{}", first.body["id"]));
    assert_eq!(first.body["complete"], false);
    assert_eq!(status_of(&app, pet).await, ("available".into(), 1));

    app.post("/store/orders", json!({ "petId": pet })).await.expect_status(201);
    assert_eq!(status_of(&app, pet).await, ("pending".into(), 0));

    let refused = app.post("/store/orders", json!({ "petId": pet })).await;
    assert_eq!(refused.status, 409);
    assert_eq!(refused.code(), "pet_not_available");
    assert_eq!(refused.body["message"], format!("Rex (#{pet}) is pending, not available"), "names the pet");
}

#[tokio::test]
async fn ordering_more_than_the_stock_conflicts() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 2).await;
    let reply = app.post("/store/orders", json!({ "petId": pet, "quantity": 3 })).await;
    assert_eq!(reply.status, 409);
    assert_eq!(reply.code(), "insufficient_stock");
    assert_eq!(reply.body["message"], format!("Rex (#{pet}) has 2 in stock; 3 more were asked for"));
    assert_eq!(status_of(&app, pet).await, ("available".into(), 2), "nothing was taken");
}

#[tokio::test]
async fn completing_the_last_open_order_sells_the_pet() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 2).await;
    let a = app.post("/store/orders", json!({ "petId": pet })).await.expect_status(201).body["id"].clone();
    let b = app.post("/store/orders", json!({ "petId": pet })).await.expect_status(201).body["id"].clone();

    let done = app.patch(&format!("/store/orders/{a}"), json!({ "complete": true })).await;
    assert_eq!(done.body["complete"], true);
    assert!(done.body["completedAt"].is_string(), "completion stamps when: {}", done.body);
    assert_eq!(done.body["shipDate"], done.body["completedAt"], "none was planned: it shipped then");
    assert_eq!(status_of(&app, pet).await.0, "pending", "an order is still open");

    app.patch(&format!("/store/orders/{b}"), json!({ "complete": true, "shipDate": "2026-12-01T09:00:00Z" }))
        .await
        .expect_status(200);
    assert_eq!(status_of(&app, pet).await.0, "sold");
    assert_eq!(app.get(&format!("/store/orders/{b}")).await.body["shipDate"], "2026-12-01T09:00:00Z");
}

#[tokio::test]
async fn cancelling_returns_the_stock_and_makes_the_pet_available() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 1).await;
    let order =
        app.post("/store/orders", json!({ "petId": pet })).await.expect_status(201).body["id"].clone();
    assert_eq!(status_of(&app, pet).await, ("pending".into(), 0));

    assert_eq!(app.cancel(&order).await.status, 200);
    assert_eq!(status_of(&app, pet).await, ("available".into(), 1));
    let kept = app.get(&format!("/store/orders/{order}")).await.expect_status(200);
    assert!(kept.body["cancelledAt"].is_string(), "the order is kept, stamped when: {}", kept.body);
}

#[tokio::test]
async fn a_completed_order_can_neither_change_nor_be_cancelled() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;
    let order = app.post("/store/orders", json!({ "petId": pet, "complete": true })).await.expect_status(201);
    assert_eq!(order.body["complete"], true, "a counter sale is completed at once");
    let id = &order.body["id"];

    let change = app.patch(&format!("/store/orders/{id}"), json!({ "quantity": 2 })).await;
    assert_eq!(change.code(), "order_completed");
    let cancel = app.cancel(id).await;
    assert_eq!(cancel.code(), "order_completed");
    assert_eq!(status_of(&app, pet).await, ("available".into(), 4));
}

#[tokio::test]
async fn a_counter_sale_of_the_last_stock_sells_the_pet() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Goldie", 1).await;
    let sale = app.post("/store/orders", json!({ "petId": pet, "complete": true })).await.expect_status(201);
    assert_eq!(sale.body["complete"], true);
    assert_eq!(status_of(&app, pet).await, ("sold".into(), 0));
}

#[tokio::test]
async fn changing_the_quantity_moves_stock_both_ways() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 3).await;
    let id = app.post("/store/orders", json!({ "petId": pet })).await.expect_status(201).body["id"].clone();

    app.patch(&format!("/store/orders/{id}"), json!({ "quantity": 3 })).await.expect_status(200);
    assert_eq!(status_of(&app, pet).await, ("pending".into(), 0));
    let too_many = app.patch(&format!("/store/orders/{id}"), json!({ "quantity": 4 })).await;
    assert_eq!(too_many.code(), "insufficient_stock");

    app.patch(&format!("/store/orders/{id}"), json!({ "quantity": 1 })).await.expect_status(200);
    assert_eq!(status_of(&app, pet).await, ("available".into(), 2));
}

#[tokio::test]
async fn orders_list_newest_first_with_filters() {
    let app = spawn_app().await;
    let rex = app.pet_with_stock("Rex", 5).await;
    let tom = app.pet_with_stock("Tom", 5).await;
    app.post("/store/orders", json!({ "petId": rex })).await.expect_status(201);
    app.post("/store/orders", json!({ "petId": tom, "complete": true })).await.expect_status(201);
    let newest =
        app.post("/store/orders", json!({ "petId": rex })).await.expect_status(201).body["id"].clone();

    let all = app.get("/store/orders").await;
    assert_eq!(all.header("x-total-count"), "3");
    assert_eq!(all.body[0]["id"], newest);
    assert_eq!(
        app.get(&format!("/store/orders?petId={rex}&complete=false")).await.header("x-total-count"),
        "2"
    );
    assert_eq!(app.get("/store/orders?complete=true").await.header("x-total-count"), "1");
}

#[tokio::test]
async fn an_order_for_no_pet_is_an_invalid_reference() {
    let app = spawn_app().await;
    let reply = app.post("/store/orders", json!({ "petId": 12345 })).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.code(), "invalid_reference");
}

#[tokio::test]
async fn returning_units_that_would_overflow_the_stock_is_refused_and_changes_nothing() {
    // Found by the fuzzer: a pet restocked to the maximum while an order is open; giving
    // that order's units back must be a clear refusal, not a CHECK constraint's 500.
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 10_000).await;
    let order =
        app.post("/store/orders", json!({ "petId": pet, "quantity": 10_000 })).await.expect_status(201);
    let path = format!("/store/orders/{}", order.body["id"]);
    assert_eq!(
        app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 1_000_000 })).await.status,
        200
    );

    let smaller = app.patch(&path, json!({ "quantity": 1 })).await;
    assert_eq!((smaller.status.as_u16(), smaller.code()), (400, "validation_failed"));
    assert!(smaller.body["message"].as_str().unwrap().contains("above the maximum"), "{}", smaller.body);
    let cancelled = app.delete(&path).await;
    assert_eq!((cancelled.status.as_u16(), cancelled.code()), (400, "validation_failed"));

    assert_eq!(app.get(&path).await.body["quantity"], 10_000, "the order is untouched");
    assert_eq!(status_of(&app, pet).await.1, 1_000_000, "the stock is untouched");
}

/// `shipDate` is the spec's "expected or actual ship date". A completed order with
/// none planned shipped when it was completed; a planned one keeps its date.
#[tokio::test]
async fn a_completed_order_ships_when_completed_unless_a_date_was_planned() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 10).await;
    let sale = app.post("/store/orders", json!({ "petId": pet, "complete": true })).await.expect_status(201);
    assert!(sale.body["shipDate"].is_string(), "{}", sale.body);
    assert_eq!(sale.body["shipDate"], sale.body["completedAt"], "a counter sale ships at once");

    let open = app.post("/store/orders", json!({ "petId": pet })).await.expect_status(201);
    assert!(open.body["shipDate"].is_null(), "not shipped while open");
    let path = format!("/store/orders/{}", open.body["id"]);
    let done = app.patch(&path, json!({ "complete": true })).await.expect_status(200);
    assert!(done.body["shipDate"].is_string(), "{}", done.body);
    assert_eq!(done.body["shipDate"], done.body["completedAt"]);
    assert_eq!(app.get(&path).await.body, done.body, "stored as answered");

    let planned = json!({ "petId": pet, "shipDate": "2026-12-01T09:00:00Z" });
    let planned = app.post("/store/orders", planned).await.expect_status(201);
    let path = format!("/store/orders/{}", planned.body["id"]);
    let done = app.patch(&path, json!({ "complete": true })).await.expect_status(200);
    assert_eq!(done.body["shipDate"], "2026-12-01T09:00:00Z", "the planned date stays");
    let sale = json!({ "petId": pet, "complete": true, "shipDate": "2026-12-02T09:00:00Z" });
    let sale = app.post("/store/orders", sale).await.expect_status(201);
    assert_eq!(sale.body["shipDate"], "2026-12-02T09:00:00Z");
}
