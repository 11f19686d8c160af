//! The Updates panel: the manifest's address (none: updates off), a check that shows what is
//! new, and the install of what was shown (`src-tauri/src/updates.rs` says how it is kept
//! safe).

use serde::Serialize;
use tauri::{AppHandle, Runtime, State};

use crate::error::{CommandError, CommandResult};
use crate::input::Input;
use crate::settings::persist;
use crate::shell::Shell;
use crate::updates::{self, Offered, RELEASE_PUBKEY, UpdateOffer};

/// Where the update address is kept, beside the settings.
const ADDRESS: &str = "updateAddress";

/// Where the floor is kept: the newest version seen offered with a valid version
/// signature. No later offer below it is taken, so a manifest host cannot walk the shop
/// back to an older signed release.
const FLOOR: &str = "updateFloor";

/// What the Updates panel shows.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateSettings {
    /// The manifest's address; none: updates are off.
    pub address: Option<String>,
    /// Whether this build can install updates at all (it carries the release key).
    pub can_install: bool,
    pub current_version: String,
}

fn view<R: Runtime>(app: &AppHandle<R>, address: Option<String>) -> UpdateSettings {
    UpdateSettings {
        address,
        can_install: !RELEASE_PUBKEY.is_empty(),
        current_version: app.package_info().version.to_string(),
    }
}

fn saved_address<R: Runtime>(app: &AppHandle<R>, shell: &Shell) -> CommandResult<Option<String>> {
    Ok(persist::load_value(app, shell.dir(), ADDRESS)?.and_then(|v| v.as_str().map(str::to_owned)))
}

#[tauri::command]
pub fn get_update_settings<R: Runtime>(
    app: AppHandle<R>,
    shell: State<'_, Shell>,
) -> CommandResult<UpdateSettings> {
    Ok(view(&app, saved_address(&app, &shell)?))
}

/// Saves the address (checked: https, or http to this computer); empty turns updates off.
#[tauri::command]
pub fn save_update_address<R: Runtime>(
    app: AppHandle<R>,
    shell: State<'_, Shell>,
    address: Input<Option<String>>,
) -> CommandResult<UpdateSettings> {
    let address = address.0.filter(|a| !a.trim().is_empty());
    let address = address.map(|a| updates::parse_address(&a).map(|url| url.to_string())).transpose()?;
    persist::save_value(&app, shell.dir(), ADDRESS, address.clone().map(serde_json::Value::String))?;
    Ok(view(&app, address))
}

/// Asks the saved address for a newer Petstore; answers what it offers (kept for
/// `install_update`), or nothing when this one is the latest.
#[tauri::command]
pub async fn check_for_update<R: Runtime>(
    app: AppHandle<R>,
    shell: State<'_, Shell>,
    offered: State<'_, Offered>,
) -> CommandResult<Option<UpdateOffer>> {
    let Some(address) = saved_address(&app, &shell)? else {
        return Err(CommandError::validation("updates are off: give the update address first"));
    };
    let floor = persist::load_value(&app, shell.dir(), FLOOR)?.and_then(|v| v.as_str().map(str::to_owned));
    let found =
        updates::check(&app, updates::parse_address(&address)?, RELEASE_PUBKEY, floor.as_deref()).await?;
    if let Some((offer, _)) = &found {
        persist::save_value(
            &app,
            shell.dir(),
            FLOOR,
            Some(serde_json::Value::String(offer.version.clone())),
        )?;
    }
    let (offer, update) = found.unzip();
    *offered.0.lock().unwrap_or_else(|p| p.into_inner()) = update;
    Ok(offer)
}

/// Downloads the update last offered, checks its signature, installs it and starts the new
/// Petstore. Nothing is installed when the signature does not match.
#[tauri::command]
pub async fn install_update<R: Runtime>(app: AppHandle<R>, offered: State<'_, Offered>) -> CommandResult<()> {
    let Some(update) = offered.0.lock().unwrap_or_else(|p| p.into_inner()).take() else {
        return Err(CommandError::validation("check for updates first"));
    };
    let bytes = updates::download(&update).await?;
    update.install(bytes).map_err(|e| {
        CommandError::validation(format!("Petstore {} could not be installed: {e}", update.version))
    })?;
    tracing::info!(version = %update.version, "installed an update; starting it");
    app.restart()
}
