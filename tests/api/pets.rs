use reqwest::Method;
use serde_json::json;

use crate::support::spawn_app;

#[tokio::test]
async fn creating_a_pet_returns_201_with_location_and_defaults() {
    let app = spawn_app().await;
    let reply = app.post("/pets", json!({ "name": "  Rex  " })).await;
    assert_eq!(reply.status, 201);
    let id = reply.body["id"].as_i64().unwrap();
    assert_eq!(reply.header("location"), format!("/pets/{id}"));
    assert_eq!(reply.body["name"], "Rex");
    assert_eq!(reply.body["status"], "available");
    assert_eq!(reply.body["categoryId"], json!(null));

    let stock = app.get(&format!("/store/inventory/{id}")).await;
    assert_eq!(stock.body["quantity"], 0, "a new pet starts with no stock");
}

#[tokio::test]
async fn the_list_filters_sorts_and_pages() {
    let app = spawn_app().await;
    let dogs = app.category("Dogs").await;
    for (name, status) in
        [("bella", "available"), ("Álvaro", "pending"), ("Charlie", "sold"), ("Belle", "available")]
    {
        let reply = app.post("/pets", json!({ "name": name, "status": status, "categoryId": dogs })).await;
        assert_eq!(reply.status, 201);
    }
    app.post("/pets", json!({ "name": "Nemo" })).await.expect_status(201);

    let all = app.get("/pets").await;
    assert_eq!(all.header("x-total-count"), "5");

    let by_name = app.get(&format!("/pets?categoryId={dogs}&sort=name")).await;
    let names: Vec<&str> =
        by_name.body.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Álvaro", "bella", "Belle", "Charlie"], "sorted ignoring case and accents");

    let found = app.get("/pets?q=BEL&status=available").await;
    assert_eq!(found.header("x-total-count"), "2");

    let two_statuses = app.get("/pets?status=pending&status=sold").await;
    assert_eq!(two_statuses.header("x-total-count"), "2");

    for q in ["%C3%81LV", "alv"] {
        let accented = app.get(&format!("/pets?q={q}")).await;
        assert_eq!(accented.body[0]["name"], "Álvaro", "search ignores case and accents ({q})");
    }

    let page = app.get("/pets?limit=2&offset=2&sort=-id").await;
    assert_eq!(page.body.as_array().unwrap().len(), 2);
    let link = page.header("link");
    assert!(link.contains(r#"</pets?sort=-id&limit=2&offset=0>; rel="first""#), "{link}");
    assert!(link.contains(r#"</pets?sort=-id&limit=2&offset=0>; rel="prev""#), "{link}");
    assert!(link.contains(r#"</pets?sort=-id&limit=2&offset=4>; rel="next""#), "{link}");
    assert!(link.contains(r#"</pets?sort=-id&limit=2&offset=4>; rel="last""#), "{link}");

    // Without filters, the links carry the paging alone; a filter's text is encoded.
    let plain = app.get("/pets?limit=2&offset=2").await;
    assert_eq!(
        plain.header("link"),
        r#"</pets?limit=2&offset=0>; rel="first", </pets?limit=2&offset=0>; rel="prev", </pets?limit=2&offset=4>; rel="next", </pets?limit=2&offset=4>; rel="last""#
    );
    let searched = app.get("/pets?q=b%26e%20l&limit=1").await;
    assert_eq!(
        searched.header("link"),
        r#"</pets?q=b%26e+l&limit=1&offset=0>; rel="first", </pets?q=b%26e+l&limit=1&offset=0>; rel="last""#
    );
}

#[tokio::test]
async fn the_successor_of_get_pet_finds_pets_by_id() {
    let app = spawn_app().await;
    let a = app.pet_with_stock("A", 0).await;
    let b = app.pet_with_stock("B", 0).await;
    let reply = app.get(&format!("/pets?id={a}&id={b}&id=999")).await;
    assert_eq!(reply.header("x-total-count"), "2");
}

#[tokio::test]
async fn put_replaces_and_patch_changes_only_what_it_names() {
    let app = spawn_app().await;
    let cats = app.category("Cats").await;
    let id = app.pet_with_stock("Tom", 0).await;

    let patched =
        app.patch(&format!("/pets/{id}"), json!({ "categoryId": cats, "description": "Grey tabby" })).await;
    assert_eq!(patched.status, 200);
    assert_eq!(patched.body["name"], "Tom");
    assert_eq!(patched.body["categoryId"], cats);

    let cleared = app.patch(&format!("/pets/{id}"), json!({ "description": null })).await;
    assert_eq!(cleared.body["description"], json!(null));
    assert_eq!(cleared.body["categoryId"], cats, "absent fields are left alone");

    let replaced = app.put(&format!("/pets/{id}"), json!({ "name": "Thomas", "status": "sold" })).await;
    assert_eq!(replaced.status, 200);
    assert_eq!(replaced.body["status"], "sold");
    assert_eq!(replaced.body["categoryId"], json!(null), "PUT resets what it leaves out");
}

#[tokio::test]
async fn deleting_a_pet_without_orders_works_and_with_orders_conflicts() {
    let app = spawn_app().await;
    let lonely = app.pet_with_stock("Lonely", 0).await;
    assert_eq!(app.delete(&format!("/pets/{lonely}")).await.status, 204);
    assert_eq!(app.get(&format!("/pets?id={lonely}")).await.header("x-total-count"), "0");
    assert_eq!(app.delete(&format!("/pets/{lonely}")).await.code(), "not_found");

    let sold = app.pet_with_stock("Sold", 1).await;
    app.post("/store/orders", json!({ "petId": sold })).await.expect_status(201);
    let reply = app.delete(&format!("/pets/{sold}")).await;
    assert_eq!(reply.status, 409);
    assert_eq!(reply.code(), "pet_has_orders");
}

#[tokio::test]
async fn unknown_category_is_an_invalid_reference() {
    let app = spawn_app().await;
    let reply = app.post("/pets", json!({ "name": "Ghost", "categoryId": 404 })).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.code(), "invalid_reference");
    assert!(reply.body["message"].as_str().unwrap().contains("404"));
}

#[tokio::test]
async fn a_client_cannot_set_the_id() {
    let app = spawn_app().await;
    let reply =
        app.send(app.request(Method::POST, "/pets").json(&json!({ "id": 7, "name": "Sneaky" }))).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.code(), "validation_failed");
    assert!(reply.body["message"].as_str().unwrap().contains("id"));
}
