//! Petstore Desktop: the Tauri shell over the Petstore core. Commands are thin: each calls
//! one operation of the active backend (the local store or a remote server). The app also
//! serves the REST API on localhost and tells the window when the data changed.

mod backend;
pub mod commands;
mod error;
mod events;
mod local_api;
mod settings;
mod shell;

use std::path::PathBuf;

use tauri::{Manager, Runtime};

pub use backend::{Backend, Target};
pub use error::{CommandError, CommandResult};
pub use local_api::{LocalApi, LocalApiStatus};
pub use settings::{BackendKind, LocalApiSettings, Settings, SettingsInput, SettingsView};
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

/// Where the database, the local API key and the settings live: `PETSTORE_DATA_DIR` if set
/// (tests, a second shop profile), else the platform's app-data directory.
fn data_dir<R: Runtime>(app: &tauri::App<R>) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let dir = match std::env::var_os("PETSTORE_DATA_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => app.path().app_data_dir()?,
    };
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The app on any runtime: `tauri::Builder::default()` in `main`, the mock runtime in tests.
pub fn run_app<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        .plugin(tauri_plugin_store::Builder::default().build())
        .setup(|app| {
            let dir = data_dir(app)?;
            let shell = tauri::async_runtime::block_on(Shell::start(app.handle().clone(), dir))?;
            events::forward_changes(app.handle().clone(), shell.backend().local().subscribe());
            app.manage(shell);
            Ok(())
        })
        .invoke_handler(commands::handler())
}
