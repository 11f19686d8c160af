//! The app's settings, kept with tauri-plugin-store in `settings.json` in the data
//! directory. The remote key is not among them: it lives in the OS keyring or a private
//! file (`secret_store`) and never leaves the Rust side; the UI only learns whether one is
//! saved and where.

use serde::{Deserialize, Serialize};

use crate::secret_store::RemoteKeyStorage;

pub const DEFAULT_LOCAL_API_PORT: u16 = 8787;

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    #[default]
    Local,
    Remote,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalApiSettings {
    pub enabled: bool,
    pub port: u16,
}

/// What is saved, minus the remote key.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub backend: BackendKind,
    /// The remote Petstore, e.g. `http://shop-server.lan:8787`.
    pub base_url: Option<String>,
    pub local_api: LocalApiSettings,
}

impl Settings {
    /// Defaults: local mode, the local API on at `port`.
    pub fn defaults(port: u16) -> Self {
        Self {
            backend: BackendKind::Local,
            base_url: None,
            local_api: LocalApiSettings { enabled: true, port },
        }
    }
}

/// What the Settings screen shows: the settings, whether a remote key is saved and where
/// it is (or would be) kept.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    #[serde(flatten)]
    pub settings: Settings,
    pub has_remote_key: bool,
    pub remote_key_storage: RemoteKeyStorage,
    /// Why a keyring that exists is not used (locked, access denied, no answer); null when
    /// the key is in the keyring or there is no keyring at all.
    pub keyring_error: Option<String>,
}

/// What the Settings screen saves. `remote_key`: null keeps the saved key, a blank string
/// deletes it (from the keyring or the file), anything else replaces it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SettingsInput {
    pub backend: BackendKind,
    pub base_url: Option<String>,
    #[serde(default)]
    pub remote_key: Option<String>,
    pub local_api: LocalApiSettings,
}

/// Written by hand so the key can never show up in a log line or a panic message.
impl std::fmt::Debug for SettingsInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingsInput")
            .field("backend", &self.backend)
            .field("base_url", &self.base_url)
            .field("remote_key", &self.remote_key.as_ref().map(|_| "<redacted>"))
            .field("local_api", &self.local_api)
            .finish()
    }
}

/// Where settings live and how they are read and written.
pub mod persist {
    use std::path::Path;

    use serde_json::json;
    use tauri::Runtime;
    use tauri_plugin_store::StoreExt;

    use super::Settings;
    use crate::error::{CommandError, CommandResult};

    /// The file, in the data directory.
    pub const FILE_NAME: &str = "settings.json";
    const SETTINGS: &str = "settings";
    /// Where versions before the keyring kept the remote key; read once to move it out.
    const LEGACY_REMOTE_KEY: &str = "remoteKey";

    fn store<R: Runtime>(
        app: &tauri::AppHandle<R>,
        dir: &Path,
    ) -> CommandResult<std::sync::Arc<tauri_plugin_store::Store<R>>> {
        app.store(dir.join(FILE_NAME)).map_err(CommandError::internal)
    }

    /// Creates the file, private, before the store writes it: the store writes in place,
    /// keeping the mode of a file that exists, and saves every store it loaded when the app
    /// exits, so this must be done as soon as the store is opened, not only before a save.
    fn ensure_private(dir: &Path) -> CommandResult<()> {
        petstore::private::ensure_file(&dir.join(FILE_NAME), b"{}").map_err(CommandError::internal)
    }

    /// The saved settings, or the defaults when none are saved (or they do not parse,
    /// which is logged: a damaged file must not keep the shop from opening), and a remote
    /// key an earlier version saved beside them, to be moved to the secret store.
    pub fn load<R: Runtime>(
        app: &tauri::AppHandle<R>,
        dir: &Path,
        default_port: u16,
    ) -> CommandResult<(Settings, Option<String>)> {
        let store = store(app, dir)?;
        ensure_private(dir)?;
        let settings = match store.get(SETTINGS) {
            Some(value) => serde_json::from_value(value).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "the saved settings do not parse; using the defaults");
                Settings::defaults(default_port)
            }),
            None => Settings::defaults(default_port),
        };
        let legacy_key = store
            .get(LEGACY_REMOTE_KEY)
            .and_then(|v| v.as_str().map(|k| k.trim().to_owned()))
            .filter(|k| !k.is_empty());
        Ok((settings, legacy_key))
    }

    pub fn save<R: Runtime>(app: &tauri::AppHandle<R>, dir: &Path, settings: &Settings) -> CommandResult<()> {
        let store = store(app, dir)?;
        ensure_private(dir)?;
        store.set(SETTINGS, json!(settings));
        store.save().map_err(CommandError::internal)
    }

    /// Deletes the remote key an earlier version kept here, once it is in the secret store.
    pub fn remove_legacy_key<R: Runtime>(app: &tauri::AppHandle<R>, dir: &Path) -> CommandResult<()> {
        let store = store(app, dir)?;
        ensure_private(dir)?;
        if store.delete(LEGACY_REMOTE_KEY) {
            store.save().map_err(CommandError::internal)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_debug_form_of_a_settings_input_hides_the_remote_key() {
        let input: SettingsInput = serde_json::from_value(serde_json::json!({
            "backend": "remote", "baseUrl": "http://shop:8787", "remoteKey": "remote-key-0123456789abcdef",
            "localApi": { "enabled": true, "port": 8787 }
        }))
        .unwrap();
        let debug = format!("{input:?}");
        assert!(!debug.contains("remote-key-0123456789abcdef"), "{debug}");
        assert!(debug.contains("<redacted>") && debug.contains("http://shop:8787"), "{debug}");
    }
}
