//! Operations that need no key: liveness and the OpenAPI document.

use axum::Json;
use axum::extract::State;
use axum::http::{Method, Uri, header};
use axum::response::IntoResponse;
use serde_json::json;

use super::error::ApiError;
use super::{AppState, Routes};
use crate::error::ErrorCode;
use crate::openapi;

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/health", health).add(Method::GET, "/openapi.json", openapi_json).add(
        Method::GET,
        "/openapi.yaml",
        openapi_yaml,
    )
}

/// Liveness, and how long an `Idempotency-Key` is kept: a till that holds writes taken
/// offline longer than that cannot send them safely (a first try whose answer was lost
/// would no longer be recognised), so it asks here.
async fn health(State(s): State<AppState>) -> impl IntoResponse {
    Json(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "idempotencyWindowSeconds": s.idempotency_window.num_seconds(),
    }))
}

async fn openapi_json() -> impl IntoResponse {
    Json(&*openapi::JSON)
}

async fn openapi_yaml() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/yaml")], openapi::YAML)
}

pub(super) async fn no_route(method: Method, uri: Uri) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no route for {method} {}", uri.path()))
}
