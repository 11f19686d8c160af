use serde_json::json;

use crate::support::spawn_app;

#[tokio::test]
async fn categories_are_listed_by_name_with_their_pet_counts() {
    let app = spawn_app().await;
    let fish = app.category("fish").await;
    app.category("Birds").await;
    app.post("/pets", json!({ "name": "Nemo", "categoryId": fish })).await.expect_status(201);

    let reply = app.get("/categories").await;
    assert_eq!(reply.header("x-total-count"), "2");
    assert_eq!(reply.body[0]["name"], "Birds");
    assert_eq!(reply.body[1]["petCount"], 1);
}

#[tokio::test]
async fn names_are_unique_ignoring_case() {
    let app = spawn_app().await;
    let dogs = app.category("Dogs").await;
    let again = app.post("/categories", json!({ "name": "DOGS" })).await;
    assert_eq!(again.status, 409);
    assert_eq!(again.code(), "duplicate_name");

    let cats = app.category("Cats").await;
    let rename = app.put(&format!("/categories/{cats}"), json!({ "name": "dogs" })).await;
    assert_eq!(rename.code(), "duplicate_name");
    let keep = app
        .put(&format!("/categories/{dogs}"), json!({ "name": "Dogs", "description": "Puppies too" }))
        .await;
    assert_eq!(keep.status, 200, "renaming to its own name is fine");
}

#[tokio::test]
async fn a_category_with_pets_cannot_be_deleted() {
    let app = spawn_app().await;
    let dogs = app.category("Dogs").await;
    let rex =
        app.post("/pets", json!({ "name": "Rex", "categoryId": dogs })).await.expect_status(201).body["id"]
            .as_i64()
            .unwrap();
    let reply = app.delete(&format!("/categories/{dogs}")).await;
    assert_eq!(reply.status, 409);
    assert_eq!(reply.code(), "category_in_use");

    app.patch(&format!("/pets/{rex}"), json!({ "categoryId": null })).await.expect_status(200);
    assert_eq!(app.delete(&format!("/categories/{dogs}")).await.status, 204);
    assert_eq!(app.get(&format!("/categories/{dogs}")).await.code(), "not_found");
}
