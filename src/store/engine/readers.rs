//! The read-only connections, and the snapshots they keep from one read to the next.
//!
//! Every read runs in a read transaction: one snapshot of the database. Beginning and ending
//! one costs a read by key more than the read itself: in WAL mode SQLite takes and drops a
//! lock in the WAL index (two `fcntl` calls), reads the WAL's header and checks its cache
//! every time. At 100,000 pets a read by id took 4.7 µs in a transaction of its own and
//! 1.9 µs inside one left open. So a connection keeps its snapshot for the reads that
//! follow, for as long as it shows everything they must see:
//! - this store's own commits: the writer calls [`Readers::renew`] after each commit and
//!   before it answers, and a snapshot begun before that is not used again. A caller whose
//!   write was answered reads it from then on, like any other caller;
//! - another process's (the `key` command beside a running server, a second app on the same
//!   file): SQLite cannot see those from inside a transaction, so a snapshot is kept at most
//!   [`MAX_AGE`], and a read that must see the latest (a key check) begins a new one.
//!
//! A snapshot also holds back the checkpointer, which copies only what every snapshot has,
//! and SQLite, which starts the WAL over only when no snapshot is left on it. So a snapshot
//! never stays open on a connection that nobody uses: [`Readers::renew`] ends those of
//! the idle connections, a connection in use ends its own when it is given back if a commit
//! came meanwhile, and the checkpointer ends every idle one before it copies.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tokio::sync::Semaphore;

use super::connection;
use crate::error::{Error, Result};

/// At most this many reads run at once, each on its own connection, opened at first need
/// and then kept. More would not finish sooner on a few cores; they would only take
/// threads, memory (each connection has its own page cache) and, were connections opened
/// and closed with the load, the schema parse of every new one.
const READERS: usize = 8;

/// The longest a snapshot is used, which is how late a read may see another process's
/// commit. Under load a connection serves some twenty reads in a millisecond, so beyond a
/// few milliseconds a longer age saves next to nothing.
const MAX_AGE: Duration = Duration::from_millis(5);

/// Which snapshot a read runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) enum Snapshot {
    /// The connection's own while it is current (see the module's comment), else a new one.
    Kept,
    /// A new one, begun for this read: it sees every commit, another process's too.
    Latest,
    /// None: the read manages its own transaction (`VACUUM INTO` refuses to run in one).
    Outside,
}

pub(super) struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Reader>>,
    /// One permit per connection: a read waits here, not on the disk.
    slots: Semaphore,
    /// This store's commits so far. A snapshot begun at a count is current while it stays.
    commits: AtomicU64,
    /// [`MAX_AGE`], but for tests.
    max_age: Duration,
}

struct Reader {
    conn: Connection,
    /// The commit count and the time at which the open read transaction began, if one is.
    began: Option<(u64, Instant)>,
}

impl Readers {
    pub fn new(path: PathBuf) -> Arc<Self> {
        Self::with_max_age(path, MAX_AGE)
    }

    fn with_max_age(path: PathBuf, max_age: Duration) -> Arc<Self> {
        Arc::new(Self {
            path,
            idle: Mutex::new(Vec::with_capacity(READERS)),
            slots: Semaphore::new(READERS),
            commits: AtomicU64::new(0),
            max_age,
        })
    }

    /// Runs `f` in `snapshot` off the async runtime, on Tokio's blocking pool, inside the
    /// caller's tracing span so that its log lines keep the request id.
    pub async fn read<T, F>(self: &Arc<Self>, snapshot: Snapshot, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let _slot = self.slots.acquire().await.map_err(Error::internal)?;
        let readers = self.clone();
        let span = tracing::Span::current();
        tokio::task::spawn_blocking(move || span.in_scope(|| readers.run(snapshot, f)))
            .await
            .map_err(Error::internal)?
    }

