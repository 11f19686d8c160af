//! Who is serving at this till, kept here in the app's Rust state and never only in the
//! window: every write command asks [`Shell::acting`] for the shop as the signed-in person,
//! which checks their role against the one permission table (`domain::Permission`) before
//! anything is written, and writes through the store's `acting` handle so the record and
//! the activity log name them. A window that skipped its own checks would still be refused.
//!
//! Local mode only: the app's own store keeps the staff. In remote mode the till follows a
//! server through its mirror and writes as the till's key, as before staff; signing staff in
//! against the server is not done here yet.

use std::sync::Arc;

use petstore::domain::{Actor, Operation, Pin, StaffId, StaffMember, StaffRef, Timestamp};
use petstore::engine::Staff;
use petstore::staff::{Purpose, sign_in, staff_ref, token_hash};
use petstore::{Database, Error, ErrorCode, Petstore};
use serde::Serialize;

use crate::backend_switch::Target;
use crate::error::{CommandError, CommandResult};
use crate::shell::{Shell, Shift, TillStaff};

/// Who is serving, as the window shows it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Serving {
    /// The person signed in; null while the till is locked (or in remote mode).
    pub staff: Option<StaffRef>,
    /// The shop has one active member, an owner with no PIN: the till works as before
    /// staff, with no sign-in, no switching and no lock.
    pub alone: bool,
    /// The till follows a server: staff are managed there, and this till writes as its key.
    pub remote: bool,
}

impl Shell {
    fn till_staff(&self) -> std::sync::MutexGuard<'_, TillStaff> {
        self.staff.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn is_remote(&self) -> bool {
        matches!(self.backend.target(), Target::Remote { .. })
    }

    /// The app's own store's staff: refused in remote mode, whose staff are the server's.
    pub fn local_staff(&self) -> CommandResult<&petstore::Store> {
        if self.is_remote() {
            return Err(CommandError::validation(
                "this till follows a server: its staff are managed on the server",
            ));
        }
        Ok(self.backend.local())
    }

    /// Who writes now, without any approval: the signed-in person in local mode (refused
    /// with `staff_required` while the till is locked); the till's own key in remote mode.
    pub fn actor(&self) -> CommandResult<Actor> {
        if self.is_remote() {
            return Ok(Actor::operator());
        }
        match &self.till_staff().shift {
            Some(shift) => Ok(Actor { staff: Some(shift.staff.clone()), approved_by: None, key: None }),
            None => Err(Error::new(
                ErrorCode::StaffRequired,
                "nobody is signed in at this till: sign in with your PIN first",
            )
            .into()),
        }
    }

    /// The actor for a write that needs `permission`, checked: the signed-in person, and
    /// when their role does not hold it, the manager whose approval is waiting (used up
    /// here, whether or not the manager's role holds it). Refused with
    /// `permission_denied`, naming who and what, otherwise.
    pub async fn allowed(&self, operation: Operation) -> CommandResult<Actor> {
        let permission = operation.permission();
        let mut actor = self.actor()?;
        if actor.may(permission) {
            return Ok(actor);
        }
        let approval = self.till_staff().approval.take();
        if let Some(hash) = approval.as_deref().and_then(|token| token_hash(token, Purpose::Approval)) {
            actor.approved_by = self.backend.local().find_session(hash, Timestamp::now()).await?;
        }
        actor.check(permission)?;
        Ok(actor)
    }

    /// The shop as the signed-in person, once they may do what `permission` allows; in
    /// remote mode the shop the till follows, as its key.
    pub async fn acting(&self, operation: Operation) -> CommandResult<Arc<dyn Petstore>> {
        if self.is_remote() {
            return Ok(self.current());
        }
        let actor = self.allowed(operation).await?;
        let acting: Arc<dyn Database> = self.backend.local().acting(actor);
        Ok(acting)
    }

    /// Signs `id` in for the shift with `pin`, ending the shift of whoever was signed in.
    pub async fn sign_in(&self, id: StaffId, pin: Option<Pin>) -> CommandResult<StaffMember> {
        let store = self.local_staff()?;
        let signed = sign_in(store, id, pin, Purpose::Shift, &Actor::operator(), Timestamp::now())
            .await
            .map_err(Error::from)?;
        let shift = Shift { staff: staff_ref(&signed.staff), token: signed.token };
        let ended = self.till_staff().shift.replace(shift);
        self.end(ended).await;
        Ok(signed.staff)
    }

    /// A manager's approval of the one action the signed-in person was refused: kept until
    /// that action is tried again (or for two minutes, the approval's life in the store).
    pub async fn approve(&self, id: StaffId, pin: Pin) -> CommandResult<StaffRef> {
        let store = self.local_staff()?;
        let key = self.actor()?;
        let signed = sign_in(store, id, Some(pin), Purpose::Approval, &key, Timestamp::now())
            .await
            .map_err(Error::from)?;
        self.till_staff().approval = Some(signed.token);
        Ok(staff_ref(&signed.staff))
    }

    /// Locks the till: the shift ends, and any approval waiting is dropped.
    pub async fn sign_out(&self) {
        let ended = {
            let mut staff = self.till_staff();
            staff.approval = None;
            staff.shift.take()
        };
        self.end(ended).await;
    }

    async fn end(&self, shift: Option<Shift>) {
        let Some(hash) = shift.as_ref().and_then(|s| token_hash(&s.token, Purpose::Shift)) else { return };
        if let Err(e) = self.backend.local().end_session(hash).await {
            tracing::warn!(error = %e.message, "the ended shift's session could not be removed; it expires by itself");
        }
    }

    /// Who is serving. A shop of one PIN-less owner is signed in as that owner here, with
    /// no prompt (at start, and again after the owner locked it).
    pub async fn serving(&self) -> CommandResult<Serving> {
        if self.is_remote() {
            return Ok(Serving { staff: None, alone: false, remote: true });
        }
        let alone = self.sole_pinless_owner().await?;
        if let Some(owner) = alone
            && self.till_staff().shift.is_none()
        {
            self.sign_in(owner, None).await?;
        }
        let staff = self.till_staff().shift.as_ref().map(|s| s.staff.clone());
        Ok(Serving { staff, alone: alone.is_some(), remote: false })
    }

    /// The one active member, when the shop has only one and they have no PIN.
    async fn sole_pinless_owner(&self) -> CommandResult<Option<StaffId>> {
        let staff = self.backend.local().list_staff().await?;
        let mut active = staff.iter().filter(|m| m.active);
        Ok(match (active.next(), active.next()) {
            (Some(only), None) if !only.has_pin => Some(only.id),
            _ => None,
        })
    }

    /// After a member was changed: the signed-in person's name and role as they are now;
    /// deactivated, their shift ends.
    pub async fn refresh_serving(&self, changed: &StaffMember) {
        let ended = {
            let mut staff = self.till_staff();
            match &mut staff.shift {
                Some(shift) if shift.staff.id == changed.id && !changed.active => staff.shift.take(),
                Some(shift) if shift.staff.id == changed.id => {
                    shift.staff = staff_ref(changed);
                    None
                }
                _ => None,
            }
        };
        self.end(ended).await;
    }
}
