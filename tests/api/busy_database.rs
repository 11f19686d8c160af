//! Another program holding the database's write lock: a write that waits longer than the
//! database's busy timeout (5 s) is answered `503 busy` with `Retry-After`, and writes work
//! again once the lock is released.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::spawn_sqlite_app;

/// Holds `BEGIN EXCLUSIVE` on the database at `path` from a connection of its own, as
/// another program (a backup tool, a second server) would, until the returned sender is
/// used or dropped.
fn hold_write_lock(path: &std::path::Path) -> (mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let path = path.to_path_buf();
    let (locked, is_locked) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
        locked.send(()).unwrap();
        let _ = released.recv();
        conn.execute_batch("ROLLBACK").unwrap();
    });
    is_locked.recv().expect("the other connection took the write lock");
    (release, holder)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_blocked_by_another_programs_lock_is_503_busy_with_retry_after_and_works_after_release() {
    let app = spawn_sqlite_app().await;
    let pet = app.pet_with_stock("Rex", 3).await;

    let (release, holder) = hold_write_lock(app.db_path());
    let started = Instant::now();
    let blocked = app.post("/store/orders", json!({ "petId": pet })).await;
    let waited = started.elapsed();
    release.send(()).unwrap();
    holder.join().unwrap();

    assert_eq!((blocked.status.as_u16(), blocked.code()), (503, "busy"), "{:?}", blocked.body);
    let retry_after: u64 = blocked.header("retry-after").parse().expect("Retry-After in seconds");
    assert!(retry_after >= 1, "Retry-After: {retry_after}");
    assert!(waited >= Duration::from_secs(5), "it waited the busy timeout first: {waited:?}");

    let placed = app.post("/store/orders", json!({ "petId": pet })).await;
    assert_eq!(placed.status, 201, "{:?}", placed.body);
    let orders = app.get(&format!("/store/orders?petId={pet}")).await;
    assert_eq!(orders.header("x-total-count"), "1", "the refused order was not placed");
    assert_eq!(app.get(&format!("/store/inventory/{pet}")).await.body["quantity"], 2);
}
