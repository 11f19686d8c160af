//! A `reports` key, for reporting scripts, reads the shop's figures but no personal data:
//! the report, pets, categories, inventory and their exports, the settings; never orders
//! (customers' names, phones and notes), the orders export or the change feed, and it
//! writes nothing. On either engine (its scope is stored by both).

use petstore::domain::Name;
use petstore::store::Scope;
use reqwest::Method;
use serde_json::json;

use crate::support::spawn_app;

#[tokio::test]
async fn a_reports_key_reads_the_figures_and_no_personal_data() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;
    let order = app
        .post(
            "/store/orders",
            json!({ "petId": pet, "quantity": 1, "complete": true, "customerName": "Ana", "customerPhone": "+34 600 000 000" }),
        )
        .await
        .expect_status(201)
        .body["id"]
        .as_i64()
        .unwrap();
    let store = app.db.open().await;
    let issued = store.create_key(Name::parse("sales script").unwrap(), Scope::Reports).await.unwrap();
    let listed = store.list_keys().await.unwrap();
    assert_eq!(
        listed.iter().find(|k| k.name == "sales script").map(|k| k.scope),
        Some(Scope::Reports),
        "kept"
    );
    let secret = issued.secret.expose().to_owned();
    let status = |method: Method, path: String| {
        let request = app.anonymous(method, &path).bearer_auth(&secret);
        async move { request.send().await.unwrap().status().as_u16() }
    };

    let today = chrono::Utc::now().date_naive();
    for path in [
        format!("/store/reports/sales?from={today}&to={today}"),
        "/pets".to_owned(),
        format!("/pets/{pet}"),
        "/categories".to_owned(),
        "/store/inventory".to_owned(),
        format!("/store/inventory/{pet}/history"),
        "/store/settings".to_owned(),
        "/exports/pets.csv".to_owned(),
        "/exports/inventory.csv".to_owned(),
    ] {
        assert_eq!(status(Method::GET, path.clone()).await, 200, "{path}");
    }
    for path in [
        "/store/orders".to_owned(),
        format!("/store/orders/{order}"),
        "/exports/orders.csv".to_owned(),
        "/events".to_owned(),
        "/changes?since=0".to_owned(),
    ] {
        let reply = app.send(app.anonymous(Method::GET, &path).bearer_auth(&secret)).await;
        assert_eq!((reply.status.as_u16(), reply.code()), (403, "forbidden"), "{path}");
        assert!(
            reply.body["message"].as_str().unwrap().contains("no personal data"),
            "{path}: {}",
            reply.body
        );
    }
    assert_eq!(status(Method::POST, "/pets".to_owned()).await, 403, "and writes nothing");
}
