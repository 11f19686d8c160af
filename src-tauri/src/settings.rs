//! The app's settings, kept with tauri-plugin-store in `settings.json` in the data
//! directory. The remote key is not among them: it lives in the OS keyring or a private
//! file (`secret_store`) and never leaves the Rust side; the UI only learns whether one is
//! saved and where.
//!
//! A remote may also be set by the environment (`PETSTORE_REMOTE_URL` and its key, see
//! [`Provisioning`]): IT sets up many tills that way. It wins over the saved settings and is
//! never written anywhere: not to `settings.json`, not to the keyring or the key file.

use std::path::{Path, PathBuf};

use petstore::client::{Client, origin_of};
use serde::{Deserialize, Serialize};

use crate::language::LanguageChoice;
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

/// The window's light or dark look: the system's (what `prefers-color-scheme` says), or
/// one of the two whatever the system says.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThemeChoice {
    #[default]
    System,
    Light,
    Dark,
}

/// The window's own preferences: how it looks and speaks, nothing about the shop or its data. Kept in
/// `settings.json` beside the settings, apart from them, so saving one never touches the
/// other (the Settings form's save, with its remote checks, is not needed for a colour).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct UiPreferences {
    pub theme: ThemeChoice,
    pub language: LanguageChoice,
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
    /// The remote is set by the environment (`PETSTORE_REMOTE_URL`): `backend` and
    /// `baseUrl` are then that remote's, not the saved ones, and only the local API's
    /// settings can be saved. Left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub provisioned: bool,
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

/// The server's address.
pub const REMOTE_URL_VAR: &str = "PETSTORE_REMOTE_URL";
/// The server's API key itself.
pub const REMOTE_KEY_VAR: &str = "PETSTORE_REMOTE_KEY";
/// A file holding the server's API key (read once at start, surrounding blanks ignored).
pub const REMOTE_KEY_FILE_VAR: &str = "PETSTORE_REMOTE_KEY_FILE";

/// What the environment says about the remote: `PETSTORE_REMOTE_URL` with exactly one of
/// `PETSTORE_REMOTE_KEY` and `PETSTORE_REMOTE_KEY_FILE`. A variable set to the empty
/// string counts as not set.
///
/// A provisioning that cannot be used (an address that does not parse, a key file that
/// cannot be read or is empty, both key variables, an address without a key or a key
/// without an address) does not stop the app: a till that does not open sells nothing.
/// Nor does it quietly fall back to local mode as if all were well, since IT expects this
/// till on the shared server and a sale kept only here would be missed there. The app
/// starts as saved, logs a warning and shows the reason in the status bar (red, "Not
/// reachable") until the environment is fixed.
#[derive(Debug, Clone, Default)]
pub enum Provisioning {
    /// None of the three variables is set: the saved settings decide.
    #[default]
    None,
    /// The remote to use, whatever the saved settings say.
    Remote(ProvisionedRemote),
    /// Some are set, but they cannot be used; why, naming the variables (never the key).
    Invalid(String),
}

