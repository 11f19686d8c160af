use std::sync::Arc;

use super::access::{HostPolicy, KeyRing};
use crate::clock::Clock;
use crate::store::Store;

/// What every handler and middleware can reach.
#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub keys: KeyRing,
    pub hosts: Arc<HostPolicy>,
    pub clock: Clock,
}
