//! Group commit. With `synchronous = FULL` every commit waits for the disk to sync, and a
//! disk syncs only a few thousand times a second, so one commit per order caps the shop at
//! that many orders whatever the CPU does. One writer thread owns the write connection
//! instead: it takes every write that is waiting, applies each in its own savepoint inside
//! one transaction, commits once, and only then answers each caller. A write that fails
//! rolls back its own savepoint and nothing else; a commit that fails answers every write
//! of the group with the failure, so nothing is ever acknowledged that is not on disk.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::checkpointer::{self, Nudge};
use super::connection;
use super::readers::Readers;
use crate::admission::{WriteAdmission, request_over};
use crate::error::{Error, Result};

/// The most writes committed together: enough to cover every connection of a busy server
/// at once, small enough that the first caller of a group never waits long for the last.
const MAX_GROUP: usize = 256;

/// The handle to the writer thread; dropping it lets the thread finish the writes already
/// sent, close the connection and end, and waits for that.
pub(super) struct Writer {
    requests: Option<mpsc::Sender<Request>>,
    thread: Option<JoinHandle<()>>,
    checkpointer: Option<JoinHandle<()>>,
    thread_id: ThreadId,
    groups: Arc<AtomicU64>,
    readers: Arc<Readers>,
}

enum Request {
    /// Applied in a savepoint, committed with the group it arrives in.
    Grouped(Box<dyn GroupedWrite>),
    /// Needs the connection to itself, outside any transaction (seed, key changes).
    Exclusive(Box<dyn FnOnce(&mut Connection) + Send>),
}

/// A write waiting for its group: it can be applied, or refused without running.
trait GroupedWrite: Send {
    fn apply(self: Box<Self>, conn: &Connection) -> Applied;
    fn refuse(self: Box<Self>, error: Error);
}

/// What applying a write left: its answer, and whether the group can still commit.
struct Applied {
    answer: Box<dyn HeldResult>,
    /// The write's savepoint could not be ended (`ROLLBACK TO` or `RELEASE` failed), so
    /// what it changed cannot be told apart from the rest of the group, which must not
    /// commit.
    broke_group: Option<Error>,
}

/// An applied write's result, held back until its group's commit has succeeded or failed.
trait HeldResult: Send {
    fn send(self: Box<Self>, commit: std::result::Result<(), &Error>);
}

struct Job<T, F> {
    f: F,
    /// The admission of the request that sent it, if one did.
    admission: Option<WriteAdmission>,
    reply: oneshot::Sender<Result<T>>,
}

struct Outcome<T> {
    result: Result<T>,
    reply: oneshot::Sender<Result<T>>,
}

impl<T, F> GroupedWrite for Job<T, F>
where
    T: Send + 'static,
    F: FnOnce(&Connection) -> Result<T> + Send + 'static,
{
    fn apply(self: Box<Self>, conn: &Connection) -> Applied {
        let Job { f, admission, reply } = *self;
        let (result, broke_group) = if admission.is_some_and(|a| !a.begin()) {
            (Err(request_over()), None)
        } else {
            match in_savepoint(conn, f) {
                Ok(result) => (result, None),
                Err(broken) => (Err(broken.clone()), Some(broken)),
            }
        };
        Applied { answer: Box::new(Outcome { result, reply }), broke_group }
    }

    fn refuse(self: Box<Self>, error: Error) {
        // The caller may have gone (its request timed out); nobody to tell then.
        let _ = self.reply.send(Err(error));
    }
}

impl<T: Send> HeldResult for Outcome<T> {
    fn send(self: Box<Self>, commit: std::result::Result<(), &Error>) {
        let result = match commit {
            Ok(()) => self.result,
            Err(error) => Err(error.clone()),
        };
        let _ = self.reply.send(result);
    }
}

impl Writer {
    /// Starts the writer thread with `conn`, the database's only write connection, and the
    /// checkpointer thread with `checkpoints`, a second connection to the same database,
    /// which waits `pause` after each checkpoint (see [`checkpointer::CHECKPOINT_PAUSE`]). `readers` are
    /// told of every commit before anyone is answered, and their idle snapshots are ended
    /// before every checkpoint (see `readers.rs`).
    pub fn start(
        conn: Connection,
        checkpoints: Connection,
        pause: Duration,
        readers: Arc<Readers>,
    ) -> Result<Self> {
        for_writing(&conn)?;
        let (nudge, checkpointer) = checkpointer::start(checkpoints, pause, readers.clone())?;
        let (requests, queue) = mpsc::channel();
        let groups = Arc::new(AtomicU64::new(0));
        let counted = groups.clone();
        let told = readers.clone();
        let thread = thread::Builder::new()
            .name("petstore-writer".into())
            .spawn(move || run(conn, queue, &counted, &nudge, &told))
            .map_err(Error::internal)?;
        let thread_id = thread.thread().id();
        Ok(Self {
            requests: Some(requests),
            thread: Some(thread),
            checkpointer: Some(checkpointer),
            thread_id,
            groups,
            readers,
        })
    }

