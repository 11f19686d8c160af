//! A request that times out is answered `408 request_timeout` at once, and its write must
//! not change the shop afterwards: a write still queued behind others is dropped before it
//! begins, and the 408 says whether anything may have been changed. The queue here is
//! SQLite's one writer, held up by another connection's write lock: a SQLite test.

use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;

use crate::support::spawn_sqlite_app_configured;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_still_queued_when_its_request_times_out_is_408_nothing_changed_and_never_placed() {
    let app =
        spawn_sqlite_app_configured(|config| config.request_timeout = Duration::from_millis(1000)).await;
    let pet = app.pet_with_stock("Rex", 3).await;

    // Another connection holds the write lock for 2.5 s, less than the busy timeout (5 s):
    // the writer waits for it, and the order waits behind the writer past its timeout.
    let path = app.db_path().to_path_buf();
    let (locked, is_locked) = mpsc::channel();
    let holder = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
        locked.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(2500));
        conn.execute_batch("ROLLBACK").unwrap();
    });
    is_locked.recv().unwrap();

    let timed_out = app.post("/store/orders", json!({ "petId": pet })).await;
    assert_eq!(
        (timed_out.status.as_u16(), timed_out.code()),
        (408, "request_timeout"),
        "{:?}",
        timed_out.body
    );
    let message = timed_out.body["message"].as_str().unwrap();
    assert!(message.contains("nothing was changed"), "{message}");

    holder.join().unwrap();
    // The writer has the lock again: whatever was queued has run (or been dropped) by the
    // time a later write is answered.
    let later = app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 3 })).await;
    assert_eq!(later.status, 200, "{:?}", later.body);
    let orders = app.get(&format!("/store/orders?petId={pet}")).await;
    assert_eq!(orders.header("x-total-count"), "0", "the timed-out order was placed after all");
}
