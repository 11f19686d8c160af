//! Where the remote server's API key is kept: the OS keyring (Secret Service on Linux,
//! Keychain on macOS, Credential Manager on Windows) when one works, else a file in the data
//! directory readable only by the user, which the UI warns about. The key is never written
//! to `settings.json`, never sent to the webview and never logged: errors name the store,
//! not the key, and nothing here derives `Debug` over a key.
//!
//! The keyring is chosen at startup by a probe (store, read back, delete a probe entry). A
//! keyring that answers but refuses later (locked, access denied) is not trusted with the
//! key any more: the key goes to the file, with the reason shown, rather than being lost.
//! Every keyring call runs on its own thread with a time limit, because a Secret Service
//! may show an unlock prompt that nobody answers, and the shop must still open.
//!
//! The key is kept together with the origin (scheme, host, port) it was saved for, in the
//! same entry or file, so that the two are written at once and a crash cannot pair a key
//! with another server's address. The app sends the saved key only to that origin.

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use serde::Serialize;

/// The keyring service all the app's entries are under.
pub const SERVICE: &str = "org.petstore.desktop";
/// The keyring account of the remote key of the default data directory.
pub const ACCOUNT: &str = "remote-api-key";
/// The fallback file, in the data directory.
pub const FILE_NAME: &str = "remote-api.key";

/// Long enough for a person to answer an unlock prompt, short enough that a keyring
/// that hangs does not keep the shop closed for good.
const KEYRING_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the remote key is kept, as the UI shows it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RemoteKeyStorage {
    /// The OS keyring.
    Keyring,
    /// A file in the data directory that only the user may read.
    File,
}

/// The saved remote key and where it may be sent.
#[derive(Clone, PartialEq, Eq)]
pub struct SavedKey {
    pub key: String,
    pub origin: KeyOrigin,
}

/// Where a saved key may be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyOrigin {
    /// Only to this origin, as `petstore::client::origin_of` writes it
    /// (`https://shop-server.lan:8787`).
    Only(String),
    /// Nowhere: a key an older version kept with no server address beside it. It is sent
    /// nowhere until it is typed again with an address.
    Nowhere,
    /// Not recorded: what versions before origins were recorded kept (the bare key). The
    /// app ties such a key to an origin as soon as it reads it (see `remote_key.rs`).
    Unrecorded,
}

/// Written by hand so the key can never show up in a log line or a panic message.
impl std::fmt::Debug for SavedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedKey").field("key", &"<redacted>").field("origin", &self.origin).finish()
    }
}

/// How a key and its origin are kept: `origin=<origin>` (empty for [`KeyOrigin::Nowhere`])
/// and `key=<key>` on two lines. A key can never hold a line break (it goes in an HTTP
/// header), so text with none is a bare key from an older version; and an older version
/// that reads this text cannot send it, for the same reason, so a downgrade never sends it
/// anywhere either.
const ORIGIN_LINE: &str = "origin=";
const KEY_LINE: &str = "key=";

impl SavedKey {
    fn encode(&self) -> String {
        match &self.origin {
            KeyOrigin::Only(origin) => format!("{ORIGIN_LINE}{origin}\n{KEY_LINE}{}", self.key),
            KeyOrigin::Nowhere => format!("{ORIGIN_LINE}\n{KEY_LINE}{}", self.key),
            KeyOrigin::Unrecorded => self.key.clone(),
        }
    }

    fn decode(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        let Some((origin_line, key_line)) = text.split_once('\n') else {
            return Some(Self { key: text.to_owned(), origin: KeyOrigin::Unrecorded });
        };
        let origin = origin_line.trim().strip_prefix(ORIGIN_LINE)?.trim();
        let key = key_line.strip_prefix(KEY_LINE)?.trim();
        if key.is_empty() {
            return None;
        }
        let origin = if origin.is_empty() { KeyOrigin::Nowhere } else { KeyOrigin::Only(origin.to_owned()) };
        Some(Self { key: key.to_owned(), origin })
    }
}

/// Reads what a keyring entry or the file holds; `what` names it for the error.
fn decode(text: Option<String>, what: &str) -> Result<Option<SavedKey>, SecretError> {
    match text {
        None => Ok(None),
        Some(text) if text.trim().is_empty() => Ok(None),
        Some(text) => SavedKey::decode(&text)
            .map(Some)
            .ok_or_else(|| SecretError(format!("the remote key in {what} is damaged; type it again"))),
    }
}

