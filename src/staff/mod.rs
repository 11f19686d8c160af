//! Signing staff in, written once over any engine's [`Staff`] rows: a PIN checked against
//! its argon2id hash (in constant time, off the async threads), the lockout after wrong
//! PINs, the shop of one PIN-less owner that needs no PIN, and the session token handed
//! back, of which the engine keeps only the SHA-256. `domain::staff` decides who may do
//! what and how long a lockout lasts; this module carries a sign-in out. `proof` proves
//! who made a write a till took offline.

pub mod proof;

use std::time::Duration;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use serde::Serialize;

use crate::domain::{
    Actor, NewStaffMember, Operation, Pin, StaffId, StaffMember, StaffPatch, StaffRef, Timestamp,
    WRONG_PIN_DELAY, may_add_staff, signs_in_without_pin,
};
use crate::engine::{NewSession, NewStaffRow, PinRecord, SessionPurpose, Staff, StaffChange, StoredPin};
use crate::error::{Error, ErrorCode, Result};

/// The header of a staff member's shift session: `Petstore-Staff: pss_…`.
pub const STAFF_HEADER: &str = "petstore-staff";
/// The header of a manager's one-use approval: `Petstore-Approval: pss_…`.
pub const APPROVAL_HEADER: &str = "petstore-approval";

/// How long a shift's session lasts: a long working day; the till signs out earlier.
pub const SHIFT_LASTS: Duration = Duration::from_secs(12 * 60 * 60);
/// How long a manager's approval waits for the one action it lets through.
pub const APPROVAL_LASTS: Duration = Duration::from_secs(2 * 60);

/// The token's mark, so that one pasted in the wrong place (an API key's header) is told
/// apart from a key: `pss_` and 64 hex digits.
const TOKEN_PREFIX: &str = "pss_";

