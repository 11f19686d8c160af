//! The SQLite engine room: the connections, the one writer and its group commit, the
//! checkpointer, and the read connections with the snapshots they keep. The resource
//! modules above it (`pets.rs`, `orders.rs`, `status_rules.rs`, paging, ...) hold the SQL
//! of the shop and see only this interface:
//!
//! - [`Engine::read`]: a read in the connection's kept snapshot, on Tokio's blocking pool;
//! - [`Engine::read_bounded`]: a read of a few index steps, at once on the calling task
//!   when a connection is free (never waiting on a lock there; see `readers.rs`);
//! - [`Engine::write`]: one write in its own savepoint of the writer's next group,
//!   answered once the group is committed; begun only while its request's
//!   [`WriteAdmission`] is open (`src/admission.rs`, shared with PostgreSQL);
//! - [`Engine::exclusive`]: the write connection alone, outside any transaction (seed,
//!   key changes that run their own transaction);
//! - [`Engine::subscribe`]: the committed changes, for whoever shows the data.
//!
//! The interface is narrow so that a second engine (PostgreSQL, for a chain's central
//! server) can offer the same operations, and the resource modules' rules (status, stock,
//! idempotency) stay written once.
//!
//! # Performance ledger
//!
//! Each mechanism below is here because a measurement asked for it. "Paired runs" are
//! runs with and without the mechanism alternated on the same machine within minutes
//! (this VM's speed drifts by a tenth within a minute, so figures far apart say little).
//! `make bench` (BENCHMARKS.md) holds the targets; a mechanism that no longer pays for
//! itself should go.
//!
//! | mechanism | where | target it serves | measured gain | how to switch it off |
//! | --- | --- | --- | --- | --- |
//! | group commit: one writer thread applies every waiting write in its own savepoint of one transaction and syncs once | `writer.rs` | orders ≥ 10,000/s with `synchronous=FULL` | from one commit per order (the fsync ceiling, 3,000-4,000/s here) to 14,000-19,000/s | `MAX_GROUP = 1` in `writer.rs` |
//! | `synchronous = FULL` | `connection.rs` | an acknowledged order survives a power cut | none: it costs throughput; group commit pays for it | never; the power-cut rounds (tests/crash) fail without it |
//! | checkpoints by a thread of their own, at most every 500 ms | `checkpointer.rs` | orders/s, and their p99 | a checkpoint inside a commit was a tenth of the writer's time; a 50 ms pause made orders 8 % slower than 500 ms | `CHECKPOINT_PAUSE` |
//! | the writer copies the WAL's tail between two groups, so the WAL starts over | `checkpointer.rs` | orders/s; the WAL's size | 16.7k/16.2k → 18.9k/17.2k orders/s; the WAL grew 1.6 GB in 8 s without it | remove `Nudge::committed`'s `copy_tail` |
//! | reader connections keep their snapshot while nothing was committed (≤ 5 ms, for other processes) | `readers.rs` | GET /pets/{petId} ≥ 0.5 × the axum ceiling | a read by key 4.7 µs → 1.9 µs; +7..37 % req/s by id | `MAX_AGE = 0` |
//! | idle snapshots end by a timer | `readers.rs` | another process's checkpoints can restart the WAL | correctness, not speed: beside a store that read once and idled, another's WAL reached 482-623 MB over 50,000 orders, under 64 MB with it | none: it is a fix |
//! | bounded reads inline, others on the blocking pool; inline ones never wait for a lock (busy timeout zero, then the pool) | `readers.rs` | reads by key | a hop to the blocking pool and back cost as much as the read; one extra statement per new snapshot for the lock check | call `read` for everything |
//! | reader connections read the file through a memory map of up to 256 MB | `connection.rs` | GET /pets/{petId} and /pets?id= ≥ 0.5 × the axum ceiling | server CPU per read by id 12.1 → 10.8 µs (`GET /pets/{petId}`) and 12.9 → 10.8 µs (`?id=`), medians of 5 alternated rounds; `VmHWM` at 1,000,000 pets after the filtered pages 31 → 41 MB | `READ_MAP_BYTES = 0` |
//! | at most 8 reader connections, kept | `readers.rs` | reads under load, memory < 64 MB | no open/close churn (schema parse per connection) | `READERS` |
//! | 2 KB pages for new databases | `connection.rs` | orders/s and their p99 | +27-35 % orders/s at 100,000 pets; p99 under disk stalls 80-950 → 30-150 ms | `PAGE_SIZE = 4096` |
//! | query planner stability (QPSG) | `connection.rs` | pages of pets | a re-prepare per page was 16 % of a busy server's time | drop the `set_db_config` line |
//! | 128 cached statements per connection | `connection.rs` | pages of pets | every list shape is a statement; 16 made busy connections parse again | `STATEMENT_CACHE` |
//! | no memory statistics, no memory management in SQLite | `connection.rs`, `.cargo/config.toml` | reads by key on two cores | a process-wide mutex per allocation: 11 % of a busy server's time; +2.8/-1.5/+3.7/+3.6 % in paired runs | the flags in `.cargo/config.toml`, `without_memory_statistics` |
//!
//! Removed, for what it cost:
//!
//! | mechanism | measured gain | why it went |
//! | --- | --- | --- |
//! | a VFS that held a commit's WAL frames in memory and wrote them in a few writes at its sync (Linux) | +7..29 % orders/s in paired runs (tests/bench/paired.py), orders ≥ 10,000/s without it | it wrote a rolled-back transaction's spilled frames later, over frames another connection had committed: the power-cut rounds lost acknowledged orders |
//!
//! Outside the engine, for the same targets (each module says more):
//!
//! | mechanism | where | measured gain | how to switch it off |
//! | --- | --- | --- | --- |
//! | the change feed's checks compare in line, not `IN (a, b, c)` (no temporary b-tree per change, whose freed pages glibc gave back to the system and faulted in again) | migration 0011 | orders 9,000-12,000/s in some runs and 20,000-25,000 in others (by where the writer's heap ended) → 21,000-23,000 in every run | write the checks as IN lists |
//! | kept pet counts, by triggers in the same transaction | `counts.rs`, migration 0004 | `X-Total-Count` costs a few rows at any size | count in `paging::page` (no `KeptList`) |
//! | the Pets screen's list read from one covering index | migration 0006, `pets.rs` | no table look-up per row of a filtered page | drop the index |
//! | deep pages start from a bookmark | `paging/bookmarks.rs`, migration 0007 | a deep page at 1M pets 13.1 → 0.48 ms; every 20th row 118 vs 137 µs against every 100th | `KeptList { bookmarks: None }` |
//! | the edge as one hand-written service, the key check a small tower service | `api/edge.rs`, `api/require_key.rs` | server CPU per GET by id 42-46 → 38-41 µs against axum `from_fn` layers; +1.7 % (median of 16 paired rounds) for tower-http layers composed around the router | build it from tower-http layers |
//! | idle connections closed by a sweep once a second, not hyper's per-request header timer | `server/connections.rs` | +3.2 % server CPU per GET by id with the timer (median of 12 paired rounds) | `header_read_timeout` on the http1 builder |
//! | mimalloc in the server | `bin/petstore-server/main.rs` | landed with the other allocation cuts of commit be8b7c3, not measured alone | remove the `#[global_allocator]` |
//! | the request span and access line only at `RUST_LOG=debug` (a 5xx always logged) | `api/edge.rs` | landed with commit 666e461, not measured alone | `RUST_LOG=debug` |

