//! Everything the commands share: the switchable backend, the local API and the settings
//! that decide both.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use petstore::client::{Client, ClientConfig, origin_of};
use petstore::domain::Page;
use petstore::mirror::SyncState;
use petstore::{Petstore, Store};
use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime};

use crate::backend::{Backend, Target};
use crate::deferred::Deferred;
use crate::error::{CommandError, CommandResult};
use crate::local_api::{LocalApi, LocalApiStatus};
use crate::secret_store::{self, KeyOrigin, RemoteKeyStorage, SavedKey, SecretStore};
use crate::settings::{
    BackendKind, ProvisionedRemote, Provisioning, REMOTE_KEY_FILE_VAR, REMOTE_KEY_VAR, REMOTE_URL_VAR,
    Settings, SettingsInput, SettingsView, persist,
};
use petstore::private;

/// The shop's database in the data folder.
pub const DATABASE_FILE: &str = "petstore.db";

/// How long the status bar waits for a remote before calling it unreachable.
const PROBE_TIMEOUT: Duration = Duration::from_secs(4);

/// What the status bar shows.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub backend: BackendKind,
    /// The database file (local) or the server address (remote).
    pub target: String,
    /// The backend answers, and it is the one this till was set up for: false also when
    /// the remote set by the environment (`PETSTORE_REMOTE_URL`) cannot be used and the
    /// app runs on the saved settings instead, so that the staff see it at once.
    pub reachable: bool,
    /// Why not.
    pub message: Option<String>,
    pub local_api: LocalApiStatus,
    /// Where the remote key is kept, in remote mode: the bar warns when it is a file.
    /// Null too when the remote and its key are set by the environment (the app keeps
    /// that key nowhere).
    pub remote_key_storage: Option<RemoteKeyStorage>,
}

/// The answer of "Test connection".
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionReport {
    pub ok: bool,
    pub message: String,
}

pub struct Shell {
    dir: PathBuf,
    backend: Backend,
    local_api: LocalApi,
    /// The saved settings.
    saved: Mutex<Settings>,
    /// The remote key, read at start on a thread of its own (see [`Shell::start`]).
    remote_key: Deferred<RemoteKey>,
    /// The remote set by the environment, in use since start whatever is saved; it is
    /// never saved, nor is its key.
    provisioned: Option<ProvisionedRemote>,
    /// Why the remote set by the environment cannot be used, for the status bar.
    provisioning_error: Option<String>,
}

/// The saved remote key (it stays here, out of the webview) and where it is kept.
struct RemoteKey {
    /// The OS keyring or a private file.
    secrets: Arc<SecretStore>,
    state: Mutex<KeyState>,
}

struct KeyState {
    saved: Option<SavedKey>,
    /// The key's origin was settled here (a key from an older version, tied to the address
    /// saved with it) but could not be written to the secret store yet. It is written
    /// before settings are next saved: an address changed meanwhile must not become the
    /// key's at the next start.
    origin_unwritten: bool,
}

impl RemoteKey {
    fn lock(&self) -> std::sync::MutexGuard<'_, KeyState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn saved(&self) -> Option<SavedKey> {
        self.lock().saved.clone()
    }
}

/// What saving settings does to the remote key.
enum KeyChange {
    Keep,
    Replace(String),
    Forget,
}

