//! A request that times out is answered `408 request_timeout` at once, and its write must
//! not change the shop afterwards: a write not yet begun is dropped before it begins, and
//! the 408 says whether anything may have been changed. On each engine by its own way of
//! holding writes up: SQLite's one writer, held by another connection's write lock; a
//! PostgreSQL row held `FOR UPDATE` by another session (an operator's `psql`).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Engine, TestApp, spawn_postgres_app_configured, spawn_sqlite_app_configured};

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

/// What one request was answered, and whether that answer allows the order to exist.
#[derive(Debug)]
struct Answer {
    status: u16,
    message: String,
}

impl Answer {
    /// 408 saying the change may have been applied: the one answer that leaves it open.
    fn may_have_been_applied(&self) -> bool {
        self.status == 408 && self.message.contains("may have been applied")
    }
}

async fn order(app: &TestApp, pet: i64) -> Answer {
    let reply = app.post("/store/orders", json!({ "petId": pet })).await;
    let message = reply.body["message"].as_str().unwrap_or_default().to_owned();
    Answer { status: reply.status.as_u16(), message }
}

/// A `psql` session that holds one pet's row `FOR UPDATE` for longer than the edge
/// waits for a request. Before the fix every order for that pet was answered `408 nothing
/// was changed` and every one was committed once the lock went (PostgreSQL had no session
/// limits, and a timed-out request's connection went back to the pool with its statement
/// still waiting), and orders for other pets waited behind those connections and timed out
/// too. Now every answer is true: what was answered placed is placed, what was answered
/// `nothing was changed` is not, once the lock is gone and whatever waited has run; and
/// orders for other pets are answered meanwhile, well within the edge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_held_past_the_edge_on_postgres_leaves_every_answer_true_and_other_pets_served() {
    const EDGE: Duration = Duration::from_secs(3);
    const HELD_ORDERS: usize = 20;
    let app = spawn_postgres_app_configured(|config| config.request_timeout = EDGE).await;
    assert_eq!(app.db.engine(), Engine::Postgres);
    let held = app.pet_with_stock("Held", 500).await;
    let other = app.pet_with_stock("Free", 500).await;

    // The other session: its own connection, the pet's row locked until it rolls back.
    let crate::support::TestDb::Postgres(db) = &app.db else { unreachable!() };
    let (session, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    let driving = tokio::spawn(connection);
    session.batch_execute("BEGIN").await.unwrap();
    session.execute("SELECT id FROM pets WHERE id = $1 FOR UPDATE", &[&held]).await.unwrap();
    let locked_at = Instant::now();

    // Twenty orders for the held pet at once, more than the pool's sixteen connections.
    let app = std::sync::Arc::new(app);
    let held_orders: Vec<_> = (0..HELD_ORDERS)
        .map(|_| {
            let app = app.clone();
            tokio::spawn(async move { order(&app, held).await })
        })
        .collect();
    // Meanwhile, orders and reads for another pet, one after another.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for _ in 0..5 {
        let sent = Instant::now();
        let placed = order(&app, other).await;
        assert_eq!(placed.status, 201, "an order for another pet: {placed:?}");
        let waited = sent.elapsed();
        assert!(waited < EDGE, "an order for another pet waited {waited:?}, the edge's whole timeout");
        let read = app.get(&format!("/pets/{other}")).await;
        assert_eq!(read.status, 200, "{:?}", read.body);
    }

    let mut answers = Vec::new();
    for answer in held_orders {
        answers.push(tokio::time::timeout(EDGE * 4, answer).await.expect("every order is answered").unwrap());
    }
    // The lock is held longer than the edge waits, whatever the answers' pace.
    tokio::time::sleep((EDGE * 2).saturating_sub(locked_at.elapsed())).await;
    session.batch_execute("ROLLBACK").await.unwrap();
    drop(session);
    let _ = driving.await;

    // Whatever still waited for the row has run (or was stopped) by now: the sessions'
    // statements are bounded below the edge, and nothing of a request outlives it.
    tokio::time::sleep(EDGE).await;
    let placed = answers.iter().filter(|a| a.status == 201).count();
    let maybe = answers.iter().filter(|a| a.may_have_been_applied()).count();
    for answer in &answers {
        let known = answer.status == 201
            || answer.status == 408
            || (answer.status == 503 && answer.message.contains("nothing was changed"));
        assert!(known, "an order for the held pet was answered {answer:?}");
    }
    let orders = app.get(&format!("/store/orders?petId={held}")).await;
    let counted: usize = orders.header("x-total-count").parse().unwrap();
    assert!(
        (placed..=placed + maybe).contains(&counted),
        "{counted} orders exist for the held pet, but {placed} were answered placed and {maybe} \
         'may have been applied'; the rest were told nothing was changed: {answers:?}"
    );
    let stock = app.get(&format!("/store/inventory/{held}")).await;
    assert_eq!(stock.body["quantity"], json!(500 - counted as i64), "{:?}", stock.body);
}
