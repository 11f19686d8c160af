//! The activity log (`GET /activity`) and its CSV file (`GET /exports/activity.csv`): who
//! did what and when. Reading it needs the `view_activity` permission; a key acting as
//! itself was let in by its scope (`read` or `write`).

use axum::body::Body;
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{Method, Uri};
use axum::response::{IntoResponse, Response};

use super::Routes;
use super::actor::Acting;
use super::error::ApiResult;
use super::extract::Params;
use super::paging::list_response;
use super::state::AppState;
use crate::domain::{ActivityFilter, Operation, Timestamp};
use crate::error::{Error, Result};

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/activity", list).add(Method::GET, "/exports/activity.csv", csv)
}

const FILTERS: [&str; 4] = ["staffId", "kind", "from", "to"];

async fn list(State(s): State<AppState>, uri: Uri, who: Acting, params: Params) -> ApiResult<Response> {
    who.may(Operation::ViewActivity)?;
    params.allow(&[&FILTERS[..], &["limit", "offset"]].concat())?;
    let page = params.page()?;
    let entries = s.staff.get()?.list_activity(filter(&params)?, page).await?;
    Ok(list_response(&uri, &params, page, entries))
}

async fn csv(State(s): State<AppState>, who: Acting, params: Params) -> ApiResult<Response> {
    who.may(Operation::ViewActivity)?;
    params.allow(&FILTERS)?;
    let filter = filter(&params)?;
    let staff = s.staff.shared()?;
    let disposition = "attachment; filename=\"activity.csv\"";
    let body = Body::from_stream(crate::exports::activity_csv(staff, filter));
    Ok(([(CONTENT_TYPE, "text/csv; charset=utf-8"), (CONTENT_DISPOSITION, disposition)], body)
        .into_response())
}

/// The log's filters: by person (who acted or approved), kind, and time (`from` inclusive,
/// `to` exclusive).
fn filter(params: &Params) -> Result<ActivityFilter> {
    let time = |name: &str| -> Result<Option<Timestamp>> {
        let Some(raw) = params.one::<String>(name)? else { return Ok(None) };
        Timestamp::parse(&raw).map(Some).map_err(|e| Error::invalid_parameter(format!("{name}: {e}")))
    };
    Ok(ActivityFilter {
        staff: params.one("staffId")?,
        kind: params.one("kind")?,
        from: time("from")?,
        to: time("to")?,
    })
}