    /// How many group transactions have been committed: writes per group is what group
    /// commit buys, so the benchmarks report it.
    pub fn groups_committed(&self) -> u64 {
        self.groups.load(Ordering::Relaxed)
    }

    /// Runs `f` in a savepoint of the next group transaction; resolves once the group is
    /// committed (with `f`'s result) or has failed to commit (with that failure).
    /// A write whose request's `admission` is closed by then is not begun.
    pub fn grouped<T, F>(&self, admission: Option<WriteAdmission>, f: F) -> oneshot::Receiver<Result<T>>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        self.send(Request::Grouped(Box::new(Job { f, admission, reply })));
        answer
    }

    /// Runs `f` with the connection to itself, between groups.
    pub fn exclusive<T, F>(&self, f: F) -> oneshot::Receiver<Result<T>>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let readers = self.readers.clone();
        self.send(Request::Exclusive(Box::new(move |conn: &mut Connection| {
            let result = catch_unwind(AssertUnwindSafe(|| f(conn))).unwrap_or_else(|_| Err(panicked()));
            // Whatever it did, it committed on its own: no snapshot from before is current.
            readers.renew();
            let _ = reply.send(result);
        })));
        answer
    }

    fn send(&self, request: Request) {
        // The thread ends only when this handle drops, so the channel is open here; if the
        // thread died anyway, the request is dropped and its caller gets a closed reply.
        if let Some(requests) = &self.requests {
            let _ = requests.send(request);
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        drop(self.requests.take());
        // Joining from the writer thread itself (a write that held the last handle) would
        // wait forever; the thread ends by itself right after.
        if thread::current().id() != self.thread_id
            && let Some(thread) = self.thread.take()
        {
            let _ = thread.join();
            // The writer thread is gone, and with it the checkpointer's wake-up channel.
            if let Some(checkpointer) = self.checkpointer.take() {
                let _ = checkpointer.join();
            }
        }
    }
}

/// A closed reply channel: the writer thread is gone.
pub(super) fn writer_gone() -> Error {
    Error::internal("the database writer has stopped")
}

fn rolled_back() -> Error {
    Error::internal("the transaction was rolled back by the database")
}

fn panicked() -> Error {
    Error::internal("a database write panicked")
}

fn run(
    mut conn: Connection,
    queue: mpsc::Receiver<Request>,
    groups: &AtomicU64,
    checkpoints: &Nudge,
    readers: &Readers,
) {
    let mut group: Vec<Box<dyn GroupedWrite>> = Vec::with_capacity(MAX_GROUP);
    let mut writes = 0_u64;
    // Blocks for the first request; then takes whatever else is already waiting.
    while let Ok(first) = queue.recv() {
        let mut next = Some(first);
        while let Some(request) = next.take() {
            match request {
                Request::Grouped(write) => {
                    writes += 1;
                    group.push(write);
                }
                Request::Exclusive(work) => {
                    // In arrival order: the group before it is committed first.
                    commit_group(&mut conn, &mut group, groups, readers);
                    work(&mut conn);
                }
            }
            if group.len() < MAX_GROUP {
                next = queue.try_recv().ok();
            }
        }
        commit_group(&mut conn, &mut group, groups, readers);
        checkpoints.committed(&conn, readers);
    }
    tracing::debug!(writes, groups = groups.load(Ordering::Relaxed), "the database writer stopped");
}

