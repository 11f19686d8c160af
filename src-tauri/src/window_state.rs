//! The window's size, position and maximised state, remembered across restarts
//! (tauri-plugin-window-state). The plugin writes its file only when the app exits
//! normally; a till is as often switched off at the wall, so the state is also written
//! half a second after the window stops moving or resizing.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tauri::{Manager, Runtime, Window, WindowEvent};
use tauri_plugin_window_state::{AppHandleExt, StateFlags};

/// What is remembered: not visibility or decorations, which the app sets itself.
const FLAGS: StateFlags = StateFlags::SIZE.union(StateFlags::POSITION).union(StateFlags::MAXIMIZED);

/// How long the window must stay still before its state is written.
const SETTLE: Duration = Duration::from_millis(500);

/// The plugin, keeping its file in `dir` when one is given (a data folder of its own).
pub fn plugin<R: Runtime>(dir: Option<&Path>) -> tauri::plugin::TauriPlugin<R> {
    let mut builder = tauri_plugin_window_state::Builder::new().with_state_flags(FLAGS);
    if let Some(dir) = dir {
        // An absolute name: the plugin joins it to its config folder, which it replaces.
        builder = builder.with_filename(dir.join("window-state.json").to_string_lossy());
    }
    builder.build()
}

/// Moves and resizes seen, so that only the last of a burst writes.
#[derive(Default)]
pub struct Settling(Arc<AtomicU64>);

/// Called for every window event: writes the state once the window has settled.
pub fn on_window_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    if !matches!(event, WindowEvent::Moved(_) | WindowEvent::Resized(_)) {
        return;
    }
    let Some(settling) = window.try_state::<Settling>() else { return };
    let seen = settling.0.fetch_add(1, Ordering::AcqRel) + 1;
    let (latest, app) = (settling.0.clone(), window.app_handle().clone());
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SETTLE).await;
        if latest.load(Ordering::Acquire) == seen
            && let Err(e) = app.save_window_state(FLAGS)
        {
            tracing::warn!(error = %e, "the window's size and place could not be saved");
        }
    });
}
