//! Work a server does only a few of at once.
//!
//! - Imports and sales reports ([`Permits`]): each holds a blocking thread or a database
//!   reader for seconds, which the tills' own requests need. One beyond the bound is refused
//!   at once, `503 busy` with `Retry-After`, rather than queued: the client sends it again,
//!   and nothing waits in the server's memory.
//! - Writes replayed from the tills' outboxes ([`Lane`]): each is quick, but after an
//!   outage a chain's tills send thousands at once. They wait their turn, a few at a time,
//!   rather than being refused (the till would only send them again, and again).

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{Error, ErrorCode};

/// Imports that may run at once. An import parses on a blocking thread and holds the rows
/// of up to 10 MB of text (some tens of MB) until it is written; the writes go through the
/// one writer anyway, and a shop imports a spreadsheet now and then. Two on two cores.
pub const IMPORTS_AT_ONCE: usize = 2;

/// Reports made at once by one server: one a core of the machines the benchmarks run on. A
/// report reads every completed order of up to a year: its memory no longer grows with
/// them (it is added up in SQL), but its database time does.
pub const REPORTS_AT_ONCE: usize = 2;

/// Writes replayed from tills' outboxes (`domain::is_replayed`) that go to the engine at
/// once. A thousand tills reconnecting after an outage replay five thousand sales within a
/// second or two; let through together, they took every PostgreSQL connection of the pool
/// (16) and every group of SQLite's writer, and a till that stayed online waited seconds
/// behind them for each sale (2 to 8 s at p99 in `make bench`'s storm). Four at a time keeps
/// most of the pool and the writer for what is sold now, and still places the storm's sales
/// in seconds: a replayed sale is one short transaction.
pub const REPLAYS_AT_ONCE: usize = 4;

/// Work that waits its turn, at most so many at once, first come first served.
#[derive(Clone)]
pub struct Lane {
    room: Arc<Semaphore>,
}

impl Lane {
    pub fn new(most: usize) -> Self {
        Self { room: Arc::new(Semaphore::new(most)) }
    }

    /// The lane of writes replayed from tills' outboxes.
    pub fn replays() -> Self {
        Self::new(REPLAYS_AT_ONCE)
    }

    /// Waits for a turn, held until the permit drops. A request that times out meanwhile
    /// leaves the queue with its future (and is answered `408`, nothing changed).
    pub async fn enter(&self) -> OwnedSemaphorePermit {
        // The semaphore is never closed, so acquiring only waits.
        self.room.clone().acquire_owned().await.expect("the lane's semaphore is never closed")
    }
}

/// At most so many of one kind of work at once.
#[derive(Clone)]
pub struct Permits {
    room: Arc<Semaphore>,
    most: usize,
    /// What the refusal says is under way, after the number: "imports are under way".
    under_way: &'static str,
}

impl Permits {
    pub fn new(most: usize, under_way: &'static str) -> Self {
        Self { room: Arc::new(Semaphore::new(most)), most, under_way }
    }

    /// The bound on imports (`POST /imports/pets`).
    pub fn imports() -> Self {
        Self::new(IMPORTS_AT_ONCE, "imports are under way")
    }

    /// The bound on sales reports (`GET /store/reports/sales`).
    pub fn reports() -> Self {
        Self::new(REPORTS_AT_ONCE, "sales reports are being made")
    }

    /// A permit for one, held until it is dropped; `503 busy` when every one is taken.
    pub fn take(&self) -> Result<OwnedSemaphorePermit, Error> {
        self.room.clone().try_acquire_owned().map_err(|_| {
            let message =
                format!("{} {}, the most at once; try again in a moment", self.most, self.under_way);
            Error::new(ErrorCode::Busy, message)
        })
    }
}

impl Default for Permits {
    /// The reports' bound: what `Shared::reports` is built with by default.
    fn default() -> Self {
        Self::reports()
    }
}