/// A store failure, phrased for the user; it never contains the key.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SecretError(String);

/// The keyring entry that holds one data directory's remote key.
struct Keyring {
    account: String,
}

impl Keyring {
    fn get(&self) -> Result<Option<String>, KeyringFailure> {
        let account = self.account.clone();
        bounded(move || read(&account))?
    }

    fn set(&self, key: &str) -> Result<(), KeyringFailure> {
        let (account, key) = (self.account.clone(), key.to_owned());
        bounded(move || write(&account, &key))?
    }

    fn delete(&self) -> Result<(), KeyringFailure> {
        let account = self.account.clone();
        bounded(move || remove(&account))?
    }

    /// Stores, reads back and deletes a probe entry, all within one time limit: a keyring
    /// that cannot do all three is not one to keep the key in.
    fn probe(&self) -> Result<(), KeyringFailure> {
        let account = format!("{} (probe {})", self.account, std::process::id());
        bounded(move || {
            let value = format!("probe-{}", std::process::id());
            write(&account, &value)?;
            let read_back = read(&account);
            let removed = remove(&account);
            match read_back? {
                Some(v) if v == value => removed,
                _ => Err(KeyringFailure::Refused("it did not give back what was stored".into())),
            }
        })?
    }
}

fn read(account: &str) -> Result<Option<String>, KeyringFailure> {
    match keyring::Entry::new(SERVICE, account).and_then(|entry| entry.get_password()) {
        Ok(key) => Ok(Some(key)),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn write(account: &str, key: &str) -> Result<(), KeyringFailure> {
    Ok(keyring::Entry::new(SERVICE, account).and_then(|entry| entry.set_password(key))?)
}

fn remove(account: &str) -> Result<(), KeyringFailure> {
    match keyring::Entry::new(SERVICE, account).and_then(|entry| entry.delete_credential()) {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Why the keyring is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
enum KeyringFailure {
    /// There is none (no Secret Service on the session bus, no session bus).
    Absent(String),
    /// There is one, but it refused (locked, access denied, no default collection) or did
    /// not answer in time.
    Refused(String),
}

impl KeyringFailure {
    fn reason(&self) -> &str {
        let (Self::Absent(why) | Self::Refused(why)) = self;
        why
    }
}

/// D-Bus errors that mean nobody is there to ask: no session bus, or no Secret Service on
/// it. Anything else (a locked collection, a dismissed prompt) is a keyring that refused.
const NOBODY_THERE: [&str; 5] = [
    "org.freedesktop.DBus.Error.ServiceUnknown",
    "org.freedesktop.DBus.Error.NameHasNoOwner",
    "org.freedesktop.DBus.Error.NoServer",
    "org.freedesktop.DBus.Error.NotSupported",
    "org.freedesktop.DBus.Error.FileNotFound",
];

impl From<keyring::Error> for KeyringFailure {
    fn from(e: keyring::Error) -> Self {
        // Display only: it never prints a secret (the Debug of `BadEncoding` would).
        let absent = match &e {
            // The keyring crate boxes the D-Bus error, whose standard name is only in its
            // Debug form (a D-Bus error never holds a secret); used here, never shown.
            keyring::Error::PlatformFailure(inner) => {
                let detail = format!("{inner:?}");
                NOBODY_THERE.iter().any(|name| detail.contains(name))
            }
            _ => false,
        };
        if absent { Self::Absent(e.to_string()) } else { Self::Refused(e.to_string()) }
    }
}

/// Runs one keyring call on its own thread and gives up waiting after [`KEYRING_TIMEOUT`].
fn bounded<T: Send + 'static>(call: impl FnOnce() -> T + Send + 'static) -> Result<T, KeyringFailure> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("keyring".into())
        .spawn(move || {
            let _ = tx.send(call());
        })
        .map_err(|e| KeyringFailure::Refused(format!("cannot start a thread for it: {e}")))?;
    rx.recv_timeout(KEYRING_TIMEOUT).map_err(|_| {
        KeyringFailure::Refused(format!("it did not answer within {} s", KEYRING_TIMEOUT.as_secs()))
    })
}

/// The fallback file. Mode 0600 on Unix; on Windows the app-data directory is already the
/// user's own (its ACL inherits from the profile), so the default permissions are private.
struct KeyFile {
    path: PathBuf,
}

impl KeyFile {
    fn get(&self) -> Result<Option<String>, SecretError> {
        match fs::read_to_string(&self.path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(SecretError(format!("cannot read {}: {e}", self.path.display()))),
        }
    }

    /// Replaces the file atomically (a new private file renamed over the old one), so a
    /// crash leaves the old key or the new one, never half of one.
    fn set(&self, key: &str) -> Result<(), SecretError> {
        let fail = |e: std::io::Error| SecretError(format!("cannot write {}: {e}", self.path.display()));
        let tmp = self.path.with_extension("key.tmp");
        // A leftover from a crash may have other permissions: `mode` applies on creation only.
        match fs::remove_file(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(fail(e)),
        }
        let mut file = petstore::private::create_file(&tmp).map_err(fail)?;
        file.write_all(key.as_bytes()).and_then(|()| file.sync_all()).map_err(fail)?;
        fs::rename(&tmp, &self.path).map_err(fail)
    }

    fn delete(&self) -> Result<(), SecretError> {
        match fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(SecretError(format!("cannot delete {}: {e}", self.path.display()))),
        }
    }
}

/// Where keys go now.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Choice {
    Keyring,
    File(KeyringFailure),
}