impl Shell {
    /// Opens the local database in `dir`, applies the saved settings and starts the local
    /// API. A remote that cannot be set up falls back to local mode with a warning rather
    /// than keep the shop from opening.
    ///
    /// A remote set by the environment (`provisioning`) is used instead of the saved
    /// backend, and nothing about it is written: `settings.json` keeps what was saved. One
    /// that cannot be used is logged, the saved settings apply, and the status bar says
    /// why (see [`Provisioning`]).
    ///
    /// The remote key is read beside all this: finding out whether the OS keyring works
    /// and reading from it is several D-Bus calls, 150-250 ms when its daemon has to start
    /// first (and up to the keyring time-out when it hangs). Only remote mode needs the key
    /// before the window opens; in local mode Settings waits for it, if it is still coming.
    pub async fn start<R: Runtime>(
        app: AppHandle<R>,
        dir: PathBuf,
        default_port: u16,
        provisioning: Provisioning,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        // The files the app writes itself, as an older version may have left them (the
        // settings with the umask's permissions). The local API key's name is `LocalApi`'s.
        for file in [persist::FILE_NAME, "local-api.key", secret_store::FILE_NAME] {
            private::tighten_file(&dir.join(file));
        }
        let store = Store::open(dir.join(DATABASE_FILE))?;
        let (settings, legacy_key) = persist::load(&app, &dir, default_port)?;
        let default_dir = app.path().app_data_dir().ok();
        let account = SecretStore::account_for(&dir, default_dir.as_deref());
        let (key_app, key_dir) = (app.clone(), dir.clone());
        let saved_base_url = settings.base_url.clone();
        let remote_key = Deferred::start("remote-key", move || {
            let secrets = SecretStore::open(&key_dir, account);
            let state = load_remote_key(&key_app, &key_dir, &secrets, legacy_key, saved_base_url.as_deref());
            RemoteKey { secrets: Arc::new(secrets), state: Mutex::new(state) }
        })?;
        let (provisioned, provisioning_error) = match provisioning {
            Provisioning::None => (None, None),
            Provisioning::Invalid(why) => (None, Some(why)),
            Provisioning::Remote(remote) => match provisioned_client(&remote) {
                Ok(client) => (Some((remote, client)), None),
                Err(e) => (None, Some(e.message)),
            },
        };
        if let Some(why) = &provisioning_error {
            tracing::warn!(reason = %why, "the remote set by the environment cannot be used; starting with the saved settings");
        }
        let (provisioned, provisioned_client) = provisioned.unzip();
        let shell = Self {
            backend: Backend::new(store.clone()),
            local_api: LocalApi::new(&dir),
            saved: Mutex::new(settings.clone()),
            remote_key,
            dir,
            provisioned,
            provisioning_error,
        };
        if let Some(client) = provisioned_client {
            tracing::info!(base_url = %client.base_url(), "remote mode, as set by {REMOTE_URL_VAR}");
            shell.backend.use_remote(client);
        } else if settings.backend == BackendKind::Remote {
            let saved_key = shell.remote_key.get().saved();
            match remote_backend(settings.base_url.as_deref(), None, saved_key.as_ref()) {
                Ok(client) => shell.backend.use_remote(client),
                Err(e) => {
                    tracing::warn!(error = %e.message, "the saved remote backend cannot be used; staying local")
                }
            }
        }
        shell.apply_local_api(&settings).await;
        Ok(shell)
    }

    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The backend for one command.
    pub fn current(&self) -> Arc<dyn Petstore> {
        self.backend.current()
    }

    /// The shop's database as the local API serves it (the local one, or the mirror of the
    /// remote one); `None` while a remote shop is not copied yet.
    pub fn served(&self) -> Option<Arc<dyn petstore::backend::Database>> {
        self.backend.served()
    }

    pub fn local_api(&self) -> &LocalApi {
        &self.local_api
    }

    /// Serves the shop the window shows as `settings` say.
    async fn apply_local_api(&self, settings: &Settings) {
        let api = &settings.local_api;
        self.local_api.apply(self.backend.served(), api.enabled, api.port).await;
    }

    /// Serves again with what is saved (a new key, say).
    pub async fn restart_local_api(&self) {
        self.apply_local_api(&self.saved_settings()).await;
    }

