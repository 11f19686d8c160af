//! Status probing: whether the shop the window shows answers, for the status bar and for
//! Settings' "Test connection". Its own room because asking a remote is a question with a
//! time limit and its own wording, apart from how the shell is put together.

use std::time::Duration;

use petstore::Petstore;
use petstore::client::origin_of;
use petstore::domain::Page;
use petstore::mirror::SyncState;
use serde::Serialize;

use crate::backend_switch::Target;
use crate::local_api::LocalApiStatus;
use crate::remote_key::remote_backend;
use crate::secret_store::{KeyOrigin, RemoteKeyStorage, SavedKey};
use crate::settings::BackendKind;
use crate::shell::Shell;

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

impl Shell {
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

/// One cheap authenticated call: answers the pet count, or why it failed.
async fn probe(backend: &dyn Petstore) -> Result<u64, String> {
    let page = Page::new(1, 0).map_err(|e| e.message)?;
    match tokio::time::timeout(PROBE_TIMEOUT, backend.list_pets(Default::default(), page)).await {
        Ok(Ok(pets)) => Ok(pets.total),
        Ok(Err(e)) => Err(e.message),
        Err(_) => Err(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())),
    }
}
