//! The CSV export routes: each parses its parameters and serves the file of
//! [`crate::exports`], streamed.

use axum::body::Body;
use axum::extract::State;
use axum::http::Method;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use chrono::NaiveDate;

use super::Routes;
use super::error::ApiResult;
use super::extract::Params;
use super::state::AppState;
use crate::domain::{DayRange, parse_day};
use crate::error::{Error, Result};
use crate::exports::Export;

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/exports/pets.csv", pets).add(Method::GET, "/exports/inventory.csv", inventory).add(
        Method::GET,
        "/exports/orders.csv",
        orders,
    )
}

async fn pets(State(s): State<AppState>, params: Params) -> ApiResult<Response> {
    params.allow(&[])?;
    Ok(csv_file(&s, Export::Pets))
}

async fn inventory(State(s): State<AppState>, params: Params) -> ApiResult<Response> {
    params.allow(&[])?;
    Ok(csv_file(&s, Export::Inventory))
}

async fn orders(State(s): State<AppState>, params: Params) -> ApiResult<Response> {
    params.allow(&["from", "to"])?;
    let day = |name: &str| -> Result<Option<NaiveDate>> {
        let Some(raw) = params.one::<String>(name)? else { return Ok(None) };
        parse_day(name, &raw).map(Some).map_err(Error::invalid_parameter)
    };
    let days = match (day("from")?, day("to")?) {
        (None, None) => None,
        (Some(from), Some(to)) => Some(DayRange::any(from, to).map_err(Error::invalid_parameter)?),
        _ => return Err(Error::invalid_parameter("give both from and to (YYYY-MM-DD), or neither").into()),
    };
    Ok(csv_file(&s, Export::orders(&*s.engine, days).await?))
}

fn csv_file(s: &AppState, export: Export) -> Response {
    let disposition = format!("attachment; filename=\"{}\"", export.file_name());
    let body = Body::from_stream(export.csv(s.exports.clone()));
    ([(CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()), (CONTENT_DISPOSITION, disposition)], body)
        .into_response()
}
