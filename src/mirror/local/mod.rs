//! The till's local copy of a remote shop: the mirror's SQL (the syncing is the module
//! above). A mirror is an ordinary store (same schema, same reads, so browsing offline is
//! as fast as local mode) plus tables of its own, made by the mirror's own migrations
//! (`schema.rs`, `migrations/mirror/`):
//!
//! - `mirror_state`: which remote it copies and how far into the remote's change feed it is;
//! - `mirror_seen`: what a full sync has received so far, so that what it did not receive
//!   (deleted on the server meanwhile) can be removed at its end;
//! - `outbox`: the writes taken offline, each in the same transaction as its effect here
//!   (stock reserved, the order shown), and `provisional_orders`: which server order an
//!   order placed offline became (`outbox.rs`, `provisional.rs`);
//! - `outbox_sent`: the keys of writes the server has taken, for as long as it keeps them,
//!   so that a client of the local API sending one again while the server cannot be
//!   reached gets what the server would answer, not a second sale (`sent.rs`);
//! - the shop's own `staff` table holds the server's staff with their PIN hashes, for
//!   signing in while the server cannot be reached (`staff.rs`); the outbox keeps who made
//!   each write, as proofs for the server.
//!
//! Server state comes in as the server gave it (`put.rs`), never through the shop's rules:
//! the server applied them already. A write taken offline goes through the shop's own
//! rules, which the store offers inside one write ([`Transaction`](crate::store::Transaction)),
//! so the sale and its place in the outbox commit together. One rule of the mirror's own: a
//! pet's stock is the server's plus the deltas still waiting in the outbox, so that a sale
//! taken offline stays reserved whatever the server says meanwhile, and an order with a
//! write still waiting is shown as the till left it.

mod outbox;
mod provisional;
mod put;
mod schema;
mod sent;
mod staff;

use rusqlite::params;

pub(super) use outbox::{Proofs, Queued, Sent};
pub(super) use put::{Missing, Put};
#[cfg(test)]
use schema::MIRROR_SCHEMA_VERSION;

use crate::Store;
use crate::domain::{PROVISIONAL_ORDER_IDS, PetId, Timestamp};
use crate::engine::Change;
use crate::error::{Error, Result};

/// The writer's page cache during a full sync, and SQLite's default, in KiB (negative, as
/// `PRAGMA cache_size` takes a size in KiB).
const COPY_CACHE_KIB: i64 = -128 * 1024;
const DEFAULT_CACHE_KIB: i64 = -2000;

/// A store that is a till's mirror: the store, and the mirror's operations on it.
#[derive(Clone)]
pub(super) struct Local {
    store: Store,
}

impl Local {
    pub(super) fn new(store: Store) -> Self {
        Self { store }
    }

    pub(super) fn store(&self) -> &Store {
        &self.store
    }

    /// Makes this store a mirror of the remote at `origin` (its tables, new or upgraded)
    /// and answers its feed position: `None` until a first full sync has ended. A file
    /// that mirrors another remote is refused.
    pub(super) async fn open(&self, origin: &str) -> Result<Option<u64>> {
        let origin = origin.to_owned();
        self.store
            .transact(None, move |tx| {
                let tx = tx.sql();
                schema::migrate(tx)?;
                tx.execute(
                    "INSERT INTO mirror_state (id, origin, next_provisional) VALUES (1, ?1, ?2)
                     ON CONFLICT (id) DO NOTHING",
                    params![origin, PROVISIONAL_ORDER_IDS],
                )?;
                let (mirrored, position): (String, Option<i64>) =
                    tx.query_row("SELECT origin, position FROM mirror_state", [], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })?;
                if mirrored != origin {
                    return Err(Error::validation(format!(
                        "{} mirrors {mirrored}, not {origin}",
                        tx.path().unwrap_or("this database")
                    )));
                }
                Ok(position.map(|p| p as u64))
            })
            .await
    }

    /// Starts a full sync: nothing received yet. Until [`Local::finish`] the writer
    /// keeps a large page cache: a copy writes every index of every table on random keys,
    /// and with SQLite's default 2 MB it wrote and re-read the same pages many times over
    /// (100,000 pets took 15 s instead of a few).
    pub(super) async fn begin(&self) -> Result<()> {
        self.store
            .transact(None, |tx| {
                let tx = tx.sql();
                tx.pragma_update(None, "cache_size", COPY_CACHE_KIB)?;
                Ok(tx.execute("DELETE FROM mirror_seen", []).map(drop)?)
            })
            .await
    }

    /// Ends a full sync that began at feed `position`: what the server no longer has goes
    /// (but never an order or pet a waiting write needs), and the feed is followed from
    /// `position`.
    pub(super) async fn finish(&self, position: u64) -> Result<()> {
        self.store
            .transact(Some(Change::Pets), move |tx| {
                let tx = tx.sql();
                tx.execute_batch(&format!(
                    "DELETE FROM orders WHERE id < {PROVISIONAL_ORDER_IDS}
                        AND id NOT IN (SELECT id FROM mirror_seen WHERE entity = 'order')
                        AND id NOT IN (SELECT order_id FROM outbox WHERE state = 'pending' AND order_id IS NOT NULL);
                     DELETE FROM pets WHERE id NOT IN (SELECT id FROM mirror_seen WHERE entity = 'pet')
                        AND id NOT IN (SELECT pet_id FROM orders);
                     DELETE FROM categories WHERE id NOT IN (SELECT id FROM mirror_seen WHERE entity = 'category')
                        AND id NOT IN (SELECT category_id FROM pets WHERE category_id IS NOT NULL);
                     DELETE FROM mirror_seen;"
                ))?;
                tx.pragma_update(None, "cache_size", DEFAULT_CACHE_KIB)?;
                advance(tx, position)
            })
            .await
    }

    /// Pets whose stock a full sync has not received: a page of the stock list, which is in
    /// stock order, misses a pet whose stock moved while the pages were read.
    pub(super) async fn unseen_stock(&self) -> Result<Vec<PetId>> {
        self.store
            .read(|c| {
                let mut statement = c.prepare(
                    "SELECT id FROM pets WHERE id NOT IN (SELECT id FROM mirror_seen WHERE entity = 'inventory')",
                )?;
                let ids = statement.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
                Ok(ids)
            })
            .await
    }

    /// Every change of the feed up to `position` is in the mirror.
    pub(super) async fn advance(&self, position: u64) -> Result<()> {
        self.store.transact(None, move |tx| advance(tx.sql(), position)).await
    }
}

fn advance(tx: &rusqlite::Connection, position: u64) -> Result<()> {
    let position = i64::try_from(position).map_err(Error::internal)?;
    tx.execute("UPDATE mirror_state SET position = ?1, synced_at = ?2", params![position, Timestamp::now()])?;
    Ok(())
}

#[cfg(test)]
mod tests;