    /// The data directory: where `settings.json` (the window's preferences and the update
    /// address in it too) lives.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The saved settings, without the remote key's details (which may still be coming).
    pub fn saved_settings(&self) -> Settings {
        self.saved.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// What Settings shows: the saved settings, or, when the environment sets the remote,
    /// that remote in their place (its key counts as a key, and is never shown either).
    pub fn settings(&self) -> SettingsView {
        let remote_key = self.remote_key.get();
        let (remote_key_storage, keyring_error) = remote_key.secrets.storage();
        let mut settings = self.saved_settings();
        if let Some(remote) = &self.provisioned {
            settings.backend = BackendKind::Remote;
            settings.base_url = Some(remote.base_url().to_owned());
        }
        SettingsView {
            settings,
            has_remote_key: self.provisioned.is_some() || remote_key.lock().saved.is_some(),
            remote_key_storage,
            keyring_error,
            provisioned: self.provisioned.is_some(),
        }
    }

    /// Validates, applies and saves new settings; nothing changes if any part is invalid.
    /// A key typed now is kept for the origin of the address saved with it; a key left
    /// unchanged is used in remote mode only at the origin it was saved for.
    pub async fn save_settings<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        input: SettingsInput,
    ) -> CommandResult<SettingsView> {
        if let Some(remote) = &self.provisioned {
            return self.save_provisioned(app, remote, input).await;
        }
        let previous = self.saved_settings();
        let remote_key = self.remote_key.get();
        let (previous_key, origin_unwritten) = {
            let state = remote_key.lock();
            (state.saved.clone(), state.origin_unwritten)
        };
        let base_url = input.base_url.map(|u| u.trim().to_owned()).filter(|u| !u.is_empty());
        let change = match input.remote_key.map(|k| k.trim().to_owned()) {
            None => KeyChange::Keep,
            Some(key) if key.is_empty() => KeyChange::Forget,
            Some(key) => KeyChange::Replace(key),
        };
        if input.local_api.port == 0 {
            return Err(CommandError::validation("the local API port must be between 1 and 65535"));
        }
        let settings = Settings { backend: input.backend, base_url, local_api: input.local_api };
        // The key after saving, tied to its origin. A typed key is checked with its address
        // in local mode too, so that no key is kept that could never be used.
        let new_key = match &change {
            KeyChange::Keep => previous_key.clone(),
            KeyChange::Replace(key) => Some(typed_key(settings.base_url.as_deref(), key)?),
            KeyChange::Forget => None,
        };
        // Validate before anything is kept: a key for an unusable remote is not stored.
        let remote = match settings.backend {
            BackendKind::Local => None,
            BackendKind::Remote => {
                Some(remote_backend(settings.base_url.as_deref(), None, new_key.as_ref())?)
            }
        };
        let write = match change {
            KeyChange::Forget => Some(None),
            _ if new_key != previous_key || origin_unwritten => Some(new_key.clone()),
            KeyChange::Keep | KeyChange::Replace(_) => None,
        };
        if let Some(write) = write {
            let (secrets, app, dir) = (remote_key.secrets.clone(), app.clone(), self.dir.clone());
            tauri::async_runtime::spawn_blocking(move || -> CommandResult<()> {
                match write {
                    Some(saved) => secrets.save(&saved),
                    None => secrets.clear(),
                }
                .map_err(CommandError::internal)?;
                // A key an earlier version left in settings.json would come back from there.
                persist::remove_legacy_key(&app, &dir)
            })
            .await
            .map_err(CommandError::internal)??;
        }
        persist::save(app, &self.dir, &settings)?;
        // The local API serves the shop the window shows: served again unless local mode
        // stays, since remote mode opens a new mirror each time, and the API must never
        // hold on to one the window has left.
        let same_shop = remote.is_none() && self.backend.target() == Target::Local;
        if !same_shop {
            // Before the switch: two mirrors of one remote never sync at once.
            self.local_api.stop().await;
        }
        match remote {
            Some(client) => self.backend.use_remote(client),
            None => self.backend.use_local(),
        }
        if settings.local_api != previous.local_api || !same_shop {
            self.apply_local_api(&settings).await;
        }
        *self.saved.lock().unwrap_or_else(|p| p.into_inner()) = settings;
        *remote_key.lock() = KeyState { saved: new_key, origin_unwritten: false };
        Ok(self.settings())
    }