mod checkpointer;
mod connection;
mod files;
mod readers;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::Connection;
use tokio::sync::broadcast;

pub(super) use connection::open_writer;
pub use connection::{OpenError, SCHEMA_VERSION, migrations};
pub(super) use files::with_suffix;
pub(super) use readers::Snapshot;

use crate::admission::WriteAdmission;
use crate::engine::Change;
use crate::error::{Error, Result};

pub(super) struct Engine {
    path: PathBuf,
    writer: writer::Writer,
    readers: Arc<readers::Readers>,
    changes: broadcast::Sender<Change>,
}

impl Engine {
    /// Opens (creating if needed) and migrates the database at `path`. A database from a
    /// newer version of Petstore, or another program's, is refused before anything is
    /// written to it.
    pub fn open(path: &Path) -> Result<Self, OpenError> {
        let path = path.to_path_buf();
        let conn = connection::open_writer(&path)?;
        let unusable = |e: Error| OpenError::Unusable { path: path.clone(), reason: e.to_string() };
        let checkpoints = connection::open_checkpointer(&path).map_err(unusable)?;
        let readers = readers::Readers::new(path.clone());
        let writer =
            writer::Writer::start(conn, checkpoints, checkpointer::CHECKPOINT_PAUSE, readers.clone())
                .map_err(unusable)?;
        let (changes, _) = broadcast::channel(256);
        Ok(Self { path, writer, readers, changes })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many group transactions the writer has committed since the engine started.
    pub fn groups_committed(&self) -> u64 {
        self.writer.groups_committed()
    }

    /// Committed changes, for whoever shows the data (the desktop window).
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// Runs `f` in `snapshot` on a read-only connection off the async runtime.
    pub async fn read<T, F>(&self, snapshot: Snapshot, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.readers.read(snapshot, f).await
    }

    /// Runs `f`, a read of a few index steps, in `snapshot`, at once when it can (see
    /// [`readers::Readers::read_bounded`]).
    pub async fn read_bounded<T, F>(&self, snapshot: Snapshot, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.readers.read_bounded(snapshot, f).await
    }

    /// Runs `f` as one write in its own savepoint of the writer's next group; resolves
    /// once that group is committed, then announces `change` if there is one. When `f`
    /// fails, only its own changes are rolled back.
    pub async fn write<T, F>(&self, change: Option<Change>, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let span = tracing::Span::current();
        let answer = self.writer.grouped(WriteAdmission::current(), move |conn| span.in_scope(|| f(conn)));
        let value = answer.await.map_err(|_| writer::writer_gone())??;
        if let Some(change) = change {
            // Nobody listening is normal (the headless server); that is not an error.
            let _ = self.changes.send(change);
        }
        Ok(value)
    }

    /// Tells subscribers of `change`, committed outside [`Engine::write`].
    pub fn announce(&self, change: Change) {
        let _ = self.changes.send(change);
    }

    /// Runs `f` with the write connection to itself, outside any transaction, between two
    /// groups.
    pub async fn exclusive<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        let span = tracing::Span::current();
        let answer = self.writer.exclusive(move |conn| span.in_scope(|| f(conn)));
        answer.await.map_err(|_| writer::writer_gone())?
    }
}
