//! The checkpointer: a thread with its own connection that copies committed pages from the
//! WAL back into the database file, so that the WAL can start over, and the writer's part
//! of it (the tail committed while a checkpoint ran).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::readers::Readers;
use crate::error::{Error, Result};

/// The writer's end: it wakes the checkpointer after its commits and copies the tail the
/// last checkpoint left. Dropping it (the writer thread ends) stops the checkpointer.
pub(super) struct Nudge {
    wake: mpsc::SyncSender<()>,
    tail: Arc<AtomicBool>,
}

/// Starts the checkpointer thread on `conn`, a second connection to the database, which
/// waits `pause` after each checkpoint (see [`CHECKPOINT_PAUSE`]).
pub(super) fn start(
    conn: Connection,
    pause: Duration,
    readers: Arc<Readers>,
) -> Result<(Nudge, JoinHandle<()>)> {
    let (wake, woken) = mpsc::sync_channel(1);
    let tail = Arc::new(AtomicBool::new(false));
    let left = tail.clone();
    let thread = thread::Builder::new()
        .name("petstore-checkpoint".into())
        .spawn(move || run(conn, woken, &left, pause, &readers))
        .map_err(Error::internal)?;
    Ok((Nudge { wake, tail }, thread))
}

impl Nudge {
    /// After the writer committed: it copies the tail a checkpoint left, if one did, on its
    /// own connection `conn`, then asks for the next checkpoint.
    pub(super) fn committed(&self, conn: &Connection, readers: &Readers) {
        if self.tail.swap(false, Ordering::Relaxed) {
            copy_tail(conn, readers);
        }
        // Full means a wake-up is already pending: that one checkpoint will cover this too.
        let _ = self.wake.try_send(());
    }
}

/// The WAL file's size kept after a checkpoint, in bytes.
pub(super) const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// After a checkpoint, the least time before the next: commits meanwhile are copied back
/// to the database file together, each page once however often it changed. Under a stream
/// of orders a page changes many times in this long (at 100,000 pets, every page of the
/// pets table about four times), and every copy saved is a random write less competing
/// with the WAL's sync, which every commit waits for: 50 ms made orders 8 % slower.
pub(super) const CHECKPOINT_PAUSE: Duration = Duration::from_millis(500);

/// Copies committed pages from the WAL back into the database file whenever the writer
/// has committed since the last time, until the writer stops. PASSIVE: it never blocks the
/// writer or a reader, and copies what no reader still needs.
///
/// Alone, that never catches up with a steady stream of writes, and the WAL then grows for
/// as long as the stream lasts: SQLite starts the WAL over only when a write transaction
/// begins with every frame copied, and the writer commits more while the checkpointer
/// copies. Under the orders benchmark the WAL grew by 250 MB a second, and writing into
/// new file blocks took a quarter of the writer's time. So a checkpoint that leaves a tail
/// (what was committed while it copied) asks the writer to copy that tail itself between
/// two groups, with nothing committing meanwhile; the writer's next group then starts the
/// WAL from its beginning, in file blocks already written. The tail is what was committed
/// during one checkpoint (20-35 ms of orders at 16,000 a second), which the writer copied
/// in 15-20 ms; the orders waiting meanwhile pay for it (their p99 rose from 8 to about
/// 50 ms). It cannot run away: the longer the writer copies, the less it commits.
fn run(conn: Connection, woken: mpsc::Receiver<()>, tail: &AtomicBool, pause: Duration, readers: &Readers) {
    let mut wanted = woken.recv().is_ok();
    while wanted {
        // Its own count of frames left means nothing here: it sees the WAL as it was when
        // it began, so it has always copied all of that (or a reader held some back).
        match checkpoint_passive(&conn, readers) {
            Ok(()) => tail.store(true, Ordering::Relaxed),
            Err(e) => tracing::warn!(error = %e, "a checkpoint failed; the next commit will try again"),
        }
        // The pause, cut short when the writer stops (so that closing the store never
        // waits for it). A commit during it asks for the next checkpoint at its end.
        let end = Instant::now() + pause;
        let mut committed = false;
        wanted = loop {
            match woken.recv_timeout(end.saturating_duration_since(Instant::now())) {
                Ok(()) => committed = true,
                Err(mpsc::RecvTimeoutError::Timeout) if committed => break true,
                Err(mpsc::RecvTimeoutError::Timeout) => break woken.recv().is_ok(),
                Err(mpsc::RecvTimeoutError::Disconnected) => break false,
            }
        };
    }
}

/// The writer's part of a checkpoint: the frames the checkpointer left. A reader still on
/// an older snapshot can keep some of them; the WAL then goes on, and the next tail is
/// tried after the next checkpoint.
pub(super) fn copy_tail(conn: &Connection, readers: &Readers) {
    if let Err(e) = checkpoint_passive(conn, readers) {
        tracing::warn!(error = %e, "copying the WAL's tail failed; the next checkpoint will try again");
    }
    // Reads that began before the end of the copy hold on to frames of the WAL, which keeps
    // the next group from starting it over; snapshots begun from now on hold none.
    readers.renew();
}

/// Copies back what no snapshot still needs, once the idle connections' snapshots ended.
fn checkpoint_passive(conn: &Connection, readers: &Readers) -> rusqlite::Result<()> {
    readers.end_idle_snapshots();
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}
