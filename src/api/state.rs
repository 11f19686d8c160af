use std::ops::Deref;
use std::sync::Arc;

use super::access::{HostPolicy, KeyRing};
use super::failures::FailedAuth;
use super::permits::{Lane, Permits};
use crate::clock::Clock;
use crate::engine::{Capability, Database, Exports, Feed, Imports, Keys, Staff};

/// What every handler and middleware can reach. One `Arc`: axum clones the state for each
/// request at every layer and handler that takes it, and one shared count to bump is
/// cheaper than five (their drops were 3 % of a busy server's time).
#[derive(Clone)]
pub struct AppState(Arc<Server>);

/// The shared state and what the server keeps for itself, out of its callers' way.
struct Server {
    shared: Shared,
    /// The imports under way (`imports.rs`).
    import_permits: Permits,
    /// The writes replayed from tills' outboxes, a few at a time (`orders.rs`).
    replays: Lane,
}

pub struct Shared {
    /// The engine the API serves: SQLite's `Store`, PostgreSQL's `PgStore`, or a till's
    /// `Mirror` (the app's local API in remote mode); the API does not ask which. Its
    /// capabilities besides the shop are the four below.
    pub engine: Arc<dyn Database>,
    /// The named keys, looked up on every request, so that a revocation by another
    /// process takes effect at once.
    pub named_keys: Arc<dyn Keys>,
    /// The change feed and news of every commit.
    pub changes: Arc<dyn Feed>,
    pub exports: Arc<dyn Exports>,
    /// The pet import, or why this engine has none (a till's mirror: pets are made on the
    /// server), answered instead.
    pub imports: Capability<dyn Imports>,
    /// The staff, their sessions and the activity log, or why this engine keeps none (a
    /// till's mirror: staff sign in at the server).
    pub staff: Capability<dyn Staff>,
    /// The operator's keys.
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
    /// The sales reports being made (at most a few at once).
    pub reports: Permits,
}

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(Server { shared, import_permits: Permits::imports(), replays: Lane::replays() }))
    }

    /// A turn for a write its till stamped `till_time`, if that makes it a replay from the
    /// till's outbox (`domain::is_replayed`): it waits for one of the few turns. A write made
    /// now needs none and goes past the queue.
    pub(super) async fn replay_turn(
        &self,
        till_time: Option<crate::domain::Timestamp>,
    ) -> Option<tokio::sync::OwnedSemaphorePermit> {
        if !crate::domain::is_replayed(till_time, self.clock.now()) {
            return None;
        }
        Some(self.0.replays.enter().await)
    }

    /// Room for one import, or `503 busy` while the most run already.
    pub(super) fn import_permit(&self) -> Result<tokio::sync::OwnedSemaphorePermit, crate::error::Error> {
        self.0.import_permits.take()
    }
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0.shared
    }
}

#[cfg(test)]
impl AppState {
    /// A server's state over `store`, its operator's key `k`, defaults otherwise: for the
    /// API's unit tests that drive the service without a socket.
    pub(crate) fn for_tests(store: Arc<dyn crate::engine::ShopDatabase>) -> Self {
        let streams = Arc::new(super::streams::Streams::new(Default::default()));
        let crate::engine::Served { shop, keys, feed, exports, imports, staff } =
            crate::engine::Served::all_of(store);
        Self::new(Shared {
            feed: Arc::new(super::fanout::FeedHub::new(feed.clone(), keys.clone(), streams.clone())),
            streams,
            engine: shop,
            named_keys: keys,
            changes: feed,
            exports,
            imports,
            staff,
            keys: KeyRing::from_secrets(["k"]),
            hosts: Arc::new(HostPolicy::new(80, &[])),
            clock: Clock::system(),
            failures: Default::default(),
            stopping: tokio::sync::watch::channel(false).1,
            idempotency_window: crate::idempotency::KEY_LIFETIME,
            reports: Default::default(),
        })
    }
}
