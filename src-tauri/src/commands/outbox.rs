//! Remote mode's sync: where it stands (the status bar, the badge) and the outbox's
//! writes, those that need attention among them, with what staff can do about each.

use petstore::domain::OutboxEntry;
use petstore::mirror::SyncStatus;
use tauri::{AppHandle, Runtime, State};

use crate::error::{CommandError, CommandResult};
use crate::shell::Shell;

/// Where syncing with the remote stands; `null` in local mode.
#[tauri::command]
pub fn get_sync_status(shell: State<'_, Shell>) -> Option<SyncStatus> {
    shell.backend().sync_status()
}

/// The writes taken offline that the server does not have yet, oldest first, and those it
/// refused; empty in local mode.
#[tauri::command]
pub async fn list_outbox(shell: State<'_, Shell>) -> CommandResult<Vec<OutboxEntry>> {
    match shell.backend().mirror() {
        Some(mirror) => Ok(mirror.outbox().await?),
        None => Ok(Vec::new()),
    }
}

/// Sends a write that needs attention again (after a delivery, say), at the end of the
/// queue: as the signed-in person's, whose it is then, so their role must allow what it
/// does (a stock adjustment sent again needs `adjust_stock`).
#[tauri::command]
pub async fn retry_outbox_entry(shell: State<'_, Shell>, seq: i64) -> CommandResult<()> {
    let entry = queued(&shell, seq).await?;
    let mirror = shell.mirror_acting(entry.command.operation()).await?;
    let mirror = mirror.ok_or_else(|| CommandError::validation("there is no outbox in local mode"))?;
    Ok(mirror.retry(seq).await?)
}

/// Drops a write that needs attention: it never reaches the server. Whoever may make that
/// write may drop it (a cashier their refused sale; a stock count only a manager).
#[tauri::command]
pub async fn drop_outbox_entry(shell: State<'_, Shell>, seq: i64) -> CommandResult<()> {
    let entry = queued(&shell, seq).await?;
    shell.allowed(entry.command.operation()).await?;
    Ok(mirror(&shell)?.drop_queued(seq).await?)
}

/// Quits the app: staff were asked about the writes still in the outbox and said so.
#[tauri::command]
pub fn quit_app<R: Runtime>(app: AppHandle<R>) {
    tracing::info!("quitting with writes in the outbox, as staff chose");
    app.exit(0);
}

/// Staff chose to keep the app open when asked; the next close asks again.
#[tauri::command]
pub fn keep_app_open<R: Runtime>(app: AppHandle<R>) {
    crate::quit::keep_open(&app);
}

/// Queued write `seq`, refused by name when there is none.
async fn queued(shell: &Shell, seq: i64) -> CommandResult<petstore::domain::OutboxEntry> {
    let queued = mirror(shell)?.outbox().await?.into_iter().find(|entry| entry.seq == seq);
    queued.ok_or_else(|| CommandError::validation(format!("queued write {seq} does not exist")))
}

fn mirror(shell: &Shell) -> CommandResult<petstore::mirror::Mirror> {
    shell.backend().mirror().ok_or_else(|| CommandError::validation("there is no outbox in local mode"))
}
