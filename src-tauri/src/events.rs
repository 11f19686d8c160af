//! Tells the window when data changed, whoever changed it (this window, the local API, a
//! script), so it can refresh what it shows.

use petstore::store::Change;
use tauri::{AppHandle, Emitter, Runtime};
use tokio::sync::broadcast;

pub const CHANGED: &str = "petstore://changed";

pub fn forward_changes<R: Runtime>(app: AppHandle<R>, mut changes: broadcast::Receiver<Change>) {
    tauri::async_runtime::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(change) => {
                    let _ = app.emit(CHANGED, change);
                }
                // Missed some: say everything may have changed.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    for change in [Change::Pets, Change::Categories, Change::Orders, Change::Inventory] {
                        let _ = app.emit(CHANGED, change);
                    }
                }
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    });
}
