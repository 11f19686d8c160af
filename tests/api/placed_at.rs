//! The till tells the truth: a sale taken offline keeps the moment the till made
//! it (`placedAt`), beside the server's time of receipt (`createdAt`), within bounds, and
//! the day's sales report counts it on that day. On either engine.

use chrono::{Duration, Utc};
use serde_json::{Value, json};

use crate::support::spawn_app;

#[tokio::test]
async fn a_sale_made_before_midnight_and_sent_after_counts_on_the_day_it_was_made() {
    let app = spawn_app().await;
    let settings = json!({ "shopName": "Pets", "currency": "EUR", "timeZone": "UTC", "lowStockBelow": 5 });
    app.put("/store/settings", settings).await.expect_status(200);
    let pet = app.pet_with_stock("Rex", 20).await;
    app.patch(&format!("/pets/{pet}"), json!({ "price": "10.00" })).await.expect_status(200);

    // Made yesterday evening at the till, sent now that the server can be reached.
    let today = Utc::now().date_naive();
    let yesterday = today.pred_opt().unwrap();
    let made = yesterday.and_hms_opt(23, 58, 30).unwrap().and_utc();
    let made_text = made.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let sale = app
        .post(
            "/store/orders",
            json!({ "petId": pet, "quantity": 2, "complete": true, "placedAt": made_text }),
        )
        .await
        .expect_status(201);
    assert_eq!(parse(&sale.body["placedAt"]), made, "{}", sale.body);
    assert_eq!(parse(&sale.body["completedAt"]), made, "a counter sale is complete when made");
    let received = parse(&sale.body["createdAt"]);
    assert!(Utc::now() - received < Duration::minutes(1), "createdAt is the server's receipt: {received}");
    // Read back as it was stored, on this engine.
    let id = sale.body["id"].as_i64().unwrap();
    let stored = app.get(&format!("/store/orders/{id}")).await.expect_status(200);
    assert_eq!(stored.body, sale.body);
    // Placed straight on the server: no till's time.
    let direct = app
        .post("/store/orders", json!({ "petId": pet, "quantity": 1, "complete": true }))
        .await
        .expect_status(201);
    assert_eq!(direct.body["placedAt"], Value::Null);
    assert_eq!(direct.body["completedAt"], direct.body["createdAt"]);

    let report =
        app.get(&format!("/store/reports/sales?from={yesterday}&to={today}")).await.expect_status(200);
    assert_eq!(
        report.body,
        json!([
            { "date": yesterday.to_string(), "orders": 1, "units": 2, "revenue": "20.00" },
            { "date": today.to_string(), "orders": 1, "units": 1, "revenue": "10.00" },
        ])
    );
    // The pet's history still shows the offline sale as a counter sale.
    let history = app.get(&format!("/store/inventory/{pet}/history?limit=100")).await.expect_status(200);
    let kinds: Vec<&str> =
        history.body.as_array().unwrap().iter().filter_map(|e| e["kind"].as_str()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "counter_sale").count(), 2, "{}", history.body);
}

#[tokio::test]
async fn a_placed_at_ahead_of_the_servers_clock_or_older_than_twice_the_window_is_refused() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 20).await;
    let at = |offset: Duration| (Utc::now() + offset).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for (placed, why) in
        [(at(Duration::minutes(10)), "ahead of the server's clock"), (at(-Duration::days(15)), "older")]
    {
        let reply = app
            .post(
                "/store/orders",
                json!({ "petId": pet, "quantity": 1, "complete": true, "placedAt": placed }),
            )
            .await;
        assert_eq!((reply.status.as_u16(), reply.code()), (400, "validation_failed"), "{}", reply.body);
        assert!(reply.body["message"].as_str().unwrap().contains(why), "{}", reply.body);
    }
    // A till's clock a minute fast, or a sale of last week: taken.
    for placed in [at(Duration::minutes(1)), at(-Duration::days(6))] {
        app.post("/store/orders", json!({ "petId": pet, "quantity": 1, "placedAt": placed }))
            .await
            .expect_status(201);
    }
    let item = app.get(&format!("/store/inventory/{pet}")).await.expect_status(200);
    assert_eq!(item.body["quantity"], 18, "only the two taken moved the stock");
}

