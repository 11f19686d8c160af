//! Petstore Desktop: the Tauri shell over the Petstore core. Commands are thin: each calls
//! one operation of the active backend (the local store or a remote server). The app also
//! serves the REST API on localhost and tells the window when the data changed.

mod backend_switch;
pub mod changes;
pub mod commands;
mod deferred;
mod error;
mod events;
mod folder_lock;
mod input;
mod language;
mod local_api;
mod low_stock;
mod menu;
mod quit;
mod remote_key;
mod secret_store;
mod settings;
mod settings_save;
mod shell;
mod startup;
mod status;
mod till_staff;
pub mod updates;
mod window_state;

use std::path::{Path, PathBuf};

use tauri::{Manager, Runtime};

pub use backend_switch::{Backend, Target};
pub use error::{CommandError, CommandResult};
pub use language::{Language, LanguageChoice};
pub use local_api::{LocalApi, LocalApiStatus};
pub use secret_store::RemoteKeyStorage;
pub use settings::{
    BackendKind, LocalApiSettings, ProvisionedRemote, Provisioning, Settings, SettingsInput, SettingsView,
    ThemeChoice, UiPreferences,
};
pub use shell::Shell;
pub use startup::{StartupFailure, StartupFailureKind};
pub use status::{ConnectionReport, Status};
pub use till_staff::Serving;

/// Work around blank windows on some Linux GPU stacks (WebKitGTK's DMA-BUF renderer), and
/// set up logging. Call before anything else in `main`.
pub fn prepare_process() {
    #[cfg(target_os = "linux")]
    if std::env::var_os("WEBKIT_DISABLE_DMABUF_RENDERER").is_none() {
        // SAFETY: called first thing in `main`, before any other thread exists.
        unsafe { std::env::set_var("WEBKIT_DISABLE_DMABUF_RENDERER", "1") };
    }
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).try_init();
}

/// How this process was launched. `main` reads it from the environment; tests hand one to
/// the builder (`builder.manage(Launch { .. })`) so parallel tests never share a directory.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Where the database, the local API key and the settings live; default: the
    /// platform's app-data directory.
    pub data_dir: Option<PathBuf>,
    /// The local API's port until Settings say otherwise; default 8787 (0 picks a free one).
    pub local_api_port: Option<u16>,
    /// A remote set up by IT, which wins over the saved settings and is never saved.
    pub provisioning: Provisioning,
}

impl Launch {
    /// `PETSTORE_DATA_DIR` and `PETSTORE_LOCAL_API_PORT`, for a second shop profile, the
    /// end-to-end tests, or a machine where 8787 is taken; `PETSTORE_REMOTE_URL` with
    /// `PETSTORE_REMOTE_KEY` or `PETSTORE_REMOTE_KEY_FILE` (read now), for tills IT sets up
    /// on a shared server (see [`Provisioning`]).
    pub fn from_env() -> Self {
        Self {
            data_dir: std::env::var_os("PETSTORE_DATA_DIR").map(PathBuf::from),
            local_api_port: std::env::var("PETSTORE_LOCAL_API_PORT").ok().and_then(|p| p.parse().ok()),
            provisioning: Provisioning::from_env(),
        }
    }

    fn data_dir<R: Runtime>(&self, app: &tauri::App<R>) -> tauri::Result<PathBuf> {
        match &self.data_dir {
            Some(dir) => Ok(dir.clone()),
            None => app.path().app_data_dir(),
        }
    }
}

/// The real app: [`run_app`] and what only a desktop session has. A second launch on the
/// same data folder brings the first window to the front and exits
/// (tauri-plugin-single-instance, registered first so that it exits before anything else
/// starts); the window's size, position and maximised state are remembered
/// (tauri-plugin-window-state).
///
/// Both plugins key on the app's identifier. A launch on another data folder
/// (`PETSTORE_DATA_DIR`: a second shop profile, the end-to-end tests) is another app, so
/// its identifier gets the folder's fingerprint and its window state lives in the folder.
pub fn desktop_app(context: &mut tauri::Context<tauri::Wry>, launch: Launch) -> tauri::Builder<tauri::Wry> {
    if let Some(dir) = &launch.data_dir {
        let config = context.config_mut();
        config.identifier = folder_identifier(&config.identifier, dir);
    }
    let window_state = window_state::plugin(launch.data_dir.as_deref());
    let builder = tauri::Builder::default().plugin(tauri_plugin_single_instance::init(|app, _, _| {
        tracing::info!("Petstore was started again on this data folder: bringing its window to the front");
        if let Some(window) = app.get_webview_window("main") {
            let _ = window.unminimize();
            let _ = window.show();
            let _ = window.set_focus();
            // The window says why no new one opened.
            let _ = tauri::Emitter::emit(&window, events::OPENED_AGAIN, ());
        }
    }));
    run_app(builder.plugin(window_state).manage(window_state::Settling::default()).manage(launch))
}

