//! Proofs of who made a write that a till took while it could not reach its server.
//!
//! A till in remote mode signs staff in against the PIN hashes it keeps (its mirror), so a
//! sale goes on while the server is down; the write waits in the outbox and reaches the
//! server later, when no session of the server's can vouch for the person. So the till
//! sends a proof with it: an HMAC-SHA256 of the write's `Idempotency-Key` (unique to the
//! write, and bound to its request by the server's idempotency rules), the person and the
//! time, under the person's **proof key**.
//!
//! The proof key is argon2id of the PIN over the PIN hash's own salt, with associated data
//! that makes it another value than the hash: the till works it out from the PIN typed at
//! sign-in (and forgets it at sign-out), the server works it out when the PIN is set (or at
//! the member's next sign-in with it) and keeps it; the server never sends it, and the PIN
//! hash the till keeps does not give it without the PIN. Someone with a till's key and its
//! mirror can therefore prove writes as a member only by first finding the PIN from its
//! hash (ARCHITECTURE.md's threat model says what that costs).
//!
//! A manager's approval of an offline write is a second proof, under the manager's key,
//! over the same write and the approved person, so it approves only that write of theirs.

use std::fmt;

use argon2::password_hash::PasswordHash;
use argon2::{Algorithm, Argon2, AssociatedData, ParamsBuilder, Version};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::domain::{Pin, StaffId, Timestamp};
use crate::error::{Error, Result};

/// The header of the acting member's proof: `Petstore-Staff-Proof: staff=3;at=…;mac=…`.
pub const STAFF_PROOF_HEADER: &str = "petstore-staff-proof";
/// The header of the approving manager's proof, in the same form.
pub const APPROVAL_PROOF_HEADER: &str = "petstore-approval-proof";

/// Told to argon2 beside the PIN and the salt, so that the proof key is never the PIN hash.
const KEY_PURPOSE: &[u8] = b"petstore offline proof key v1";

/// A member's proof key: 32 bytes. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct ProofKey([u8; 32]);

impl ProofKey {
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for ProofKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProofKey(<redacted>)")
    }
}

/// The proof key of `pin`, whose hash is `pin_hash` (a PHC string): argon2id with the
/// hash's own parameters' cost (OWASP's) over its salt. Slow on purpose: off the async threads.
pub fn proof_key_blocking(pin: &Pin, pin_hash: &str) -> Result<ProofKey> {
    let parsed = PasswordHash::new(pin_hash).map_err(Error::internal)?;
    let salt = parsed.salt.ok_or_else(|| Error::internal("a PIN hash without a salt"))?;
    let params = ParamsBuilder::new()
        .m_cost(19 * 1024)
        .t_cost(2)
        .p_cost(1)
        .output_len(32)
        .data(AssociatedData::new(KEY_PURPOSE).map_err(Error::internal)?)
        .build()
        .map_err(Error::internal)?;
    let mut key = [0u8; 32];
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_into(pin.digits().as_bytes(), salt.as_str().as_bytes(), &mut key)
        .map_err(Error::internal)?;
    Ok(ProofKey(key))
}

/// [`proof_key_blocking`] on a blocking thread.
pub async fn proof_key(pin: Pin, pin_hash: String) -> Result<ProofKey> {
    tokio::task::spawn_blocking(move || proof_key_blocking(&pin, &pin_hash)).await.map_err(Error::internal)?
}

/// What a proof vouches for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vouch {
    /// The member made the write.
    Made,
    /// The member (a manager) approved this write of the member `of`.
    Approved { of: StaffId },
}

/// One proof, as a header carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    pub staff: StaffId,
    /// When the till made the write (its clock).
    pub at: Timestamp,
    mac: [u8; 32],
}

impl Proof {
    /// The proof that `staff`, holding `key`, vouches (`vouch`) for the write sent under
    /// `idempotency_key`, made at `at`.
    pub fn make(key: &ProofKey, staff: StaffId, at: Timestamp, idempotency_key: &str, vouch: Vouch) -> Self {
        let mac = mac(key, staff, at, idempotency_key, vouch).finalize().into_bytes().into();
        Self { staff, at, mac }
    }

    /// Whether this proof was made with `key` for the write under `idempotency_key`: the
    /// HMAC compared in constant time.
    pub fn holds(&self, key: &ProofKey, idempotency_key: &str, vouch: Vouch) -> bool {
        mac(key, self.staff, self.at, idempotency_key, vouch).verify_slice(&self.mac).is_ok()
    }

    /// `staff=3;at=2026-11-27T10:00:00Z;mac=<64 hex digits>`, as sent.
    pub fn header_value(&self) -> String {
        format!("staff={};at={};mac={}", self.staff, self.at, hex::encode(self.mac))
    }