impl Provisioning {
    /// Reads `PETSTORE_REMOTE_URL`, `PETSTORE_REMOTE_KEY` and `PETSTORE_REMOTE_KEY_FILE`
    /// (and the key file, now).
    pub fn from_env() -> Self {
        let text = |name: &str| match std::env::var(name) {
            Ok(value) => Ok(Some(value)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(format!("{name} is not valid text")),
        };
        let (url, key) = match (text(REMOTE_URL_VAR), text(REMOTE_KEY_VAR)) {
            (Ok(url), Ok(key)) => (url, key),
            (Err(why), _) | (_, Err(why)) => return Self::Invalid(why),
        };
        Self::from_vars(url, key, std::env::var_os(REMOTE_KEY_FILE_VAR).map(PathBuf::from))
    }

    /// The provisioning these values of the three variables make (`None`: not set), the
    /// key file read now.
    pub fn from_vars(url: Option<String>, key: Option<String>, key_file: Option<PathBuf>) -> Self {
        let url = url.filter(|u| !u.is_empty());
        let key = key.filter(|k| !k.is_empty());
        let key_file = key_file.filter(|f| !f.as_os_str().is_empty());
        let key = match (&url, key, key_file) {
            (None, None, None) => return Self::None,
            (None, Some(_), _) | (None, None, Some(_)) => {
                return Self::Invalid(format!(
                    "{REMOTE_KEY_VAR} or {REMOTE_KEY_FILE_VAR} is set but {REMOTE_URL_VAR} is not: \
                     set the server's address too"
                ));
            }
            (Some(_), Some(_), Some(_)) => {
                return Self::Invalid(format!(
                    "both {REMOTE_KEY_VAR} and {REMOTE_KEY_FILE_VAR} are set: set only one"
                ));
            }
            (Some(_), None, None) => {
                return Self::Invalid(format!(
                    "{REMOTE_URL_VAR} is set but neither {REMOTE_KEY_VAR} nor {REMOTE_KEY_FILE_VAR}: \
                     the server needs its API key"
                ));
            }
            (Some(_), Some(key), None) => key,
            (Some(_), None, Some(file)) => match read_key_file(&file) {
                Ok(key) => key,
                Err(why) => return Self::Invalid(why),
            },
        };
        let url = url.expect("checked above");
        match ProvisionedRemote::new(&url, &key) {
            Ok(remote) => Self::Remote(remote),
            Err(why) => Self::Invalid(why),
        }
    }
}

fn read_key_file(file: &Path) -> Result<String, String> {
    let name = format!("{REMOTE_KEY_FILE_VAR} {}", file.display());
    // The error names the file and the reason only, never what the file holds.
    let bytes = std::fs::read(file).map_err(|e| format!("{name} cannot be read: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{name} does not hold text"))?;
    let key = text.trim();
    if key.is_empty() {
        return Err(format!("{name} is empty"));
    }
    Ok(key.to_owned())
}

/// A remote set by the environment, checked as the client checks it. Its key stays in
/// memory: the Debug form hides it, and nothing writes it anywhere.
#[derive(Clone)]
pub struct ProvisionedRemote {
    /// As the client shows it (no trailing slash).
    base_url: String,
    key: String,
}

impl ProvisionedRemote {
    /// Checks the address and the key (blanks around the key are ignored); the error
    /// never repeats the key.
    pub fn new(base_url: &str, key: &str) -> Result<Self, String> {
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("{REMOTE_KEY_VAR} is blank"));
        }
        origin_of(base_url).map_err(|e| format!("{REMOTE_URL_VAR} cannot be used: {}", e.message))?;
        let client = Client::new(base_url, key)
            .map_err(|e| format!("the remote API key cannot be used: {}", e.message))?;
        Ok(Self { base_url: client.base_url(), key: key.to_owned() })
    }

    /// The server's address, as the client shows it.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub(crate) fn key(&self) -> &str {
        &self.key
    }
}

/// Written by hand so the key can never show up in a log line or a panic message.
impl std::fmt::Debug for ProvisionedRemote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProvisionedRemote")
            .field("base_url", &self.base_url)
            .field("key", &"<redacted>")
            .finish()
    }
}

/// Where settings live and how they are read and written.
pub mod persist {
    use std::path::Path;

    use serde_json::json;
    use tauri::Runtime;
    use tauri_plugin_store::StoreExt;

    use super::{Settings, UiPreferences};
    use crate::error::{CommandError, CommandResult};

    /// The file, in the data directory.
    pub const FILE_NAME: &str = "settings.json";
    const SETTINGS: &str = "settings";
    const UI_PREFERENCES: &str = "ui";
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

    /// A value kept beside the settings under `key` (the update address), if there is one.
    pub fn load_value<R: Runtime>(
        app: &tauri::AppHandle<R>,
        dir: &Path,
        key: &str,
    ) -> CommandResult<Option<serde_json::Value>> {
        let store = store(app, dir)?;
        ensure_private(dir)?;
        Ok(store.get(key))
    }

