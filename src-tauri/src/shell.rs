//! Everything the commands share: the switchable backend, the local API and the settings
//! that decide both.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use petstore::client::{Client, ClientConfig};
use petstore::domain::Page;
use petstore::{Petstore, Store};
use serde::Serialize;
use tauri::{AppHandle, Runtime};

use crate::backend::{Backend, Target};
use crate::error::{CommandError, CommandResult};
use crate::local_api::{LocalApi, LocalApiStatus};
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
    /// The saved settings and remote key (the key stays here, out of the webview).
    saved: Mutex<(Settings, Option<String>)>,
}

impl Shell {
    /// Opens the local database in `dir`, applies the saved settings and starts the local
    /// API. A remote that cannot be set up falls back to local mode with a warning rather
    /// than keep the shop from opening.
    pub async fn start<R: Runtime>(
        app: AppHandle<R>,
        dir: PathBuf,
        default_port: u16,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let store = Store::open(dir.join("petstore.db"))?;
        let (settings, remote_key) = persist::load(&app, &dir, default_port)?;
        let shell = Self {
            backend: Backend::new(store.clone()),
            local_api: LocalApi::new(&dir),
            saved: Mutex::new((settings.clone(), remote_key.clone())),
            dir,
        };
        if let Err(e) = shell.switch_backend(&settings, remote_key.as_deref()) {
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

    pub fn settings(&self) -> SettingsView {
        let saved = self.saved.lock().unwrap_or_else(|p| p.into_inner());
        SettingsView { settings: saved.0.clone(), has_remote_key: saved.1.is_some() }
    }

    /// Validates, applies and saves new settings; nothing changes if any part is invalid.
    pub async fn save_settings<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        input: SettingsInput,
    ) -> CommandResult<SettingsView> {
        let previous = self.saved.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let base_url = input.base_url.map(|u| u.trim().to_owned()).filter(|u| !u.is_empty());
        let remote_key = match input.remote_key.map(|k| k.trim().to_owned()).filter(|k| !k.is_empty()) {
            Some(key) => Some(key),
            None => previous.1.clone(),
        };
        if input.local_api.port == 0 {
            return Err(CommandError::validation("the local API port must be between 1 and 65535"));
        }
        let settings = Settings { backend: input.backend, base_url, local_api: input.local_api };
        self.switch_backend(&settings, remote_key.as_deref())?;
        persist::save(app, &self.dir, &settings, remote_key.as_deref())?;
        if settings.local_api != previous.0.local_api {
            let local = self.backend.local().clone();
            self.local_api.apply(local, settings.local_api.enabled, settings.local_api.port).await;
        }
        *self.saved.lock().unwrap_or_else(|p| p.into_inner()) = (settings, remote_key);
        Ok(self.settings())
    }

    fn switch_backend(&self, settings: &Settings, remote_key: Option<&str>) -> CommandResult<()> {
        match settings.backend {
            BackendKind::Local => self.backend.use_local(),
            BackendKind::Remote => {
                self.backend.use_remote(remote_client(settings.base_url.as_deref(), remote_key)?)
            }
        }
        Ok(())
    }

    /// Tries a remote without switching to it; a blank key means the saved one.
    pub async fn test_connection(&self, base_url: &str, key: Option<String>) -> ConnectionReport {
        let saved_key = self.saved.lock().unwrap_or_else(|p| p.into_inner()).1.clone();
        let key = key.filter(|k| !k.trim().is_empty()).or(saved_key);
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
            },
            Target::Remote { base_url } => {
                let probed = probe(self.current().as_ref()).await;
                Status {
                    backend: BackendKind::Remote,
                    target: base_url,
                    reachable: probed.is_ok(),
                    message: probed.err(),
                    local_api,
                }
            }
        }
    }
}

/// A person is waiting at the counter: a remote that does not answer within this is
/// reported rather than waited for.
const REMOTE_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

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
