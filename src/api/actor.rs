//! Who a request writes as, resolved at the edge: the API key it came with (passed by the
//! key check, `access.rs`), the staff member whose session `Petstore-Staff` carries, and
//! the manager whose one-use approval `Petstore-Approval` carries. A write handler takes an
//! [`Acting`], asks it for the shop as that actor for the permission its operation needs
//! (the one table, `domain::Permission::least_role`), and writes through the handle, so
//! the engine records who on the record and in the activity log.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use super::access::{NamedKey, STAFF_HEADER, staff_required};
use super::error::ApiError;
use super::state::AppState;
use crate::domain::{Actor, Permission, StaffRef, Timestamp};
use crate::engine::{Database, Staff};
use crate::error::{Error, ErrorCode, Result};
use crate::staff::Purpose;

/// The header of a manager's one-use approval: `Petstore-Approval: pss_…`.
pub const APPROVAL_HEADER: &str = "petstore-approval";

/// The actor of a request that writes (or reads the activity log).
pub(super) struct Acting(pub Actor);

impl Acting {
    /// The shop as this actor, once the actor may do what `permission` allows.
    pub(super) fn shop(&self, s: &AppState, permission: Permission) -> Result<Arc<dyn Database>> {
        self.0.check(permission)?;
        Ok(s.engine.acting(self.0.clone()))
    }

    /// The actor, once they may do what `permission` allows.
    pub(super) fn may(self, permission: Permission) -> Result<Actor> {
        self.0.check(permission)?;
        Ok(self.0)
    }
}

impl FromRequestParts<AppState> for Acting {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, s: &AppState) -> std::result::Result<Self, ApiError> {
        let key = parts.extensions.get::<NamedKey>().cloned();
        let now = Timestamp::from(s.clock.now());
        let staff = session(s, parts, STAFF_HEADER, now).await?;
        let approved_by = session(s, parts, APPROVAL_HEADER, now).await?;
        if staff.is_none() {
            if let Some(NamedKey(name, scope)) = &key
                && scope.writes_for_staff()
            {
                return Err(staff_required(name));
            }
            if approved_by.is_some() {
                return Err(ApiError::new(
                    ErrorCode::InvalidParameter,
                    "Petstore-Approval approves a staff member's action: send the member's \
                     Petstore-Staff session with it",
                ));
            }
        }
        Ok(Acting(Actor { staff, approved_by, key: key.map(|NamedKey(name, _)| name) }))
    }
}

/// The staff member whose session the header `name` carries, if it is there; an unknown,
/// ended or expired one is refused, naming the header. Finding an approval uses it up.
async fn session(s: &AppState, parts: &Parts, name: &str, now: Timestamp) -> Result<Option<StaffRef>> {
    let Some(value) = parts.headers.get(name) else { return Ok(None) };
    let token = value.to_str().unwrap_or("").trim();
    find(s.staff.get()?, token, name, now).await.map(Some)
}

/// The staff member of session `token`, as the header `header` carried it.
pub(super) async fn find(staff: &dyn Staff, token: &str, header: &str, now: Timestamp) -> Result<StaffRef> {
    let refused = || {
        Error::new(
            ErrorCode::Unauthorized,
            format!(
                "the {} session is not valid: it ended, expired, was used, or never was; sign in again",
                display_name(header)
            ),
        )
    };
    let purpose = if header == APPROVAL_HEADER { Purpose::Approval } else { Purpose::Shift };
    let hash = crate::staff::token_hash(token, purpose).ok_or_else(refused)?;
    staff.find_session(hash, now).await?.ok_or_else(refused)
}

/// The header as the documentation writes it.
fn display_name(header: &str) -> &'static str {
    if header == APPROVAL_HEADER { "Petstore-Approval" } else { "Petstore-Staff" }
}