/// `identifier` for the app on the data folder `dir`: the same for every launch on that
/// folder (FNV-1a of its canonical path: stable across builds, unlike std's hasher).
fn folder_identifier(identifier: &str, dir: &Path) -> String {
    let path = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let fingerprint = path
        .to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("{identifier}.folder{fingerprint:016x}")
}

/// The updater, with the release key when this build carries one (see `updates.rs`).
fn updater_plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R, tauri_plugin_updater::Config> {
    let builder = tauri_plugin_updater::Builder::new();
    if updates::RELEASE_PUBKEY.is_empty() {
        builder.build()
    } else {
        builder.pubkey(updates::RELEASE_PUBKEY).build()
    }
}

/// The app on any runtime: `tauri::Builder::default()` in `main`, the mock runtime in tests.
pub fn run_app<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        .plugin(tauri_plugin_store::Builder::default().build())
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_opener::init())
        .plugin(updater_plugin())
        .manage(updates::Offered::default())
        .manage(quit::QuitQuestion::default())
        .manage(std::sync::Arc::new(low_stock::LowStockAlerts::default()))
        .on_menu_event(menu::on_event)
        .on_window_event(|window, event| {
            quit::on_window_event(window, event);
            window_state::on_window_event(window, event);
        })
        .setup(|app| {
            let launch =
                app.try_state::<Launch>().map(|l| l.inner().clone()).unwrap_or_else(Launch::from_env);
            let dir = launch.data_dir(app)?;
            // From here on a failure is shown in the window (startup.rs), never a silent exit.
            if let Err(e) = start(app, &launch, &dir) {
                tracing::error!(error = %e, "Petstore could not start");
                app.manage(StartupFailure::from_error(&dir, &*e));
            }
            let preferences = settings::persist::load_preferences(app.handle(), &dir).unwrap_or_default();
            menu::show(app.handle(), preferences.language.resolve());
            Ok(())
        })
        .invoke_handler(commands::handler())
}

/// Takes the data folder and starts the shop in it: the store, the local API, the events.
fn start<R: Runtime>(
    app: &mut tauri::App<R>,
    launch: &Launch,
    dir: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    // Every folder made here is 0700; one that was there is made private too (only the
    // data folder itself: a parent such as /srv is not the app's to change).
    petstore::private::create_dir(dir)
        .map_err(|source| folder_lock::FolderLockError::Unwritable { dir: dir.to_path_buf(), source })?;
    petstore::private::tighten_dir(dir);
    app.manage(folder_lock::FolderLock::take(dir)?);
    let port = launch.local_api_port.unwrap_or(settings::DEFAULT_LOCAL_API_PORT);
    let shell = tauri::async_runtime::block_on(Shell::start(
        app.handle().clone(),
        dir.to_path_buf(),
        port,
        launch.provisioning.clone(),
    ))?;
    events::follow_local(app.handle().clone(), shell.backend().local().clone());
    events::forward_changes(app.handle().clone(), shell.backend().remote_changes());
    events::forward_sync(app.handle().clone(), shell.backend().sync_watch());
    app.manage(shell);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_data_folder_is_an_app_of_its_own() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let id = |dir: &Path| folder_identifier("org.petstore.desktop", dir);
        assert_eq!(id(one.path()), id(one.path()));
        assert_eq!(id(one.path()), id(&one.path().join("..").join(one.path().file_name().unwrap())));
        assert_ne!(id(one.path()), id(two.path()));
        assert!(id(one.path()).starts_with("org.petstore.desktop.folder"), "{}", id(one.path()));
    }
}
