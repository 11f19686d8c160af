use serde_json::json;

use crate::support::spawn_app;

#[tokio::test]
async fn setting_stock_moves_the_status_both_ways() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 0).await;
    app.patch(&format!("/pets/{pet}"), json!({ "status": "sold" })).await.expect_status(200);

    let up = app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 4 })).await;
    assert_eq!((up.body["status"].as_str(), up.body["quantity"].as_i64()), (Some("available"), Some(4)));

    let down = app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 0 })).await;
    assert_eq!(down.body["status"], "sold", "no open orders, so the pet is sold");

    app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 1 })).await.expect_status(200);
    app.post("/store/orders", json!({ "petId": pet })).await.expect_status(201);
    app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 2 })).await.expect_status(200);
    let with_open_order = app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 0 })).await;
    assert_eq!(with_open_order.body["status"], "pending");
}

#[tokio::test]
async fn adjustments_keep_an_audit_trail_newest_first() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 2).await;
    let added = app
        .post(&format!("/store/inventory/{pet}/adjustments"), json!({ "delta": 5, "reason": "delivery" }))
        .await;
    assert_eq!(added.status, 200);
    assert_eq!(added.body["quantity"], 7);
    app.post(&format!("/store/inventory/{pet}/adjustments"), json!({ "delta": -1, "reason": "broken cage" }))
        .await
        .expect_status(200);

    let trail = app.get(&format!("/store/inventory/{pet}/adjustments")).await;
    assert_eq!(trail.header("x-total-count"), "3", "the initial count is in the trail too");
    assert_eq!(trail.body[0]["reason"], "broken cage");
    assert_eq!(trail.body[0]["quantityAfter"], 6);
    assert_eq!(trail.body[2]["reason"], "stock set to 2");
}

#[tokio::test]
async fn an_adjustment_cannot_take_more_than_there_is() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 2).await;
    let path = format!("/store/inventory/{pet}/adjustments");
    let reply = app.post(&path, json!({ "delta": -3, "reason": "miscount" })).await;
    assert_eq!(reply.code(), "insufficient_stock");
    assert_eq!(reply.body["message"], format!("Rex (#{pet}) has 2 in stock; cannot remove 3"));
    let zero = app.post(&path, json!({ "delta": 0, "reason": "nothing" })).await;
    assert_eq!(zero.code(), "validation_failed");
    let over = app.post(&path, json!({ "delta": 1_000_000, "reason": "a lot" })).await;
    assert_eq!(over.code(), "validation_failed");
    let no_reason = app.post(&path, json!({ "delta": 1 })).await;
    assert_eq!(no_reason.code(), "validation_failed");
}

#[tokio::test]
async fn the_low_stock_view_lists_the_lowest_first() {
    let app = spawn_app().await;
    app.pet_with_stock("Plenty", 50).await;
    let few = app.pet_with_stock("Few", 2).await;
    let none = app.pet_with_stock("None", 0).await;
    let low = app.get("/store/inventory?belowQuantity=5").await;
    assert_eq!(low.header("x-total-count"), "2");
    assert_eq!(low.body[0]["petId"], none);
    assert_eq!(low.body[1]["petId"], few);
    assert_eq!(app.get("/store/inventory?status=sold").await.header("x-total-count"), "0");
}
