use petstore::domain::Operation;
use tauri::{AppHandle, Runtime, State};

use crate::error::{CommandError, CommandResult};
use crate::input::Input;
use crate::settings::{SettingsInput, SettingsView, UiPreferences, persist};
use crate::shell::Shell;
use crate::status::{ConnectionReport, Status};

#[tauri::command]
pub fn get_settings(shell: State<'_, Shell>) -> SettingsView {
    shell.settings()
}

/// Saves and applies the settings: switches the backend and restarts the local API as
/// needed, without restarting the app. While the environment sets the remote
/// (`PETSTORE_REMOTE_URL`), only the local API's settings can change.
#[tauri::command]
pub async fn save_settings<R: Runtime>(
    app: AppHandle<R>,
    shell: State<'_, Shell>,
    settings: Input<SettingsInput>,
) -> CommandResult<SettingsView> {
    shell.allowed(Operation::ChangeTillSettings).await?;
    shell.save_settings(&app, settings.0).await
}

/// Tries a remote server; a missing key means the saved one.
#[tauri::command]
pub async fn test_connection(
    shell: State<'_, Shell>,
    base_url: Input<String>,
    remote_key: Input<Option<String>>,
) -> CommandResult<ConnectionReport> {
    Ok(shell.test_connection(&base_url.0, remote_key.0).await)
}

#[tauri::command]
pub async fn get_status(shell: State<'_, Shell>) -> CommandResult<Status> {
    Ok(shell.status().await)
}

/// The local API's key, for Settings to show and copy. (The remote key is never sent.)
/// It is the operator's key, which writes as itself whoever holds it: only someone who may
/// manage keys is shown it, or the role checks could be gone round through the local API.
#[tauri::command]
pub async fn get_local_api_key(shell: State<'_, Shell>) -> CommandResult<String> {
    shell.allowed(Operation::ShowLocalApiKey).await?;
    shell.local_api().key().map_err(CommandError::internal)
}

/// A new local API key; the old one stops working at once.
#[tauri::command]
pub async fn regenerate_local_api_key(shell: State<'_, Shell>) -> CommandResult<String> {
    shell.allowed(Operation::RegenerateLocalApiKey).await?;
    let key = shell.local_api().new_key().map_err(CommandError::internal)?;
    if shell.local_api().status().enabled {
        shell.restart_local_api().await;
    }
    Ok(key)
}

/// Opens the local API's reference (`/docs`) in the system's browser. Only that address:
/// the window cannot open anything else, which is why this is a command and not a
/// permission of the opener plugin.
#[tauri::command]
pub fn open_api_docs<R: Runtime>(app: AppHandle<R>, shell: State<'_, Shell>) -> CommandResult<()> {
    use tauri_plugin_opener::OpenerExt;
    let Some(address) = shell.local_api().status().address else {
        return Err(CommandError::validation(
            "the local API is not serving, so there is no reference to open",
        ));
    };
    app.opener()
        .open_url(format!("{address}/docs"), None::<&str>)
        .map_err(|e| CommandError::validation(format!("could not open a browser: {e}")))
}

/// The window's own preferences (its theme and language), read before the first screen shows.
#[tauri::command]
pub fn get_preferences<R: Runtime>(
    app: AppHandle<R>,
    shell: State<'_, Shell>,
) -> CommandResult<UiPreferences> {
    persist::load_preferences(&app, shell.dir())
}

/// Saves the window's preferences; the window has applied them already, the menu bar
/// (macOS) shows the language now.
#[tauri::command]
pub fn save_preferences<R: Runtime>(
    app: AppHandle<R>,
    shell: State<'_, Shell>,
    preferences: Input<UiPreferences>,
) -> CommandResult<UiPreferences> {
    persist::save_preferences(&app, shell.dir(), &preferences.0)?;
    crate::menu::show(&app, preferences.0.language.resolve());
    Ok(preferences.0)
}
