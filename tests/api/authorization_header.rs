//! The `Authorization` header is read one way everywhere: the key check and the
//! `Idempotency-Key` scope (which is per credential) take the same key from it.

use reqwest::Method;
use serde_json::json;

use crate::support::{KEY, spawn_app};

/// An HTTP authentication scheme is a case-insensitive token (RFC 9110, section 11.1), so
/// `BEARER` is as good as `Bearer`; some HTTP libraries and proxies change its case.
#[tokio::test]
async fn the_bearer_scheme_is_matched_whatever_its_case_by_the_key_check_and_by_idempotency() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let reply = app
            .send(app.anonymous(Method::GET, "/pets").header("authorization", format!("{scheme} {KEY}")))
            .await;
        assert_eq!(reply.status, 200, "{scheme}: {:?}", reply.body);
    }

    // One credential however its scheme is spelled: a retry under another spelling is the
    // same client's retry, and replays the first order instead of placing a second.
    let place = |scheme: &str| {
        app.anonymous(Method::POST, "/store/orders")
            .header("authorization", format!("{scheme} {KEY}"))
            .header("idempotency-key", "till-3-0001")
            .json(&json!({ "petId": pet }))
    };
    let first = app.send(place("Bearer")).await;
    assert_eq!(first.status, 201, "{:?}", first.body);
    let retry = app.send(place("BEARER")).await;
    assert_eq!((retry.status, &retry.body), (first.status, &first.body));
    assert_eq!(app.get("/store/orders").await.header("x-total-count"), "1");
}
