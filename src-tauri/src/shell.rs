//! Everything the commands share: the switchable backend, the local API and the settings
//! that decide both.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use petstore::client::{Client, ClientConfig};
use petstore::domain::Page;
use petstore::{Petstore, Store};
use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime};

use crate::backend::{Backend, Target};
use crate::deferred::Deferred;
use crate::error::{CommandError, CommandResult};
use crate::local_api::{LocalApi, LocalApiStatus};
use crate::secret_store::{RemoteKeyStorage, SecretStore};
use crate::settings::{BackendKind, Settings, SettingsInput, SettingsView, persist};

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
    pub reachable: bool,
    /// Why the backend is not reachable.
    pub message: Option<String>,
    pub local_api: LocalApiStatus,
    /// Where the remote key is kept, in remote mode: the bar warns when it is a file.
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
}

/// The saved remote key (it stays here, out of the webview) and where it is kept.
struct RemoteKey {
    /// The OS keyring or a private file.
    secrets: Arc<SecretStore>,
    key: Mutex<Option<String>>,
}

impl RemoteKey {
    fn key(&self) -> Option<String> {
        self.key.lock().unwrap_or_else(|p| p.into_inner()).clone()
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
    /// The remote key is read beside all this: finding out whether the OS keyring works
    /// and reading from it is several D-Bus calls, 150-250 ms when its daemon has to start
    /// first (and up to the keyring time-out when it hangs). Only remote mode needs the key
    /// before the window opens; in local mode Settings waits for it, if it is still coming.
    pub async fn start<R: Runtime>(
        app: AppHandle<R>,
        dir: PathBuf,
        default_port: u16,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let store = Store::open(dir.join("petstore.db"))?;
        let (settings, legacy_key) = persist::load(&app, &dir, default_port)?;
        let default_dir = app.path().app_data_dir().ok();
        let account = SecretStore::account_for(&dir, default_dir.as_deref());
        let (key_app, key_dir) = (app.clone(), dir.clone());
        let remote_key = Deferred::start("remote-key", move || {
            let secrets = SecretStore::open(&key_dir, account);
            let key = match legacy_key {
                Some(key) => migrate_legacy_key(&key_app, &key_dir, &secrets, key),
                None => secrets.load().unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "the saved remote key cannot be read");
                    None
                }),
            };
            RemoteKey { secrets: Arc::new(secrets), key: Mutex::new(key) }
        })?;
        let shell = Self {
            backend: Backend::new(store.clone()),
            local_api: LocalApi::new(&dir),
            saved: Mutex::new(settings.clone()),
            remote_key,
            dir,
        };
        if settings.backend == BackendKind::Remote
            && let Err(e) = shell.switch_backend(&settings, shell.remote_key.get().key().as_deref())
        {
            tracing::warn!(error = %e.message, "the saved remote backend cannot be used; staying local");
        }
        shell.local_api.apply(store, settings.local_api.enabled, settings.local_api.port).await;
        Ok(shell)
    }

    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The backend for one command.
    pub fn current(&self) -> Arc<dyn Petstore> {
        self.backend.current()
    }

    pub fn local_api(&self) -> &LocalApi {
        &self.local_api
    }

    /// The saved settings, without the remote key's details (which may still be coming).
    pub fn saved_settings(&self) -> Settings {
        self.saved.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn settings(&self) -> SettingsView {
        let remote_key = self.remote_key.get();
        let (remote_key_storage, keyring_error) = remote_key.secrets.storage();
        SettingsView {
            settings: self.saved_settings(),
            has_remote_key: remote_key.key().is_some(),
            remote_key_storage,
            keyring_error,
        }
    }

    /// Validates, applies and saves new settings; nothing changes if any part is invalid.
    pub async fn save_settings<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        input: SettingsInput,
    ) -> CommandResult<SettingsView> {
        let previous = self.saved_settings();
        let saved_key = self.remote_key.get();
        let previous_key = saved_key.key();
        let base_url = input.base_url.map(|u| u.trim().to_owned()).filter(|u| !u.is_empty());
        let change = match input.remote_key.map(|k| k.trim().to_owned()) {
            None => KeyChange::Keep,
            Some(key) if key.is_empty() => KeyChange::Forget,
            Some(key) => KeyChange::Replace(key),
        };
        let remote_key = match &change {
            KeyChange::Keep => previous_key.clone(),
            KeyChange::Replace(key) => Some(key.clone()),
            KeyChange::Forget => None,
        };
        if input.local_api.port == 0 {
            return Err(CommandError::validation("the local API port must be between 1 and 65535"));
        }
        let settings = Settings { backend: input.backend, base_url, local_api: input.local_api };
        // Validate before anything is kept: a key for an unusable remote is not stored.
        let remote = backend_client(&settings, remote_key.as_deref())?;
        let secrets = saved_key.secrets.clone();
        let same_key = remote_key == previous_key;
        tauri::async_runtime::spawn_blocking(move || match change {
            KeyChange::Replace(key) if !same_key => secrets.save(&key),
            KeyChange::Forget => secrets.clear(),
            _ => Ok(()),
        })
        .await
        .map_err(CommandError::internal)?
        .map_err(CommandError::internal)?;
        persist::save(app, &self.dir, &settings)?;
        match remote {
            Some(client) => self.backend.use_remote(client),
            None => self.backend.use_local(),
        }
        if settings.local_api != previous.local_api {
            let local = self.backend.local().clone();
            self.local_api.apply(local, settings.local_api.enabled, settings.local_api.port).await;
        }
        *self.saved.lock().unwrap_or_else(|p| p.into_inner()) = settings;
        *saved_key.key.lock().unwrap_or_else(|p| p.into_inner()) = remote_key;
        Ok(self.settings())
    }

    fn switch_backend(&self, settings: &Settings, remote_key: Option<&str>) -> CommandResult<()> {
        match backend_client(settings, remote_key)? {
            Some(client) => self.backend.use_remote(client),
            None => self.backend.use_local(),
        }
        Ok(())
    }

    /// Tries a remote without switching to it; a blank key means the saved one.
    pub async fn test_connection(&self, base_url: &str, key: Option<String>) -> ConnectionReport {
        let key = key.filter(|k| !k.trim().is_empty()).or_else(|| self.remote_key.get().key());
        let client = match remote_client(Some(base_url), key.as_deref()) {
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
        match self.backend.target() {
            Target::Local => Status {
                backend: BackendKind::Local,
                target: self.backend.local().path().display().to_string(),
                reachable: true,
                message: None,
                local_api,
                remote_key_storage: None,
            },
            Target::Remote { base_url } => {
                let probed = probe(self.current().as_ref()).await;
                Status {
                    backend: BackendKind::Remote,
                    target: base_url,
                    reachable: probed.is_ok(),
                    message: probed.err(),
                    local_api,
                    remote_key_storage: Some(self.remote_key.get().secrets.storage().0),
                }
            }
        }
    }
}

