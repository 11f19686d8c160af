//! Staff at a till that follows a server: signing in with the server while it answers, and
//! against the PIN hashes the mirror keeps while it does not; and who the till's writes are
//! for ([`TillActor`]): the server's sessions when it signed the person in, and otherwise
//! proofs made with the PINs typed here (`crate::staff::proof`) over each write's key, kept
//! with the write in the outbox and checked by the server when the write reaches it.
//!
//! The server's staff (and a member deactivated there) reach the mirror when the sync task
//! reads them: at each connection and every [`STAFF_READ_EVERY`] while connected, and at
//! each sign-in with the server.

use std::sync::Arc;
use std::time::Duration;

use super::local::Proofs;
use super::{Mirror, Shared, is_offline};
use crate::domain::{Actor, Pin, StaffId, StaffMember, StaffRef, Timestamp};
use crate::engine::Staff;
use crate::error::{Error, ErrorCode, Result};
use crate::staff::proof::{APPROVAL_PROOF_HEADER, Proof, ProofKey, STAFF_PROOF_HEADER, Vouch, proof_key};
use crate::staff::{APPROVAL_HEADER, Purpose, STAFF_HEADER, sign_in, token_hash};

/// How often a connected till reads the server's staff again: a member deactivated or given
/// a new PIN there is known here within this (at once by a sign-in with the server).
pub const STAFF_READ_EVERY: Duration = Duration::from_secs(5 * 60);

/// Who a till's writes are for: the person signed in, and the manager approving the one
/// write, with what vouches for each on the server.
#[derive(Debug, Clone)]
pub struct TillActor {
    pub staff: StaffRef,
    pub approved_by: Option<StaffRef>,
    /// The server's session of the shift (`Petstore-Staff`), when the sign-in reached it.
    pub session: Option<String>,
    /// The server's approval session (`Petstore-Approval`), used up by the one write.
    pub approval: Option<String>,
    /// The person's proof key, made from the PIN typed at this till: for a write queued.
    pub proof_key: Option<ProofKey>,
    /// The approving manager's.
    pub approval_key: Option<ProofKey>,
}

impl TillActor {
    /// The sessions, as headers for a request sent now.
    pub(super) fn session_headers(&self) -> Vec<(&'static str, &str)> {
        headers((STAFF_HEADER, &self.session), (APPROVAL_HEADER, &self.approval))
    }

    /// The proofs of the write under `key`, made at `at`: none without the person's key
    /// (signed in without a PIN).
    pub(super) fn proofs(&self, key: &str, at: Timestamp) -> Proofs {
        let Some(made_key) = &self.proof_key else { return Proofs::default() };
        let made = Proof::make(made_key, self.staff.id, at, key, Vouch::Made);
        let approval = match (&self.approved_by, &self.approval_key) {
            (Some(manager), Some(manager_key)) => {
                let vouch = Vouch::Approved { of: self.staff.id };
                Some(Proof::make(manager_key, manager.id, at, key, vouch).header_value())
            }
            _ => None,
        };
        Proofs { staff: Some(made.header_value()), approval }
    }
}

impl Proofs {
    /// As the headers of the write they prove.
    pub(super) fn headers(&self) -> Vec<(&'static str, &str)> {
        headers((STAFF_PROOF_HEADER, &self.staff), (APPROVAL_PROOF_HEADER, &self.approval))
    }
}

/// The headers of who a request is for: the person's, and the approval's only with it (an
/// approval alone vouches for no one).
fn headers<'a>(
    (person, made): (&'static str, &'a Option<String>),
    (approving, approval): (&'static str, &'a Option<String>),
) -> Vec<(&'static str, &'a str)> {
    let Some(made) = made else { return Vec::new() };
    let mut headers = vec![(person, made.as_str())];
    headers.extend(approval.as_deref().map(|approval| (approving, approval)));
    headers
}

/// A sign-in at a till: the member, the server's session if the server was asked, and the
/// member's proof key if they typed a PIN.
#[derive(Debug, Clone)]
pub struct TillSignIn {
    pub staff: StaffMember,
    pub session: Option<String>,
    pub proof_key: Option<ProofKey>,
}

impl Mirror {
    /// The mirror whose writes are `who`'s: sent with their sessions, or queued with their
    /// proofs.
    pub fn acting(&self, who: TillActor) -> Mirror {
        Mirror { inner: self.inner.clone(), who: Some(Arc::new(who)) }
    }

    /// Whether the server's staff are known here: until they are (and for a key that may
    /// not read them), the till writes as its key, with no one signed in.
    pub async fn staff_known(&self) -> Result<bool> {
        self.inner.shared.local.staff_known().await
    }

    /// The server's staff as the mirror has them.
    pub async fn list_staff(&self) -> Result<Vec<StaffMember>> {
        self.store().list_staff().await
    }

    /// Signs member `id` in for `purpose`: with the server, which checks the PIN and counts
    /// a wrong one, while it answers; against the PIN hash the mirror keeps while it does not
    /// (wrong PINs counted and locked out here, as on the server). Either way the member's
    /// proof key is made from the PIN, for what they write while the server cannot be reached.
    pub async fn sign_in(&self, id: StaffId, pin: Option<Pin>, purpose: Purpose) -> Result<TillSignIn> {
        let shared = &self.inner.shared;
        match shared.client.start_session(id, pin.as_ref(), purpose).await {
            Ok(signed) => {
                // The PIN just checked is the server's: its hash here must be too.
                read_staff(shared).await;
                let proof_key = self.proof_key(id, pin).await?;
                Ok(TillSignIn { staff: signed.staff, session: Some(signed.token), proof_key })
            }
            Err(e) if is_offline(&e) => {
                let signed =
                    sign_in(self.store(), id, pin.clone(), purpose, &Actor::operator(), Timestamp::now())
                        .await
                        .map_err(Error::from)?;
                // Only the server's sessions vouch for anyone there: the mirror's is not kept.
                if let Some(hash) = token_hash(&signed.token, purpose) {
                    self.store().end_session(hash).await?;
                }
                let proof_key = self.proof_key(id, pin).await?;
                Ok(TillSignIn { staff: signed.staff, session: None, proof_key })
            }
            Err(e) => {
                if e.code == ErrorCode::StaffInactive {
                    read_staff(shared).await;
                }
                Err(e)
            }
        }
    }

    /// Ends a session of the server's (signing out), if the server answers; it expires by
    /// itself otherwise.
    pub async fn end_session(&self, session: &str) {
        let ended = match self.client().acting(&[(STAFF_HEADER, session)]) {
            Ok(client) => client.end_session().await,
            Err(e) => Err(e),
        };
        if let Err(e) = ended {
            tracing::debug!(error = %e.message, "a staff session of the server's could not be ended; it expires by itself");
        }
    }

    async fn proof_key(&self, id: StaffId, pin: Option<Pin>) -> Result<Option<ProofKey>> {
        let Some(pin) = pin else { return Ok(None) };
        let Some(hash) = self.store().pin_record(id).await?.pin_hash else { return Ok(None) };
        proof_key(pin, hash).await.map(Some)
    }
}

/// Reads the server's staff into the mirror. A key that may not read them (not a till's),
/// or a server that does not have them, leaves the till writing as its key; nothing here
/// stops the sync.
pub(super) async fn read_staff(shared: &Shared) {
    match shared.client.staff_credentials().await {
        Ok(staff) => {
            if let Err(e) = shared.local.put_staff(staff).await {
                tracing::warn!(error = %e.message, "the server's staff could not be put into the mirror");
            }
        }
        Err(e) => tracing::debug!(error = %e.message, "the server's staff could not be read"),
    }
}