/// argon2id with OWASP's parameters for it (19 MiB, 2 passes, 1 lane): slow enough that a
/// stolen table of PIN hashes takes long to try the 10^4-10^8 PINs against, fast enough
/// (tens of milliseconds) for a till's sign-in.
fn argon2() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).expect("OWASP's argon2id parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The PIN's hash as a PHC string (algorithm, parameters and a fresh random salt in it),
/// all an engine keeps of a PIN. Slow on purpose: run it off the async threads.
pub fn hash_pin_blocking(pin: &Pin) -> Result<String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(Error::internal)?;
    let salt = SaltString::encode_b64(&salt).map_err(Error::internal)?;
    argon2()
        .hash_password(pin.digits().as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(Error::internal)
}

/// [`hash_pin_blocking`] on a blocking thread.
pub async fn hash_pin(pin: Pin) -> Result<String> {
    tokio::task::spawn_blocking(move || hash_pin_blocking(&pin)).await.map_err(Error::internal)?
}

/// Whether `pin` is the one `hash` was made of: argon2's own comparison, in constant time,
/// on a blocking thread. A hash that does not parse is an internal fault, not a wrong PIN.
pub async fn verify_pin(pin: Pin, hash: String) -> Result<bool> {
    tokio::task::spawn_blocking(move || {
        let parsed = PasswordHash::new(&hash).map_err(Error::internal)?;
        match argon2().verify_password(pin.digits().as_bytes(), &parsed) {
            Ok(()) => Ok(true),
            Err(argon2::password_hash::Error::Password) => Ok(false),
            Err(other) => Err(Error::internal(other)),
        }
    })
    .await
    .map_err(Error::internal)?
}

/// The PIN as an engine keeps it: its hash, and the proof key made from it
/// ([`proof::proof_key`]), both on one blocking thread.
pub async fn store_pin(pin: Pin) -> Result<StoredPin> {
    tokio::task::spawn_blocking(move || {
        let hash = hash_pin_blocking(&pin)?;
        let proof_key = *proof::proof_key_blocking(&pin, &hash)?.as_bytes();
        Ok(StoredPin { hash, proof_key })
    })
    .await
    .map_err(Error::internal)?
}

/// Adds a staff member, their PIN hashed, as `by`'s write: the one way the API and the app
/// add staff. Refused while an active member has no PIN ([`domain::staff::may_add_staff`]).
pub async fn add_member(db: &dyn Staff, new: NewStaffMember, by: &Actor) -> Result<StaffMember> {
    may_add_staff(&db.list_staff().await?)?;
    let NewStaffMember { name, role, pin } = new;
    let row = NewStaffRow { name, role, pin: store_pin(pin).await? };
    db.create_staff(row, by).await
}

/// After member `id` signed in with `pin` on the server: keeps their proof key if the
/// server has none yet (their PIN was set before it kept proof keys), so that what they
/// take offline at a till from now on can be proved. Never on a till's mirror.
pub async fn learn_proof_key(db: &dyn Staff, id: StaffId, pin: Pin) -> Result<()> {
    let record = db.pin_record(id).await?;
    let (None, Some(hash)) = (record.proof_key, record.pin_hash) else { return Ok(()) };
    let key = proof::proof_key(pin, hash.clone()).await?;
    db.keep_proof_key(id, hash, *key.as_bytes()).await
}

/// Changes a staff member (a new PIN hashed, which also ends a lockout), as `by`'s write:
/// the one way the API and the app change staff.
pub async fn change_member(
    db: &dyn Staff,
    id: StaffId,
    patch: StaffPatch,
    by: &Actor,
) -> Result<StaffMember> {
    let StaffPatch { name, role, pin, active } = patch;
    let pin = match pin {
        Some(pin) => Some(store_pin(pin).await?),
        None => None,
    };
    db.update_staff(id, StaffChange { name, role, pin, active }, by).await
}

/// A new session token for `purpose`: 256 random bits as `pss_` and 64 hex digits, and its
/// hash, all the engine keeps (the token carries enough randomness for an unsalted fast
/// hash, as an API key does).
pub fn new_token(purpose: Purpose) -> (String, [u8; 32]) {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    let token = format!("{TOKEN_PREFIX}{}", hex::encode(bytes));
    let hash = hashed(&token, purpose);
    (token, hash)
}

/// The hash a token presented for `purpose` is kept under, if it has a token's form; `None`
/// for anything else, which no session can match.
pub fn token_hash(token: &str, purpose: Purpose) -> Option<[u8; 32]> {
    let digits = token.strip_prefix(TOKEN_PREFIX)?;
    (digits.len() == 64 && digits.bytes().all(|b| b.is_ascii_hexdigit())).then(|| hashed(token, purpose))
}

/// SHA-256 of the purpose and the token: a token is found only under the purpose it was made
/// for, so a manager's shift sent as an approval (which would approve again and again, never
/// used up) or an approval sent as a shift matches no session.
fn hashed(token: &str, purpose: Purpose) -> [u8; 32] {
    let label = match purpose {
        Purpose::Shift => "shift",
        Purpose::Approval => "approval",
    };
    crate::api_key::hash(&format!("{label}:{token}"))
}

/// A sign-in that worked: the token, shown this once.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedIn {
    pub token: String,
    pub staff: StaffMember,
    pub purpose: Purpose,
    pub expires_at: Timestamp,
}

/// What a session is for, as the wire names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Purpose {
    /// Serving at the till.
    #[default]
    Shift,
    /// A manager's approval of one action.
    Approval,
}

impl From<Purpose> for SessionPurpose {
    fn from(purpose: Purpose) -> Self {
        match purpose {
            Purpose::Shift => SessionPurpose::Shift,
            Purpose::Approval => SessionPurpose::Approval,
        }
    }
}

impl Purpose {
    pub fn lasts(self) -> Duration {
        match self {
            Purpose::Shift => SHIFT_LASTS,
            Purpose::Approval => APPROVAL_LASTS,
        }
    }
}

