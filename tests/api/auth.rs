//! Keys and access, enumerated from the OpenAPI document so that a new operation cannot be
//! forgotten.

use reqwest::Method;
use serde_json::Value;

use crate::helpers::{TestApp, spawn_app};
use crate::schema::DOC;

/// Every documented operation as (method, concrete path, needs a key).
fn operations() -> Vec<(Method, String, bool)> {
    let global = !DOC["security"].as_array().unwrap().is_empty();
    let mut all = Vec::new();
    for (template, item) in DOC["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Ok(method) = method.to_uppercase().parse::<Method>() else { continue };
            if method == Method::from_bytes(b"PARAMETERS").unwrap() {
                continue;
            }
            let secured = op.get("security").map_or(global, |s| !s.as_array().unwrap().is_empty());
            let path =
                template.replace("{petId}", "1").replace("{categoryId}", "1").replace("{orderId}", "1");
            all.push((method, path, secured));
        }
    }
    assert!(all.len() >= 24, "the document lists every operation");
    all
}

async fn each_secured(
    app: &TestApp,
    mut prepare: impl FnMut(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
) -> Vec<(String, u16, String)> {
    let mut replies = Vec::new();
    for (method, path, secured) in operations() {
        if !secured {
            continue;
        }
        let request = prepare(app.anonymous(method.clone(), &path));
        let reply = app.send(request.json(&Value::Object(Default::default()))).await;
        replies.push((
            format!("{method} {path}"),
            reply.status.as_u16(),
            reply.header("www-authenticate").to_owned(),
        ));
    }
    replies
}

#[tokio::test]
async fn every_operation_refuses_a_request_without_a_key() {
    let app = spawn_app().await;
    for (op, status, challenge) in each_secured(&app, |r| r).await {
        assert_eq!(status, 401, "{op}");
        assert!(challenge.starts_with("Bearer"), "{op}: WWW-Authenticate {challenge:?}");
    }
}

#[tokio::test]
async fn every_operation_refuses_a_wrong_key() {
    let app = spawn_app().await;
    for (op, status, _) in each_secured(&app, |r| r.bearer_auth("not-the-key-0123456789abcdef")).await {
        assert_eq!(status, 401, "{op}");
    }
}

#[tokio::test]
async fn service_operations_need_no_key() {
    let app = spawn_app().await;
    for (method, path, secured) in operations() {
        if !secured {
            let reply = app.send(app.anonymous(method, &path)).await;
            assert_eq!(reply.status, 200, "{path}");
        }
    }
}

#[tokio::test]
async fn a_key_in_the_url_is_refused_even_when_right() {
    let app = spawn_app().await;
    let reply = app.send(app.anonymous(Method::GET, &format!("/pets?api_key={}", crate::helpers::KEY))).await;
    assert_eq!(reply.status, 401);
    assert!(reply.body["message"].as_str().unwrap().contains("URL"));
}

#[tokio::test]
async fn a_foreign_host_is_refused_dns_rebinding() {
    let app = spawn_app().await;
    let reply = app.send(app.request(Method::GET, "/pets").header("host", "evil.example:80")).await;
    assert_eq!((reply.status.as_u16(), reply.code()), (403, "forbidden"));
    let wrong_port = app.send(app.request(Method::GET, "/health").header("host", "127.0.0.1:1")).await;
    assert_eq!(wrong_port.status, 403);
    let localhost = app
        .send(app.request(Method::GET, "/pets").header("host", format!("localhost:{}", app.addr.port())))
        .await;
    assert_eq!(localhost.status, 200);
}

#[tokio::test]
async fn a_foreign_origin_is_refused() {
    let app = spawn_app().await;
    let reply = app.send(app.request(Method::GET, "/pets").header("origin", "https://evil.example")).await;
    assert_eq!((reply.status.as_u16(), reply.code()), (403, "forbidden"));
    let own = app.send(app.request(Method::GET, "/pets").header("origin", app.base_url.clone())).await;
    assert_eq!(own.status, 200);
    assert!(own.headers.get("access-control-allow-origin").is_none());
}
