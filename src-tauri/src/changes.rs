//! What changed, row by row, for the window: after each burst of commits a database
//! announces, its change feed is read from where the last read ended, and the window is
//! told the ids of the pets, stock, categories and orders that changed, so a screen updates
//! those rows instead of reloading its pages.
//!
//! The core's notice of a commit names only the kind of data; the feed, written by the
//! engines' triggers in the same transaction as each change, names the rows. Both the local
//! store and the remote's mirror (a store of its own) keep one, so this works whoever made
//! the change: this window, the local API, a script, another till through the server.

use std::collections::BTreeSet;

use petstore::Feed;
use petstore::domain::{Entity, FeedChange, FeedScope};
use petstore::store::Change;
use serde::Serialize;
use tokio::sync::broadcast::{self, error::TryRecvError};

/// The most changes one burst is read row by row: past it (a seed, an import, a mirror's
/// first copy) the window reloads what it shows, which is cheaper than updating row by row.
pub const MOST_ROWS: u32 = 500;

/// What changed in one burst of commits, as the window's "petstore://changed" event says.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DataChanged {
    /// Everything may have changed (demo data or an import, a restored backup, too many
    /// changes at once, a feed that could not be read): reload what is shown.
    pub reset: bool,
    /// Pets created, deleted, or whose own fields changed (name, category, status, price,
    /// barcode, description).
    pub pets: Vec<i64>,
    /// Pets whose stock moved.
    pub stock: Vec<i64>,
    pub categories: Vec<i64>,
    pub orders: Vec<i64>,
    /// The shop's settings (currency, time zone, low-stock level); they have no ids.
    pub settings: bool,
    /// New entries in the activity log, but a sale's: its order, in `orders`, is its news.
    pub activity: bool,
}

impl DataChanged {
    /// Everything may have changed.
    pub fn reset() -> Self {
        Self { reset: true, ..Self::default() }
    }

    /// Nothing to tell: the burst's commits changed no row (a save of the same values).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    fn from_feed(changes: &[FeedChange], settings: bool) -> Self {
        let mut ids: [BTreeSet<i64>; 4] = Default::default();
        let (mut reset, mut activity) = (false, false);
        for change in changes {
            let slot = match change.entity {
                Entity::Pet => 0,
                Entity::Inventory => 1,
                Entity::Category => 2,
                Entity::Order => 3,
                Entity::Shop => {
                    reset = true;
                    continue;
                }
                Entity::Activity => {
                    activity = true;
                    continue;
                }
            };
            ids[slot].extend(change.id);
        }
        if reset {
            // Ids beside a reset would only be read again.
            return Self { settings, ..Self::reset() };
        }
        let [pets, stock, categories, orders] = ids.map(|set| set.into_iter().collect());
        Self { reset, pets, stock, categories, orders, settings, activity }
    }
}

/// Follows `db`'s commits for as long as it announces them, calling `tell` with what each
/// burst changed (never with nothing).
pub async fn follow<D: Feed>(db: D, tell: impl Fn(DataChanged) + Send) {
    let mut follower = Follower::start(&db).await;
    // After reading where the feed stands: a commit in between is read with the next one.
    let mut notices = db.subscribe();
    loop {
        let mut heard = Vec::new();
        match notices.recv().await {
            Ok(change) => heard.push(change),
            // Notices missed: the feed still has every change they announced.
            Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
        // The rest of the burst, read together.
        loop {
            match notices.try_recv() {
                Ok(change) => heard.push(change),
                Err(TryRecvError::Lagged(_)) => {}
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        let changed = follower.read(&db, &heard).await;
        if !changed.is_empty() {
            tell(changed);
        }
    }
}

/// Where the window's reading of one feed stands.
pub struct Follower {
    /// The last change read; `None` when the feed could not be read.
    since: Option<u64>,
}

impl Follower {
    /// From the feed's head: what was committed before is what the window reads at first.
    pub async fn start<D: Feed>(db: &D) -> Self {
        Self { since: head(db).await }
    }

    /// What changed since the last read, with the kinds of the notices `heard` (settings
    /// are not in the feed).
    pub async fn read<D: Feed>(&mut self, db: &D, heard: &[Change]) -> DataChanged {
        let settings = heard.contains(&Change::Settings);
        let Some(since) = self.since else {
            self.since = head(db).await;
            return DataChanged { settings, ..DataChanged::reset() };
        };
        match db.changes_since(since, MOST_ROWS, FeedScope::WithActivity).await {
            Ok(page) if page.changes.len() < MOST_ROWS as usize => {
                self.since = Some(page.next);
                DataChanged::from_feed(&page.changes, settings)
            }
            // Too many to tell row by row; or the feed was purged past us, or is another
            // one (a backup restored), or cannot be read: the window reloads, and reading
            // goes on from the head.
            Ok(_) | Err(_) => {
                self.since = head(db).await;
                DataChanged { settings, ..DataChanged::reset() }
            }
        }
    }
}

async fn head<D: Feed>(db: &D) -> Option<u64> {
    match db.feed_bounds().await {
        Ok(bounds) => Some(bounds.head),
        Err(e) => {
            tracing::warn!(error = %e.message, "the change feed cannot be read; the window reloads on every change");
            None
        }
    }
}