/// A refused sign-in, and for a lockout how long until the member may try again (the API
/// answers it as `Retry-After`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub error: Error,
    pub retry_after: Option<Duration>,
}

impl From<Error> for Refusal {
    fn from(error: Error) -> Self {
        Self { error, retry_after: None }
    }
}

impl From<Refusal> for Error {
    fn from(refusal: Refusal) -> Self {
        refusal.error
    }
}

/// Signs staff member `id` in for `purpose` with `pin`, as `key` (the API key the request
/// came with: the activity log names it beside the member).
///
/// In order: a deactivated member is refused (`staff_inactive`); a locked one too, saying
/// until when (`staff_locked`); an approval needs a role that may override
/// (`permission_denied`); a member with no PIN (the owner an upgrade made) signs in without
/// one only while they are the shop's only active staff member, as a shop of one worked
/// before staff; any other needs their PIN. A wrong PIN is counted (the engine locks the
/// member after `domain::PIN_TRIES`) and answered after [`WRONG_PIN_DELAY`], so guessing is
/// slow even before the lockout; a right one is answered at once with a new session.
pub async fn sign_in(
    db: &dyn Staff,
    id: StaffId,
    pin: Option<Pin>,
    purpose: Purpose,
    key: &Actor,
    now: Timestamp,
) -> std::result::Result<SignedIn, Refusal> {
    let record = db.pin_record(id).await?;
    let member = &record.member;
    let name = member.name.as_str().to_owned();
    if !member.active {
        return Err(Error::new(
            ErrorCode::StaffInactive,
            format!("{name} is deactivated and may not sign in; an owner may reactivate them"),
        )
        .into());
    }
    if let Some(refusal) = locked(member, now) {
        return Err(refusal);
    }
    let as_member = Actor { staff: Some(staff_ref(member)), approved_by: None, key: key.key.clone() };
    let approving = Operation::Approve.permission();
    if purpose == Purpose::Approval && !member.role.may(approving) {
        return Err(Error::new(
            ErrorCode::PermissionDenied,
            format!(
                "{} {name} may not approve another person's action: that needs the {approving} \
                 permission ({} or above)",
                member.role,
                approving.least_role()
            ),
        )
        .into());
    }
    match (&record.pin_hash, pin) {
        (None, _) => pinless(db, &record).await?,
        (Some(_), None) => {
            // No guess was made, so none is counted; but it is a missing credential, a 401.
            return Err(
                Error::new(ErrorCode::WrongPin, format!("{name} has a PIN: type it to sign in")).into()
            );
        }
        (Some(hash), Some(pin)) => {
            if !verify_pin(pin, hash.clone()).await? {
                return Err(wrong_pin(db, id, &as_member, now).await);
            }
        }
    }
    let (token, token_hash) = new_token(purpose);
    let lasts = chrono::Duration::from_std(purpose.lasts()).expect("hours fit");
    let expires_at = Timestamp::from(now.as_datetime() + lasts);
    db.sign_in(NewSession { token_hash, staff: id, purpose: purpose.into(), expires_at }, &as_member).await?;
    Ok(SignedIn { token, staff: record.member, purpose, expires_at })
}

/// A member with no PIN signs in only while the shop has no other active staff member
/// (`domain::signs_in_without_pin`).
async fn pinless(db: &dyn Staff, record: &PinRecord) -> Result<()> {
    if signs_in_without_pin(record.member.id, &db.list_staff().await?) {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::WrongPin,
        format!(
            "{} has no PIN yet and the shop has other staff: set {}'s PIN (PATCH /staff/{}) before \
             signing in",
            record.member.name.as_str(),
            record.member.name.as_str(),
            record.member.id
        ),
    ))
}

