//! Whether a request's writes may still begin, on either engine.
//!
//! A request that times out is answered 408 at once, but its write may be queued behind
//! others (SQLite's one writer) or waiting for a row lock or a connection (PostgreSQL). Run
//! anyway, it would change the shop after the client was told the request failed, and a
//! client that retries would order twice. So the edge runs each request in a
//! [`WriteAdmission`]; a store begins a write of that request only while the admission is
//! open, marking it begun first (SQLite's writer before the write's savepoint, PostgreSQL
//! before it sends a `COMMIT` or a one-statement write), and when the request times out the
//! edge closes it and learns whether a write had begun: its 408 then says the change may
//! have been applied, and otherwise that nothing was changed, which is then true.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::{Error, ErrorCode, Result};

/// A write of the request has begun.
const BEGUN: u8 = 1;
/// The request is over: no write of it may begin.
const CLOSED: u8 = 2;

tokio::task_local! {
    static ADMISSION: WriteAdmission;
}

/// One request's admission to the writer; clones share it.
#[derive(Debug, Clone, Default)]
pub struct WriteAdmission(Arc<AtomicU8>);

impl WriteAdmission {
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `f` (the request) with this admission: the store's writes made by `f` carry it.
    pub async fn scope<F: Future>(self, f: F) -> F::Output {
        ADMISSION.scope(self, f).await
    }

    /// Closes the admission: no write of the request that has not begun will begin.
    /// Answers whether one had begun, in which case it may have been applied.
    pub fn close(&self) -> bool {
        self.0.fetch_or(CLOSED, Ordering::AcqRel) & BEGUN != 0
    }

    /// The admission of the request the current task serves, if it runs in one.
    pub(crate) fn current() -> Option<Self> {
        ADMISSION.try_with(Clone::clone).ok()
    }

    /// The writer is about to begin one of the request's writes: may it?
    pub(crate) fn begin(&self) -> bool {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| (s & CLOSED == 0).then_some(s | BEGUN))
            .is_ok()
    }

    /// Whether the request is over (it timed out): whoever still holds something of it
    /// (a PostgreSQL connection with a query in flight) must not hand it on as it is.
    pub(crate) fn is_closed(&self) -> bool {
        self.0.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Marks a write of the current request begun, if the task serves one: `Err` (the
    /// request is over, nothing of it may begin) when its admission is closed already.
    /// A store calls this just before the step that may apply the write.
    pub(crate) fn begin_current() -> Result<()> {
        match Self::current() {
            Some(admission) if !admission.begin() => Err(request_over()),
            _ => Ok(()),
        }
    }
}

/// Nobody waits for this answer: the request's edge answered it already. Not an internal
/// error (which is logged as one): a timeout dropping a write not yet begun is expected.
pub(crate) fn request_over() -> Error {
    Error::new(ErrorCode::RequestTimeout, "the request was over before its write began; nothing was changed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_admission_lets_nothing_begin_and_tells_whether_something_had() {
        let untouched = WriteAdmission::new();
        assert!(!untouched.close(), "nothing had begun");
        assert!(!untouched.begin(), "nothing begins once it is closed");

        let begun = WriteAdmission::new();
        assert!(begun.begin());
        assert!(begun.clone().close(), "a write had begun: it may have been applied");
        assert!(!begun.begin(), "a second write of the request does not begin after the close");
        assert!(begun.is_closed());
    }

    #[tokio::test]
    async fn the_requests_admission_is_current_inside_its_scope_only() {
        let admission = WriteAdmission::new();
        assert!(WriteAdmission::current().is_none());
        let inside = admission.clone().scope(async { WriteAdmission::current() }).await.unwrap();
        inside.close();
        assert!(!admission.begin(), "the task saw the request's own admission");
        assert!(WriteAdmission::begin_current().is_ok(), "outside a request every write may begin");
        let refused = admission.scope(async { WriteAdmission::begin_current() }).await.unwrap_err();
        assert_eq!(refused.code, ErrorCode::RequestTimeout);
    }
}
