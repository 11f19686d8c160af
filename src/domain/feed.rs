//! The change feed: what changed in the shop, in commit order, by sequence number
//! (`GET /changes`, `GET /events`). Each change names the thing and what happened to it,
//! not its new state: a client reads that from the resource (one `GET /pets?id=` for many
//! pets), so the feed stays small and never disagrees with the resource.
//!
//! The activity log's entries are in the feed too (entity `activity`), for the readers who
//! ask for them ([`FeedScope`]): every entry but a sale's, which its order's `created`
//! change announces (the order says who placed it), so that a sale writes no more to the
//! feed than it did before the log.

use serde::{Deserialize, Serialize};

use super::Timestamp;
use crate::error::{Error, Result};

/// What a change is about.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Entity {
    /// A pet's own fields (name, category, status, description).
    Pet,
    /// A pet's stock.
    Inventory,
    Category,
    Order,
    /// The whole shop (a bulk load): a client starts over from a full read.
    Shop,
    /// An entry of the activity log (always `created`): who did what, `GET /activity`.
    Activity,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Created,
    Updated,
    Deleted,
    /// Of the shop: everything may have changed.
    Reset,
}

impl Entity {
    /// As the feed's tables spell it.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pet" => Self::Pet,
            "inventory" => Self::Inventory,
            "category" => Self::Category,
            "order" => Self::Order,
            "shop" => Self::Shop,
            "activity" => Self::Activity,
            _ => return None,
        })
    }
}

impl Action {
    /// As the feed's tables spell it.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "created" => Self::Created,
            "updated" => Self::Updated,
            "deleted" => Self::Deleted,
            "reset" => Self::Reset,
            _ => return None,
        })
    }
}

/// Which changes a reader of the feed is given. A reader written before the activity log
/// was in the feed would stop at an entity it does not know, and a till has no use for
/// the chain's sign-ins, so its entries go only to those who ask (`include=activity` on
/// `GET /changes` and `GET /events`, where they are `activity` events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedScope {
    /// The shop's data: pets, stock, categories, orders, the shop.
    Data,
    /// The shop's data and the activity log's entries.
    WithActivity,
}

impl FeedScope {
    /// Whether this reader is given the activity log's entries: the one bit both engines'
    /// reads carry, as `(? OR entity <> 'activity')`.
    pub fn with_activity(self) -> bool {
        self == Self::WithActivity
    }
}

/// One committed change.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedChange {
    /// Its place in the feed: greater than every change committed before it.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seq: u64,
    pub entity: Entity,
    /// The pet's, category's or order's id; null for the shop.
    pub id: Option<i64>,
    pub action: Action,
    pub at: Timestamp,
}

impl FeedChange {
    /// A change as both engines store it (numbers and ids as SQL integers, entity and
    /// action as text); a value no migration writes is an internal error.
    pub fn from_stored(seq: i64, entity: &str, id: Option<i64>, action: &str, at: Timestamp) -> Result<Self> {
        Ok(Self {
            seq: u64::try_from(seq).map_err(Error::internal)?,
            entity: Entity::parse(entity)
                .ok_or_else(|| Error::internal(format!("a change of {entity:?}")))?,
            id,
            action: Action::parse(action).ok_or_else(|| Error::internal(format!("a change {action:?}")))?,
            at,
        })
    }
}

/// A run of the feed after a position, and where the next one starts.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedPage {
    pub changes: Vec<FeedChange>,
    /// The `since` of the next request: the last change's number, or the one asked for
    /// when there was none.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub next: u64,
}

impl FeedPage {
    /// The changes read after `since`; the next read starts after the last of them.
    pub fn after(since: u64, changes: Vec<FeedChange>) -> Self {
        let next = changes.last().map_or(since, |c| c.seq);
        Self { changes, next }
    }
}

/// How many changes one read of the feed gives at most, and by default.
pub const FEED_MAX_LIMIT: u32 = 1000;
pub const FEED_DEFAULT_LIMIT: u32 = 100;

/// The feed's bounds as a store keeps them: numbers up to `purged_through` were removed
/// past the retention window, and none is above `head`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedBounds {
    pub purged_through: u64,
    pub head: u64,
}