fn parse(value: &Value) -> chrono::DateTime<Utc> {
    chrono::DateTime::parse_from_rfc3339(value.as_str().unwrap_or_else(|| panic!("a time: {value}")))
        .unwrap()
        .to_utc()
}

#[tokio::test]
async fn a_retry_under_the_same_key_is_the_same_sale_whether_it_says_placed_at_or_not() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 20).await;
    let made = (Utc::now() - Duration::minutes(5)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let sell = |body: Value| {
        app.send(
            app.request(reqwest::Method::POST, "/store/orders")
                .header("Idempotency-Key", "till-1")
                .json(&body),
        )
    };
    // The till's first try went out at once; its replay from the outbox carries the moment.
    let first = sell(json!({ "petId": pet, "quantity": 2, "complete": true })).await.expect_status(201);
    let replay = sell(json!({ "petId": pet, "quantity": 2, "complete": true, "placedAt": made })).await;
    assert_eq!(replay.status, 201, "{}", replay.body);
    assert_eq!(replay.body, first.body, "the first answer again");
    let other = sell(json!({ "petId": pet, "quantity": 3, "complete": true, "placedAt": made })).await;
    assert_eq!((other.status.as_u16(), other.code()), (422, "idempotency_key_reused"));
    let item = app.get(&format!("/store/inventory/{pet}")).await.expect_status(200);
    assert_eq!(item.body["quantity"], 18, "sold once");
}

#[tokio::test]
async fn an_order_completed_at_the_till_before_midnight_counts_on_that_day() {
    let app = spawn_app().await;
    let settings = json!({ "shopName": "Pets", "currency": "EUR", "timeZone": "UTC", "lowStockBelow": 5 });
    app.put("/store/settings", settings).await.expect_status(200);
    let pet = app.pet_with_stock("Rex", 20).await;
    app.patch(&format!("/pets/{pet}"), json!({ "price": "10.00" })).await.expect_status(200);
    let open = app.post("/store/orders", json!({ "petId": pet, "quantity": 3 })).await.expect_status(201);
    let id = open.body["id"].as_i64().unwrap();

    let refused =
        app.patch(&format!("/store/orders/{id}"), json!({ "completedAt": "2026-11-23T10:00:00Z" })).await;
    assert_eq!((refused.status.as_u16(), refused.code()), (400, "validation_failed"), "{}", refused.body);
    assert!(refused.body["message"].as_str().unwrap().contains("complete: true"), "{}", refused.body);

    let today = Utc::now().date_naive();
    let yesterday = today.pred_opt().unwrap();
    let done = yesterday.and_hms_opt(23, 59, 0).unwrap().and_utc();
    let completed = app
        .patch(
            &format!("/store/orders/{id}"),
            json!({ "complete": true, "completedAt": done.to_rfc3339_opts(chrono::SecondsFormat::Secs, true) }),
        )
        .await
        .expect_status(200);
    assert_eq!(parse(&completed.body["completedAt"]), done, "{}", completed.body);
    let report =
        app.get(&format!("/store/reports/sales?from={yesterday}&to={today}")).await.expect_status(200);
    assert_eq!(
        report.body[0],
        json!({ "date": yesterday.to_string(), "orders": 1, "units": 3, "revenue": "30.00" })
    );
    assert_eq!(report.body[1]["orders"], 0);
}

#[tokio::test]
async fn health_tells_a_till_how_long_the_server_remembers_a_write() {
    let app = crate::support::spawn_app_configured(|config| {
        config.idempotency_window = std::time::Duration::from_secs(3 * 24 * 60 * 60);
    })
    .await;
    let health = app.get("/health").await.expect_status(200);
    assert_eq!(health.body["idempotencyWindowSeconds"], 3 * 24 * 60 * 60, "{}", health.body);
}