/// Counts the wrong PIN, waits [`WRONG_PIN_DELAY`], and answers how many tries are left,
/// or the lockout this one started.
async fn wrong_pin(db: &dyn Staff, id: StaffId, by: &Actor, now: Timestamp) -> Refusal {
    let counted = db.pin_refused(id, now, by).await;
    tokio::time::sleep(WRONG_PIN_DELAY).await;
    let record = match counted {
        Ok(record) => record,
        Err(error) => return error.into(),
    };
    let name = record.member.name.as_str();
    if let Some(mut refusal) = locked(&record.member, now) {
        refusal.error.message = format!("the PIN is not {name}'s; {}", refusal.error.message);
        return refusal;
    }
    let left = crate::domain::PIN_TRIES.saturating_sub(record.failures);
    let tries = if left == 1 { "1 try left".to_owned() } else { format!("{left} tries left") };
    Error::new(ErrorCode::WrongPin, format!("the PIN is not {name}'s; {tries} before a lockout")).into()
}

/// The refusal of a member locked out at `now`, saying until when.
fn locked(member: &StaffMember, now: Timestamp) -> Option<Refusal> {
    let until = member.locked_until.filter(|until| *until > now)?;
    let wait = (until.as_datetime() - now.as_datetime()).to_std().unwrap_or_default();
    Some(Refusal {
        error: Error::new(
            ErrorCode::StaffLocked,
            format!(
                "{} typed too many wrong PINs and is locked out until {until}; an owner may set a \
                 new PIN to end it",
                member.name.as_str()
            ),
        ),
        retry_after: Some(wait),
    })
}