impl FeedBounds {
    /// The bounds from what an engine keeps: the last number purged, and the last number
    /// given (none before the first change); the head is never behind the horizon.
    pub fn from_stored(purged_through: i64, last: Option<i64>) -> Self {
        let purged_through = u64::try_from(purged_through).unwrap_or(0);
        let head = last.and_then(|l| u64::try_from(l).ok()).unwrap_or(0).max(purged_through);
        Self { purged_through, head }
    }

    /// Whether a client at `since` can go on from there: `410 gone` if changes after it were
    /// purged, or if it is ahead of this feed (the database was restored from a backup, or
    /// is another shop's), since either way it would miss changes without knowing.
    pub fn check(self, since: u64) -> Result<()> {
        if since < self.purged_through {
            return Err(Error::gone(format!(
                "the changes after {since} are no longer kept (the feed starts after {}); read everything again, \
                 then follow the feed from the number GET /changes?since={} answers as next",
                self.purged_through, self.head
            )));
        }
        if since > self.head {
            return Err(Error::gone(format!(
                "this feed has no change {since} (its last is {}): the database was restored or replaced; read \
                 everything again",
                self.head
            )));
        }
        Ok(())
    }
}

/// The last change a purge removes, given what the engine read: `old`, the newest of the
/// feed's oldest changes (a batch of them, in number order) made before the cutoff, and
/// `newest`, the newest change of all. The changes before the cutoff are a prefix of the
/// feed (its times follow its numbers), so the oldest batch holds them. The newest change
/// always stays: SQLite numbers the next one from it, and both engines' heads are read from
/// it. `None`: nothing to purge. The engine removes every change numbered up to it and moves
/// its horizon there if it removed any.
pub fn purge_through(old: Option<i64>, newest: Option<i64>) -> Option<i64> {
    Some(old?.min(newest? - 1))
}

/// A position as a client gives it (`since`, `Last-Event-ID`): 0 up to the largest number
/// the engines store.
pub fn feed_position(given: u64) -> Result<u64> {
    if given > i64::MAX as u64 {
        return Err(Error::invalid_parameter(format!(
            "a position in the feed is at most {}, got {given}",
            i64::MAX
        )));
    }
    Ok(given)
}

/// The `limit` of a feed read: 1..=1000.
pub fn feed_limit(limit: Option<u32>) -> Result<u32> {
    let limit = limit.unwrap_or(FEED_DEFAULT_LIMIT);
    if !(1..=FEED_MAX_LIMIT).contains(&limit) {
        return Err(Error::invalid_parameter(format!(
            "limit must be between 1 and {FEED_MAX_LIMIT}, got {limit}"
        )));
    }
    Ok(limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_purge_takes_the_old_prefix_but_never_the_newest_change() {
        assert_eq!(purge_through(Some(40), Some(100)), Some(40));
        assert_eq!(purge_through(Some(100), Some(100)), Some(99), "everything is old: the newest stays");
        // Nothing old, or nothing at all: nothing purged (PostgreSQL's LEAST once took a
        // missing value for none and purged all but the newest).
        assert_eq!(purge_through(None, Some(100)), None);
        assert_eq!(purge_through(None, None), None);
    }
    use crate::error::ErrorCode;

    #[test]
    fn a_position_is_good_from_the_purged_horizon_to_the_head() {
        let bounds = FeedBounds { purged_through: 10, head: 20 };
        for good in [10, 15, 20] {
            assert!(bounds.check(good).is_ok(), "{good}");
        }
        for gone in [0, 9, 21] {
            assert_eq!(bounds.check(gone).unwrap_err().code, ErrorCode::Gone, "{gone}");
        }
    }

    #[test]
    fn a_position_fits_the_engines_numbers() {
        assert_eq!(feed_position(0).unwrap(), 0);
        assert_eq!(feed_position(i64::MAX as u64).unwrap(), i64::MAX as u64);
        assert_eq!(feed_position(i64::MAX as u64 + 1).unwrap_err().code, ErrorCode::InvalidParameter);
    }

    #[test]
    fn the_limit_is_bounded() {
        assert_eq!(feed_limit(None).unwrap(), FEED_DEFAULT_LIMIT);
        assert_eq!(feed_limit(Some(1000)).unwrap(), 1000);
        assert!(feed_limit(Some(0)).is_err());
        assert!(feed_limit(Some(1001)).is_err());
    }
}