    /// Runs `f` in `snapshot` at once on the calling thread, for reads bounded to a few
    /// index steps: rows found by key, or a first page whose count is a kept one. Handing
    /// such a read to the blocking pool and back (two thread wake-ups) costs as much as the
    /// read itself, which is microseconds of B-tree descent; so it is done here, like any
    /// short computation of an async task. When every reader is busy it waits its turn like
    /// any other read.
    pub async fn read_bounded<T, F>(self: &Arc<Self>, snapshot: Snapshot, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        match self.slots.try_acquire() {
            Ok(_slot) => self.run(snapshot, f),
            Err(_) => self.read(snapshot, f).await,
        }
    }

    /// From now on no read uses a snapshot begun before, and the idle connections' end
    /// now. The writer calls it after each commit, before it answers anyone, and after it
    /// copied the WAL's tail, so that the next reads hold no frames of the WAL and SQLite
    /// can start it over.
    pub fn renew(&self) {
        let mut idle = self.idle();
        self.commits.fetch_add(1, Ordering::Release);
        end_snapshots(&mut idle);
    }

    /// Ends the snapshots of the connections not in use, before a checkpoint.
    pub fn end_idle_snapshots(&self) {
        end_snapshots(&mut self.idle());
    }

    fn run<T>(&self, snapshot: Snapshot, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let mut reader = self.take()?;
        // On failure the connection is dropped, not given back: its state is unknown, and a
        // new one costs little.
        reader.prepare(snapshot, self.commits.load(Ordering::Acquire), self.max_age)?;
        let result = f(&reader.conn);
        self.give_back(reader);
        result
    }

    fn take(&self) -> Result<Reader> {
        match self.idle().pop() {
            Some(reader) => Ok(reader),
            None => Ok(Reader { conn: connection::open_reader(&self.path)?, began: None }),
        }
    }

