//! How many sales reports a server makes at once. A report reads every completed order of
//! up to a year: its memory no longer grows with them (it is added up in SQL), but its
//! database time does, and a handful at once would hold the readers that the tills' own
//! requests need. A report beyond the bound is refused at once, `503 busy` with
//! `Retry-After`, rather than queued: the client retries, and nothing waits in memory.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{Error, ErrorCode};

/// Reports made at once by one server: one a core of the machines the benchmarks run on.
pub const REPORTS_AT_ONCE: usize = 2;

#[derive(Clone)]
pub struct ReportPermits(Arc<Semaphore>);

impl Default for ReportPermits {
    fn default() -> Self {
        Self(Arc::new(Semaphore::new(REPORTS_AT_ONCE)))
    }
}

impl ReportPermits {
    /// A permit to make one report, held until it is dropped; `503 busy` when every permit
    /// is taken.
    pub fn take(&self) -> Result<OwnedSemaphorePermit, Error> {
        self.0.clone().try_acquire_owned().map_err(|_| {
            Error::new(
                ErrorCode::Busy,
                format!("{REPORTS_AT_ONCE} sales reports are being made at once; try again in a moment"),
            )
        })
    }
}
