//! The API reference page at `/docs`: Swagger UI with the project's extensions, built
//! from npm into `ui/dist-docs` (`make ui`) and embedded in the binary, so both the
//! headless server and the app's local API serve it with no network at all.

use axum::Router;
use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use super::error::ApiError;
use super::state::AppState;
use crate::error::ErrorCode;

/// What the page may load: only this server. Inline styles are allowed because Swagger UI
/// sets some; data: images are its icons.
const POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                      img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
                      form-action 'self'; frame-ancestors 'none'";

/// The built files. Vite writes them with fixed names (ui/vite.docs.config.ts); a build
/// that is missing fails to compile here, and a page that needs a file not listed here
/// fails `tests/api/docs.rs`.
const ASSETS: &[(&str, &str, &[u8])] = &[
    ("index.js", "text/javascript; charset=utf-8", include_bytes!("../../ui/dist-docs/assets/index.js")),
    ("index.css", "text/css; charset=utf-8", include_bytes!("../../ui/dist-docs/assets/index.css")),
    ("32x32.png", "image/png", include_bytes!("../../ui/dist-docs/assets/32x32.png")),
];
const INDEX: &str = include_str!("../../ui/dist-docs/index.html");

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/docs", get(|| async { Redirect::permanent("/docs/") }))
        .route("/docs/", get(index))
        .route("/docs/assets/{file}", get(asset))
}

async fn index() -> Response {
    page("text/html; charset=utf-8", INDEX.as_bytes())
}

async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, ..)| *name == file) {
        Some((_, content_type, bytes)) => page(content_type, bytes),
        None => {
            ApiError::new(ErrorCode::NotFound, format!("no such file: /docs/assets/{file}")).into_response()
        }
    }
}

fn page(content_type: &'static str, bytes: &'static [u8]) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            // The files change only with the binary; revalidating is free on loopback.
            (header::CACHE_CONTROL, "no-cache"),
        ],
        bytes,
    )
        .into_response()
}