/// Applies every write of `group` in one `BEGIN IMMEDIATE` transaction and commits it,
/// then answers each write.
fn commit_group(
    conn: &mut Connection,
    group: &mut Vec<Box<dyn GroupedWrite>>,
    groups: &AtomicU64,
    readers: &Readers,
) {
    if group.is_empty() {
        return;
    }
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        let error = Error::from(e);
        for write in group.drain(..) {
            write.refuse(error.clone());
        }
        return;
    }
    let mut answers = Vec::with_capacity(group.len());
    let mut broken = None;
    for write in group.drain(..) {
        // A failure that SQLite answers by rolling back the whole transaction (a full
        // disk, an I/O error) ends it under the savepoints: nothing of the group is kept,
        // and the writes still waiting must not run outside a transaction. A savepoint
        // that could not be ended leaves the group unable to commit: the rest is refused.
        if conn.is_autocommit() {
            write.refuse(rolled_back());
        } else if let Some(error) = &broken {
            write.refuse(Error::clone(error));
        } else {
            let applied = write.apply(conn);
            broken = applied.broke_group;
            answers.push(applied.answer);
        }
    }
    let commit = match broken {
        _ if conn.is_autocommit() => Err(rolled_back()),
        Some(error) => {
            tracing::error!(%error, writes = answers.len(), "a write's savepoint could not be ended; its whole group is rolled back");
            roll_back(conn);
            Err(error)
        }
        None => conn.execute_batch("COMMIT").map_err(|e| {
            roll_back(conn);
            Error::from(e)
        }),
    };
    if commit.is_ok() {
        groups.fetch_add(1, Ordering::Relaxed);
        readers.renew();
    }
    for answer in answers {
        answer.send(commit.as_ref().map(|_| ()));
    }
}

/// Runs `f` between `SAVEPOINT` and `RELEASE`; when it fails (or panics) only its own
/// changes are rolled back, and the rest of the group goes on. The outer error says that
/// the savepoint could not be ended, so that what `f` changed is still in the group's
/// transaction whatever `f` answered: the group must then be rolled back whole.
fn in_savepoint<T>(conn: &Connection, f: impl FnOnce(&Connection) -> Result<T>) -> Result<Result<T>> {
    // Cached: parsing these anew for every write was a tenth of the writer's time.
    let run = |sql: &str| -> Result<()> { Ok(conn.prepare_cached(sql)?.execute([]).map(drop)?) };
    if let Err(e) = run("SAVEPOINT grouped_write") {
        // Nothing of `f` ran: only this write fails.
        return Ok(Err(e));
    }
    let result = catch_unwind(AssertUnwindSafe(|| f(conn))).unwrap_or_else(|_| Err(panicked()));
    if conn.is_autocommit() {
        // The whole transaction is gone (see commit_group), and the savepoint with it.
        return Ok(result);
    }
    if result.is_err() {
        run("ROLLBACK TO grouped_write")?;
    }
    run("RELEASE grouped_write")?;
    Ok(result)
}

/// Rolls the group's transaction back. Should even that fail, the connection is left
/// inside a transaction that no later group may join: it is reopened.
fn roll_back(conn: &mut Connection) {
    if conn.execute_batch("ROLLBACK").is_ok() || conn.is_autocommit() {
        return;
    }
    tracing::error!("the writer's connection could not roll back its transaction; it is reopened");
    match reopen(conn) {
        Ok(fresh) => *conn = fresh,
        Err(e) => tracing::error!(error = %e, "the writer's connection could not be reopened"),
    }
}

/// A new write connection to the same database, set up as [`Writer::start`] sets the first.
fn reopen(conn: &Connection) -> Result<Connection> {
    let path = conn.path().ok_or_else(|| Error::internal("the writer's database has no path"))?;
    let fresh = connection::open_writer(std::path::Path::new(path)).map_err(Error::internal)?;
    for_writing(&fresh)?;
    Ok(fresh)
}