    /// Saving while the environment sets the remote: the backend, the address and the key
    /// are the environment's and stay so (Settings shows them read-only and sends them back
    /// unchanged); only the local API's settings are saved and applied. What is written is
    /// the saved backend and address as they were, so that the app starts as saved again
    /// once the environment no longer sets a remote.
    async fn save_provisioned<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        remote: &ProvisionedRemote,
        input: SettingsInput,
    ) -> CommandResult<SettingsView> {
        let base_url = input.base_url.as_deref().map(|u| u.trim().trim_end_matches('/'));
        if input.backend != BackendKind::Remote || base_url != Some(remote.base_url()) {
            return Err(CommandError::validation(format!(
                "remote mode is set by {REMOTE_URL_VAR} on this computer ({}): the backend and the server \
                 address cannot be changed here; ask whoever set up this till, or start the app without \
                 {REMOTE_URL_VAR}",
                remote.base_url()
            )));
        }
        if input.remote_key.is_some() {
            return Err(CommandError::validation(format!(
                "the remote's API key is set by {REMOTE_KEY_VAR} or {REMOTE_KEY_FILE_VAR} on this computer \
                 and cannot be changed here"
            )));
        }
        if input.local_api.port == 0 {
            return Err(CommandError::validation("the local API port must be between 1 and 65535"));
        }
        let previous = self.saved_settings();
        let settings = Settings { local_api: input.local_api, ..previous.clone() };
        persist::save(app, &self.dir, &settings)?;
        if settings.local_api != previous.local_api {
            self.apply_local_api(&settings).await;
        }
        *self.saved.lock().unwrap_or_else(|p| p.into_inner()) = settings;
        Ok(self.settings())
    }

    /// Tries a remote without switching to it. A blank key means the saved one, which is
    /// sent only if `base_url` is at the origin it was saved for; when the environment sets
    /// the remote, its key, likewise only to its origin.
    pub async fn test_connection(&self, base_url: &str, key: Option<String>) -> ConnectionReport {
        let typed = key.map(|k| k.trim().to_owned()).filter(|k| !k.is_empty());
        let saved = match &self.provisioned {
            Some(remote) => origin_of(remote.base_url())
                .ok()
                .map(|origin| SavedKey { key: remote.key().to_owned(), origin: KeyOrigin::Only(origin) }),
            None => self.remote_key.get().saved(),
        };
        let base_url = Some(base_url.trim()).filter(|u| !u.is_empty());
        let client = match remote_backend(base_url, typed.as_deref(), saved.as_ref()) {
            Ok(client) => client,
            Err(e) => return ConnectionReport { ok: false, message: e.message },
        };
        match probe(&client).await {
            Ok(pets) => {
                ConnectionReport { ok: true, message: format!("Connected: the remote store has {pets} pets") }
            }
            Err(message) => ConnectionReport { ok: false, message },
        }
    }

    pub async fn status(&self) -> Status {
        let local_api = self.local_api.status();
        let provisioning = self.provisioning_error.as_ref().map(|why| {
            format!("the remote set up for this till by the environment cannot be used ({why}); the saved settings are in use")
        });
        match self.backend.target() {
            Target::Local => Status {
                backend: BackendKind::Local,
                target: self.backend.local().path().display().to_string(),
                reachable: provisioning.is_none(),
                message: provisioning,
                local_api,
                remote_key_storage: None,
            },
            Target::Remote { base_url } => {
                // Once the mirror holds a copy, reads answer from it whatever the server
                // does: whether the server answers is what the sync says. Before that (or
                // without a mirror) reads go to the server, so ask it.
                let probed =
                    match self.backend.sync_status().filter(|s| s.position.is_some()).map(|s| s.state) {
                        Some(SyncState::Offline { reason, .. } | SyncState::KeyRefused { reason }) => {
                            Err(reason)
                        }
                        Some(_) => Ok(0),
                        None => probe(self.current().as_ref()).await,
                    };
                let remote_key_storage = match self.provisioned {
                    Some(_) => None,
                    None => Some(self.remote_key.get().secrets.storage().0),
                };
                Status {
                    backend: BackendKind::Remote,
                    target: base_url,
                    reachable: probed.is_ok() && provisioning.is_none(),
                    message: match (probed.err(), provisioning) {
                        (Some(probed), Some(provisioning)) => Some(format!("{probed}; {provisioning}")),
                        (probed, provisioning) => probed.or(provisioning),
                    },
                    local_api,
                    remote_key_storage,
                }
            }
        }
    }
}

/// A person is waiting at the counter: a remote that does not answer within this is
/// reported rather than waited for.
const REMOTE_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// The client for the remote at `base_url` with the key `typed`, or else the `saved` key,
/// but only if `base_url` is at the origin the saved key was saved for: the saved key
/// never goes to another server, nor to the same one over another scheme or port (a new
/// address takes the key typed again).
fn remote_backend(
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
fn provisioned_client(remote: &ProvisionedRemote) -> CommandResult<Client> {
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
fn typed_key(base_url: Option<&str>, key: &str) -> CommandResult<SavedKey> {
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

/// One cheap authenticated call: answers the pet count, or why it failed.
async fn probe(backend: &dyn Petstore) -> Result<u64, String> {
    let page = Page::new(1, 0).map_err(|e| e.message)?;
    match tokio::time::timeout(PROBE_TIMEOUT, backend.list_pets(Default::default(), page)).await {
        Ok(Ok(pets)) => Ok(pets.total),
        Ok(Err(e)) => Err(e.message),
        Err(_) => Err(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())),
    }
}
