//! The failure screen's commands: the only ones that work when the app could not start
//! (every other command needs the shop, which is not there).

use tauri::{AppHandle, Manager, Runtime};

use crate::error::{CommandError, CommandResult};
use crate::startup::StartupFailure;

/// Why the app could not start, or nothing when it did. The UI asks first thing.
#[tauri::command]
pub fn startup_failure<R: Runtime>(app: AppHandle<R>) -> Option<StartupFailure> {
    app.try_state::<StartupFailure>().map(|failure| failure.inner().clone())
}

/// Opens the data folder in the system's file manager, from the failure screen. That one
/// folder only: the window cannot open anything else (no opener permission).
#[tauri::command]
pub fn open_data_folder<R: Runtime>(app: AppHandle<R>) -> CommandResult<()> {
    use tauri_plugin_opener::OpenerExt;
    let Some(failure) = app.try_state::<StartupFailure>() else {
        return Err(CommandError::validation("Petstore started; its data folder is shown in Settings"));
    };
    app.opener()
        .open_path(&failure.data_dir, None::<&str>)
        .map_err(|e| CommandError::validation(format!("could not open {}: {e}", failure.data_dir)))
}

/// Starts the app again, once what stopped it is fixed (a folder made writable, a backup
/// put in place, the other Petstore closed).
#[tauri::command]
pub fn restart_app<R: Runtime>(app: AppHandle<R>) {
    tracing::info!("starting again, as asked from the failure screen");
    app.restart();
}
