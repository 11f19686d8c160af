//! Closing the window with writes still in the outbox asks first. The writes are safe (the
//! outbox is on disk and is sent the next time the app runs in remote mode with this server
//! and it answers), but staff about to switch the till off should know that the server does
//! not have them yet. The close is held and the window asked (`petstore://quit-requested`);
//! its dialog quits with the `quit_app` command. A window that cannot answer is not a trap:
//! closing it again, a moment later, closes it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tauri::{Emitter, Manager, Runtime, Window, WindowEvent};

use petstore::domain::OutboxCounts;

use crate::shell::Shell;

pub const QUIT_REQUESTED: &str = "petstore://quit-requested";

/// A second close within this time after the question is a double click, not an answer.
const DOUBLE_CLICK: Duration = Duration::from_secs(1);

/// When the window was last asked, if it was.
#[derive(Default)]
pub struct QuitQuestion(Mutex<Option<Instant>>);

pub fn on_window_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    let WindowEvent::CloseRequested { api, .. } = event else { return };
    let Some(shell) = window.try_state::<Shell>() else { return };
    let outbox = shell.backend().sync_status().map(|s| s.outbox).unwrap_or_default();
    let question = window.state::<QuitQuestion>();
    let mut asked = question.0.lock().unwrap_or_else(|p| p.into_inner());
    match on_close(outbox, *asked, Instant::now()) {
        OnClose::Close => {}
        OnClose::CloseAsAsked => {
            tracing::info!(
                pending = outbox.pending,
                attention = outbox.attention,
                "closed again when asked: quitting with writes in the outbox"
            );
        }
        OnClose::Ask { since } => {
            api.prevent_close();
            *asked = Some(since);
            let _ = window.emit(QUIT_REQUESTED, outbox);
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum OnClose {
    Close,
    /// Asked before and closed again: the answer is to close.
    CloseAsAsked,
    /// Held, and the window asked (since the first time it was).
    Ask {
        since: Instant,
    },
}

/// What a close request does, with `outbox` as it stands and the window last `asked` then.
fn on_close(outbox: OutboxCounts, asked: Option<Instant>, now: Instant) -> OnClose {
    if outbox.pending + outbox.attention == 0 {
        return OnClose::Close;
    }
    match asked {
        Some(at) if now.duration_since(at) >= DOUBLE_CLICK => OnClose::CloseAsAsked,
        Some(at) => OnClose::Ask { since: at },
        None => OnClose::Ask { since: now },
    }
}

/// The window's dialog answered "keep Petstore open": the next close asks again.
pub fn keep_open<R: Runtime>(app: &tauri::AppHandle<R>) {
    *app.state::<QuitQuestion>().0.lock().unwrap_or_else(|p| p.into_inner()) = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_with_writes_in_the_outbox_asks_and_closing_again_closes() {
        let t0 = Instant::now();
        let waiting = OutboxCounts { pending: 2, attention: 0 };
        let refused = OutboxCounts { pending: 0, attention: 1 };
        assert_eq!(
            on_close(OutboxCounts::default(), None, t0),
            OnClose::Close,
            "nothing to leave: no question"
        );
        assert_eq!(on_close(waiting, None, t0), OnClose::Ask { since: t0 });
        assert_eq!(on_close(refused, None, t0), OnClose::Ask { since: t0 }, "needs attention counts too");
        // A double click on the close button is one request.
        let moment = t0 + Duration::from_millis(300);
        assert_eq!(on_close(waiting, Some(t0), moment), OnClose::Ask { since: t0 });
        // Asked, and closed again: the window may not be able to answer (a stuck page).
        assert_eq!(on_close(waiting, Some(t0), t0 + DOUBLE_CLICK), OnClose::CloseAsAsked);
        // Local mode (no outbox), or sent meanwhile.
        assert_eq!(on_close(OutboxCounts::default(), Some(t0), t0 + DOUBLE_CLICK), OnClose::Close);
    }
}
