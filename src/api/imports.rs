//! `POST /imports/pets`: a CSV file of pets, all or nothing (see `domain/import.rs` for the
//! file, and the stores' `imports.rs` for what is checked against the shop).

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use super::Routes;
use super::error::{ApiError, ApiResult};
use super::extract::{IMPORT_LIMIT, IMPORT_PATH, Params, too_large};
use super::state::AppState;
use crate::domain::parse_pets_csv;
use crate::error::ErrorCode;

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::POST, IMPORT_PATH, pets)
}

async fn pets(
    State(s): State<AppState>,
    headers: HeaderMap,
    params: Params,
    body: Bytes,
) -> ApiResult<Response> {
    params.allow(&["createCategories", "dryRun"])?;
    let create_categories = params.one("createCategories")?.unwrap_or(false);
    let dry_run = params.one("dryRun")?.unwrap_or(false);
    let csv = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("text/csv"));
    if !csv {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "the file must be sent as CSV, with Content-Type: text/csv",
        ));
    }
    if body.len() > IMPORT_LIMIT {
        return Err(too_large(IMPORT_LIMIT));
    }
    let rows = parse_pets_csv(&body)?;
    let status = if dry_run { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(s.store.import_pets(rows, create_categories, dry_run).await?)).into_response())
}
