//! Keys and access, enumerated from the OpenAPI document so that a new operation cannot be
//! forgotten: no key, a wrong key, a read key, a write key, a revoked and a rotated key.

use std::time::Duration;

use petstore::api::FailureLimit;
use petstore::clock::Clock;
use petstore::domain::Name;
use petstore::store::Scope;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::openapi::operations;
use crate::support::{KEY, TestApp, spawn_app, spawn_app_limited};

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
    // More wrong keys than the default allows before slowing down (see wrong_key_slowdown.rs for that).
    let limit = FailureLimit { max_failures: 1000, window: Duration::from_secs(60) };
    let app = spawn_app_limited(Clock::system(), limit).await;
    for (op, status, _) in each_secured(&app, |r| r.bearer_auth("not-the-key-0123456789abcdef")).await {
        assert_eq!(status, 401, "{op}");
    }
}

/// A server with something behind every id the enumeration uses (1), so that reads succeed.
async fn app_with_data() -> TestApp {
    let app = spawn_app().await;
    assert_eq!(app.category("Dogs").await, 1);
    assert_eq!(app.pet_with_stock("Rex", 5).await, 1);
    let order = app.post("/store/orders", json!({ "petId": 1 })).await;
    assert_eq!((order.status.as_u16(), order.body["id"].as_i64()), (201, Some(1)));
    app
}

/// A named key, made as the CLI and the app make them: through another connection to the
/// database file of the running server.
async fn named_key(app: &TestApp, name: &str, scope: Scope) -> String {
    let store = app.db.open().await;
    store.create_key(Name::parse(name).unwrap(), scope).await.unwrap().secret.expose().to_owned()
}

/// What every list shows, read with the operator key: equal before and after means that
/// nothing was written.
async fn everything(app: &TestApp) -> Vec<Value> {
    let mut all = Vec::new();
    for path in
        ["/pets", "/categories", "/store/orders", "/store/inventory", "/store/inventory/1/adjustments"]
    {
        all.push(app.get(path).await.expect_status(200).body);
    }
    all
}

/// The one read no `read` or `write` key may make: the staff's PIN hashes, which only a
/// till's key (to sign its staff in offline) and the operator's read.
const TILLS_ONLY: &str = "/staff/credentials";

#[tokio::test]
async fn a_read_key_reads_every_operation_and_writes_none() {
    let app = app_with_data().await;
    let read = named_key(&app, "reporting", Scope::Read).await;
    let before = everything(&app).await;
    let mut writes = 0;
    for (method, path, secured) in operations() {
        if !secured {
            continue;
        }
        let reply = app.send(app.anonymous(method.clone(), &path).bearer_auth(&read).json(&json!({}))).await;
        if method == Method::GET && path == TILLS_ONLY {
            assert_eq!((reply.status.as_u16(), reply.code()), (403, "forbidden"), "{path}: {:?}", reply.body);
        } else if method == Method::GET {
            assert!(reply.status.is_success(), "{method} {path}: {:?}", reply.body);
        } else {
            writes += 1;
            assert_eq!((reply.status.as_u16(), reply.code()), (403, "forbidden"), "{method} {path}");
            let message = reply.body["message"].as_str().unwrap();
            assert!(message.contains("read scope") && message.contains("reporting"), "{message}");
        }
    }
    assert!(writes >= 12, "every write operation was tried");
    assert_eq!(everything(&app).await, before, "a read key changed nothing");
}

#[tokio::test]
async fn a_write_key_may_call_every_operation() {
    let app = app_with_data().await;
    let write = named_key(&app, "till", Scope::Write).await;
    for (method, path, secured) in operations() {
        if secured {
            let reply =
                app.send(app.anonymous(method.clone(), &path).bearer_auth(&write).json(&json!({}))).await;
            if method == Method::GET && path == TILLS_ONLY {
                assert_eq!(reply.code(), "forbidden", "{path}: {:?}", reply.body);
                continue;
            }
            assert!(![401, 403, 429].contains(&reply.status.as_u16()), "{method} {path}: {:?}", reply.body);
        }
    }
    let created = app
        .send(app.anonymous(Method::POST, "/categories").bearer_auth(&write).json(&json!({ "name": "Cats" })))
        .await;
    assert_eq!(created.status, 201);
}

#[tokio::test]
async fn a_revoked_key_is_refused_from_the_next_request_on() {
    let app = spawn_app().await;
    let key = named_key(&app, "label printer", Scope::Write).await;
    let get = |key: &str| app.send(app.anonymous(Method::GET, "/pets").bearer_auth(key));
    assert_eq!(get(&key).await.status, 200);

    app.db.open().await.revoke_key("label printer").await.unwrap();
    let refused = get(&key).await;
    assert_eq!((refused.status.as_u16(), refused.code()), (401, "unauthorized"));
    assert!(refused.body["message"].as_str().unwrap().contains("revoked"));
    assert_eq!(get(KEY).await.status, 200, "the operator key is unaffected");
}

#[tokio::test]
async fn a_rotated_key_works_with_its_new_secret_only() {
    let app = spawn_app().await;
    let old = named_key(&app, "till", Scope::Read).await;
    let get = |key: String| app.send(app.anonymous(Method::GET, "/pets").bearer_auth(key));
    assert_eq!(get(old.clone()).await.status, 200);

    let rotated = app.db.open().await.rotate_key("till").await.unwrap();
    assert_eq!(rotated.key.scope, Scope::Read, "same scope");
    assert_eq!(get(old).await.status, 401);
    assert_eq!(get(rotated.secret.expose().to_owned()).await.status, 200);
    let post = app.anonymous(Method::POST, "/categories").bearer_auth(rotated.secret.expose());
    assert_eq!(app.send(post.json(&json!({ "name": "Cats" }))).await.status, 403, "still a read key");
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
    let named = named_key(&app, "script", Scope::Write).await;
    for param in ["api_key", "apikey", "key", "access_token", "token"] {
        for key in [KEY, named.as_str()] {
            let reply = app.send(app.anonymous(Method::GET, &format!("/pets?{param}={key}"))).await;
            assert_eq!(reply.status, 401, "?{param}=");
            assert!(reply.body["message"].as_str().unwrap().contains("URL"));
        }
        // Also beside a right key in the header: a key in the URL is a leak to stop.
        let both =
            app.request(Method::POST, &format!("/categories?{param}={KEY}")).json(&json!({ "name": param }));
        assert_eq!(app.send(both).await.status, 401, "?{param}= with a header key");
    }
    assert_eq!(app.get("/categories").await.body.as_array().unwrap().len(), 0, "nothing was written");
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
async fn a_rebound_or_cross_origin_write_with_a_right_key_changes_nothing() {
    let app = spawn_app().await;
    let port = app.addr.port();
    let attempts = [
        ("host", format!("evil.example:{port}")),
        ("host", format!("localhost.evil.example:{port}")),
        ("host", format!("127.0.0.1.nip.io:{port}")),
        ("origin", "https://evil.example".to_owned()),
        ("origin", format!("http://evil.example:{port}")),
        ("origin", "null".to_owned()),
    ];
    for (header, value) in attempts {
        let post =
            app.request(Method::POST, "/categories").header(header, &value).json(&json!({ "name": "x" }));
        let reply = app.send(post).await;
        assert_eq!((reply.status.as_u16(), reply.code()), (403, "forbidden"), "{header}: {value}");
    }
    assert_eq!(app.get("/categories").await.body.as_array().unwrap().len(), 0, "nothing was written");
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
