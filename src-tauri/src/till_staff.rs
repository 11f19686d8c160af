//! Who is serving at this till, kept here in the app's Rust state and never only in the
//! window: every write command asks [`Shell::acting`] for the shop as the signed-in person,
//! which checks their role against the one permission table (`domain::Permission`) before
//! anything is written, and writes as them, so the record and the activity log name them.
//! A window that skipped its own checks would still be refused.
//!
//! - **Local mode**: the app's own store keeps the staff; sign-in is `petstore::staff`'s
//!   over it, and writes go through the store's `acting` handle.
//! - **Remote mode**: the server keeps the staff, and the mirror a copy with their PIN
//!   hashes (`petstore::mirror`'s `sign_in`: with the server while it answers, against the
//!   copy while it does not). Writes go through the mirror acting as the person
//!   ([`TillActor`]): with the server's sessions, or queued with proofs made from the PINs
//!   typed here. The server checks the role again. A till whose key may not read the staff
//!   (not a till's key) writes as its key, as before staff.

use std::sync::Arc;

use petstore::domain::{
    Actor, Operation, Permission, Pin, StaffId, StaffMember, StaffRef, Timestamp, alone_without_pin,
};
use petstore::engine::Staff;
use petstore::mirror::{Mirror, TillActor};
use petstore::staff::{Purpose, sign_in, staff_ref, token_hash};
use petstore::{Database, Error, ErrorCode, Petstore};
use serde::Serialize;

use crate::backend_switch::Target;
use crate::error::{CommandError, CommandResult};
use crate::shell::{Approval, Shell, Shift, TillStaff};

/// Who is serving, as the window shows it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Serving {
    /// The person signed in; null while the till is locked (or when it asks no one).
    pub staff: Option<StaffRef>,
    /// The till works as before staff, with no sign-in, no switching and no lock: the shop
    /// has one active member, an owner with no PIN, or the till follows a server whose
    /// staff its key may not read.
    pub alone: bool,
    /// The till follows a server: staff are managed there.
    pub remote: bool,
}

/// Where the staff of this till are kept.
enum Staffing {
    Local,
    /// The server's, through its mirror.
    Remote(Mirror),
    /// A server whose staff this till does not know: it writes as its key.
    KeyOnly,
}

impl Shell {
    fn till_staff(&self) -> std::sync::MutexGuard<'_, TillStaff> {
        self.staff.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn is_remote(&self) -> bool {
        matches!(self.backend.target(), Target::Remote { .. })
    }

