//! Cancelled orders are kept (for the shop's records and the stock history): cancelling stamps `cancelledAt` and returns the
//! stock; the order stays readable, listed apart (`cancelled=true`), refused any change, and
//! counted nowhere (status rules, sales, exports). Completing can be undone with
//! `{"complete": false}`. The suite runs on both engines.

use serde_json::json;

use crate::support::{TestApp, spawn_app};

async fn place(app: &TestApp, body: serde_json::Value) -> i64 {
    app.post("/store/orders", body).await.expect_status(201).body["id"].as_i64().unwrap()
}

async fn stock_of(app: &TestApp, pet: i64) -> (String, i64) {
    let item = app.get(&format!("/store/inventory/{pet}")).await.expect_status(200);
    (item.body["status"].as_str().unwrap().to_owned(), item.body["quantity"].as_i64().unwrap())
}

fn ids(reply: &crate::support::Reply) -> Vec<i64> {
    reply.body.as_array().unwrap().iter().map(|o| o["id"].as_i64().unwrap()).collect()
}

#[tokio::test]
async fn a_cancelled_order_is_kept_and_can_no_longer_change() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 3).await;
    let order = place(&app, json!({ "petId": pet, "quantity": 2 })).await;
    let path = format!("/store/orders/{order}");

    let cancelled = app.request(reqwest::Method::POST, &format!("{path}/cancel"));
    let cancelled = app.send(cancelled.header("idempotency-key", "cancel-1")).await.expect_status(200);
    assert!(cancelled.body["cancelledAt"].is_string(), "answers the cancelled order: {}", cancelled.body);
    assert_eq!(stock_of(&app, pet).await, ("available".into(), 3), "the stock came back");
    let kept = app.get(&path).await.expect_status(200);
    assert_eq!(kept.body, cancelled.body, "kept as it was answered");
    assert_eq!((kept.body["complete"].as_bool(), kept.body["quantity"].as_i64()), (Some(false), Some(2)));

    let retry = app.request(reqwest::Method::POST, &format!("{path}/cancel"));
    let retry = app.send(retry.header("idempotency-key", "cancel-1")).await.expect_status(200);
    assert_eq!(retry.body, cancelled.body, "a retry gets the first answer");
    let again = app.cancel(order).await;
    assert_eq!((again.status.as_u16(), again.code()), (409, "order_cancelled"));
    assert_eq!(again.body["message"], format!("order {order} is already cancelled"));
    for patch in [json!({ "quantity": 1 }), json!({ "complete": true }), json!({ "complete": false })] {
        let refused = app.patch(&path, patch.clone()).await;
        assert_eq!((refused.status.as_u16(), refused.code()), (409, "order_cancelled"), "{patch}");
    }
    assert_eq!(stock_of(&app, pet).await, ("available".into(), 3), "nothing moved the stock twice");
}

#[tokio::test]
async fn cancelled_orders_are_listed_only_when_asked_for_newest_first_and_searchable() {
    let app = spawn_app().await;
    let rex = app.pet_with_stock("Rex", 10).await;
    let tom = app.pet_with_stock("Tom", 10).await;
    let open = place(&app, json!({ "petId": rex })).await;
    let sold = place(&app, json!({ "petId": tom, "complete": true })).await;
    let first = place(&app, json!({ "petId": rex, "customerName": "Ana García" })).await;
    let second = place(&app, json!({ "petId": tom })).await;
    for order in [first, second] {
        app.cancel(order).await.expect_status(200);
    }

    let default = app.get("/store/orders").await.expect_status(200);
    assert_eq!((ids(&default), default.header("x-total-count")), (vec![sold, open], "2"));
    let not = app.get("/store/orders?cancelled=false&complete=false").await.expect_status(200);
    assert_eq!(ids(&not), vec![open], "an open order is not complete and not cancelled");
    let cancelled = app.get("/store/orders?cancelled=true").await.expect_status(200);
    assert_eq!((ids(&cancelled), cancelled.header("x-total-count")), (vec![second, first], "2"));
    assert!(cancelled.body[0]["cancelledAt"].is_string());
    assert_eq!(ids(&app.get("/store/orders?cancelled=true&q=garcia").await), vec![first], "the customer");
    assert_eq!(ids(&app.get("/store/orders?cancelled=true&q=tom").await), vec![second], "the pet");
    assert_eq!(ids(&app.get(&format!("/store/orders?cancelled=true&petId={rex}")).await), vec![first]);
    let bad = app.get("/store/orders?cancelled=maybe").await;
    assert_eq!((bad.status.as_u16(), bad.code()), (400, "invalid_parameter"));
}