    fn give_back(&self, mut reader: Reader) {
        if reader.conn.is_autocommit() {
            // The read ended the transaction itself, or SQLite rolled it back on an error.
            reader.began = None;
        }
        // Under the lock, which `renew` bumps the count under: a commit either comes
        // before and is seen here, or comes after and finds this connection idle.
        let mut idle = self.idle();
        let stale = reader.began.is_some_and(|(commits, _)| commits != self.commits.load(Ordering::Relaxed));
        if stale && reader.end().is_err() {
            return;
        }
        idle.push(reader);
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Reader>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Ends each connection's snapshot; one that cannot end it is closed, which does.
fn end_snapshots(idle: &mut Vec<Reader>) {
    idle.retain_mut(|reader| reader.end().is_ok());
}

impl Reader {
    /// Makes the connection ready to read in `snapshot`, `commits` being the store's count.
    fn prepare(&mut self, snapshot: Snapshot, commits: u64, max_age: Duration) -> Result<()> {
        let current = self.began.is_some_and(|(at, since)| at == commits && since.elapsed() < max_age);
        if snapshot == Snapshot::Kept && current {
            return Ok(());
        }
        self.end()?;
        if snapshot != Snapshot::Outside {
            // Deferred: SQLite takes the snapshot at the read's first statement, which is
            // after the count was loaded, so it holds every commit counted.
            self.conn.prepare_cached("BEGIN")?.execute([])?;
            self.began = Some((commits, Instant::now()));
        }
        Ok(())
    }

    /// Ends the open read transaction, if there is one.
    fn end(&mut self) -> Result<()> {
        self.began = None;
        if !self.conn.is_autocommit() {
            self.conn.prepare_cached("COMMIT")?.execute([]).map_err(|e| {
                tracing::warn!(error = %e, "a read connection could not end its snapshot; it is closed");
                e
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(3600);

    /// A database with one row, `v = 1`, a connection that writes to it as another process
    /// would (unseen by `commits`), and readers whose snapshots do not age during a test.
    fn setup(max_age: Duration) -> (tempfile::TempDir, Connection, Arc<Readers>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let other = Connection::open(&path).unwrap();
        other
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1)")
            .unwrap();
        (dir, other, Readers::with_max_age(path, max_age))
    }

    async fn value(readers: &Arc<Readers>, snapshot: Snapshot) -> i64 {
        readers
            .read_bounded(snapshot, |conn| Ok(conn.query_row("SELECT v FROM t", [], |r| r.get(0))?))
            .await
            .unwrap()
    }

    fn set(other: &Connection, v: i64) {
        other.execute("UPDATE t SET v = ?1", [v]).unwrap();
    }

    fn idle_in_snapshot(readers: &Readers) -> Vec<bool> {
        readers.idle().iter().map(|r| !r.conn.is_autocommit()).collect()
    }

    #[tokio::test]
    async fn a_kept_snapshot_serves_the_next_read_until_a_commit_is_counted() {
        let (_dir, other, readers) = setup(LONG);
        assert_eq!(value(&readers, Snapshot::Kept).await, 1);
        set(&other, 2);
        assert_eq!(value(&readers, Snapshot::Kept).await, 1, "the snapshot was kept, not begun again");
        readers.renew();
        assert_eq!(idle_in_snapshot(&readers), [false], "a commit ends the idle connection's snapshot");
        assert_eq!(value(&readers, Snapshot::Kept).await, 2);
    }

    #[tokio::test]
    async fn a_read_that_wants_the_latest_sees_another_process_commit_at_once() {
        let (_dir, other, readers) = setup(LONG);
        assert_eq!(value(&readers, Snapshot::Kept).await, 1);
        set(&other, 2);
        assert_eq!(value(&readers, Snapshot::Latest).await, 2);
        set(&other, 3);
        assert_eq!(value(&readers, Snapshot::Latest).await, 3);
    }

    #[tokio::test]
    async fn a_snapshot_older_than_the_age_limit_is_not_used() {
        let (_dir, other, readers) = setup(Duration::from_millis(20));
        assert_eq!(value(&readers, Snapshot::Kept).await, 1);
        set(&other, 2);
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(value(&readers, Snapshot::Kept).await, 2);
    }

    #[tokio::test]
    async fn a_commit_during_a_read_ends_its_snapshot_when_the_connection_is_given_back() {
        let (_dir, other, readers) = setup(LONG);
        let during = readers.clone();
        let v = readers
            .read_bounded(Snapshot::Kept, move |conn| {
                let v: i64 = conn.query_row("SELECT v FROM t", [], |r| r.get(0))?;
                set(&other, 2);
                during.renew();
                Ok(v)
            })
            .await
            .unwrap();
        assert_eq!(v, 1);
        assert_eq!(idle_in_snapshot(&readers), [false]);
        assert_eq!(value(&readers, Snapshot::Kept).await, 2);
    }

    #[tokio::test]
    async fn a_read_outside_a_snapshot_runs_in_none() {
        let (_dir, _other, readers) = setup(LONG);
        assert_eq!(value(&readers, Snapshot::Kept).await, 1);
        let outside = readers.read(Snapshot::Outside, |conn| Ok(conn.is_autocommit())).await.unwrap();
        assert!(outside, "VACUUM INTO and the like run outside any transaction");
    }

    #[tokio::test]
    async fn idle_snapshots_end_before_a_checkpoint_so_that_it_copies_everything() {
        let (_dir, other, readers) = setup(LONG);
        // What the checkpoint left of the WAL's frames: (frames in the WAL, frames copied).
        let checkpoint = |conn: &Connection| -> (i64, i64) {
            conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| Ok((r.get(1)?, r.get(2)?))).unwrap()
        };
        checkpoint(&other);
        assert_eq!(value(&readers, Snapshot::Kept).await, 1);
        set(&other, 2);
        let (frames, copied) = checkpoint(&other);
        assert!(copied < frames, "the idle snapshot holds the new frame back ({copied} of {frames})");
        readers.end_idle_snapshots();
        let (frames, copied) = checkpoint(&other);
        assert_eq!(copied, frames);
    }
}