    /// Keeps `value` beside the settings under `key`; `None` removes it.
    pub fn save_value<R: Runtime>(
        app: &tauri::AppHandle<R>,
        dir: &Path,
        key: &str,
        value: Option<serde_json::Value>,
    ) -> CommandResult<()> {
        let store = store(app, dir)?;
        ensure_private(dir)?;
        match value {
            Some(value) => store.set(key, value),
            None => {
                store.delete(key);
            }
        }
        store.save().map_err(CommandError::internal)
    }

    /// The window's preferences, or the defaults when none are saved (or they do not parse,
    /// which is logged: a look is never worth a window that does not open).
    pub fn load_preferences<R: Runtime>(
        app: &tauri::AppHandle<R>,
        dir: &Path,
    ) -> CommandResult<UiPreferences> {
        Ok(match load_value(app, dir, UI_PREFERENCES)? {
            Some(value) => serde_json::from_value(value).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "the saved window preferences do not parse; using the defaults");
                UiPreferences::default()
            }),
            None => UiPreferences::default(),
        })
    }

    pub fn save_preferences<R: Runtime>(
        app: &tauri::AppHandle<R>,
        dir: &Path,
        preferences: &UiPreferences,
    ) -> CommandResult<()> {
        save_value(app, dir, UI_PREFERENCES, Some(json!(preferences)))
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

    const KEY: &str = "provisioned-key-0123456789abcdef";

    fn vars(url: Option<&str>, key: Option<&str>, file: Option<&Path>) -> Provisioning {
        Provisioning::from_vars(url.map(Into::into), key.map(Into::into), file.map(Into::into))
    }

    fn invalid(p: Provisioning) -> String {
        match p {
            Provisioning::Invalid(why) => why,
            other => panic!("expected an invalid provisioning, got {other:?}"),
        }
    }

    #[test]
    fn nothing_set_or_all_empty_is_no_provisioning() {
        assert!(matches!(vars(None, None, None), Provisioning::None));
        assert!(matches!(vars(Some(""), Some(""), Some(Path::new(""))), Provisioning::None));
    }

    #[test]
    fn an_address_with_a_key_is_a_remote_whose_debug_form_hides_the_key() {
        let Provisioning::Remote(remote) = vars(Some("http://shop:8787/"), Some(&format!(" {KEY}\n")), None)
        else {
            panic!("expected a remote")
        };
        assert_eq!((remote.base_url(), remote.key()), ("http://shop:8787", KEY));
        let debug = format!("{:?}", Provisioning::Remote(remote));
        assert!(!debug.contains(KEY) && debug.contains("<redacted>"), "{debug}");
    }

    #[test]
    fn the_key_file_is_read_and_trimmed_and_must_hold_a_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("remote.key");
        std::fs::write(&file, format!("{KEY}\n")).unwrap();
        let Provisioning::Remote(remote) = vars(Some("http://shop:8787"), None, Some(&file)) else {
            panic!("expected a remote")
        };
        assert_eq!(remote.key(), KEY);

        std::fs::write(&file, " \n").unwrap();
        assert!(invalid(vars(Some("http://shop:8787"), None, Some(&file))).contains("is empty"));
        let missing = dir.path().join("missing.key");
        let why = invalid(vars(Some("http://shop:8787"), None, Some(&missing)));
        assert!(why.contains(REMOTE_KEY_FILE_VAR) && why.contains("cannot be read"), "{why}");
    }

    #[test]
    fn every_bad_combination_says_why_and_never_repeats_the_key() {
        let cases = [
            (vars(Some("http://shop:8787"), None, None), "neither"),
            (vars(None, Some(KEY), None), "PETSTORE_REMOTE_URL is not"),
            (vars(Some("http://shop:8787"), Some(KEY), Some(Path::new("/k"))), "set only one"),
            (vars(Some("shop:8787"), Some(KEY), None), REMOTE_URL_VAR),
            (vars(Some("ftp://shop"), Some(KEY), None), "http://"),
            (vars(Some("http://shop:8787"), Some("   "), None), "blank"),
            (vars(Some("http://shop:8787"), Some("two\nlines"), None), "cannot be sent"),
        ];
        for (provisioning, expected) in cases {
            let why = invalid(provisioning);
            assert!(why.contains(expected), "{why:?} should say {expected:?}");
            assert!(!why.contains(KEY), "{why}");
        }
    }
}
