//! The sales report, as JSON or, asked with `Accept: text/csv`, as CSV.

use axum::Json;
use axum::extract::State;
use axum::http::header::{ACCEPT, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use chrono::NaiveDate;

use super::Routes;
use super::error::ApiResult;
use super::extract::Params;
use super::state::AppState;
use crate::domain::DayRange;
use crate::error::Error;

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/store/reports/sales", sales)
}

async fn sales(State(s): State<AppState>, headers: HeaderMap, params: Params) -> ApiResult<Response> {
    params.allow(&["from", "to"])?;
    let day = |name: &str| -> Result<NaiveDate, Error> {
        let raw: String = params
            .one(name)?
            .ok_or_else(|| Error::invalid_parameter(format!("{name} is required (YYYY-MM-DD)")))?;
        NaiveDate::parse_from_str(&raw, "%Y-%m-%d").map_err(|_| {
            Error::invalid_parameter(format!("{name} must be a date like 2026-11-24, got {raw:?}"))
        })
    };
    let range = DayRange::new(day("from")?, day("to")?).map_err(Error::invalid_parameter)?;
    let days = s.store.sales_report(range).await?;
    if !wants_csv(&headers) {
        return Ok(Json(days).into_response());
    }
    let mut csv = String::from("date,orders,units,revenue\r\n");
    for d in &days {
        csv.push_str(&format!("{},{},{},{}\r\n", d.date, d.orders, d.units, d.revenue));
    }
    let file = format!("attachment; filename=\"sales-{}-to-{}.csv\"", range.from(), range.to());
    Ok(([(CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()), (CONTENT_DISPOSITION, file)], csv)
        .into_response())
}

/// Whether the client asked for CSV over JSON (a plain `Accept: text/csv`, or CSV listed
/// before JSON).
fn wants_csv(headers: &HeaderMap) -> bool {
    let accept = headers.get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok()).collect::<Vec<_>>().join(",");
    let position = |what: &str| accept.find(what);
    match (position("text/csv"), position("application/json")) {
        (Some(csv), Some(json)) => csv < json,
        (Some(_), None) => true,
        _ => false,
    }
}
