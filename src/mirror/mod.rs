//! Remote mode that survives the network: a [`Mirror`] is a till's local copy of a remote
//! shop, and the [`Petstore`](crate::Petstore) the app uses in remote mode.
//!
//! - Reads come from the mirror, a SQLite store in the data folder (one file per remote),
//!   so browsing works offline and is as fast as local mode.
//! - `sync`: a full copy at first connection (and after the remote's feed has moved past
//!   where the mirror was), then the remote's change feed applied as it comes.
//! - `shop`: writes go to the server, and their answers into the mirror. Counter writes
//!   (placing, completing and cancelling orders, stock deltas) that cannot reach the server
//!   go to the outbox instead, with their effect on the mirror, in one transaction.
//! - `replay`: the outbox sent in order as soon as the server answers, each write with its
//!   own UUID as `Idempotency-Key`, so a write is applied on the server exactly once
//!   however often its answer was lost.
//!
//! One task per mirror does the syncing and the replaying, one after the other, so that the
//! server's state and the outbox's never race each other into the mirror.

mod backoff;
mod local;
mod replay;
mod served;
mod served_staff;
mod shop;
mod staff;
mod status;
mod sync;
mod take;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, broadcast, watch};
use tokio::task::JoinHandle;

use crate::Store;
use crate::client::Client;
use crate::domain::{OutboxCounts, OutboxEntry, StaffId, Timestamp};
use crate::engine::Change;
use crate::error::{Error, ErrorCode, Result};
use local::Local;
pub use staff::{STAFF_READ_EVERY, TillActor, TillSignIn};
pub use status::{SyncState, SyncStatus};

/// A remote shop copied into a local store, kept current and written through. Cheap to
/// clone; the syncing stops when the last clone is dropped.
#[derive(Clone)]
pub struct Mirror {
    inner: Arc<Inner>,
    /// Whose writes these are ([`Mirror::acting`]); none: the till's key's own.
    who: Option<Arc<TillActor>>,
}

struct Inner {
    shared: Shared,
    task: JoinHandle<()>,
    /// Where the local API's named keys are kept: the computer's own store, whichever
    /// shop the API serves (the mirror itself when none is given).
    keys: Option<Store>,
    /// What the members signed in at the local API have here, one each, in memory only
    /// (`served_staff.rs`).
    local_sign_ins: std::sync::Mutex<std::collections::HashMap<StaffId, served_staff::LocalSignIn>>,
}

/// What the sync task and the operations share.
#[derive(Clone)]
struct Shared {
    local: Local,
    client: Client,
    status: watch::Sender<SyncStatus>,
    /// Something was queued, or staff asked to retry: replay now rather than at the next
    /// pause's end.
    wake: Arc<Notify>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The first pause before the server is tried again after a failure, and the longest.
const RETRY_FIRST: Duration = backoff::FIRST;
const RETRY_MOST: Duration = backoff::MOST;

impl Mirror {
    /// Opens (creating if needed) the mirror of `client`'s remote in `dir` and starts
    /// syncing it. Must be called within a Tokio runtime.
    pub fn open(dir: &Path, client: Client) -> Result<Self> {
        Self::open_with_keys(dir, client, None)
    }

    /// [`Mirror::open`], with the named API keys of the local API, when it serves the
    /// mirror (see [`Database`](crate::Database)), kept in `keys`.
    pub fn open_with_keys(dir: &Path, client: Client, keys: Option<Store>) -> Result<Self> {
        let origin = crate::client::origin_of(&client.base_url())?;
        crate::private::create_dir(dir)
            .map_err(|e| Error::internal(format!("cannot make the mirrors folder {}: {e}", dir.display())))?;
        let store = Store::open(file_for(dir, &origin)).map_err(|e| Error::internal(e.to_string()))?;
        let shared = Shared {
            local: Local::new(store),
            client,
            status: watch::channel(SyncStatus::default()).0,
            wake: Arc::new(Notify::new()),
        };
        let task = tokio::spawn(sync::run(shared.clone(), origin));
        let local_sign_ins = std::sync::Mutex::default();
        Ok(Self { inner: Arc::new(Inner { shared, task, keys, local_sign_ins }), who: None })
    }

