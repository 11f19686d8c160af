use std::ops::Deref;
use std::sync::Arc;

use super::access::{HostPolicy, KeyRing};
use super::failures::FailedAuth;
use crate::backend::Database;
use crate::clock::Clock;

/// What every handler and middleware can reach. One `Arc`: axum clones the state for each
/// request at every layer and handler that takes it, and one shared count to bump is
/// cheaper than five (their drops were 3 % of a busy server's time).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    /// The engine: SQLite or PostgreSQL, the API does not ask which.
    pub store: Arc<dyn Database>,
    /// The operator's keys; named keys are looked up in `store` on every request, so that a
    /// revocation by another process takes effect at once.
    pub keys: KeyRing,
    pub hosts: Arc<HostPolicy>,
    pub clock: Clock,
    /// Failed authentications per client, shared by every request of the server.
    pub failures: Arc<FailedAuth>,
    /// True once the server is shutting down: answers that would go on forever (the event
    /// stream) end, so that their connections can close.
    pub stopping: tokio::sync::watch::Receiver<bool>,
    /// The one reader of the change feed that serves every event stream.
    pub feed: Arc<super::fanout::FeedHub>,
    /// The open event streams, and their limits.
    pub streams: Arc<super::streams::Streams>,
    /// How long an `Idempotency-Key` is kept.
    pub idempotency_window: chrono::TimeDelta,
}

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}
