//! API keys, whichever engine keeps them: the server's own key (generated, 256 random bits,
//! at first start and kept in a file readable only by its owner, unless the operator passes
//! one in `PETSTORE_API_KEY`), and the types of named keys, which each store keeps as a
//! name, a scope and only the hash of the secret.

use std::fmt;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::domain::Timestamp;

/// Keys shorter than this (in characters) may hold fewer than 128 random bits, the least a
/// key must carry for its unsalted SHA-256 hash, all the server keeps, to be safe to lose
/// (docs/ARCHITECTURE.md, "Decisions": Bearer keys). Generated keys are far longer; a short
/// key an operator chose is accepted with a warning (it is their test bench), a short key
/// file is refused.
pub const MIN_KEY_CHARS: usize = 22;

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("the API key must be at least {MIN_KEY_CHARS} characters (128 bits of randomness)")]
    TooShort,
    #[error("the API key is empty")]
    Empty,
    #[error("cannot read the key file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot create the key file {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("the key file {path} is empty or damaged; delete it to have a new key made")]
    Damaged { path: PathBuf },
}

/// The key file that goes with a database: `<database>.key`, next to it.
pub fn key_file_for(db: &Path) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(".key");
    db.with_file_name(name)
}

pub fn generate() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    format!("psk_{}", hex::encode(bytes))
}

/// SHA-256 of a key: all the server keeps of it. A key carries at least 128 random bits,
/// so an unsalted fast hash is enough; a stolen table cannot be turned back into keys.
pub fn hash(secret: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(secret.as_bytes()).into()
}

/// The start of a generated key, safe to show in listings so that people can tell keys
/// apart: `psk_` and 8 hex digits, 32 of the key's 256 bits.
pub fn prefix(secret: &str) -> String {
    secret.chars().take(PREFIX_CHARS).collect()
}

const PREFIX_CHARS: usize = "psk_".len() + 8;

pub fn validate(key: &str) -> Result<&str, KeyError> {
    let key = key.trim();
    if key.chars().count() < MIN_KEY_CHARS { Err(KeyError::TooShort) } else { Ok(key) }
}

/// A key an operator passed in (environment): it must not be empty, and a short one is
/// accepted with a warning naming the risk.
pub fn from_operator(key: &str) -> Result<&str, KeyError> {
    let trimmed = key.trim();
    if trimmed.is_empty() {
        return Err(KeyError::Empty);
    }
    if validate(trimmed).is_err() {
        tracing::warn!(
            "the API key given is shorter than {MIN_KEY_CHARS} characters: it can be guessed; \
             use a long random key anywhere but a test bench"
        );
    }
    Ok(trimmed)
}

/// Reads the key from `path`, creating the file with a new key (mode 0600) if missing.
pub fn load_or_create(path: &Path) -> Result<String, KeyError> {
    match fs::read_to_string(path) {
        Ok(text) => {
            validate(&text).map(str::to_owned).map_err(|_| KeyError::Damaged { path: path.to_path_buf() })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = generate();
            write_private(path, &key)
                .map_err(|source| KeyError::Write { path: path.to_path_buf(), source })?;
            Ok(key)
        }
        Err(source) => Err(KeyError::Read { path: path.to_path_buf(), source }),
    }
}

/// Creates `path` for the owner's eyes only; refuses to overwrite.
fn write_private(path: &Path, key: &str) -> std::io::Result<()> {
    let mut file = crate::private::create_file(path)?;
    writeln!(file, "{key}")?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_key_file_is_private_and_stable() {
        let dir = tempfile::tempdir().unwrap();
        let path = key_file_for(&dir.path().join("shop.db"));
        assert!(path.ends_with("shop.db.key"));
        let first = load_or_create(&path).unwrap();
        assert_eq!(load_or_create(&path).unwrap(), first);
        assert!(first.len() >= 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }

    #[test]
    fn the_prefix_shows_a_sliver_and_the_hash_none() {
        let key = generate();
        assert_eq!(prefix(&key).len(), 12);
        assert!(key.starts_with(&prefix(&key)) && prefix(&key).starts_with("psk_"));
        assert_ne!(hash(&key), hash(&generate()));
    }

    #[test]
    fn short_keys_are_refused() {
        assert!(validate("short").is_err());
        assert!(validate(&generate()).is_ok());
    }
}

/// What a key may do: `read` calls GET operations only, `write` calls every operation, and
/// `reports` calls only the GET operations that carry no personal data (no orders, which
/// hold customers' names, phones and notes, and no change feed, which carries orders), for
/// reporting scripts. `till` is a till's key: it reads as `read` does and signs staff in,
/// and it writes only for the staff member signed in at it (`Petstore-Staff`), within
/// their role; alone, it writes nothing, so a stolen till key is no write key.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Read,
    Write,
    Reports,
    Till,
}