#[tokio::test]
async fn completing_is_undone_by_complete_false_and_the_units_stay_reserved() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Goldie", 1).await;
    let sale = place(&app, json!({ "petId": pet, "complete": true })).await;
    let path = format!("/store/orders/{sale}");
    assert_eq!(stock_of(&app, pet).await, ("sold".into(), 0));

    let reopened = app.patch(&path, json!({ "complete": false })).await.expect_status(200);
    assert_eq!(reopened.body["complete"], false);
    assert!(reopened.body["completedAt"].is_null(), "{}", reopened.body);
    assert_eq!(stock_of(&app, pet).await, ("pending".into(), 0), "reserved for the open order again");
    let more = app.patch(&path, json!({ "complete": false, "quantity": 1 })).await.expect_status(200);
    assert_eq!(more.body["complete"], false, "on an open order it is an ordinary change");

    app.patch(&path, json!({ "complete": true })).await.expect_status(200);
    assert_eq!(stock_of(&app, pet).await, ("sold".into(), 0));
    let mixed = app.patch(&path, json!({ "complete": false, "quantity": 1 })).await;
    assert_eq!(mixed.code(), "order_completed", "only complete: false alone reopens");
    app.patch(&path, json!({ "complete": false })).await.expect_status(200);
    app.cancel(sale).await.expect_status(200);
    assert_eq!(stock_of(&app, pet).await, ("available".into(), 1), "a reopened order can be cancelled");
}

#[tokio::test]
async fn a_pet_whose_only_orders_are_cancelled_can_be_deleted_with_them() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;
    let order = place(&app, json!({ "petId": pet })).await;
    let refused = app.delete(&format!("/pets/{pet}")).await;
    assert_eq!(refused.code(), "pet_has_orders", "an open order keeps the pet");
    app.cancel(order).await.expect_status(200);

    app.delete(&format!("/pets/{pet}")).await.expect_status(204);
    assert_eq!(app.get(&format!("/store/orders/{order}")).await.code(), "not_found", "gone with it");

    let kept = app.pet_with_stock("Tom", 5).await;
    let cancelled = place(&app, json!({ "petId": kept })).await;
    app.cancel(cancelled).await.expect_status(200);
    place(&app, json!({ "petId": kept, "complete": true })).await;
    let refused = app.delete(&format!("/pets/{kept}")).await;
    assert_eq!(refused.code(), "pet_has_orders", "a completed order keeps the pet");
    assert_eq!(
        refused.body["message"],
        format!("pet {kept} has 1 order(s) and is kept for their record; it cannot be deleted")
    );
}

#[tokio::test]
async fn a_cancelled_order_is_not_an_open_order_to_the_status_rules() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 1).await;
    let order = place(&app, json!({ "petId": pet })).await;
    assert_eq!(stock_of(&app, pet).await, ("pending".into(), 0));
    app.cancel(order).await.expect_status(200);

    // Counting the stock to 0 makes an available pet pending while orders are open, else
    // sold: the cancelled order is not open.
    app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 0 })).await.expect_status(200);
    assert_eq!(stock_of(&app, pet).await, ("sold".into(), 0));
}

#[tokio::test]
async fn sales_and_exports_count_neither_cancelled_nor_reopened_orders() {
    let app = spawn_app().await;
    let settings = json!({ "shopName": "Pets", "currency": "EUR", "timeZone": "UTC", "lowStockBelow": 5 });
    app.put("/store/settings", settings).await.expect_status(200);
    let pet = app.pet_with_stock("Rex", 20).await;
    app.patch(&format!("/pets/{pet}"), json!({ "price": "10.00" })).await.expect_status(200);
    let cancelled = place(&app, json!({ "petId": pet, "quantity": 4 })).await;
    app.cancel(cancelled).await.expect_status(200);
    let reopened = place(&app, json!({ "petId": pet, "quantity": 3, "complete": true })).await;
    app.patch(&format!("/store/orders/{reopened}"), json!({ "complete": false })).await.expect_status(200);
    let sold = place(&app, json!({ "petId": pet, "quantity": 2, "complete": true })).await;

    let today = chrono::Utc::now().date_naive();
    let report = app.get(&format!("/store/reports/sales?from={today}&to={today}")).await.expect_status(200);
    assert_eq!(
        report.body,
        json!([{ "date": today.to_string(), "orders": 1, "units": 2, "revenue": "20.00" }])
    );

    let csv = app.request(reqwest::Method::GET, "/exports/orders.csv").send().await.unwrap();
    let text = csv.text().await.unwrap();
    let exported: Vec<&str> = text.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(exported, vec![reopened.to_string(), sold.to_string()], "{text}");
}

