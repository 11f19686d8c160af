//! The app's settings, kept with tauri-plugin-store in `settings.json` in the data
//! directory. The remote key is stored beside them but never leaves the Rust side: the UI
//! only learns whether one is saved.

use serde::{Deserialize, Serialize};

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

/// What the Settings screen shows: the settings and whether a remote key is saved.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    #[serde(flatten)]
    pub settings: Settings,
    pub has_remote_key: bool,
}

/// What the Settings screen saves. `remote_key: None` keeps the saved key.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SettingsInput {
    pub backend: BackendKind,
    pub base_url: Option<String>,
    #[serde(default)]
    pub remote_key: Option<String>,
    pub local_api: LocalApiSettings,
}

/// Where settings live and how they are read and written.
pub mod persist {
    use std::path::Path;

    use serde_json::json;
    use tauri::Runtime;
    use tauri_plugin_store::StoreExt;

    use super::Settings;
    use crate::error::{CommandError, CommandResult};

    const SETTINGS: &str = "settings";
    const REMOTE_KEY: &str = "remoteKey";

    fn store<R: Runtime>(
        app: &tauri::AppHandle<R>,
        dir: &Path,
    ) -> CommandResult<std::sync::Arc<tauri_plugin_store::Store<R>>> {
        app.store(dir.join("settings.json")).map_err(CommandError::internal)
    }

    /// The saved settings, or the defaults when none are saved (or they do not parse,
    /// which is logged: a damaged file must not keep the shop from opening).
    pub fn load<R: Runtime>(
        app: &tauri::AppHandle<R>,
        dir: &Path,
        default_port: u16,
    ) -> CommandResult<(Settings, Option<String>)> {
        let store = store(app, dir)?;
        let settings = match store.get(SETTINGS) {
            Some(value) => serde_json::from_value(value).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "the saved settings do not parse; using the defaults");
                Settings::defaults(default_port)
            }),
            None => Settings::defaults(default_port),
        };
        let key = store.get(REMOTE_KEY).and_then(|v| v.as_str().map(str::to_owned));
        Ok((settings, key))
    }

    pub fn save<R: Runtime>(
        app: &tauri::AppHandle<R>,
        dir: &Path,
        settings: &Settings,
        remote_key: Option<&str>,
    ) -> CommandResult<()> {
        let store = store(app, dir)?;
        store.set(SETTINGS, json!(settings));
        match remote_key {
            Some(key) => store.set(REMOTE_KEY, json!(key)),
            None => {
                store.delete(REMOTE_KEY);
            }
        }
        store.save().map_err(CommandError::internal)
    }
}
