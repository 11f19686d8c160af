//! Who a request writes as, resolved at the edge: the API key it came with (passed by the
//! key check, `access.rs`), the staff member whose session `Petstore-Staff` carries, and
//! the manager whose one-use approval `Petstore-Approval` carries. A write a till took
//! offline, when no session of the server's could vouch for the person, carries proofs
//! instead (`Petstore-Staff-Proof`, `Petstore-Approval-Proof`; `crate::staff::proof`),
//! made with the person's PIN over the write's `Idempotency-Key`. A write handler takes an
//! [`Acting`], asks it for the shop as that actor for the [`Operation`] it carries out
//! (whose permission is `Operation::permission`'s, and who holds it the one table's,
//! `Permission::least_role`), and writes through the handle, so the engine records who on
//! the record and in the activity log.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use super::access::{NamedKey, STAFF_HEADER, staff_required};
use super::error::ApiError;
use super::state::AppState;
use crate::domain::{Actor, Operation, StaffId, StaffRef, Timestamp};
use crate::engine::{Database, Staff};
use crate::error::{Error, ErrorCode, Result};
use crate::staff::Purpose;
use crate::staff::proof::{APPROVAL_PROOF_HEADER, Proof, ProofKey, STAFF_PROOF_HEADER, Vouch};

pub use crate::staff::APPROVAL_HEADER;

/// The actor of a request that writes (or reads the activity log).
pub(super) struct Acting(pub Actor);

impl Acting {
    /// The shop as this actor, once the actor may do `operation`.
    pub(super) fn shop(&self, s: &AppState, operation: Operation) -> Result<Arc<dyn Database>> {
        self.0.check(operation.permission())?;
        Ok(s.engine.acting(self.0.clone()))
    }

    /// The actor, once they may do `operation`.
    pub(super) fn may(self, operation: Operation) -> Result<Actor> {
        self.0.check(operation.permission())?;
        Ok(self.0)
    }
}

impl FromRequestParts<AppState> for Acting {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, s: &AppState) -> std::result::Result<Self, ApiError> {
        let key = parts.extensions.get::<NamedKey>().cloned();
        let now = Timestamp::from(s.clock.now());
        let mut staff = session(s, parts, STAFF_HEADER, now).await?;
        let mut approved_by = session(s, parts, APPROVAL_HEADER, now).await?;
        if staff.is_none() {
            staff = proved(s, parts, STAFF_PROOF_HEADER, Vouch::Made).await?;
        }
        if approved_by.is_none()
            && let Some(of) = &staff
        {
            approved_by = proved(s, parts, APPROVAL_PROOF_HEADER, Vouch::Approved { of: of.id }).await?;
        }
        if staff.is_none() && parts.headers.contains_key(APPROVAL_PROOF_HEADER) {
            return Err(ApiError::new(
                ErrorCode::StaffProofInvalid,
                "Petstore-Approval-Proof approves a staff member's write: send the member's \
                 Petstore-Staff-Proof with it",
            ));
        }
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

/// The member whose proof the header `name` carries, if it is there: it must be made with
/// their proof key over this request's `Idempotency-Key` (`vouch` saying for what), and
/// they must have been active when the till made the write. An approval's member must
/// hold the override permission, as an approval's sign-in asks. A proof that is not of
/// the form, or has no key to hold to, holds for nothing: `staff_proof_invalid`, as one
/// made with another PIN (a credential that does not vouch, not a malformed request).
async fn proved(s: &AppState, parts: &Parts, name: &str, vouch: Vouch) -> Result<Option<StaffRef>> {
    let Some(value) = parts.headers.get(name) else { return Ok(None) };
    let shown = display_name(name);
    let proof = value.to_str().ok().and_then(Proof::parse).ok_or_else(|| {
        Error::new(
            ErrorCode::StaffProofInvalid,
            format!("{shown} must be staff=<staff id>;at=<RFC 3339 date-time>;mac=<64 hex digits>"),
        )
    })?;
    let key = super::idempotency::key_as_sent(&parts.headers).ok_or_else(|| {
        Error::new(
            ErrorCode::StaffProofInvalid,
            format!(
                "{shown} proves a write a till took offline and is made over that write's \
                 Idempotency-Key: send the key with it"
            ),
        )
    })?;
    let record = match s.staff.get()?.pin_record(proof.staff).await {
        Ok(record) => record,
        Err(e) if e.code == ErrorCode::NotFound => return Err(not_holding(shown, proof.staff, &e.message)),
        Err(e) => return Err(e),
    };
    let member = &record.member;
    let holds = record.proof_key.is_some_and(|k| proof.holds(&ProofKey::from_bytes(k), &key, vouch));
    if !holds {
        let why = if record.proof_key.is_none() {
            format!(
                "the server has no proof key of {} yet: it learns it when their PIN is set or \
                 typed at a sign-in on the server",
                member.name.as_str()
            )
        } else {
            format!(
                "it was not made with {}'s PIN for this write (was their PIN changed since?)",
                member.name.as_str()
            )
        };
        return Err(not_holding(shown, proof.staff, &why));
    }
    if !member.active && proof.at > member.updated_at {
        return Err(Error::new(
            ErrorCode::StaffInactive,
            format!(
                "{} was deactivated ({}) before the till made this write ({}); it is not taken as theirs",
                member.name.as_str(),
                member.updated_at,
                proof.at
            ),
        ));
    }
    let approving = Operation::Approve.permission();
    if matches!(vouch, Vouch::Approved { .. }) && !member.role.may(approving) {
        return Err(Error::new(
            ErrorCode::PermissionDenied,
            format!(
                "{} {} may not approve another person's action: that needs the {approving} permission",
                member.role,
                member.name.as_str()
            ),
        ));
    }
    Ok(Some(crate::staff::staff_ref(member)))
}

fn not_holding(shown: &str, staff: StaffId, why: &str) -> Error {
    Error::new(
        ErrorCode::StaffProofInvalid,
        format!("the {shown} of staff member {staff} does not hold: {why}"),
    )
}

/// The header as the documentation writes it.
fn display_name(header: &str) -> &'static str {
    match header {
        APPROVAL_HEADER => "Petstore-Approval",
        STAFF_PROOF_HEADER => "Petstore-Staff-Proof",
        APPROVAL_PROOF_HEADER => "Petstore-Approval-Proof",
        _ => "Petstore-Staff",
    }
}
