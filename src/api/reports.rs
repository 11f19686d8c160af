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
use crate::domain::{DayRange, parse_day};
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
        parse_day(name, &raw).map_err(Error::invalid_parameter)
    };
    let range = DayRange::new(day("from")?, day("to")?).map_err(Error::invalid_parameter)?;
    let permit = s.reports.take()?;
    let days = s.engine.sales_report(range).await?;
    drop(permit);
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use tower::ServiceExt;

    use crate::api::AppState;
    use crate::api::permits::REPORTS_AT_ONCE;
    use crate::store::Store;

    /// With every report permit held (as by reports still being made), one more report is
    /// refused at once with `503 busy` and `Retry-After`; once one ends, it is made.
    #[tokio::test]
    async fn reports_beyond_the_bound_are_refused_with_retry_after() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn crate::engine::ShopDatabase> =
            Arc::new(Store::open(dir.path().join("r.db")).unwrap());
        let state = AppState::for_tests(store.clone());
        let app = crate::api::service(state.clone(), Duration::from_secs(30));
        let report = || {
            let request = Request::get("/store/reports/sales?from=2026-01-01&to=2026-12-31")
                .header("host", "localhost")
                .header("authorization", "Bearer k")
                .body(Body::empty())
                .unwrap();
            app.clone().oneshot(request)
        };
        assert_eq!(report().await.unwrap().status(), StatusCode::OK);
        let mut held: Vec<_> = (0..REPORTS_AT_ONCE).map(|_| state.reports.take().unwrap()).collect();
        let refused = report().await.unwrap();
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.headers()["retry-after"], "1");
        let body = axum::body::to_bytes(refused.into_body(), 4096).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["code"], "busy", "{body}");
        assert!(body["message"].as_str().unwrap().contains("sales reports"), "{body}");
        held.pop();
        assert_eq!(report().await.unwrap().status(), StatusCode::OK, "a permit given back is taken again");
    }
}
