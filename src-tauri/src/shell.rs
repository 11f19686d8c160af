//! The composition root: the `Shell` the commands share, put together at start from the
//! switchable backend (`backend_switch.rs`), the local API and the saved settings that decide
//! both, with the remote key read beside (`remote_key.rs`). Its jobs live in rooms of their
//! own: saving settings (`settings_save.rs`) and status probing (`status.rs`), each an
//! `impl Shell` that reaches the parts kept here.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use petstore::domain::StaffRef;
use petstore::staff::proof::ProofKey;
use petstore::{Petstore, Store};
use tauri::{AppHandle, Manager, Runtime};

use crate::backend_switch::{Backend, Target};
use crate::deferred::Deferred;
use crate::local_api::LocalApi;
use crate::remote_key::{RemoteKey, provisioned_client, remote_backend};
use crate::secret_store::{self, SecretStore};
use crate::settings::{
    BackendKind, ProvisionedRemote, Provisioning, REMOTE_URL_VAR, Settings, SettingsView, persist,
};
use petstore::private;

/// The shop's database in the data folder.
pub const DATABASE_FILE: &str = "petstore.db";

/// What the commands share. Its parts are open to the crate so that the rooms doing its
/// jobs (`settings_save.rs`, `status.rs`) reach them as this file does; the commands go
/// through its methods.
pub struct Shell {
    pub(crate) dir: PathBuf,
    pub(crate) backend: Backend,
    pub(crate) local_api: LocalApi,
    /// The saved settings.
    pub(crate) saved: Mutex<Settings>,
    /// The remote key, read at start on a thread of its own (see [`Shell::start`]).
    pub(crate) remote_key: Deferred<RemoteKey>,
    /// The remote set by the environment, in use since start whatever is saved; it is
    /// never saved, nor is its key.
    pub(crate) provisioned: Option<ProvisionedRemote>,
    /// Why the remote set by the environment cannot be used, for the status bar.
    pub(crate) provisioning_error: Option<String>,
    /// Who is serving at this till (`till_staff.rs`).
    pub(crate) staff: Mutex<TillStaff>,
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
            RemoteKey::open(&key_app, key_dir, account, legacy_key, saved_base_url.as_deref())
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
            staff: Mutex::default(),
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
        // A shop of one PIN-less owner is signed in as that owner now, as it worked before
        // staff: no prompt.
        if let Err(e) = shell.serving().await {
            tracing::warn!(error = %e.message, "who serves could not be read at start; the till asks for a sign-in");
        }
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
    pub fn served(&self) -> Option<petstore::Served> {
        self.backend.served()
    }

    pub fn local_api(&self) -> &LocalApi {
        &self.local_api
    }

    /// Serves the shop the window shows as `settings` say.
    pub(crate) async fn apply_local_api(&self, settings: &Settings) {
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
}

/// Who is serving at this till: the signed-in person, and a manager's approval waiting for
/// the one action it lets through. `till_staff.rs` signs them in and out and checks what
/// they may do; the state lives here, with the rest of the shell's.
#[derive(Default)]
pub struct TillStaff {
    pub(crate) shift: Option<Shift>,
    pub(crate) approval: Option<Approval>,
}

/// A person signed in at this till, and where: the app's own shop, or the server it follows.
pub(crate) struct Shift {
    pub(crate) staff: StaffRef,
    pub(crate) at: Target,
    /// The session: the store's in local mode; the server's in remote mode when the sign-in
    /// reached it (none when the till signed them in while offline).
    pub(crate) token: Option<String>,
    /// Remote mode: made from the PIN typed, for the proofs of what is queued offline.
    pub(crate) proof_key: Option<ProofKey>,
}

/// A manager's approval of one action, kept until that action is tried again.
pub(crate) struct Approval {
    pub(crate) staff: StaffRef,
    /// An approval session of the store's (local mode) or the server's (remote mode, when
    /// it answered).
    pub(crate) token: Option<String>,
    pub(crate) proof_key: Option<ProofKey>,
}
