//! Staff at the local API of a till in remote mode ([`Mirror::served`]): a program at the
//! till (a scanner's script, the outbox soak) signs a member in with `POST /staff/sessions`
//! as the window does, and writes as them with `Petstore-Staff`.
//!
//! The sign-in is checked against the server's staff as the till keeps them (their PIN
//! hashes), whether the server answers or not, with wrong PINs counted and locked out here:
//! the same check as the window's while the server is down. The session is the till's own.
//! Once the PIN has held here, a shift also signs in with the server while it answers, and
//! the member's writes go with that session, as the window's do (a catalogue edit needs
//! it); a counter write without it (the server down at the sign-in, or now) carries the
//! member's proofs instead (`crate::staff::proof`, made with the PIN typed at the sign-in
//! over the write's `Idempotency-Key`), sent now or queued in the outbox, which the server
//! checks as it checks every write a till took offline. The proof key made from the PIN
//! and the server's session are kept in memory only, one per member, never on the till's
//! disk: the threat model (ARCHITECTURE.md) allows the till its PIN hashes and nothing
//! else secret.
//!
//! Staff are managed, and the activity log read, on the server.

use async_trait::async_trait;

use super::Mirror;
use super::staff::TillActor;
use crate::domain::*;
use crate::engine::{NewSession, NewStaffRow, PinRecord, SessionPurpose, Staff, StaffChange};
use crate::error::{Error, ErrorCode, Result};
use crate::staff::Purpose;
use crate::staff::proof::ProofKey;

/// What a member's last sign-in at the local API left here.
pub(super) struct LocalSignIn {
    proof_key: ProofKey,
    /// The server's session of their shift, when the server answered the sign-in.
    server_session: Option<String>,
}

/// The served mirror's [`Staff`]: the till's copy of the server's.
pub(super) struct TillStaff(pub(super) Mirror);

impl TillStaff {
    /// The copy's staff, once it holds the server's: before that it has only the owner a
    /// new database starts with, who is nobody on the server.
    async fn known(&self) -> Result<&crate::Store> {
        if !self.0.staff_known().await? {
            return Err(Error::new(
                ErrorCode::Unreachable,
                format!(
                    "this till has not read the staff of {} yet (it reads them when it reaches the \
                     server): sign in once it has",
                    self.0.client().base_url()
                ),
            ));
        }
        Ok(self.0.store())
    }
}

fn on_the_server(what: &str) -> Error {
    Error::new(
        ErrorCode::Forbidden,
        format!(
            "a till in remote mode does not {what}: the server it follows does (its API or its Settings)"
        ),
    )
}

#[async_trait]
impl Staff for TillStaff {
    async fn list_staff(&self) -> Result<Vec<StaffMember>> {
        self.known().await?.list_staff().await
    }
    async fn get_staff(&self, id: StaffId) -> Result<StaffMember> {
        self.known().await?.get_staff(id).await
    }
    async fn create_staff(&self, _: NewStaffRow, _: &Actor) -> Result<StaffMember> {
        Err(on_the_server("add staff"))
    }
    async fn update_staff(&self, _: StaffId, _: StaffChange, _: &Actor) -> Result<StaffMember> {
        Err(on_the_server("change staff"))
    }
    async fn pin_record(&self, id: StaffId) -> Result<PinRecord> {
        self.known().await?.pin_record(id).await
    }
    async fn pin_refused(&self, id: StaffId, now: Timestamp, by: &Actor) -> Result<PinRecord> {
        self.0.store().pin_refused(id, now, by).await
    }
    async fn sign_in(&self, session: NewSession, by: &Actor) -> Result<()> {
        self.0.store().sign_in(session, by).await
    }
    /// A session kept in the copy, while the proof key its sign-in made is still here: the
    /// key lives in memory, so after the till restarts its member signs in again rather
    /// than write as the till's key (a member without a PIN has none to make).
    async fn find_session(&self, token_hash: [u8; 32], now: Timestamp) -> Result<Option<StaffRef>> {
        let Some(member) = self.0.store().find_session(token_hash, now).await? else { return Ok(None) };
        let proved = self.0.inner.local_sign_ins.lock().expect("not poisoned").contains_key(&member.id);
        if proved || self.0.store().pin_record(member.id).await?.pin_hash.is_none() {
            return Ok(Some(member));
        }
        Ok(None)
    }
    async fn end_session(&self, token_hash: [u8; 32]) -> Result<()> {
        self.0.store().end_session(token_hash).await
    }
    async fn list_activity(&self, _: ActivityFilter, _: Page) -> Result<Paged<ActivityEntry>> {
        Err(on_the_server("keep the activity log"))
    }
    /// Called by every sign-in with a PIN here (the copy keeps no proof key): kept in
    /// memory, for the member's writes through this API. An approval leaves the server's
    /// session of the member's shift as it was.
    async fn keep_proof_key(&self, id: StaffId, _: String, proof_key: [u8; 32]) -> Result<()> {
        let proof_key = ProofKey::from_bytes(proof_key);
        let mut sign_ins = self.0.inner.local_sign_ins.lock().expect("not poisoned");
        match sign_ins.get_mut(&id) {
            Some(kept) => kept.proof_key = proof_key,
            None => drop(sign_ins.insert(id, LocalSignIn { proof_key, server_session: None })),
        }
        Ok(())
    }
    /// A shift's PIN, once it held against the copy, signs the member in with the server
    /// too, if it answers now: their writes then go with its session, as the window's do. A
    /// refusal there (a PIN changed on the server and not yet read here, say) leaves the
    /// proofs to speak for their sales.
    async fn sign_in_upstream(&self, id: StaffId, pin: Pin, purpose: SessionPurpose) -> Result<()> {
        if purpose != SessionPurpose::Shift {
            return Ok(());
        }
        let shared = &self.0.inner.shared;
        let server_session = if shared.queue_first() {
            None
        } else {
            match shared.client.start_session(id, Some(&pin), Purpose::Shift).await {
                Ok(signed) => Some(signed.token),
                Err(e) => {
                    tracing::debug!(error = %e.message, "the server did not sign the member in; their sales go with proofs");
                    None
                }
            }
        };
        if let Some(kept) = self.0.inner.local_sign_ins.lock().expect("not poisoned").get_mut(&id) {
            kept.server_session = server_session;
        }
        Ok(())
    }
    async fn staff_credentials(&self) -> Result<Vec<StaffCredential>> {
        Err(on_the_server("hand out the staff's PIN hashes"))
    }
}

impl Mirror {
    /// Who a write through the local API is for, as [`TillActor`]: `actor`'s member, with
    /// the server's session and the proof key their sign-in here made, and the approving
    /// manager's proof key. `None`: the key's own write (no one signed in).
    pub(super) fn local_api_actor(&self, actor: &Actor) -> Option<TillActor> {
        let staff = actor.staff.clone()?;
        let sign_ins = self.inner.local_sign_ins.lock().expect("not poisoned");
        let key_of = |member: &StaffRef| sign_ins.get(&member.id).map(|s| s.proof_key.clone());
        Some(TillActor {
            proof_key: key_of(&staff),
            approval_key: actor.approved_by.as_ref().and_then(key_of),
            approved_by: actor.approved_by.clone(),
            session: sign_ins.get(&staff.id).and_then(|s| s.server_session.clone()),
            staff,
            approval: None,
        })
    }
}
