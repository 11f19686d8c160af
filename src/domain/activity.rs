//! The activity log: who did what and when, one entry for every write the shop keeps,
//! written by the engine in the write's own transaction, so no write goes unrecorded.
//! What an entry says is decided here (its kind and subject); the engines store it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{Actor, StaffId, Timestamp};
use crate::error::{Error, ErrorCode, Result};

macro_rules! activity_kinds {
    ($($kind:ident => $name:literal),* $(,)?) => {
        /// What a write did. Its name on the wire and in the database is the snake_case
        /// one (`order_placed`).
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ActivityKind {
            $($kind),*
        }

        impl ActivityKind {
            pub const ALL: &'static [ActivityKind] = &[$(ActivityKind::$kind),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(ActivityKind::$kind => $name),*
                }
            }
        }
    };
}

activity_kinds! {
    PetCreated => "pet_created",
    PetUpdated => "pet_updated",
    PetDeleted => "pet_deleted",
    CategoryCreated => "category_created",
    CategoryUpdated => "category_updated",
    CategoryDeleted => "category_deleted",
    OrderPlaced => "order_placed",
    OrderUpdated => "order_updated",
    OrderCompleted => "order_completed",
    OrderReopened => "order_reopened",
    OrderCancelled => "order_cancelled",
    OrderDeleted => "order_deleted",
    StockAdjusted => "stock_adjusted",
    StockCounted => "stock_counted",
    PetsImported => "pets_imported",
    SettingsChanged => "settings_changed",
    KeyCreated => "key_created",
    KeyRotated => "key_rotated",
    KeyRevoked => "key_revoked",
    StaffCreated => "staff_created",
    StaffUpdated => "staff_updated",
    SignedIn => "signed_in",
    PinRefused => "pin_refused",
    StaffLockedOut => "staff_locked_out",
}

impl fmt::Display for ActivityKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ActivityKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        ActivityKind::ALL.iter().copied().find(|kind| kind.as_str() == s).ok_or_else(|| {
            Error::new(ErrorCode::InvalidParameter, format!("kind {s:?} is not a kind of activity"))
        })
    }
}

/// One entry of the log, as the API and the app show it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityEntry {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub id: i64,
    pub at: Timestamp,
    pub kind: ActivityKind,
    /// What it was done to: `pet`, `category`, `order`, `key`, `staff` or `settings`, with
    /// its id where it has one (a key's is its name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<Subject>,
    /// Who did it; `None` only for what happened before the shop kept staff.
    pub actor: Option<Actor>,
    /// A few words more, in the shop's data (a reason typed, a quantity): never a secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What an entry is about.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    pub entity: String,
    pub id: String,
}

/// An entry as an engine writes it, in the transaction of the write it records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewActivity {
    pub kind: ActivityKind,
    pub subject: Option<Subject>,
    pub actor: Actor,
    pub detail: Option<String>,
}

impl NewActivity {
    pub fn new(kind: ActivityKind, actor: &Actor) -> Self {
        Self { kind, subject: None, actor: actor.clone(), detail: None }
    }

    pub fn on(mut self, entity: &str, id: impl fmt::Display) -> Self {
        self.subject = Some(Subject { entity: entity.to_owned(), id: id.to_string() });
        self
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The staff member it names, for the log's filter by person (the approver of an
    /// override is found under their own name too).
    pub fn staff_ids(&self) -> (Option<StaffId>, Option<StaffId>) {
        (self.actor.staff.as_ref().map(|s| s.id), self.actor.approved_by.as_ref().map(|s| s.id))
    }
}

/// `GET /activity`'s filters: by person (as the one who acted or who approved), by kind,
/// and by time (`from` inclusive, `to` exclusive).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActivityFilter {
    pub staff: Option<StaffId>,
    pub kind: Option<ActivityKind>,
    pub from: Option<Timestamp>,
    pub to: Option<Timestamp>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_name() {
        for kind in ActivityKind::ALL {
            assert_eq!(kind.as_str().parse::<ActivityKind>().unwrap(), *kind);
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
        assert_eq!("order_stolen".parse::<ActivityKind>().unwrap_err().code, ErrorCode::InvalidParameter);
    }
}
