//! A backup of the local database from Settings, taken while the app keeps working: the
//! store's `VACUUM INTO` reads one snapshot on a reader connection, so orders placed at the
//! counter or through the local API meanwhile go on and are wholly in it or wholly not.

use std::path::{Path, PathBuf};

use petstore::domain::Operation;
use tauri::{AppHandle, Manager, Runtime, State};

use crate::error::{CommandError, CommandResult};
use crate::input::Input;
use crate::shell::Shell;

/// Where Settings proposes the next backup: `petstore-backup-YYYY-MM-DD.db` in the home
/// folder (else the folder above the data directory), with `-2`, `-3`, ... when that name
/// is taken, since a backup never overwrites a file.
#[tauri::command]
pub fn suggest_backup_path<R: Runtime>(app: AppHandle<R>, shell: State<'_, Shell>) -> CommandResult<String> {
    let data_dir = shell.backend().local().path().parent().map(Path::to_path_buf);
    let dir = app
        .path()
        .home_dir()
        .ok()
        .or_else(|| data_dir.and_then(|d| d.parent().map(Path::to_path_buf)))
        .ok_or_else(|| {
            CommandError::validation("this system has no home folder; type where the backup goes")
        })?;
    // The UTC date: the one every other date in the shop's data uses.
    let day = petstore::domain::Timestamp::now().as_datetime().format("%Y-%m-%d");
    let path = (1..)
        .map(|n| match n {
            1 => dir.join(format!("petstore-backup-{day}.db")),
            n => dir.join(format!("petstore-backup-{day}-{n}.db")),
        })
        .find(|p| !p.exists())
        .expect("an unused name");
    Ok(path.display().to_string())
}

/// Writes a backup of the LOCAL database (whichever backend the window uses) to `to`, a
/// full path that must not exist yet (`~/` is the home folder); answers the file written.
#[tauri::command]
pub async fn backup_database<R: Runtime>(
    app: AppHandle<R>,
    shell: State<'_, Shell>,
    to: Input<String>,
) -> CommandResult<String> {
    let to = destination(&app, &to.0)?;
    shell.allowed(Operation::BackUpShop).await?;
    shell.backend().local().backup(&to).await?;
    Ok(to.display().to_string())
}

fn destination<R: Runtime>(app: &AppHandle<R>, typed: &str) -> CommandResult<PathBuf> {
    let typed = typed.trim();
    if typed.is_empty() {
        return Err(CommandError::validation("to: type where the backup goes, e.g. ~/petstore-backup.db"));
    }
    let path = match typed.strip_prefix("~/") {
        Some(rest) => app
            .path()
            .home_dir()
            .map_err(|_| CommandError::validation("to: this system has no home folder"))?
            .join(rest),
        None => PathBuf::from(typed),
    };
    // The app's working folder means nothing to the person typing; ask for a full path.
    if !path.is_absolute() {
        return Err(CommandError::validation(format!(
            "to: {typed} is not a full path; give one like ~/petstore-backup.db"
        )));
    }
    Ok(path)
}
