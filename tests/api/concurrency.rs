//! Many clients ordering the same pet at once: exactly the stock is sold, never more.

use serde_json::json;
use tokio::task::JoinSet;

use crate::support::{KEY, spawn_app};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_clients_ordering_one_pet_sell_exactly_the_stock() {
    let app = spawn_app().await;
    let stock = 40;
    let pet = app.pet_with_stock("Popular", stock).await;

    let mut clients = JoinSet::new();
    for _ in 0..200 {
        let http = app.http.clone();
        let url = format!("{}/store/orders", app.base_url);
        clients.spawn(async move {
            let reply = http.post(url).bearer_auth(KEY).json(&json!({ "petId": pet })).send().await.unwrap();
            let status = reply.status().as_u16();
            let body: serde_json::Value = reply.json().await.unwrap();
            (status, body["code"].as_str().unwrap_or("").to_owned())
        });
    }
    let mut placed = 0;
    while let Some(outcome) = clients.join_next().await {
        match outcome.unwrap() {
            (201, _) => placed += 1,
            (409, code) => assert!(code == "insufficient_stock" || code == "pet_not_available", "{code}"),
            other => panic!("unexpected reply {other:?}"),
        }
    }
    assert_eq!(placed, stock);
    let item = app.get(&format!("/store/inventory/{pet}")).await;
    assert_eq!(item.body["quantity"], 0);
    assert_eq!(item.body["status"], "pending");
    assert_eq!(
        app.get(&format!("/store/orders?petId={pet}")).await.header("x-total-count"),
        stock.to_string()
    );
}

#[tokio::test]
async fn restarting_keeps_every_committed_order() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 30).await;
    let mut placed = Vec::new();
    for _ in 0..25 {
        let reply = app.post("/store/orders", json!({ "petId": pet })).await;
        assert_eq!(reply.status, 201);
        placed.push(reply.body["id"].as_i64().unwrap());
    }
    let app = app.restart().await;
    for id in placed {
        assert_eq!(app.get(&format!("/store/orders/{id}")).await.status, 200, "order {id} survived");
    }
    assert_eq!(app.get(&format!("/store/inventory/{pet}")).await.body["quantity"], 5);
}
