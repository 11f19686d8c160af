use std::sync::Arc;

use super::access::{HostPolicy, KeyRing};
use super::failures::FailedAuth;
use crate::clock::Clock;
use crate::store::Store;

/// What every handler and middleware can reach.
#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    /// The operator's keys; named keys are looked up in `store` on every request, so that a
    /// revocation by another process takes effect at once.
    pub keys: KeyRing,
    pub hosts: Arc<HostPolicy>,
    pub clock: Clock,
    /// Failed authentications per client, shared by every request of the server.
    pub failures: Arc<FailedAuth>,
}