/// The remote key's store for one data directory.
pub struct SecretStore {
    keyring: Keyring,
    file: KeyFile,
    choice: Mutex<Choice>,
}

impl SecretStore {
    /// Probes the keyring and picks where the key of `dir` goes. `account` names the
    /// keyring entry: [`ACCOUNT`] for the default data directory, one of its own for any
    /// other (a second shop profile must not overwrite the first one's key).
    pub fn open(dir: &Path, account: String) -> Self {
        let keyring = Keyring { account };
        let choice = match keyring.probe() {
            Ok(()) => Choice::Keyring,
            Err(failure) => {
                match &failure {
                    KeyringFailure::Absent(why) => {
                        tracing::info!(%why, "no system keyring; the remote key is kept in a private file")
                    }
                    KeyringFailure::Refused(why) => tracing::warn!(
                        %why, "the system keyring refused a test entry; the remote key is kept in a private file"
                    ),
                }
                Choice::File(failure)
            }
        };
        Self { keyring, file: KeyFile { path: dir.join(FILE_NAME) }, choice: Mutex::new(choice) }
    }

    /// The keyring account for `dir`, given the platform's default data directory.
    pub fn account_for(dir: &Path, default_dir: Option<&Path>) -> String {
        if default_dir == Some(dir) { ACCOUNT.to_owned() } else { format!("{ACCOUNT}:{}", dir.display()) }
    }

    /// Where the key is kept, and, when in the file although a keyring exists, why the
    /// keyring was not used.
    pub fn storage(&self) -> (RemoteKeyStorage, Option<String>) {
        match &*self.lock() {
            Choice::Keyring => (RemoteKeyStorage::Keyring, None),
            Choice::File(KeyringFailure::Absent(_)) => (RemoteKeyStorage::File, None),
            Choice::File(KeyringFailure::Refused(why)) => (RemoteKeyStorage::File, Some(why.clone())),
        }
    }

    /// The saved key and its origin. With the keyring in use, a key left in the file (kept
    /// there while the keyring refused) moves into the keyring.
    pub fn load(&self) -> Result<Option<SavedKey>, SecretError> {
        let in_file = || decode(self.file.get()?, &self.file.path.display().to_string());
        if *self.lock() != Choice::Keyring {
            return in_file();
        }
        match self.keyring.get() {
            Ok(Some(text)) => decode(Some(text), "the system keyring"),
            Ok(None) => match in_file()? {
                Some(saved) => {
                    self.save(&saved)?;
                    Ok(Some(saved))
                }
                None => Ok(None),
            },
            Err(failure) => {
                self.fall_back(failure);
                in_file()
            }
        }
    }

    /// Keeps `saved`: in the keyring, or in the file if there is none or it refuses now.
    pub fn save(&self, saved: &SavedKey) -> Result<(), SecretError> {
        let text = saved.encode();
        if *self.lock() == Choice::Keyring {
            match self.keyring.set(&text) {
                // A copy in the file would outlive the keyring's protection.
                Ok(()) => return self.file.delete(),
                Err(failure) => self.fall_back(failure),
            }
        }
        self.file.set(&text)
    }

