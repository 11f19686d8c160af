//! The SQLite store, the engine and nothing else. The resource modules (one per
//! resource, `status_rules.rs` for the pet status and stock rules, `filter.rs` for list
//! filters, `paging.rs` for pages and their bookmarks) hold the shop's SQL; `engine/` runs it: one writer thread that commits
//! writes in groups, a small pool of read connections that keep their snapshots, the
//! checkpointer, and the performance ledger that says why each of them is there.
//! `types.rs` converts domain values; `transaction.rs` is the one seam through which other
//! SQL of the crate (a till's mirror, `crate::mirror`) writes with the shop's rules.

mod activity;
mod backup;
mod capabilities;
mod categories;
mod counts;
mod engine;
mod exports;
mod feed;
mod filter;
mod idempotency;
mod imports;
mod inventory;
mod keys;
mod orders;
mod paging;
mod pets;
mod reports;
mod shop;
mod staff;
// The bulk seed on a bare connection: the shells seed through `Database::seed`.
#[cfg(not(any(test, feature = "test-support")))]
mod seed;
#[cfg(any(test, feature = "test-support"))]
pub mod seed;
mod settings;
mod status_rules;
mod transaction;
mod types;

use std::path::Path;
use std::sync::Arc;

use rusqlite::Connection;
use tokio::sync::broadcast;

use engine::{Engine, Snapshot};
use paging::Bookmarks;

pub use crate::api_key::{IssuedKey, KeyHolder, KeyInfo, KeyMatch, Scope, Secret};
pub use crate::engine::Change;
pub use crate::idempotency::{IdempotencyKey, KEY_LIFETIME, Once};
pub use backup::{RestoreError, Restored, restore};
pub use engine::{OpenError, SCHEMA_VERSION, migrations};
pub(crate) use transaction::Transaction;

use crate::domain::Actor;
use crate::error::Result;

#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
    /// Whose writes this handle makes (`Database::acting`); the operator's until told.
    actor: Arc<Actor>,
}

struct Inner {
    engine: Engine,
    bookmarks: Arc<Bookmarks>,
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`. A database from a
    /// newer version of Petstore is refused before anything is written to it.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, OpenError> {
        let engine = Engine::open(path.as_ref())?;
        Ok(Self { inner: Arc::new(Inner { engine, bookmarks: Arc::default() }), actor: Arc::default() })
    }

    pub fn path(&self) -> &Path {
        self.inner.engine.path()
    }

    /// How many group transactions the writer has committed since the store opened; with
    /// the number of writes made, the writes per commit that group commit achieved.
    pub fn groups_committed(&self) -> u64 {
        self.inner.engine.groups_committed()
    }

    /// Bookmarks into this store's lists of pets, for reads that run off the store.
    fn bookmarks(&self) -> Arc<Bookmarks> {
        self.inner.bookmarks.clone()
    }

    /// Committed changes, for whoever shows the data (the desktop window).
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.inner.engine.subscribe()
    }

    /// Runs `f` on a read-only connection off the async runtime (see [`Engine::read`]).
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.inner.engine.read(Snapshot::Kept, f).await
    }

    /// Runs `f`, a read of a few index steps, at once on the calling thread (see
    /// [`Engine::read_bounded`]).
    pub(crate) async fn read_bounded<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.inner.engine.read_bounded(Snapshot::Kept, f).await
    }

    /// Runs `f` as one write: in its own savepoint of the writer's next group transaction
    /// (see `engine/writer.rs`). Resolves once that transaction is committed, then announces
    /// `change`; when `f` fails, only its own changes are rolled back.
    pub(crate) async fn write<T, F>(&self, change: Change, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.inner.engine.write(Some(change), f).await
    }

    /// Tells subscribers of a change committed in more than one kind of data.
    pub(crate) fn announce(&self, change: Change) {
        self.inner.engine.announce(change);
    }

    /// [`Store::write`] without announcing a change, for what the window does not show.
    async fn write_quietly<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.inner.engine.write(None, f).await
    }

    /// Runs `f` with the write connection to itself, outside any transaction, for bulk
    /// work (seed) and writes that manage their own transaction.
    async fn exclusive<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        self.inner.engine.exclusive(f).await
    }

    /// [`Store::exclusive`] for the tests and benchmarks that work below the API (a
    /// seed of their own, a lock held on purpose): a raw connection is no door for a shell.
    #[cfg(any(test, feature = "test-support"))]
    pub async fn with_writer<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        self.exclusive(f).await
    }

    /// Writes a consistent copy of the live database to `to` while other work goes on.
    /// `VACUUM INTO` reads one snapshot, so concurrent writes are either wholly in the copy
    /// or wholly absent. The copy is private (0600, like the key files: the data is as
    /// sensitive), synced, and never overwrites a file (see `backup.rs`).
    pub async fn backup(&self, to: &Path) -> Result<()> {
        let to = to.to_path_buf();
        self.inner.engine.read(Snapshot::Outside, move |conn| backup::write(conn, &to)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::parse_body;
    use crate::domain::{NewOrder, PetId};
    use crate::engine::Petstore;

    /// A store that read once and then sat idle (a second app, a `petstore-server` beside
    /// the app) must not hold the WAL back from another store's checkpoints: the WAL of a
    /// busy store on the same file starts over as usual.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_that_read_once_and_idles_does_not_keep_another_stores_wal_growing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.db");
        let busy = Store::open(&path).unwrap();
        // Orders on pets far apart, so that each group writes many pages to the WAL (on one
        // pet, 50,000 orders fill a WAL that never starts over with only some 20 MB).
        let pets = 20_000_i64;
        busy.with_writer(move |conn| {
            seed::seed(conn, pets as u64, |_| {})?;
            Ok(conn.execute_batch("UPDATE pets SET status = 'available', stock = 1000")?)
        })
        .await
        .unwrap();

        const CALLERS: i64 = 2;
        let idle = Store::open(&path).unwrap();
        idle.get_pet(PetId::try_from(1).unwrap()).await.unwrap();

        // Two callers: at the pace of sixteen, a debug build appends some 60 MB to the WAL
        // between two checkpoints (500 ms apart) with no snapshot held anywhere.
        let callers: Vec<_> = (0..CALLERS)
            .map(|caller| {
                let busy = busy.clone();
                tokio::spawn(async move {
                    for n in 0..50_000 / CALLERS {
                        let pet = (caller * 7919 + n * CALLERS * 7919) % pets + 1;
                        let order = format!(r#"{{"petId": {pet}, "quantity": 1}}"#);
                        busy.place_order(parse_body::<NewOrder>(order.as_bytes()).unwrap()).await.unwrap();
                    }
                })
            })
            .collect();
        for caller in callers {
            caller.await.unwrap();
        }
        // Held back by the idle snapshot, the WAL holds every order: 482 MB, measured.
        let wal = std::fs::metadata(dir.path().join("shop.db-wal")).unwrap().len();
        assert!(wal < 64 << 20, "the busy store's WAL is {} MB", wal >> 20);
        drop(idle);
    }
}
