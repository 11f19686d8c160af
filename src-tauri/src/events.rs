//! Tells the window what data changed, whoever changed it (this window, the local API, a
//! script, another till), so it updates what it shows: the rows that changed, or
//! everything after a reset (see `changes.rs`).

use petstore::Store;
use tauri::{AppHandle, Emitter, Runtime};
use tokio::sync::broadcast;

use crate::changes::{self, DataChanged};

pub const CHANGED: &str = "petstore://changed";

/// The local store's changes, read from its change feed.
pub fn follow_local<R: Runtime>(app: AppHandle<R>, store: Store) {
    tauri::async_runtime::spawn(changes::follow(store, move |changed| {
        let _ = app.emit(CHANGED, changed);
    }));
}

/// The remote shop's changes (its mirror's, read by the backend), as they come.
pub fn forward_changes<R: Runtime>(app: AppHandle<R>, mut changes: broadcast::Receiver<DataChanged>) {
    tauri::async_runtime::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(changed) => {
                    let _ = app.emit(CHANGED, changed);
                }
                // Missed some: say everything may have changed.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let _ = app.emit(CHANGED, DataChanged::reset());
                }
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    });
}

pub const SYNC: &str = "petstore://sync";

/// Petstore was started again on this data folder; this window was brought forward instead.
pub const OPENED_AGAIN: &str = "petstore://opened-again";

/// Sends the window every change of the remote mode's sync status (the status bar and the
/// outbox badge), from the mirror in use at each moment: `status` is the backend's own
/// watch of it (`Backend::sync_watch`), which follows the new mirror, or is `None` in local
/// mode, whenever the mode changes.
pub fn forward_sync<R: Runtime>(
    app: AppHandle<R>,
    mut status: tokio::sync::watch::Receiver<Option<petstore::mirror::SyncStatus>>,
) {
    tauri::async_runtime::spawn(async move {
        loop {
            let now = status.borrow_and_update().clone();
            let _ = app.emit(SYNC, now);
            if status.changed().await.is_err() {
                break;
            }
        }
    });
}