    /// Deletes the key from wherever it is: the file, and the keyring unless there is none.
    /// A keyring in use that cannot delete it is an error (the key would stay); one that
    /// already refused at startup is only tried, since the key is in the file then.
    pub fn clear(&self) -> Result<(), SecretError> {
        self.file.delete()?;
        let choice = self.lock().clone();
        if matches!(choice, Choice::File(KeyringFailure::Absent(_))) {
            return Ok(());
        }
        match self.keyring.delete() {
            Ok(()) => Ok(()),
            Err(failure) if choice == Choice::Keyring => Err(SecretError(format!(
                "cannot delete the remote key from the system keyring: {}",
                failure.reason()
            ))),
            Err(failure) => {
                tracing::warn!(why = %failure.reason(), "cannot check the system keyring for an old remote key");
                Ok(())
            }
        }
    }

    fn fall_back(&self, failure: KeyringFailure) {
        let why = failure.reason().to_owned();
        tracing::warn!(%why, "the system keyring failed; the remote key is kept in a private file");
        *self.lock() = Choice::File(KeyringFailure::Refused(why));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Choice> {
        self.choice.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_store(dir: &Path) -> SecretStore {
        SecretStore {
            keyring: Keyring { account: "unused".into() },
            file: KeyFile { path: dir.join(FILE_NAME) },
            choice: Mutex::new(Choice::File(KeyringFailure::Absent("none".into()))),
        }
    }

    fn saved(key: &str, origin: &str) -> SavedKey {
        SavedKey { key: key.to_owned(), origin: KeyOrigin::Only(origin.to_owned()) }
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_file_is_private_replaced_whole_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let store = file_store(dir.path());
        assert_eq!(store.load().unwrap(), None);
        store.save(&saved("first-key-0123456789abcdef", "http://a:8787")).unwrap();
        store.save(&saved("second-key-0123456789abcdef", "https://b")).unwrap();
        assert_eq!(store.load().unwrap(), Some(saved("second-key-0123456789abcdef", "https://b")));
        #[cfg(unix)]
        assert_eq!(mode(&dir.path().join(FILE_NAME)), 0o600);
        assert!(!dir.path().join("remote-api.key.tmp").exists());
        store.clear().unwrap();
        assert!(!dir.path().join(FILE_NAME).exists());
        assert_eq!(store.load().unwrap(), None);
        store.clear().unwrap();
    }

    #[test]
    fn a_stale_temporary_file_with_open_permissions_is_not_reused() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("remote-api.key.tmp");
        fs::write(&tmp, "junk").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&tmp, fs::Permissions::from_mode(0o644)).unwrap();
        }
        file_store(dir.path()).save(&saved("a-key-0123456789abcdefghij", "http://a")).unwrap();
        #[cfg(unix)]
        assert_eq!(mode(&dir.path().join(FILE_NAME)), 0o600);
    }

    #[test]
    fn a_key_is_kept_with_its_origin_and_a_bare_key_from_an_older_version_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let store = file_store(dir.path());
        let file = dir.path().join(FILE_NAME);
        for kept in [
            saved("k-0123456789abcdefghij", "https://shop.example:8443"),
            SavedKey { key: "k-0123456789abcdefghij".into(), origin: KeyOrigin::Nowhere },
        ] {
            store.save(&kept).unwrap();
            assert_eq!(store.load().unwrap().as_ref(), Some(&kept));
        }
        // What versions before origins wrote: the key alone, maybe with a line break.
        fs::write(&file, "old-key-0123456789abcdef\n").unwrap();
        let old = store.load().unwrap().unwrap();
        assert_eq!((old.key.as_str(), &old.origin), ("old-key-0123456789abcdef", &KeyOrigin::Unrecorded));
        // Text that is neither is refused, not taken for a key (nor shown: it may hold one).
        fs::write(&file, "something=else\nkey=secret-0123456789abcdef").unwrap();
        let damaged = store.load().unwrap_err().to_string();
        assert!(damaged.contains("damaged") && !damaged.contains("secret-0123"), "{damaged}");
        let debug = format!("{:?}", saved("secret-0123456789abcdef", "http://a"));
        assert!(!debug.contains("secret-0123") && debug.contains("http://a"), "{debug}");
    }

    #[test]
    fn the_default_directory_uses_the_plain_account_and_others_their_own() {
        let default = Path::new("/home/shop/.local/share/org.petstore.desktop");
        assert_eq!(SecretStore::account_for(default, Some(default)), "remote-api-key");
        let other = Path::new("/srv/till-2");
        assert_eq!(SecretStore::account_for(other, Some(default)), "remote-api-key:/srv/till-2");
        assert_eq!(SecretStore::account_for(other, None), "remote-api-key:/srv/till-2");
    }
}
