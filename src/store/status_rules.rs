//! The pet status and stock rules (`domain/status_rules.rs`, shared with PostgreSQL) applied
//! on SQLite. Every change of an existing pet's stock goes through [`set_stock`], inside the
//! writer's transaction, so the rules hold atomically whatever route the change took (an
//! order, a cancellation, staff, a till's offline sale through `store::Transaction`). A new
//! pet's first stock is set where the pet is made (`imports.rs`, `seed.rs`); a till's copy
//! puts in the stock its server decided (`crate::mirror::local`): docs/ARCHITECTURE.md,
//! "Pet status and stock rules".

use rusqlite::{Connection, OptionalExtension, params};

pub(super) use crate::domain::status_rules::StockEvent;
use crate::domain::status_rules::{NamedPet, check_stock_limit, next_status};
use crate::domain::{PetId, PetStatus, Timestamp};
use crate::error::Result;

/// A pet's status and stock as a write sees them.
pub(super) struct StockRow {
    pub id: PetId,
    /// What a refusal calls it ([`NamedPet`]).
    pub name: String,
    pub status: PetStatus,
    pub stock: i64,
    /// What an order placed now costs a unit.
    pub price: Option<crate::domain::Price>,
}

pub(super) fn stock_row(conn: &Connection, pet: PetId) -> Result<Option<StockRow>> {
    // Cached statements, here and below: every order runs them, and parsing the SQL again
    // each time cost the writer more than running it.
    Ok(conn
        .prepare_cached("SELECT status, stock, price_cents, name FROM pets WHERE id = ?1")?
        .query_row([pet], |r| {
            Ok(StockRow {
                id: pet,
                name: r.get(3)?,
                status: r.get(0)?,
                stock: r.get(1)?,
                price: super::pets::price(r, 2)?,
            })
        })
        .optional()?)
}

impl StockRow {
    pub fn named(&self) -> NamedPet<'_> {
        NamedPet { id: self.id, name: &self.name }
    }
}

/// Stores `stock` for `pet`, whose row the caller read in this transaction as `current`,
/// and moves its status by the rules.
///
/// Every order runs this, so it writes no more than changed: an index holding the status
/// (three of them) is rewritten only when the status moves, and the open orders are
/// counted only when no stock is left (the only case where the rules ask). Setting the
/// status to its own value cost each order three more index pages in the WAL.
pub(super) fn set_stock(
    conn: &Connection,
    pet: PetId,
    current: &StockRow,
    stock: i64,
    event: StockEvent,
) -> Result<()> {
    check_stock_limit(current.named(), stock)?;
    let open_orders = if stock == 0 {
        conn.prepare_cached(
            "SELECT count(*) FROM orders WHERE pet_id = ?1 AND complete = 0 AND cancelled_at IS NULL",
        )?
        .query_row([pet], |r| r.get(0))?
    } else {
        0
    };
    let status = next_status(current.status, event, stock, open_orders);
    let now = Timestamp::now();
    if status == current.status {
        conn.prepare_cached("UPDATE pets SET stock = ?2, stock_updated_at = ?3 WHERE id = ?1")?
            .execute(params![pet, stock, now])?;
    } else {
        conn.prepare_cached(
            "UPDATE pets SET stock = ?2, stock_updated_at = ?3, status = ?4, updated_at = ?3 WHERE id = ?1",
        )?
        .execute(params![pet, stock, now, status])?;
    }
    Ok(())
}