/// A person is waiting at the counter: a remote that does not answer within this is
/// reported rather than waited for.
const REMOTE_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// The remote client `settings` ask for; `None` in local mode.
fn backend_client(settings: &Settings, remote_key: Option<&str>) -> CommandResult<Option<Client>> {
    match settings.backend {
        BackendKind::Local => Ok(None),
        BackendKind::Remote => remote_client(settings.base_url.as_deref(), remote_key).map(Some),
    }
}

/// Moves a remote key an earlier version kept in `settings.json` to the secret store and
/// deletes it there. Until it is safely stored elsewhere it stays where it is.
fn migrate_legacy_key<R: Runtime>(
    app: &AppHandle<R>,
    dir: &Path,
    secrets: &SecretStore,
    key: String,
) -> Option<String> {
    match secrets.save(&key) {
        Ok(()) => match persist::remove_legacy_key(app, dir) {
            Ok(()) => tracing::info!("moved the remote key out of settings.json"),
            Err(e) => tracing::warn!(error = %e.message, "the remote key is still in settings.json"),
        },
        Err(e) => tracing::warn!(error = %e, "the remote key cannot be moved out of settings.json"),
    }
    Some(key)
}

fn remote_client(base_url: Option<&str>, key: Option<&str>) -> CommandResult<Client> {
    let base_url =
        base_url.ok_or_else(|| CommandError::validation("remote mode needs the server address"))?;
    let key = key.ok_or_else(|| CommandError::validation("remote mode needs the server's API key"))?;
    let config = ClientConfig::default().request_timeout(REMOTE_REQUEST_TIMEOUT);
    Ok(Client::with_config(base_url, key, config)?)
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
