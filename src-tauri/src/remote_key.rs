//! The remote key's lifecycle, beside the store it is kept in (`secret_store.rs`): read at
//! start (a key an older version kept without its origin tied to the address saved with it),
//! checked when typed, and handed to a remote's client only at the origin it was saved for.
//! The remote's client is made here because which key it carries is decided here.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use petstore::client::{Client, ClientConfig, origin_of};
use tauri::{AppHandle, Runtime};

use crate::error::{CommandError, CommandResult};
use crate::secret_store::{KeyOrigin, SavedKey, SecretStore};
use crate::settings::{ProvisionedRemote, persist};

/// The saved remote key (it stays here, out of the webview) and where it is kept.
pub(crate) struct RemoteKey {
    /// The OS keyring or a private file.
    pub(crate) secrets: Arc<SecretStore>,
    pub(crate) state: Mutex<KeyState>,
}

pub(crate) struct KeyState {
    pub(crate) saved: Option<SavedKey>,
    /// The key's origin was settled here (a key from an older version, tied to the address
    /// saved with it) but could not be written to the secret store yet. It is written
    /// before settings are next saved: an address changed meanwhile must not become the
    /// key's at the next start.
    pub(crate) origin_unwritten: bool,
}

impl RemoteKey {
    /// Opens the secret store for `account` in `dir` and reads the saved key from it (or
    /// `legacy_key`, one an older version left in `settings.json`); see [`load_remote_key`].
    /// Slow when the keyring's daemon has to start: the shell runs it on a thread of its own.
    pub(crate) fn open<R: Runtime>(
        app: &AppHandle<R>,
        dir: PathBuf,
        account: String,
        legacy_key: Option<String>,
        saved_base_url: Option<&str>,
    ) -> Self {
        let secrets = SecretStore::open(&dir, account);
        let state = load_remote_key(app, &dir, &secrets, legacy_key, saved_base_url);
        RemoteKey { secrets: Arc::new(secrets), state: Mutex::new(state) }
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, KeyState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn saved(&self) -> Option<SavedKey> {
        self.lock().saved.clone()
    }
}

/// A person is waiting at the counter: a remote that does not answer within this is
/// reported rather than waited for.
const REMOTE_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// The client for the remote at `base_url` with the key `typed`, or else the `saved` key,
/// but only if `base_url` is at the origin the saved key was saved for: the saved key
/// never goes to another server, nor to the same one over another scheme or port (a new
/// address takes the key typed again).
pub(crate) fn remote_backend(
    base_url: Option<&str>,
    typed: Option<&str>,
    saved: Option<&SavedKey>,
) -> CommandResult<Client> {
    let base_url =
        base_url.ok_or_else(|| CommandError::validation("remote mode needs the server address"))?;
    let key = match (typed, saved) {
        (Some(key), _) => key,
        (None, None) => return Err(CommandError::validation("remote mode needs the server's API key")),
        (None, Some(saved)) => saved_key_for(saved, base_url)?,
    };
    let config = ClientConfig::default().request_timeout(REMOTE_REQUEST_TIMEOUT);
    Ok(Client::with_config(base_url, key, config)?)
}

/// The client for the remote the environment sets, as patient as any remote's.
pub(crate) fn provisioned_client(remote: &ProvisionedRemote) -> CommandResult<Client> {
    let config = ClientConfig::default().request_timeout(REMOTE_REQUEST_TIMEOUT);
    Ok(Client::with_config(remote.base_url(), remote.key(), config)?)
}

/// The saved key, if `base_url` is at its origin; else why not, naming the address.
fn saved_key_for<'a>(saved: &'a SavedKey, base_url: &str) -> CommandResult<&'a str> {
    let origin = origin_of(base_url)?;
    match &saved.origin {
        KeyOrigin::Only(own) if *own == origin => Ok(&saved.key),
        KeyOrigin::Only(own) => Err(CommandError::validation(format!(
            "the saved API key belongs to {own} and is sent nowhere else: type the API key again to use {base_url}"
        ))),
        KeyOrigin::Nowhere | KeyOrigin::Unrecorded => Err(CommandError::validation(format!(
            "the saved API key was kept without a server address and is sent nowhere: type the API key \
             again to use {base_url}"
        ))),
    }
}

/// A key typed in Settings, tied to the origin of the address saved with it. It is
/// checked as the client would send it, in local mode too: a key is kept only for an
/// address it can be used with.
pub(crate) fn typed_key(base_url: Option<&str>, key: &str) -> CommandResult<SavedKey> {
    let base_url = base_url
        .ok_or_else(|| CommandError::validation("give the address of the server the API key is for"))?;
    Client::new(base_url, key)?;
    let origin = origin_of(base_url)?;
    Ok(SavedKey { key: key.to_owned(), origin: KeyOrigin::Only(origin) })
}

/// The saved remote key at start. A key kept by a version that recorded no origin (in the
/// secret store, or in `settings.json` before that) belongs to the address saved beside it
/// in the settings, the only one that version sent it to; with no address saved, to none.
/// That origin is written with it at once, so that an address changed later never becomes
/// the key's.
fn load_remote_key<R: Runtime>(
    app: &AppHandle<R>,
    dir: &Path,
    secrets: &SecretStore,
    legacy_key: Option<String>,
    saved_base_url: Option<&str>,
) -> KeyState {
    let from_settings = legacy_key.is_some();
    let loaded = match legacy_key {
        Some(key) => Some(SavedKey { key, origin: KeyOrigin::Unrecorded }),
        None => secrets.load().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the saved remote key cannot be read");
            None
        }),
    };
    let Some(mut saved) = loaded else { return KeyState { saved: None, origin_unwritten: false } };
    if saved.origin != KeyOrigin::Unrecorded {
        return KeyState { saved: Some(saved), origin_unwritten: false };
    }
    saved.origin = match saved_base_url.and_then(|url| origin_of(url).ok()) {
        Some(origin) => KeyOrigin::Only(origin),
        None => KeyOrigin::Nowhere,
    };
    // Until it is safely stored elsewhere, a key in settings.json stays where it is.
    let origin_unwritten = match secrets.save(&saved) {
        Ok(()) if from_settings => match persist::remove_legacy_key(app, dir) {
            Ok(()) => {
                tracing::info!("moved the remote key out of settings.json");
                false
            }
            Err(e) => {
                tracing::warn!(error = %e.message, "the remote key is still in settings.json");
                true
            }
        },
        Ok(()) => {
            tracing::info!(origin = ?saved.origin, "the saved remote key is now tied to the server address saved with it");
            false
        }
        Err(e) => {
            tracing::warn!(error = %e, "the saved remote key cannot be tied to its server address yet");
            true
        }
    };
    KeyState { saved: Some(saved), origin_unwritten }
}
