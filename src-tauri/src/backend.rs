//! The backend every command goes through: the local SQLite store or a remote Petstore,
//! switchable at run time without a restart. Both are [`Petstore`]s, so commands do not
//! know which one they talk to.
//!
//! In remote mode it also follows the remote's change feed (`GET /events`), so that a
//! change made on another till refreshes this window as a local change does.

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use petstore::client::Client;
use petstore::domain::Entity;
use petstore::error::ErrorCode;
use petstore::store::Change;
use petstore::{Petstore, Store};
use tauri::async_runtime::JoinHandle;
use tokio::sync::broadcast;

/// Which backend is in use, as the status bar names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Local,
    Remote { base_url: String },
}

pub struct Backend {
    local: Store,
    active: RwLock<(Target, Arc<dyn Petstore>)>,
    /// The remote's changes, while in remote mode.
    remote_changes: broadcast::Sender<Change>,
    /// The task following the remote's feed.
    following: Mutex<Option<JoinHandle<()>>>,
}

const EVERYTHING: [Change; 4] = [Change::Pets, Change::Categories, Change::Orders, Change::Inventory];

/// The first pause before the feed is tried again, and the longest.
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_MOST: Duration = Duration::from_secs(10);

impl Backend {
    pub fn new(local: Store) -> Self {
        let active: Arc<dyn Petstore> = Arc::new(local.clone());
        Self {
            local,
            active: RwLock::new((Target::Local, active)),
            remote_changes: broadcast::channel(256).0,
            following: Mutex::new(None),
        }
    }

    /// The backend for one command. A switch while a command runs does not affect it.
    pub fn current(&self) -> Arc<dyn Petstore> {
        self.active.read().unwrap_or_else(|p| p.into_inner()).1.clone()
    }

    pub fn target(&self) -> Target {
        self.active.read().unwrap_or_else(|p| p.into_inner()).0.clone()
    }

    pub fn local(&self) -> &Store {
        &self.local
    }

    /// Changes of the remote shop while in remote mode, for the window.
    pub fn remote_changes(&self) -> broadcast::Receiver<Change> {
        self.remote_changes.subscribe()
    }

    pub fn use_local(&self) {
        *self.active.write().unwrap_or_else(|p| p.into_inner()) =
            (Target::Local, Arc::new(self.local.clone()));
        self.follow(None);
    }

    pub fn use_remote(&self, client: Client) {
        let target = Target::Remote { base_url: client.base_url() };
        *self.active.write().unwrap_or_else(|p| p.into_inner()) = (target, Arc::new(client.clone()));
        self.follow(Some(client));
    }

    /// Stops following the previous remote, and follows `client` if there is one.
    fn follow(&self, client: Option<Client>) {
        let mut following = self.following.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(task) = following.take() {
            task.abort();
        }
        if let Some(client) = client {
            *following =
                Some(tauri::async_runtime::spawn(follow_remote(client, self.remote_changes.clone())));
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Some(task) = self.following.get_mut().unwrap_or_else(|p| p.into_inner()).take() {
            task.abort();
        }
    }
}

/// What the window refreshes for a change of `entity`.
fn refreshes(entity: Entity) -> &'static [Change] {
    match entity {
        Entity::Pet => &[Change::Pets],
        Entity::Inventory => &[Change::Inventory],
        Entity::Category => &[Change::Categories],
        Entity::Order => &[Change::Orders],
        Entity::Shop => &EVERYTHING,
    }
}

/// Sends a window refresh for each change of the remote's feed, from the feed's position
/// when it is first reached; while the remote cannot be reached it tries again, with a
/// pause that grows to [`RETRY_MOST`], and resumes after the last change it had, so that
/// nothing made meanwhile is missed. A key the remote refuses ends it (the screens say so;
/// retrying would only count as wrong keys there).
async fn follow_remote(client: Client, changes: broadcast::Sender<Change>) {
    let mut pause = Backoff::default();
    // Where the feed is, before anything else: a follower started "from now" while the
    // remote is down would skip what changes until it is back.
    let start = loop {
        match client.changes(None, 1).await {
            Ok(page) => break page.next,
            Err(e) if refused(&e) => return stop(&e),
            Err(_) => pause.wait().await,
        }
    };
    let mut follower = client.follow(Some(start));
    loop {
        match follower.next().await {
            Ok(change) => {
                pause = Backoff::default();
                for &refresh in refreshes(change.entity) {
                    let _ = changes.send(refresh);
                }
            }
            Err(e) if refused(&e) => return stop(&e),
            Err(e) if e.code == ErrorCode::Gone => {
                // Away longer than the remote keeps changes: anything may have changed.
                for refresh in EVERYTHING {
                    let _ = changes.send(refresh);
                }
                follower = client.follow(None);
            }
            Err(e) => {
                tracing::debug!(error = %e.message, "the remote's change feed is not reachable; trying again");
                pause.wait().await;
            }
        }
    }
}

/// A pause that doubles with each failure in a row, from [`RETRY_FIRST`] to [`RETRY_MOST`].
struct Backoff(Duration);

impl Default for Backoff {
    fn default() -> Self {
        Self(RETRY_FIRST)
    }
}

impl Backoff {
    async fn wait(&mut self) {
        let now = self.0;
        self.0 = (self.0 * 2).min(RETRY_MOST);
        tokio::time::sleep(now).await;
    }
}

fn refused(e: &petstore::Error) -> bool {
    matches!(e.code, ErrorCode::Unauthorized | ErrorCode::Forbidden)
}

fn stop(e: &petstore::Error) {
    tracing::warn!(error = %e.message, "the remote refused its change feed; live refresh stops until the settings change");
}