    /// A header's value read back; `None` for anything not of that form.
    pub fn parse(value: &str) -> Option<Self> {
        let mut fields = value.split(';').map(str::trim);
        let staff = fields.next()?.strip_prefix("staff=")?.parse::<i64>().ok()?;
        let at = Timestamp::parse(fields.next()?.strip_prefix("at=")?).ok()?;
        let digits = fields.next()?.strip_prefix("mac=")?;
        let mut mac = [0u8; 32];
        hex::decode_to_slice(digits, &mut mac).ok()?;
        if fields.next().is_some() {
            return None;
        }
        Some(Self { staff: StaffId::try_from(staff).ok()?, at, mac })
    }
}

/// The HMAC over what a proof says, each part on its own line (none holds a line break:
/// ids and times are digits, and a key is printable ASCII).
fn mac(key: &ProofKey, staff: StaffId, at: Timestamp, idempotency_key: &str, vouch: Vouch) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(&key.0).expect("HMAC takes a key of any length");
    let vouch = match vouch {
        Vouch::Made => "made".to_owned(),
        Vouch::Approved { of } => format!("approved {of}"),
    };
    mac.update(format!("petstore-proof-v1\n{vouch}\n{staff}\n{at}\n{idempotency_key}").as_bytes());
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(digits: &str) -> Pin {
        Pin::try_from(digits.to_owned()).unwrap()
    }

    fn id(n: i64) -> StaffId {
        StaffId::try_from(n).unwrap()
    }

    #[tokio::test]
    async fn the_key_needs_the_pin_and_is_not_the_hash() {
        let hash = crate::staff::hash_pin(pin("4821")).await.unwrap();
        let key = proof_key(pin("4821"), hash.clone()).await.unwrap();
        assert_eq!(key, proof_key(pin("4821"), hash.clone()).await.unwrap(), "the same PIN, the same key");
        assert_ne!(key, proof_key(pin("4822"), hash.clone()).await.unwrap());
        let other_salt = crate::staff::hash_pin(pin("4821")).await.unwrap();
        assert_ne!(key, proof_key(pin("4821"), other_salt).await.unwrap(), "a new hash, a new key");
        let stored = PasswordHash::new(&hash).unwrap().hash.unwrap();
        assert_ne!(stored.as_bytes(), key.as_bytes(), "the hash a till keeps is not the key");
        assert_eq!(format!("{key:?}"), "ProofKey(<redacted>)");
    }

    #[test]
    fn a_proof_holds_only_for_its_write_person_and_key() {
        let key = ProofKey([7; 32]);
        let at = Timestamp::parse("2026-11-27T10:00:00Z").unwrap();
        let proof = Proof::make(&key, id(3), at, "k-1", Vouch::Made);
        assert!(proof.holds(&key, "k-1", Vouch::Made));
        assert!(!proof.holds(&key, "k-2", Vouch::Made), "another write");
        assert!(!proof.holds(&ProofKey([8; 32]), "k-1", Vouch::Made), "another key");
        assert!(!proof.holds(&key, "k-1", Vouch::Approved { of: id(3) }), "not an approval");
        let moved = Proof { staff: id(4), ..proof.clone() };
        assert!(!moved.holds(&key, "k-1", Vouch::Made), "another person");
        let later = Proof { at: Timestamp::parse("2026-11-27T10:00:01Z").unwrap(), ..proof.clone() };
        assert!(!later.holds(&key, "k-1", Vouch::Made), "another time");

        let approval = Proof::make(&key, id(5), at, "k-1", Vouch::Approved { of: id(3) });
        assert!(approval.holds(&key, "k-1", Vouch::Approved { of: id(3) }));
        assert!(!approval.holds(&key, "k-1", Vouch::Approved { of: id(4) }), "approves only for whom");
    }

    #[test]
    fn the_header_reads_back_and_nothing_else_does() {
        let proof = Proof::make(&ProofKey([1; 32]), id(3), Timestamp::now(), "k", Vouch::Made);
        let value = proof.header_value();
        assert!(value.starts_with("staff=3;at="), "{value}");
        assert_eq!(Proof::parse(&value), Some(proof.clone()));
        for bad in [
            "",
            "staff=3",
            "staff=0;at=2026-11-27T10:00:00Z;mac=00",
            &value.replace("mac=", "mac=zz"),
            &format!("{value};more=1"),
            &value.replace("staff=3", "staff=-3"),
            &value[..value.len() - 2],
        ] {
            assert_eq!(Proof::parse(bad), None, "{bad:?}");
        }
    }
}
