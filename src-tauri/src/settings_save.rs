//! The settings-save workflow: Settings' answer validated whole, the remote key written or
//! forgotten, `settings.json` saved, then the backend switched and the local API served again
//! as the new settings say, in that order, so that nothing changes if any part is invalid. Its
//! own room because it is the one place where the key, the file and the running app change
//! together.

use tauri::{AppHandle, Runtime};

use crate::backend_switch::Target;
use crate::error::{CommandError, CommandResult};
use crate::remote_key::{KeyState, remote_backend, typed_key};
use crate::settings::{
    BackendKind, ProvisionedRemote, REMOTE_KEY_FILE_VAR, REMOTE_KEY_VAR, REMOTE_URL_VAR, Settings,
    SettingsInput, SettingsView, persist,
};
use crate::shell::Shell;

/// What saving settings does to the remote key.
enum KeyChange {
    Keep,
    Replace(String),
    Forget,
}

impl Shell {
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
}
