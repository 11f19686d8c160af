//! Every failure is the Error object, including what the framework itself refuses.

use reqwest::Method;
use serde_json::json;

use crate::support::spawn_app;

#[tokio::test]
async fn malformed_json_and_non_objects_are_invalid_json() {
    let app = spawn_app().await;
    for body in ["{\"name\": ", "[1, 2]", "\"Rex\"", ""] {
        let request =
            app.request(Method::POST, "/pets").header("content-type", "application/json").body(body);
        let reply = app.send(request).await;
        assert_eq!((reply.status.as_u16(), reply.code()), (400, "invalid_json"), "body {body:?}");
    }
}

#[tokio::test]
async fn wrong_shapes_name_the_field() {
    let app = spawn_app().await;
    let cases = [
        (json!({}), "name"),
        (json!({ "name": "" }), "name"),
        (json!({ "name": "x".repeat(101) }), "name"),
        (json!({ "name": 5 }), "name"),
        (json!({ "name": "Rex", "status": "lost" }), "status"),
        (json!({ "name": "Rex", "categoryId": 0 }), "categoryId"),
        (json!({ "name": "Rex", "description": "d".repeat(501) }), "description"),
        (json!({ "name": "Rex", "colour": "brown" }), "colour"),
    ];
    for (body, field) in cases {
        let reply = app.post("/pets", body.clone()).await;
        assert_eq!(reply.code(), "validation_failed", "{body}");
        let message = reply.body["message"].as_str().unwrap();
        assert!(message.contains(field), "{body}: message {message:?} does not name {field}");
    }
    let order = app.post("/store/orders", json!({ "petId": 1, "quantity": 10001 })).await;
    assert!(order.body["message"].as_str().unwrap().contains("quantity"));
}

#[tokio::test]
async fn bad_path_and_query_parameters_are_invalid_parameter() {
    let app = spawn_app().await;
    for path in [
        "/pets/abc",
        "/pets/0",
        "/store/orders/-1",
        "/pets?limit=0",
        "/pets?limit=101",
        "/pets?offset=-1",
        "/pets?status=lost",
        "/pets?sort=colour",
        "/pets?limit=5&limit=6",
        "/pets?colour=brown",
        "/store/orders?complete=maybe",
        "/store/inventory?belowQuantity=-2",
    ] {
        let reply = app.get(path).await;
        assert_eq!(
            (reply.status.as_u16(), reply.code()),
            (400, "invalid_parameter"),
            "{path}: {}",
            reply.body
        );
    }
}

#[tokio::test]
async fn unknown_routes_and_wrong_methods_are_error_objects() {
    let app = spawn_app().await;
    let missing = app.get("/kennels").await;
    assert_eq!((missing.status.as_u16(), missing.code()), (404, "not_found"));

    let wrong = app.send(app.request(Method::DELETE, "/pets")).await;
    assert_eq!((wrong.status.as_u16(), wrong.code()), (405, "method_not_allowed"));
    let allow = wrong.header("allow");
    assert!(allow.contains("GET") && allow.contains("POST"), "Allow: {allow}");
}

#[tokio::test]
async fn bodies_must_be_json_and_small() {
    let app = spawn_app().await;
    let text = app.request(Method::POST, "/pets").header("content-type", "text/plain").body("name=Rex");
    let reply = app.send(text).await;
    assert_eq!((reply.status.as_u16(), reply.code()), (415, "unsupported_media_type"));

    let none = app.request(Method::POST, "/pets").body("{\"name\":\"Rex\"}");
    assert_eq!(app.send(none).await.code(), "unsupported_media_type");

    let huge = json!({ "name": "Rex", "description": "x".repeat(70 * 1024) });
    let reply = app.post("/pets", huge).await;
    assert_eq!((reply.status.as_u16(), reply.code()), (413, "payload_too_large"));
}

#[tokio::test]
async fn messages_never_leak_sql() {
    let app = spawn_app().await;
    let dogs = app.category("Dogs").await;
    let reply = app.post("/categories", json!({ "name": "dogs" })).await;
    let message = reply.body["message"].as_str().unwrap();
    assert!(!message.to_lowercase().contains("unique") && !message.contains("constraint"), "{message}");
    assert!(message.contains("dogs"), "{message}");
    let _ = dogs;
}