/// The member as a record names them.
pub fn staff_ref(member: &StaffMember) -> StaffRef {
    StaffRef { id: member.id, name: member.name.clone(), role: member.role }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::domain::{Name, PIN_LOCK, PIN_TRIES, Role};
    use crate::engine::NewStaffRow;
    use crate::store::Store;

    fn pin(digits: &str) -> Pin {
        Pin::try_from(digits.to_owned()).unwrap()
    }

    /// A fresh SQLite store (the shop's one PIN-less owner, id 1) and its folder.
    fn shop() -> (Arc<Store>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        (Arc::new(Store::open(dir.path().join("staff.db")).unwrap()), dir)
    }

    async fn member(db: &Store, name: &str, role: Role, digits: &str) -> StaffId {
        let row = NewStaffRow {
            name: Name::parse(name).unwrap(),
            role,
            pin: store_pin(pin(digits)).await.unwrap(),
        };
        db.create_staff(row, &Actor::operator()).await.unwrap().id
    }

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[tokio::test]
    async fn the_hash_is_not_the_pin_and_two_hashes_of_one_pin_differ() {
        let (one, two) = (hash_pin(pin("4821")).await.unwrap(), hash_pin(pin("4821")).await.unwrap());
        assert!(one.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{one}");
        assert!(!one.contains("4821"));
        assert_ne!(one, two, "each hash has its own salt");
        assert!(verify_pin(pin("4821"), one.clone()).await.unwrap());
        assert!(verify_pin(pin("4821"), two).await.unwrap());
        assert!(!verify_pin(pin("4822"), one).await.unwrap());
        assert!(
            verify_pin(pin("4821"), "not a hash".into()).await.is_err(),
            "a damaged hash is no wrong PIN"
        );
    }

    #[test]
    fn a_token_is_256_random_bits_and_only_its_hash_is_kept() {
        let (token, hash) = new_token(Purpose::Shift);
        assert!(token.starts_with("pss_") && token.len() == 4 + 64, "{token}");
        assert_eq!(token_hash(&token, Purpose::Shift), Some(hash));
        assert_ne!(token_hash(&token, Purpose::Approval), Some(hash), "found only for its purpose");
        assert_ne!(new_token(Purpose::Shift).0, token);
        for forged in [
            "",
            "pss_",
            "psk_".to_owned().as_str(),
            &token[..67],
            &format!("{token}0"),
            &token.replace("pss_", "PSS_"),
        ] {
            assert_eq!(token_hash(forged, Purpose::Shift), None, "{forged:?}");
        }
    }

    /// The tries, then the lockout: the last wrong PIN locks the member for `PIN_LOCK` and
    /// says how long; the right PIN is refused until then, and works after.
    #[tokio::test(start_paused = true)]
    async fn wrong_pins_lock_the_member_out_after_the_tries() {
        let (db, _dir) = shop();
        let ana = member(&db, "Ana", Role::Cashier, "1111").await;
        // The store shows a lockout while it lasts by the system's clock: so does this test.
        let now = Timestamp::now();
        let key = Actor::key("till 1");
        for tried in 1..PIN_TRIES {
            let refusal = sign_in(&*db, ana, Some(pin("9999")), Purpose::Shift, &key, now).await.unwrap_err();
            assert_eq!(refusal.error.code, ErrorCode::WrongPin);
            assert!(
                refusal.error.message.contains(&format!("{} tr", PIN_TRIES - tried)),
                "{}",
                refusal.error.message
            );
            assert_eq!(refusal.retry_after, None);
        }
        let locking = sign_in(&*db, ana, Some(pin("9999")), Purpose::Shift, &key, now).await.unwrap_err();
        assert_eq!(locking.error.code, ErrorCode::StaffLocked);
        assert_eq!(locking.retry_after, Some(PIN_LOCK));
        let right = sign_in(&*db, ana, Some(pin("1111")), Purpose::Shift, &key, now).await.unwrap_err();
        assert_eq!(right.error.code, ErrorCode::StaffLocked, "the right PIN waits too");
        let until = Timestamp::from(now.as_datetime() + chrono::Duration::minutes(5));
        assert!(right.error.message.contains(&until.to_string()), "{}", right.error.message);

        // An owner's new PIN ends the lockout.
        let change = crate::engine::StaffChange {
            pin: Some(store_pin(pin("4444")).await.unwrap()),
            ..Default::default()
        };
        db.update_staff(ana, change, &Actor::operator()).await.unwrap();
        let signed = sign_in(&*db, ana, Some(pin("4444")), Purpose::Shift, &key, now).await.unwrap();
        assert_eq!(signed.staff.id, ana);
        let shift_ends = Timestamp::from(now.as_datetime() + chrono::Duration::hours(12));
        assert_eq!(signed.expires_at, shift_ends, "a shift lasts 12 hours");
        assert_eq!(
            db.find_session(token_hash(&signed.token, Purpose::Shift).unwrap(), now)
                .await
                .unwrap()
                .unwrap()
                .id,
            ana
        );
    }

    /// A wrong PIN is answered after `WRONG_PIN_DELAY`, a right one at once: on tokio's
    /// paused clock, which moves only by the timers the code sets.
    #[tokio::test(start_paused = true)]
    async fn a_wrong_pin_is_answered_after_the_delay_and_a_right_one_at_once() {
        let (db, _dir) = shop();
        let ana = member(&db, "Ana", Role::Cashier, "1111").await;
        let now = at("2026-11-27T10:00:00Z");
        let started = tokio::time::Instant::now();
        sign_in(&*db, ana, Some(pin("1111")), Purpose::Shift, &Actor::operator(), now).await.unwrap();
        assert!(
            started.elapsed() < WRONG_PIN_DELAY,
            "a right PIN waits for nothing: {:?}",
            started.elapsed()
        );

        let started = tokio::time::Instant::now();
        sign_in(&*db, ana, Some(pin("1112")), Purpose::Shift, &Actor::operator(), now).await.unwrap_err();
        assert!(started.elapsed() >= WRONG_PIN_DELAY, "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn the_pinless_owner_signs_in_without_a_pin_only_while_the_only_member() {
        let (db, _dir) = shop();
        let owner = StaffId::try_from(1).unwrap();
        let now = at("2026-11-27T10:00:00Z");
        let alone = sign_in(&*db, owner, None, Purpose::Shift, &Actor::operator(), now).await.unwrap();
        assert!(!alone.staff.has_pin);
        let ana = member(&db, "Ana", Role::Cashier, "1111").await;
        let refusal = sign_in(&*db, owner, None, Purpose::Shift, &Actor::operator(), now).await.unwrap_err();
        assert_eq!(refusal.error.code, ErrorCode::WrongPin);
        let missing = sign_in(&*db, ana, None, Purpose::Shift, &Actor::operator(), now).await.unwrap_err();
        assert_eq!(missing.error.code, ErrorCode::WrongPin, "a member with a PIN needs it");
        assert_eq!(db.pin_record(ana).await.unwrap().failures, 0, "and no PIN is no guess");
        // Ana deactivated, the owner is the only active member again.
        let change = crate::engine::StaffChange { active: Some(false), ..Default::default() };
        db.update_staff(ana, change, &Actor::operator()).await.unwrap();
        sign_in(&*db, owner, None, Purpose::Shift, &Actor::operator(), now).await.unwrap();
        let inactive = sign_in(&*db, ana, Some(pin("1111")), Purpose::Shift, &Actor::operator(), now).await;
        assert_eq!(inactive.unwrap_err().error.code, ErrorCode::StaffInactive);
    }

    /// A member whose PIN was set before the server kept proof keys gets theirs at their
    /// next sign-in with it, and only while that PIN is still theirs.
    #[tokio::test]
    async fn a_proof_key_missing_since_an_upgrade_is_learnt_from_the_next_sign_in() {
        let (db, _dir) = shop();
        let ana = member(&db, "Ana", Role::Cashier, "1111").await;
        let made = db.pin_record(ana).await.unwrap();
        let hash = made.pin_hash.clone().unwrap();
        let expected = proof::proof_key(pin("1111"), hash.clone()).await.unwrap();
        assert_eq!(made.proof_key, Some(*expected.as_bytes()), "a PIN set now brings its key");

        db.with_writer(|c| Ok(c.execute("UPDATE staff SET proof_key = NULL", [])?)).await.unwrap();
        learn_proof_key(&*db, ana, pin("1111")).await.unwrap();
        assert_eq!(db.pin_record(ana).await.unwrap().proof_key, Some(*expected.as_bytes()));

        // Kept only for the PIN it was made from.
        db.with_writer(|c| Ok(c.execute("UPDATE staff SET proof_key = NULL", [])?)).await.unwrap();
        db.keep_proof_key(ana, "$argon2id$another".into(), [9; 32]).await.unwrap();
        assert_eq!(db.pin_record(ana).await.unwrap().proof_key, None);
    }

    #[tokio::test]
    async fn an_approval_needs_a_role_that_may_override_and_lasts_two_minutes() {
        let (db, _dir) = shop();
        let ana = member(&db, "Ana", Role::Cashier, "1111").await;
        let marta = member(&db, "Marta", Role::Manager, "2222").await;
        let now = at("2026-11-27T10:00:00Z");
        let by_cashier =
            sign_in(&*db, ana, Some(pin("1111")), Purpose::Approval, &Actor::operator(), now).await;
        assert_eq!(by_cashier.unwrap_err().error.code, ErrorCode::PermissionDenied);
        let approval = sign_in(&*db, marta, Some(pin("2222")), Purpose::Approval, &Actor::operator(), now)
            .await
            .unwrap();
        assert_eq!((approval.purpose, approval.expires_at), (Purpose::Approval, at("2026-11-27T10:02:00Z")));
        let hash = token_hash(&approval.token, Purpose::Approval).unwrap();
        assert_eq!(db.find_session(hash, now).await.unwrap().map(|s| s.id), Some(marta));
        assert_eq!(db.find_session(hash, now).await.unwrap(), None, "used up by the first request");
    }
}
