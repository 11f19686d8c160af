//! The SQLite store: the only code that touches SQL. Writes go to one writer thread that
//! owns the write connection and commits them in groups (`writer.rs`); reads use a small
//! pool of read-only connections, which WAL lets run beside the writer, each keeping its
//! snapshot while nothing was committed (`readers.rs`). Reads that may take long run on
//! Tokio's blocking pool, so the async runtime never waits on the disk.

mod backend;
mod backup;
mod bookmarks;
mod categories;
mod connection;
mod counts;
mod idempotency;
mod inventory;
mod keys;
mod orders;
mod pets;
mod query;
mod readers;
pub mod seed;
mod status_rules;
#[cfg(target_os = "linux")]
mod wal_writes;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::Connection;
use serde::Serialize;
use tokio::sync::broadcast;

use bookmarks::Bookmarks;
use readers::{Readers, Snapshot};

pub use backup::{RestoreError, Restored, restore};
pub use connection::{OpenError, SCHEMA_VERSION, migrations};
pub use idempotency::{IdempotencyKey, KEY_LIFETIME, Placed};
pub use keys::{IssuedKey, KeyHolder, KeyInfo, KeyMatch, Scope, Secret};

use crate::error::{Error, Result};

/// Which kind of data a committed write changed; the desktop app turns it into an event so
/// an open window refreshes what it shows.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Pets,
    Categories,
    Orders,
    Inventory,
}

#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    writer: writer::Writer,
    readers: Arc<Readers>,
    changes: broadcast::Sender<Change>,
    bookmarks: Arc<Bookmarks>,
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`. A database from a
    /// newer version of Petstore is refused before anything is written to it.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, OpenError> {
        let path = path.as_ref().to_path_buf();
        let conn = connection::open_writer(&path)?;
        let unusable = |e: Error| OpenError::Unusable { path: path.clone(), reason: e.to_string() };
        let checkpoints = connection::open_checkpointer(&path).map_err(unusable)?;
        let readers = Readers::new(path.clone());
        let writer = writer::Writer::start(conn, checkpoints, writer::CHECKPOINT_PAUSE, readers.clone())
            .map_err(unusable)?;
        let (changes, _) = broadcast::channel(256);
        Ok(Self { inner: Arc::new(Inner { path, writer, readers, changes, bookmarks: Arc::default() }) })
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// How many group transactions the writer has committed since the store opened; with
    /// the number of writes made, the writes per commit that group commit achieved.
    pub fn groups_committed(&self) -> u64 {
        self.inner.writer.groups_committed()
    }

    /// Bookmarks into this store's lists of pets, for reads that run off the store.
    fn bookmarks(&self) -> Arc<Bookmarks> {
        self.inner.bookmarks.clone()
    }

    /// Committed changes, for whoever shows the data (the desktop window).
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.inner.changes.subscribe()
    }

    /// Runs `f` on a read-only connection off the async runtime (see [`Readers::read`]).
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.inner.readers.read(Snapshot::Kept, f).await
    }

    /// Runs `f`, a read of a few index steps, at once on the calling thread (see
    /// [`Readers::read_bounded`]).
    pub(crate) async fn read_bounded<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.inner.readers.read_bounded(Snapshot::Kept, f).await
    }

    /// Runs `f` as one write: in its own savepoint of the writer's next group transaction
    /// (see `writer.rs`). Resolves once that transaction is committed, then announces
    /// `change`; when `f` fails, only its own changes are rolled back.
    pub(crate) async fn write<T, F>(&self, change: Change, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let value = self.write_quietly(f).await?;
        // Nobody listening is normal (the headless server); that is not an error.
        let _ = self.inner.changes.send(change);
        Ok(value)
    }

    /// [`Store::write`] without announcing a change, for what the window does not show.
    async fn write_quietly<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let span = tracing::Span::current();
        let answer = self.inner.writer.grouped(move |conn| span.in_scope(|| f(conn)));
        answer.await.map_err(|_| writer::writer_gone())?
    }

    /// Runs `f` with the write connection to itself, outside any transaction, for bulk
    /// work (seed) and writes that manage their own transaction.
    pub async fn with_writer<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        let span = tracing::Span::current();
        let answer = self.inner.writer.exclusive(move |conn| span.in_scope(|| f(conn)));
        answer.await.map_err(|_| writer::writer_gone())?
    }

    /// Writes a consistent copy of the live database to `to` while other work goes on.
    /// `VACUUM INTO` reads one snapshot, so concurrent writes are either wholly in the copy
    /// or wholly absent. The copy is private (0600, like the key files: the data is as
    /// sensitive), synced, and never overwrites a file (see `backup.rs`).
    pub async fn backup(&self, to: &Path) -> Result<()> {
        let to = to.to_path_buf();
        self.inner.readers.read(Snapshot::Outside, move |conn| backup::write(conn, &to)).await
    }
}
