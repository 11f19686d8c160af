//! Where a mirror's syncing stands, as the status bar shows it.

use serde::Serialize;

use crate::domain::{OutboxCounts, Timestamp};

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum SyncState {
    /// The first full copy (or a new one, the mirror having been away longer than the
    /// server keeps its changes): `done` of about `total` pets so far.
    Copying {
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        done: u64,
        #[cfg_attr(feature = "ts", ts(type = "number | null"))]
        total: Option<u64>,
    },
    /// Applying the changes made on the server while this till was away, or sending the
    /// outbox.
    CatchingUp,
    /// Every change the server announced is in the mirror.
    Synced,
    /// The server cannot be reached since `since`; reads come from the mirror and counter
    /// writes go to the outbox.
    Offline { since: Timestamp, reason: String },
    /// The server refused the API key: nothing is sent until the key is changed.
    KeyRefused { reason: String },
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    #[serde(flatten)]
    pub state: SyncState,
    pub outbox: OutboxCounts,
    /// How far into the server's change feed the mirror is.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub position: Option<u64>,
}

impl Default for SyncStatus {
    fn default() -> Self {
        Self { state: SyncState::CatchingUp, outbox: OutboxCounts::default(), position: None }
    }
}