/// The paths a `reports` key may GET: a path equal to one of these, or below one ending
/// in `/`. A list of what is allowed rather than of what is not, so that an operation
/// added later is closed to such keys until it is put here.
const REPORTS_PATHS: [&str; 10] = [
    "/store/reports/",
    "/store/inventory",
    "/store/inventory/",
    "/store/settings",
    "/pets",
    "/pets/",
    "/categories",
    "/categories/",
    "/exports/pets.csv",
    "/exports/inventory.csv",
];

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Reports => "reports",
            Scope::Till => "till",
        }
    }

    /// Whether the key itself may write. A `till` key may not: only the staff signed in at
    /// it write (see [`Scope::writes_for_staff`]).
    pub fn can_write(self) -> bool {
        self == Scope::Write
    }

    /// Whether a key of this scope writes only for a staff member signed in with it.
    pub fn writes_for_staff(self) -> bool {
        self == Scope::Till
    }

    /// Whether a key of this scope may GET `path`.
    pub fn can_read(self, path: &str) -> bool {
        match self {
            Scope::Read | Scope::Write | Scope::Till => true,
            Scope::Reports => {
                REPORTS_PATHS.iter().any(|p| if p.ends_with('/') { path.starts_with(p) } else { path == *p })
            }
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "read" => Ok(Scope::Read),
            "write" => Ok(Scope::Write),
            "reports" => Ok(Scope::Reports),
            "till" => Ok(Scope::Till),
            other => Err(format!("a key's scope is read, write, reports or till, not {other:?}")),
        }
    }
}

/// A named key as listings show it: never its secret, never its hash.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyInfo {
    pub name: String,
    pub scope: Scope,
    /// The secret's first characters (`psk_` and 8 hex digits), to tell keys apart.
    pub prefix: String,
    pub created_at: Timestamp,
    /// When the secret was last replaced, if ever.
    pub rotated_at: Option<Timestamp>,
    /// When the key was revoked; `None` while it works.
    pub revoked_at: Option<Timestamp>,
}

impl KeyInfo {
    pub fn is_active(&self) -> bool {
        self.revoked_at.is_none()
    }
}

/// A key's secret, which is shown once. `Debug` prints only its prefix, so it cannot end up
/// in a log by accident; serializing it (to hand it to the person who asked) is deliberate.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Secret(String);

impl From<String> for Secret {
    fn from(secret: String) -> Self {
        Self(secret)
    }
}

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({}…)", prefix(&self.0))
    }
}

/// A key just made or rotated, with the secret that will not be available again.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuedKey {
    pub key: KeyInfo,
    pub secret: Secret,
}

/// The active key a presented secret belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHolder {
    /// The key's row id: what stays the same when its secret is rotated.
    pub id: i64,
    pub name: String,
    pub scope: Scope,
}

/// Which key a request authenticated with, as what stays the same when its secret changes:
/// a named key by its id (rotation keeps it), one of the operator's keys by its place in
/// the server's key ring (a new `PETSTORE_API_KEY`, or the app's local key made anew, is
/// still the operator's key). Idempotency keys are scoped by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyIdentity {
    Operator(usize),
    Named(i64),
}

impl KeyIdentity {
    /// The identity as the text an idempotency scope is a hash of.
    pub fn label(self) -> String {
        match self {
            Self::Operator(0) => "operator".into(),
            Self::Operator(n) => format!("operator {n}"),
            Self::Named(id) => format!("key {id}"),
        }
    }
}

/// What a presented secret turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyMatch {
    Active(KeyHolder),
    /// A key that was revoked: refused, but worth telling apart from a guess.
    Revoked {
        name: String,
    },
    Unknown,
}

/// The refusal of a second key named `name`: names stay taken after revocation, so that a
/// listing never shows two keys of one name.
pub fn duplicate_name(name: &str, revoked: bool) -> crate::Error {
    let hint = if revoked { " (revoked; names are not reused)" } else { "" };
    crate::Error::conflict(
        crate::ErrorCode::DuplicateName,
        format!("an API key named {name:?} already exists{hint}"),
    )
}

/// The refusal of naming a key there is none of.
pub fn no_such_key(name: &str) -> crate::Error {
    crate::Error::new(crate::ErrorCode::NotFound, format!("there is no API key named {name:?}"))
}

/// The refusal of a change to `key`, which was revoked.
pub fn revoked(key: &KeyInfo) -> crate::Error {
    crate::Error::new(
        crate::ErrorCode::Gone,
        format!(
            "the API key {:?} was revoked at {}; create a new key instead",
            key.name,
            key.revoked_at.map(|t| t.to_string()).unwrap_or_default()
        ),
    )
}
