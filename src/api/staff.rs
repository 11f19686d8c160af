//! The staff (`/staff`) and their sessions (`/staff/sessions`): who works at the shop, in
//! which role, and signing in and out at a till. The sign-in itself is `crate::staff`'s;
//! managing staff needs the `manage_staff` permission.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::Routes;
use super::access::NamedKey;
use super::access::STAFF_HEADER;
use super::actor::{Acting, find};
use super::error::{ApiError, ApiResult};
use super::extract::{JsonBody, PathId};
use super::state::AppState;
use crate::domain::{Actor, NewStaffMember, Operation, Pin, StaffId, StaffMember, StaffPatch, Timestamp};
use crate::error::ErrorCode;
use crate::staff::{Purpose, add_member, change_member, learn_proof_key, sign_in};

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/staff", list)
        .add(Method::POST, "/staff", create)
        .add(Method::GET, "/staff/credentials", credentials)
        .add(Method::GET, "/staff/{staffId}", get)
        .add(Method::PATCH, "/staff/{staffId}", update)
        .add(Method::POST, "/staff/sessions", start_session)
        .add(Method::GET, "/staff/sessions/current", current_session)
        .add(Method::DELETE, "/staff/sessions/current", end_session)
}

async fn list(State(s): State<AppState>) -> ApiResult<impl IntoResponse> {
    Ok(Json(s.staff.get()?.list_staff().await?))
}

async fn create(
    State(s): State<AppState>,
    who: Acting,
    JsonBody(new): JsonBody<NewStaffMember>,
) -> ApiResult<Response> {
    let by = who.may(Operation::AddStaff)?;
    let member = add_member(s.staff.get()?, new, &by).await?;
    Ok(super::created(format!("/staff/{}", member.id), member))
}

/// Every member with their PIN's hash, for a till to sign staff in while it cannot reach
/// the server: only for a till's key and the operator's (the hashes are what a till must
/// keep; a `read` key's holder has no need of them).
async fn credentials(
    State(s): State<AppState>,
    key: Option<axum::Extension<NamedKey>>,
) -> ApiResult<impl IntoResponse> {
    if let Some(axum::Extension(NamedKey(name, scope))) = key
        && !scope.writes_for_staff()
    {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            format!(
                "the API key {name:?} is a {scope} key: the staff's PIN hashes are only for a till's key \
                 (scope till) or the operator's"
            ),
        ));
    }
    Ok(Json(s.staff.get()?.staff_credentials().await?))
}

async fn get(State(s): State<AppState>, PathId(id): PathId<StaffId>) -> ApiResult<impl IntoResponse> {
    Ok(Json(s.staff.get()?.get_staff(id).await?))
}

async fn update(
    State(s): State<AppState>,
    PathId(id): PathId<StaffId>,
    who: Acting,
    JsonBody(patch): JsonBody<StaffPatch>,
) -> ApiResult<impl IntoResponse> {
    let by = who.may(Operation::ChangeStaff)?;
    Ok(Json(change_member(s.staff.get()?, id, patch, &by).await?))
}

/// `POST /staff/sessions`'s body.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SignIn {
    staff_id: StaffId,
    #[serde(default, deserialize_with = "crate::domain::not_null")]
    pin: Option<Pin>,
    #[serde(default, deserialize_with = "crate::domain::not_null")]
    purpose: Option<Purpose>,
}

/// Signs a staff member in at the till the key belongs to: a shift, or a manager's
/// approval of one action. A lockout is answered with `Retry-After`.
async fn start_session(
    State(s): State<AppState>,
    key: Option<axum::Extension<NamedKey>>,
    JsonBody(body): JsonBody<SignIn>,
) -> ApiResult<Response> {
    let key = key.map_or_else(Actor::operator, |axum::Extension(NamedKey(name, _))| Actor::key(name));
    let now = Timestamp::from(s.clock.now());
    let purpose = body.purpose.unwrap_or_default();
    let staff = s.staff.get()?;
    match sign_in(staff, body.staff_id, body.pin.clone(), purpose, &key, now).await {
        Ok(signed_in) => {
            if let Some(pin) = body.pin {
                learn_proof_key(staff, body.staff_id, pin.clone()).await?;
                staff.sign_in_upstream(body.staff_id, pin, purpose.into()).await?;
            }
            Ok((StatusCode::CREATED, Json(signed_in)).into_response())
        }
        Err(refusal) => {
            let mut response = ApiError(refusal.error).into_response();
            if let Some(wait) = refusal.retry_after {
                // Whole seconds, rounded up: a client that waits that long finds the lock gone.
                let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs.max(1)));
            }
            Ok(response)
        }
    }
}

/// `GET /staff/sessions/current`'s answer: who is signed in; nobody without a session.
#[derive(Debug, Serialize)]
struct Current {
    staff: Option<StaffMember>,
}

/// Who the session in `Petstore-Staff` signs in: nobody without the header (a till that
/// has no one signed in asks too), `unauthorized` for a session that is no longer good, so
/// the till knows to ask for a PIN again.
async fn current_session(State(s): State<AppState>, headers: HeaderMap) -> ApiResult<impl IntoResponse> {
    let staff = s.staff.get()?;
    let Some(token) = headers.get(STAFF_HEADER) else { return Ok(Json(Current { staff: None })) };
    let token = token.to_str().unwrap_or("").trim();
    let who = find(staff, token, STAFF_HEADER, Timestamp::from(s.clock.now())).await?;
    Ok(Json(Current { staff: Some(staff.get_staff(who.id).await?) }))
}

/// Signs out: the session in `Petstore-Staff` ends. One already ended, or none sent, is no
/// error, so a till that retries its sign-out is answered the same.
async fn end_session(State(s): State<AppState>, headers: HeaderMap) -> ApiResult<StatusCode> {
    let token = headers.get(STAFF_HEADER).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(hash) = token.and_then(|token| crate::staff::token_hash(token, Purpose::Shift)) {
        s.staff.get()?.end_session(hash).await?;
    }
    Ok(StatusCode::NO_CONTENT)
}