    async fn staffing(&self) -> CommandResult<Staffing> {
        if !self.is_remote() {
            return Ok(Staffing::Local);
        }
        match self.backend.mirror() {
            Some(mirror) if mirror.staff_known().await? => Ok(Staffing::Remote(mirror)),
            _ => Ok(Staffing::KeyOnly),
        }
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

    /// The staff to sign in from: the shop's own, or the server's as the mirror has them.
    pub async fn staff_list(&self) -> CommandResult<Vec<StaffMember>> {
        self.staff_in(&self.staffing().await?).await
    }

    async fn staff_in(&self, staffing: &Staffing) -> CommandResult<Vec<StaffMember>> {
        match staffing {
            Staffing::Local => Ok(self.backend.local().list_staff().await?),
            Staffing::Remote(mirror) => Ok(mirror.list_staff().await?),
            Staffing::KeyOnly => Ok(Vec::new()),
        }
    }

    /// The person signed in here, if their shift belongs to the shop the till works on now
    /// (a switch of mode or server ends it).
    fn shift_staff(&self) -> Option<StaffRef> {
        let target = self.backend.target();
        let mut staff = self.till_staff();
        if staff.shift.as_ref().is_some_and(|shift| shift.at != target) {
            staff.shift = None;
            staff.approval = None;
        }
        staff.shift.as_ref().map(|shift| shift.staff.clone())
    }

    fn nobody_signed_in() -> CommandError {
        Error::new(ErrorCode::StaffRequired, "nobody is signed in at this till: sign in with your PIN first")
            .into()
    }

    /// Who writes now, without any approval: the signed-in person (refused with
    /// `staff_required` while the till is locked), or the till's key where it asks no one.
    /// `staffing` is where the staff are now: each command finds it once.
    async fn actor(&self, staffing: &Staffing) -> CommandResult<Actor> {
        if let Staffing::KeyOnly = staffing {
            return Ok(Actor::operator());
        }
        // A shop of one PIN-less owner asks no one: the owner, as at start (after a switch
        // of mode, the first write signs them in).
        if self.shift_staff().is_none()
            && let Some(owner) = alone_without_pin(&self.staff_in(staffing).await?)
        {
            self.sign_in_with(staffing, owner, None).await?;
        }
        let staff = self.shift_staff().ok_or_else(Self::nobody_signed_in)?;
        Ok(Actor { staff: Some(staff), approved_by: None, key: None })
    }

    /// The actor for a write that needs `permission`, checked: the signed-in person, and
    /// when their role does not hold it, the manager whose approval is waiting (used up
    /// here, whether or not the manager's role holds it). Refused with
    /// `permission_denied`, naming who and what, otherwise.
    pub async fn allowed(&self, operation: Operation) -> CommandResult<Actor> {
        let staffing = self.staffing().await?;
        self.allowed_with(&staffing, operation.permission()).await.map(|(actor, _)| actor)
    }

    /// [`Shell::allowed`] with the staff where they are now, and the approval it used, if
    /// any.
    async fn allowed_with(
        &self,
        staffing: &Staffing,
        permission: Permission,
    ) -> CommandResult<(Actor, Option<Approval>)> {
        let mut actor = self.actor(staffing).await?;
        if actor.may(permission) {
            return Ok((actor, None));
        }
        let approval = self.till_staff().approval.take();
        match (&approval, self.is_remote()) {
            // The store's session, found (and used up) there: it must still be good.
            (Some(Approval { token: Some(token), .. }), false) => {
                if let Some(hash) = token_hash(token, Purpose::Approval) {
                    actor.approved_by = self.backend.local().find_session(hash, Timestamp::now()).await?;
                }
            }
            // The server checks it again when the write reaches it.
            (Some(approval), true) => actor.approved_by = Some(approval.staff.clone()),
            _ => {}
        }
        actor.check(permission)?;
        Ok((actor, approval))
    }

    /// The shop as the signed-in person, once they may do `operation` (its permission, the
    /// one table's): the local store writing as them, or the mirror of the server as them;
    /// the till's own shop as its key where it asks no one.
    pub async fn acting(&self, operation: Operation) -> CommandResult<Arc<dyn Petstore>> {
        let permission = operation.permission();
        let staffing = self.staffing().await?;
        match &staffing {
            Staffing::Local => {
                let (actor, _) = self.allowed_with(&staffing, permission).await?;
                let acting: Arc<dyn Database> = self.backend.local().acting(actor);
                Ok(acting)
            }
            Staffing::Remote(mirror) => {
                Ok(Arc::new(self.remote_acting(&staffing, mirror, permission).await?))
            }
            Staffing::KeyOnly => Ok(self.current()),
        }
    }

    /// The mirror as the signed-in person, once they may do what `permission` allows
    /// (`staffing` is `Remote(mirror)`).
    async fn remote_acting(
        &self,
        staffing: &Staffing,
        mirror: &Mirror,
        permission: Permission,
    ) -> CommandResult<Mirror> {
        let (actor, approval) = self.allowed_with(staffing, permission).await?;
        let staff = actor.staff.ok_or_else(Self::nobody_signed_in)?;
        let (session, proof_key) = {
            let till = self.till_staff();
            let shift = till.shift.as_ref().ok_or_else(Self::nobody_signed_in)?;
            (shift.token.clone(), shift.proof_key.clone())
        };
        let approval = approval.filter(|_| actor.approved_by.is_some());
        Ok(mirror.acting(TillActor {
            staff,
            approved_by: actor.approved_by,
            session,
            approval: approval.as_ref().and_then(|a| a.token.clone()),
            proof_key,
            approval_key: approval.and_then(|a| a.proof_key),
        }))
    }

    /// The mirror as the signed-in person, for sending a queued write again (it is theirs
    /// then); `None` in local mode.
    pub async fn mirror_acting(&self, operation: Operation) -> CommandResult<Option<Mirror>> {
        let permission = operation.permission();
        let staffing = self.staffing().await?;
        match &staffing {
            Staffing::Local => Ok(None),
            Staffing::Remote(mirror) => Ok(Some(self.remote_acting(&staffing, mirror, permission).await?)),
            Staffing::KeyOnly => Ok(self.backend.mirror()),
        }
    }

    /// Signs `id` in for the shift with `pin`, ending the shift of whoever was signed in.
    pub async fn sign_in(&self, id: StaffId, pin: Option<Pin>) -> CommandResult<StaffMember> {
        self.sign_in_with(&self.staffing().await?, id, pin).await
    }

    async fn sign_in_with(
        &self,
        staffing: &Staffing,
        id: StaffId,
        pin: Option<Pin>,
    ) -> CommandResult<StaffMember> {
        let at = self.backend.target();
        let (member, token, proof_key) = match staffing {
            Staffing::Local => {
                let store = self.backend.local();
                let signed = sign_in(store, id, pin, Purpose::Shift, &Actor::operator(), Timestamp::now())
                    .await
                    .map_err(Error::from)?;
                (signed.staff, Some(signed.token), None)
            }
            Staffing::Remote(mirror) => {
                let signed = mirror.sign_in(id, pin, Purpose::Shift).await?;
                (signed.staff, signed.session, signed.proof_key)
            }
            Staffing::KeyOnly => {
                return Err(CommandError::validation(
                    "this till writes as its key: the server's staff are not known here (the key is not a till's key)",
                ));
            }
        };
        let shift = Shift { staff: staff_ref(&member), at, token, proof_key };
        let ended = self.till_staff().shift.replace(shift);
        self.end(ended).await;
        Ok(member)
    }

    /// A manager's approval of the one action the signed-in person was refused: kept until
    /// that action is tried again (or for two minutes, the approval's life on the store or
    /// the server).
    pub async fn approve(&self, id: StaffId, pin: Pin) -> CommandResult<StaffRef> {
        let staffing = self.staffing().await?;
        let approval = match &staffing {
            Staffing::Local => {
                let key = self.actor(&staffing).await?;
                let store = self.backend.local();
                let signed = sign_in(store, id, Some(pin), Purpose::Approval, &key, Timestamp::now())
                    .await
                    .map_err(Error::from)?;
                Approval { staff: staff_ref(&signed.staff), token: Some(signed.token), proof_key: None }
            }
            Staffing::Remote(mirror) => {
                self.actor(&staffing).await?;
                let signed = mirror.sign_in(id, Some(pin), Purpose::Approval).await?;
                Approval {
                    staff: staff_ref(&signed.staff),
                    token: signed.session,
                    proof_key: signed.proof_key,
                }
            }
            Staffing::KeyOnly => {
                return Err(CommandError::validation("this till writes as its key: nobody approves here"));
            }
        };
        let manager = approval.staff.clone();
        self.till_staff().approval = Some(approval);
        Ok(manager)
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

    /// Ends the session of a shift that ended, where it was kept.
    async fn end(&self, shift: Option<Shift>) {
        let Some(Shift { token: Some(token), at, .. }) = shift else { return };
        match at {
            Target::Local => {
                let Some(hash) = token_hash(&token, Purpose::Shift) else { return };
                if let Err(e) = self.backend.local().end_session(hash).await {
                    tracing::warn!(error = %e.message, "the ended shift's session could not be removed; it expires by itself");
                }
            }
            Target::Remote { .. } => {
                if let Some(mirror) = self.backend.mirror() {
                    mirror.end_session(&token).await;
                }
            }
        }
    }

    /// Who is serving. A shop of one PIN-less owner is signed in as that owner here, with
    /// no prompt (at start, and again after the owner locked it).
    pub async fn serving(&self) -> CommandResult<Serving> {
        let remote = self.is_remote();
        let staffing = self.staffing().await?;
        if let Staffing::KeyOnly = staffing {
            return Ok(Serving { staff: None, alone: true, remote });
        }
        let alone = alone_without_pin(&self.staff_in(&staffing).await?);
        if let Some(owner) = alone
            && self.shift_staff().is_none()
        {
            self.sign_in_with(&staffing, owner, None).await?;
        }
        Ok(Serving { staff: self.shift_staff(), alone: alone.is_some(), remote })
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
