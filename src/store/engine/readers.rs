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
//! and SQLite, which starts the WAL over only when no snapshot is left on it; another
//! process's checkpointer too, which this store never hears of. So a snapshot never stays
//! open on a connection that nobody uses: [`Readers::renew`] ends those of the idle
//! connections, a connection in use ends its own when it is given back if a commit came
//! meanwhile, the checkpointer ends every idle one before it copies, and a sweeper thread
//! ends any idle one once it is [`MAX_AGE`] old (a store that read once and went idle
//! would otherwise keep its snapshot, and another process's WAL growing, for good).
//!
//! Reads of a few index steps run at once on the calling task ([`Readers::read_bounded`]).
//! They never wait there on a lock: on those reads a connection's busy timeout is zero, and
//! a read that finds the database locked (another process's exclusive lock, WAL recovery)
//! is run again on the blocking pool, where it waits as long as any other read. A cold page
//! is the one wait left on the task: a bounded read touches a handful of pages.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak, mpsc};
use std::thread;
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
    /// Wakes the sweeper (see [`sweep`]); dropping it stops the sweeper.
    wake_sweeper: mpsc::SyncSender<()>,
    /// The sweeper sleeps until woken: no idle connection had a snapshot when it looked.
    sweeper_idle: AtomicBool,
}

struct Reader {
    conn: Connection,
    /// The commit count and the time at which the open read transaction began, if one is.
    began: Option<(u64, Instant)>,
    /// How long the connection waits for a lock: its busy timeout.
    wait: Wait,
}

/// How long a read waits when the database is locked as its snapshot begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Not at all: it runs on an async task, whose thread serves other requests.
    Never,
    /// The connection's busy timeout: it runs on a thread of its own.
    AsLongAsAnyRead,
}

impl Wait {
    fn busy_timeout(self) -> Duration {
        match self {
            Wait::Never => Duration::ZERO,
            Wait::AsLongAsAnyRead => connection::BUSY_TIMEOUT,
        }
    }
}