    /// The local copy (for what reads it directly, such as the local API).
    pub fn store(&self) -> &Store {
        self.inner.shared.local.store()
    }

    pub fn client(&self) -> &Client {
        &self.inner.shared.client
    }

    /// Where syncing stands: synced, catching up, offline since when, and the outbox.
    pub fn status(&self) -> watch::Receiver<SyncStatus> {
        self.inner.shared.status.subscribe()
    }

    /// Changes of the mirror, whether from the server or from this till.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.inner.shared.local.store().subscribe()
    }

    /// Every queued write, waiting or needing attention.
    pub async fn outbox(&self) -> Result<Vec<OutboxEntry>> {
        self.inner.shared.local.outbox().await
    }

    pub async fn outbox_counts(&self) -> Result<OutboxCounts> {
        self.inner.shared.local.outbox_counts().await
    }

    /// Sends a write that needs attention again, at the end of the queue.
    /// Sent again, it is the signed-in person's write (`Mirror::acting`): proved as theirs.
    pub async fn retry(&self, seq: i64) -> Result<()> {
        let shared = &self.inner.shared;
        let key = new_key();
        let proofs = self.who.as_ref().map(|who| who.proofs(&key, Timestamp::now())).unwrap_or_default();
        shared.local.retry(seq, key, proofs).await?;
        shared.queued().await;
        Ok(())
    }

    /// Drops a write that needs attention.
    pub async fn drop_queued(&self, seq: i64) -> Result<()> {
        let shared = &self.inner.shared;
        shared.local.drop_queued(seq).await?;
        shared.counts_changed().await;
        Ok(())
    }

    /// Waits until the outbox has nothing waiting and the mirror has every change the
    /// server had by then, or `timeout` passes; answers whether it got there. For tests
    /// and for a clean switch of mode.
    pub async fn settle(&self, timeout: Duration) -> bool {
        let shared = &self.inner.shared;
        let mut status = shared.status.subscribe();
        tokio::time::timeout(timeout, async {
            loop {
                status.wait_for(|s| s.outbox.pending == 0 && s.state == SyncState::Synced).await.ok();
                let Ok(head) = shared.client.changes(None, 1).await.map(|page| page.next) else {
                    tokio::time::sleep(RETRY_FIRST).await;
                    continue;
                };
                let caught_up =
                    status.wait_for(|s| s.position.is_some_and(|p| p >= head) || s.outbox.pending > 0).await;
                if caught_up.is_ok_and(|s| s.outbox.pending == 0) {
                    return;
                }
            }
        })
        .await
        .is_ok()
    }
}

impl Shared {
    /// A write was queued: the badge moves, and the replay is woken.
    async fn queued(&self) {
        self.counts_changed().await;
        self.wake.notify_one();
    }

    async fn counts_changed(&self) {
        if let Ok(counts) = self.local.outbox_counts().await {
            self.status.send_if_modified(|s| {
                let changed = s.outbox != counts;
                s.outbox = counts;
                changed
            });
        }
    }
}

/// The mirror file of the remote at `origin` in `dir`: named after the origin, so each
/// remote has its own and switching back finds it again.
fn file_for(dir: &Path, origin: &str) -> PathBuf {
    let name: String =
        origin.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect();
    dir.join(format!("{name}.db"))
}

/// A new `Idempotency-Key` for a queued write.
fn new_key() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Whether `e` means the server could not be asked (or could not answer): the write may
/// wait in the outbox and be sent again. A 4xx is the server's answer, never this.
fn is_offline(e: &Error) -> bool {
    use ErrorCode::*;
    matches!(e.code, Unreachable | Timeout | BadResponse | Internal | Busy | RequestTimeout)
}

/// Whether the server refused the key itself: nothing more can be sent until it changes.
fn is_key_refused(e: &Error) -> bool {
    matches!(e.code, ErrorCode::Unauthorized | ErrorCode::Forbidden)
}

#[cfg(test)]
mod liar;
#[cfg(test)]
mod lying_server_tests;
#[cfg(test)]
mod staff_tests;
#[cfg(test)]
mod tests;
