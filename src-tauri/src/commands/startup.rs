//! The failure screen's commands: the only ones that work when the app could not start
//! (every other command needs the shop, which is not there).

use tauri::{AppHandle, Manager, Runtime};

use super::files::file_path;
use crate::error::{CommandError, CommandResult};
use crate::input::Input;
use crate::startup::{StartupFailure, StartupFailureKind};

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

/// Asks for a backup to restore, with the system's open dialog; `None` when cancelled.
#[tauri::command]
pub async fn choose_backup<R: Runtime>(app: AppHandle<R>) -> CommandResult<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog().file().add_filter("Petstore backup", &["db"]).pick_file(move |p| {
        let _ = tx.send(p);
    });
    let picked = rx.await.map_err(CommandError::internal)?;
    Ok(picked.and_then(|p| p.into_path().ok()).map(|p| p.display().to_string()))
}

/// Restores the backup at `path` over the database that stopped the start (a damaged one,
/// or one from a newer Petstore), which is kept beside it; answers what it says, and the
/// UI then starts again. The backup is checked whole first; a bad one changes nothing.
#[tauri::command]
pub fn restore_backup<R: Runtime>(app: AppHandle<R>, path: Input<String>) -> CommandResult<String> {
    let Some(failure) = app.try_state::<StartupFailure>() else {
        return Err(CommandError::validation(
            "Petstore started; restore a backup with Quit first (see the guide)",
        ));
    };
    if !matches!(failure.kind, StartupFailureKind::NewerDatabase | StartupFailureKind::DamagedDatabase) {
        return Err(CommandError::validation(
            "a backup helps only when the database itself stopped the start",
        ));
    }
    let from = file_path(&path.0)?;
    let target = std::path::Path::new(&failure.data_dir).join(crate::shell::DATABASE_FILE);
    let restored =
        petstore::store::restore(&from, &target).map_err(|e| CommandError::validation(e.to_string()))?;
    let kept = restored
        .kept
        .map(|k| format!("; the database it replaced is kept as {}", k.display()))
        .unwrap_or_default();
    Ok(format!(
        "Restored {} pets and {} orders from {}{kept}.",
        restored.pets,
        restored.orders,
        from.display()
    ))
}