#[tokio::test]
async fn cancelling_is_an_order_updated_in_the_change_feed() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 2).await;
    let order = place(&app, json!({ "petId": pet })).await;
    let since = app.get("/changes").await.expect_status(200).body["next"].as_u64().unwrap();
    app.cancel(order).await.expect_status(200);

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let orders = loop {
        let page = app.get(&format!("/changes?since={since}")).await.expect_status(200);
        let orders: Vec<(i64, String)> = page.body["changes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["entity"] == "order")
            .map(|c| (c["id"].as_i64().unwrap(), c["action"].as_str().unwrap().to_owned()))
            .collect();
        // PostgreSQL numbers a change just after its commit: the placement's may come after
        // `since` too.
        if orders.iter().any(|(_, action)| action == "updated") || std::time::Instant::now() > deadline {
            break orders;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert!(orders.contains(&(order, "updated".to_owned())), "{orders:?}");
    assert!(orders.iter().all(|(_, action)| action != "deleted"), "the order is kept: {orders:?}");
}

/// The order changes of the feed after `since` until one is `action`, or 5 s have passed.
async fn order_changes_until(app: &TestApp, since: u64, action: &str) -> Vec<(i64, String)> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let page = app.get(&format!("/changes?since={since}")).await.expect_status(200);
        let orders: Vec<(i64, String)> = page.body["changes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["entity"] == "order")
            .map(|c| (c["id"].as_i64().unwrap(), c["action"].as_str().unwrap().to_owned()))
            .collect();
        if orders.iter().any(|(_, a)| a == action) || std::time::Instant::now() > deadline {
            return orders;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A client told a `DELETE` succeeded takes the order to be gone (RFC 9110), and
/// schemathesis' use-after-free check held the API to it. An open order is cancelled on the
/// way (its stock returns); afterwards every operation on it answers 404 and no list or
/// export shows it, while its row stays for the shop's records: the stock history, read
/// from the order rows, still has its entries.
#[tokio::test]
async fn a_deleted_order_is_gone_from_the_api_and_its_stock_returned() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;
    let order = place(&app, json!({ "petId": pet, "quantity": 2, "customerName": "Ana" })).await;
    let path = format!("/store/orders/{order}");
    let since = app.get("/changes").await.expect_status(200).body["next"].as_u64().unwrap();

    assert_eq!(app.delete(&path).await.expect_status(204).body, serde_json::Value::Null);
    assert_eq!(stock_of(&app, pet).await, ("available".into(), 5), "the stock came back");
    let gone = [
        app.get(&path).await,
        app.patch(&path, json!({ "quantity": 1 })).await,
        app.delete(&path).await,
        app.cancel(order).await,
    ];
    for reply in gone {
        assert_eq!((reply.status.as_u16(), reply.code()), (404, "not_found"), "{:?}", reply.body);
    }
    for list in ["/store/orders", "/store/orders?cancelled=true", "/store/orders?cancelled=true&q=ana"] {
        assert_eq!(ids(&app.get(list).await.expect_status(200)), Vec::<i64>::new(), "{list}");
    }
    let csv = app.request(reqwest::Method::GET, "/exports/orders.csv").send().await.unwrap();
    assert_eq!(csv.text().await.unwrap().lines().count(), 1, "the export has its header only");

    let history = app.get(&format!("/store/inventory/{pet}/history")).await.expect_status(200);
    let kinds: Vec<&str> =
        history.body.as_array().unwrap().iter().filter_map(|e| e["kind"].as_str()).collect();
    assert!(kinds.contains(&"order_cancelled") && kinds.contains(&"order_placed"), "kept: {kinds:?}");

    let orders = order_changes_until(&app, since, "deleted").await;
    assert!(orders.contains(&(order, "deleted".to_owned())), "tills' mirrors drop it: {orders:?}");
}

#[tokio::test]
async fn a_cancelled_order_can_be_deleted_and_a_completed_one_cannot() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;
    let cancelled = place(&app, json!({ "petId": pet })).await;
    app.cancel(cancelled).await.expect_status(200);
    assert_eq!(ids(&app.get("/store/orders?cancelled=true").await), vec![cancelled]);
    app.delete(&format!("/store/orders/{cancelled}")).await.expect_status(204);
    assert_eq!(stock_of(&app, pet).await, ("available".into(), 5), "returned once, by the cancel");
    assert_eq!(ids(&app.get("/store/orders?cancelled=true").await), Vec::<i64>::new());

    let sold = place(&app, json!({ "petId": pet, "complete": true })).await;
    let refused = app.delete(&format!("/store/orders/{sold}")).await;
    assert_eq!((refused.status.as_u16(), refused.code()), (409, "order_completed"));
    app.get(&format!("/store/orders/{sold}")).await.expect_status(200);
    assert_eq!(stock_of(&app, pet).await, ("available".into(), 4));
}

/// With an `Idempotency-Key`, a `DELETE` sent again gets its first answer, `204`, not the
/// `404` the order now answers; another `DELETE` without the key is told it is gone.
#[tokio::test]
async fn a_deletion_sent_again_with_its_key_gets_its_first_answer() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;
    let order = place(&app, json!({ "petId": pet, "quantity": 3 })).await;
    let path = format!("/store/orders/{order}");
    let delete = || app.request(reqwest::Method::DELETE, &path).header("idempotency-key", "del-1");
    app.send(delete()).await.expect_status(204);
    app.send(delete()).await.expect_status(204);
    assert_eq!(stock_of(&app, pet).await, ("available".into(), 5), "the stock returned once");
    assert_eq!(app.delete(&path).await.code(), "not_found");
}