/// The database was locked: another process's exclusive lock, or a WAL being recovered.
fn is_locked(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

impl Readers {
    pub fn new(path: PathBuf) -> Arc<Self> {
        Self::with_max_age(path, MAX_AGE)
    }

    fn with_max_age(path: PathBuf, max_age: Duration) -> Arc<Self> {
        let (wake_sweeper, woken) = mpsc::sync_channel(1);
        let readers = Arc::new(Self {
            path,
            idle: Mutex::new(Vec::with_capacity(READERS)),
            slots: Semaphore::new(READERS),
            commits: AtomicU64::new(0),
            max_age,
            wake_sweeper,
            sweeper_idle: AtomicBool::new(false),
        });
        let swept = Arc::downgrade(&readers);
        // Without the sweeper idle snapshots still end at every commit and checkpoint of
        // this store; only another process's checkpoints would suffer, so a failure to
        // start a thread is logged, not fatal.
        if let Err(e) =
            thread::Builder::new().name("petstore-snapshots".into()).spawn(move || sweep(&swept, &woken))
        {
            tracing::warn!(error = %e, "the idle-snapshot sweeper did not start");
        }
        readers
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
        tokio::task::spawn_blocking(move || {
            span.in_scope(|| {
                let reader = readers.ready(snapshot, Wait::AsLongAsAnyRead)?;
                // A patient connection is always ready or failed.
                let reader = reader.ok_or_else(|| Error::internal("a read found the database locked"))?;
                readers.finish(reader, f)
            })
        })
        .await
        .map_err(Error::internal)?
    }

    /// Runs `f` in `snapshot` at once on the calling thread, for reads bounded to a few
    /// index steps: rows found by key, or a first page whose count is a kept one. Handing
    /// such a read to the blocking pool and back (two thread wake-ups) costs as much as the
    /// read itself, which is microseconds of B-tree descent; so it is done here, like any
    /// short computation of an async task. It never waits on the task: when every reader
    /// is busy, or the database is locked when its snapshot begins, it is run by [`read`]
    /// (`Self::read`) like any other read.
    pub async fn read_bounded<T, F>(self: &Arc<Self>, snapshot: Snapshot, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        if let Ok(slot) = self.slots.try_acquire() {
            if let Some(reader) = self.ready(snapshot, Wait::Never)? {
                return self.finish(reader, f);
            }
            drop(slot);
        }
        self.read(snapshot, f).await
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

    /// A connection ready to read in `snapshot`, or, waiting [`Wait::Never`], none when the
    /// database was locked as the snapshot began.
    fn ready(&self, snapshot: Snapshot, wait: Wait) -> Result<Option<Reader>> {
        let mut reader = match self.take(wait) {
            Ok(reader) => reader,
            Err(e) if wait == Wait::Never && is_locked(&e) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        reader.wait(wait)?;
        // On failure the connection is dropped, not given back: its state is unknown, and a
        // new one costs little.
        match reader.prepare(snapshot, self.commits.load(Ordering::Acquire), self.max_age) {
            Ok(()) => Ok(Some(reader)),
            Err(e) if wait == Wait::Never && is_locked(&e) => {
                if reader.end().is_ok() {
                    self.give_back(reader);
                }
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Runs `f` on a ready connection and gives it back.
    fn finish<T>(&self, reader: Reader, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let result = f(&reader.conn);
        self.give_back(reader);
        result
    }

    fn take(&self, wait: Wait) -> rusqlite::Result<Reader> {
        if let Some(reader) = self.idle().pop() {
            return Ok(reader);
        }
        let conn = connection::open_reader(&self.path, wait.busy_timeout())?;
        Ok(Reader { conn, began: None, wait })
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
        let snapshot = reader.began.is_some();
        idle.push(reader);
        drop(idle);
        // The sweeper set the flag before it looked under the same lock: either it saw this
        // connection, or the flag is seen here.
        if snapshot && self.sweeper_idle.swap(false, Ordering::SeqCst) {
            let _ = self.wake_sweeper.try_send(());
        }
    }

    /// Ends the snapshots of idle connections that are [`MAX_AGE`] old; answers how long
    /// until the youngest one left is, if one is left.
    fn end_aged_snapshots(&self) -> Option<Duration> {
        let mut idle = self.idle();
        let mut next: Option<Duration> = None;
        idle.retain_mut(|reader| {
            let Some((_, since)) = reader.began else { return true };
            match self.max_age.checked_sub(since.elapsed()) {
                Some(left) if !left.is_zero() => {
                    next = Some(next.map_or(left, |n| n.min(left)));
                    true
                }
                _ => reader.end().is_ok(),
            }
        });
        next
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Reader>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The sweeper thread: ends idle snapshots as they reach their age, sleeping until the
/// next one does, or, when none is left, until a connection is given back with one. It
/// ends when the readers are dropped (their end of `woken` with them).
fn sweep(readers: &Weak<Readers>, woken: &mpsc::Receiver<()>) {
    loop {
        let Some(readers) = readers.upgrade() else { return };
        readers.sweeper_idle.store(true, Ordering::SeqCst);
        let next = readers.end_aged_snapshots();
        if next.is_some() {
            readers.sweeper_idle.store(false, Ordering::SeqCst);
        }
        // Not held while asleep: the store may close meanwhile.
        drop(readers);
        let wait = next.unwrap_or(Duration::from_secs(3600));
        if let Err(mpsc::RecvTimeoutError::Disconnected) = woken.recv_timeout(wait) {
            return;
        }
    }
}

/// Ends each connection's snapshot; one that cannot end it is closed, which does.
fn end_snapshots(idle: &mut Vec<Reader>) {
    idle.retain_mut(|reader| reader.end().is_ok());
}

impl Reader {
    /// Makes the connection ready to read in `snapshot`, `commits` being the store's count.
    fn prepare(&mut self, snapshot: Snapshot, commits: u64, max_age: Duration) -> rusqlite::Result<()> {
        let current = self.began.is_some_and(|(at, since)| at == commits && since.elapsed() < max_age);
        if snapshot == Snapshot::Kept && current {
            return Ok(());
        }
        self.end_transaction()?;
        if snapshot != Snapshot::Outside {
            // BEGIN is deferred; the schema version's read takes the snapshot now (after
            // the count was loaded, so it holds every commit counted), which is the one
            // moment a read can find the database locked: once it holds a snapshot, WAL
            // takes no further lock for it.
            self.conn.prepare_cached("BEGIN")?.execute([])?;
            self.conn.prepare_cached("PRAGMA schema_version")?.query_row([], |_| Ok(()))?;
            self.began = Some((commits, Instant::now()));
        }
        Ok(())
    }

    /// Sets how long the connection waits for a lock, if that changes.
    fn wait(&mut self, wait: Wait) -> Result<()> {
        if self.wait != wait {
            self.conn.busy_timeout(wait.busy_timeout())?;
            self.wait = wait;
        }
        Ok(())
    }

    /// Ends the open read transaction, if there is one.
    fn end(&mut self) -> Result<()> {
        Ok(self.end_transaction().inspect_err(|e| {
            tracing::warn!(error = %e, "a read connection could not end its snapshot; it is closed");
        })?)
    }

    fn end_transaction(&mut self) -> rusqlite::Result<()> {
        self.began = None;
        if !self.conn.is_autocommit() {
            self.conn.prepare_cached("COMMIT")?.execute([])?;
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

    /// Reads by id at 100,000 pets missed each reader's own page cache and copied their
    /// page with `pread` (see `connection::READ_MAP_BYTES`); a build of SQLite without
    /// memory maps, or a connection opened without one, would silently go back to that.
    #[tokio::test]
    async fn readers_read_the_file_through_a_memory_map() {
        let (_dir, _other, readers) = setup(LONG);
        let mapped: i64 = readers
            .read_bounded(Snapshot::Kept, |conn| Ok(conn.query_row("PRAGMA mmap_size", [], |r| r.get(0))?))
            .await
            .unwrap();
        assert_eq!(mapped, connection::READ_MAP_BYTES);
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

    #[tokio::test]
    async fn an_idle_snapshot_ends_once_it_is_old_without_waiting_for_the_next_read() {
        let (_dir, _other, readers) = setup(Duration::from_millis(20));
        assert_eq!(value(&readers, Snapshot::Kept).await, 1);
        assert_eq!(idle_in_snapshot(&readers), [true]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while idle_in_snapshot(&readers) != [false] {
            assert!(Instant::now() < deadline, "the idle connection still holds its snapshot");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    const HOLDER: &str = "import sqlite3, sys\n\
        c = sqlite3.connect(sys.argv[1], isolation_level=None)\n\
        c.execute('BEGIN EXCLUSIVE'); c.execute('UPDATE t SET v = 2')\n\
        print('locked', flush=True); sys.stdin.readline(); c.execute('COMMIT')\n";

    /// Another process holds an exclusive lock on the database until a task on this
    /// runtime's only thread tells it to let go: a read that waited for the lock on that
    /// thread would wait out its busy timeout and fail, since the task could never run.
    /// (A rollback-journal database, where a writer's lock keeps readers out: in WAL mode
    /// that takes another process's WAL recovery or exclusive locking mode.)
    #[tokio::test(flavor = "current_thread")]
    async fn a_bounded_read_never_waits_for_a_lock_on_the_async_runtime() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1)")
            .unwrap();
        let readers = Readers::with_max_age(path.clone(), LONG);
        // Another process, which holds the lock until a line comes on its input.
        let mut holder = std::process::Command::new("python3")
            .arg("-c")
            .arg(HOLDER)
            .arg(&path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut locked = std::io::BufReader::new(holder.stdout.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut locked, &mut line).unwrap();
        assert_eq!(line.trim(), "locked");
        let mut let_go = holder.stdin.take().unwrap();

        let read = tokio::spawn({
            let readers = readers.clone();
            async move {
                readers
                    .read_bounded(Snapshot::Latest, |c| {
                        Ok(c.query_row("SELECT v FROM t", [], |r| r.get::<_, i64>(0))?)
                    })
                    .await
            }
        });
        // Runs only if the read left the thread free.
        tokio::task::yield_now().await;
        std::io::Write::write_all(&mut let_go, b"let go\n").unwrap();
        assert_eq!(read.await.unwrap(), Ok(2), "the read waited on the blocking pool, then saw the commit");
        assert!(holder.wait().unwrap().success());
    }
}