/// The writer connection's own settings.
fn for_writing(conn: &Connection) -> Result<()> {
    // Checkpoints are the checkpointer's: one in the middle of a commit would make every
    // write of that group wait for it (a tenth of the writer's time under load).
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    // Between checkpoints a burst of writes can grow the WAL to tens of MB; once it has
    // been copied back, SQLite cuts the file back to this when it starts over.
    conn.pragma_update(None, "journal_size_limit", checkpointer::WAL_SIZE_LIMIT)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::super::checkpointer::CHECKPOINT_PAUSE;
    use super::*;

    fn writer(dir: &tempfile::TempDir) -> (Writer, Connection) {
        let path = dir.path().join("w.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER NOT NULL CHECK (v >= 0))")
            .unwrap();
        let writer = Writer::start(
            conn,
            Connection::open(&path).unwrap(),
            CHECKPOINT_PAUSE,
            Readers::new(path.clone()),
        )
        .unwrap();
        (writer, Connection::open(&path).unwrap())
    }

    fn insert(v: i64) -> impl FnOnce(&Connection) -> Result<i64> + Send + 'static {
        move |conn| {
            conn.execute("INSERT INTO t (v) VALUES (?1)", [v])?;
            Ok(v)
        }
    }

    fn values(conn: &Connection) -> Vec<i64> {
        let mut stmt = conn.prepare("SELECT v FROM t ORDER BY v").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
    }

    /// Holds the writer thread until released, so that the writes sent meanwhile queue up
    /// and must form one group. (Exclusive work, which is no group itself: a held grouped
    /// write could be taken alone before the others arrive.)
    fn hold(writer: &Writer) -> (oneshot::Receiver<Result<()>>, mpsc::Sender<()>) {
        let (release, held) = mpsc::channel::<()>();
        let answer = writer.exclusive(move |_| {
            held.recv().unwrap();
            Ok(())
        });
        (answer, release)
    }

    #[tokio::test]
    async fn writes_waiting_together_commit_together_and_a_failure_undoes_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, check) = writer(&dir);
        let (first, release) = hold(&writer);
        let answers: Vec<_> = [1, -1, 2, 3].into_iter().map(|v| writer.grouped(None, insert(v))).collect();
        let panics = writer.grouped(None, |conn: &Connection| -> Result<()> {
            conn.execute("INSERT INTO t (v) VALUES (99)", [])?;
            panic!("a bug in one write");
        });
        release.send(()).unwrap();

        first.await.unwrap().unwrap();
        let results: Vec<Result<i64>> = futures_join(answers).await;
        assert_eq!(results[0], Ok(1));
        assert!(results[1].is_err(), "the CHECK refuses -1: {:?}", results[1]);
        assert_eq!((&results[2], &results[3]), (&Ok(2), &Ok(3)));
        assert_eq!(panics.await.unwrap(), Err(panicked()));
        assert_eq!(values(&check), vec![1, 2, 3], "only the failed and the panicked writes are undone");
        assert_eq!(writer.groups_committed(), 1, "the five writes that waited were one group");
    }

    #[tokio::test]
    async fn a_write_whose_request_is_over_before_it_begins_is_not_applied() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, check) = writer(&dir);
        let (first, release) = hold(&writer);
        let timed_out = WriteAdmission::new();
        let queued = writer.grouped(Some(timed_out.clone()), insert(1));
        let other = writer.grouped(Some(WriteAdmission::new()), insert(2));
        assert!(!timed_out.close(), "it was still queued behind the held writer");
        release.send(()).unwrap();
        first.await.unwrap().unwrap();

        assert_eq!(queued.await.unwrap(), Err(request_over()));
        assert_eq!(other.await.unwrap(), Ok(2));
        assert_eq!(values(&check), vec![2], "only the write whose request was still open ran");
    }

    #[tokio::test]
    async fn a_request_closed_after_its_write_began_is_told_it_may_have_been_applied() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, check) = writer(&dir);
        let admission = WriteAdmission::new();
        assert_eq!(writer.grouped(Some(admission.clone()), insert(7)).await.unwrap(), Ok(7));
        assert!(admission.close());
        assert_eq!(values(&check), vec![7]);
    }

    /// A write that ends its own savepoint (a bug, but one the writer must survive): the
    /// writer's `ROLLBACK TO` or `RELEASE` then fails with what it changed still in the
    /// group's transaction, which therefore must not commit.
    fn releases_its_savepoint(v: i64, answer: Result<i64>) -> impl FnOnce(&Connection) -> Result<i64> + Send {
        move |conn| {
            conn.execute("INSERT INTO t (v) VALUES (?1)", [v])?;
            conn.execute_batch("RELEASE grouped_write")?;
            answer
        }
    }

    #[tokio::test]
    async fn a_savepoint_that_cannot_be_ended_rolls_back_its_whole_group_and_answers_every_write() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, check) = writer(&dir);
        for answer in [Err(Error::validation("refused")), Ok(10)] {
            let (first, release) = hold(&writer);
            let before = writer.grouped(None, insert(1));
            let broken = writer.grouped(None, releases_its_savepoint(10, answer));
            let after = writer.grouped(None, insert(2));
            release.send(()).unwrap();
            first.await.unwrap().unwrap();

            let results = futures_join(vec![before, broken, after]).await;
            assert!(
                results.iter().all(Result::is_err),
                "every write of the group is told it failed: {results:?}"
            );
            assert_eq!(values(&check), Vec::<i64>::new(), "nothing of the group was committed");
        }
        assert_eq!(writer.grouped(None, insert(3)).await.unwrap(), Ok(3), "the next group commits as usual");
        assert_eq!(values(&check), vec![3]);
    }

    #[tokio::test]
    async fn an_answer_comes_only_after_its_commit() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, check) = writer(&dir);
        for v in 0..20 {
            assert_eq!(writer.grouped(None, insert(v)).await.unwrap(), Ok(v));
            // Another connection sees it at once: answered means committed.
            assert_eq!(values(&check).len() as i64, v + 1);
        }
    }

    #[tokio::test]
    async fn exclusive_work_runs_between_groups_in_arrival_order() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, _check) = writer(&dir);
        let (first, release) = hold(&writer);
        let before = writer.grouped(None, insert(1));
        let alone = writer.exclusive(|conn: &mut Connection| {
            assert!(conn.is_autocommit(), "exclusive work runs outside any transaction");
            Ok(conn.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))?)
        });
        let after = writer.grouped(None, insert(2));
        release.send(()).unwrap();
        first.await.unwrap().unwrap();
        assert_eq!(before.await.unwrap(), Ok(1));
        assert_eq!(alone.await.unwrap(), Ok(1), "the write sent before it is committed first");
        assert_eq!(after.await.unwrap(), Ok(2));
    }

    #[tokio::test]
    async fn dropping_the_writer_finishes_what_was_sent() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, check) = writer(&dir);
        let answers: Vec<_> = (0..50).map(|v| writer.grouped(None, insert(v))).collect();
        drop(writer);
        assert_eq!(values(&check).len(), 50, "the drop waited for every write sent");
        assert!(futures_join(answers).await.iter().all(Result::is_ok));
    }

    #[tokio::test]
    async fn the_checkpointer_copies_commits_into_the_database_file() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, _check) = writer(&dir);
        for v in 0..100 {
            writer.grouped(None, insert(v)).await.unwrap().unwrap();
        }
        // The writer never checkpoints (wal_autocheckpoint = 0); the rows reach the main
        // file only through the checkpointer. A copy of that file alone must hold them.
        let copy = dir.path().join("copy.db");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            std::fs::copy(dir.path().join("w.db"), &copy).unwrap();
            let found = values(&Connection::open(&copy).unwrap()).len();
            if found == 100 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "only {found} of 100 rows reached the file");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_steady_stream_of_writes_starts_the_wal_over_and_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER NOT NULL)").unwrap();
        let pause = Duration::from_millis(5);
        let readers = Readers::new(path.clone());
        let writer =
            Arc::new(Writer::start(conn, Connection::open(&path).unwrap(), pause, readers.clone()).unwrap());
        // Readers all along, whose connections keep their snapshots between reads: neither
        // those in use nor the idle ones may keep the WAL from starting over.
        let done = Arc::new(AtomicBool::new(false));
        let reading: Vec<_> = (0..2)
            .map(|_| {
                let (readers, done) = (readers.clone(), done.clone());
                tokio::spawn(async move {
                    let mut reads = 0_u64;
                    while !done.load(Ordering::Relaxed) {
                        let count = |conn: &Connection| {
                            Ok(conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))?)
                        };
                        let _: i64 = readers.read_bounded(super::super::Snapshot::Kept, count).await.unwrap();
                        reads += 1;
                        tokio::task::yield_now().await;
                    }
                    reads
                })
            })
            .collect();
        // Sixteen callers, each sending its next write as soon as the last is answered: the
        // writer is never idle long enough for a checkpoint alone to catch up with it.
        let callers: Vec<_> = (0..16)
            .map(|caller| {
                let writer = writer.clone();
                tokio::spawn(async move {
                    for v in 0..250 {
                        writer.grouped(None, insert(caller * 1000 + v)).await.unwrap().unwrap();
                    }
                })
            })
            .collect();
        for caller in callers {
            caller.await.unwrap();
        }
        done.store(true, Ordering::Relaxed);
        for reader in reading {
            assert!(reader.await.unwrap() > 0);
        }
        // Every group appended at least one frame (a page and its 24-byte header); a WAL
        // that was never started over holds them all (1.05 times as many bytes, measured),
        // one started over holds 6-25 % of them, more when a read in flight holds frames
        // back at the moment a group begins.
        let appended = writer.groups_committed() * (4096 + 24);
        let wal = std::fs::metadata(dir.path().join("w.db-wal")).unwrap().len();
        assert!(wal * 2 < appended, "the WAL file is {wal} bytes after {appended} bytes of frames");
    }

    async fn futures_join<T>(answers: Vec<oneshot::Receiver<Result<T>>>) -> Vec<Result<T>> {
        let mut results = Vec::new();
        for answer in answers {
            results.push(answer.await.unwrap());
        }
        results
    }
}
