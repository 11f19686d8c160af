//! Petstore Desktop: the Tauri shell over the Petstore core. Commands are thin: each calls
//! one operation of the active backend (the local store or a remote server). The app also
//! serves the REST API on localhost and tells the window when the data changed.

mod backend;
pub mod commands;
mod deferred;
mod error;
mod events;
mod input;
mod local_api;
mod low_stock;
mod quit;
mod secret_store;
mod settings;
mod shell;

use std::path::PathBuf;

use tauri::{Manager, Runtime};

pub use backend::{Backend, Target};
pub use error::{CommandError, CommandResult};
pub use local_api::{LocalApi, LocalApiStatus};
pub use secret_store::RemoteKeyStorage;
pub use settings::{
    BackendKind, LocalApiSettings, ProvisionedRemote, Provisioning, Settings, SettingsInput, SettingsView,
    ThemeChoice, UiPreferences,
};
pub use shell::{ConnectionReport, Shell, Status};

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

    fn data_dir<R: Runtime>(&self, app: &tauri::App<R>) -> Result<PathBuf, Box<dyn std::error::Error>> {
        let dir = match &self.data_dir {
            Some(dir) => dir.clone(),
            None => app.path().app_data_dir()?,
        };
        // Every folder made here is 0700; one that was there is made private too (only
        // the data folder itself: a parent such as /srv is not the app's to change).
        petstore::private::create_dir(&dir)?;
        petstore::private::tighten_dir(&dir);
        Ok(dir)
    }
}

/// The app on any runtime: `tauri::Builder::default()` in `main`, the mock runtime in tests.
pub fn run_app<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        .plugin(tauri_plugin_store::Builder::default().build())
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_opener::init())
        .manage(quit::QuitQuestion::default())
        .manage(std::sync::Arc::new(low_stock::LowStockAlerts::default()))
        .on_window_event(quit::on_window_event)
        .setup(|app| {
            let launch =
                app.try_state::<Launch>().map(|l| l.inner().clone()).unwrap_or_else(Launch::from_env);
            let dir = launch.data_dir(app)?;
            let port = launch.local_api_port.unwrap_or(settings::DEFAULT_LOCAL_API_PORT);
            let shell = tauri::async_runtime::block_on(Shell::start(
                app.handle().clone(),
                dir,
                port,
                launch.provisioning,
            ))?;
            events::forward_changes(app.handle().clone(), shell.backend().local().subscribe());
            events::forward_changes(app.handle().clone(), shell.backend().remote_changes());
            events::forward_sync(app.handle().clone(), shell.backend().sync_watch());
            app.manage(shell);
            Ok(())
        })
        .invoke_handler(commands::handler())
}
