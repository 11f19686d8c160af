//! The pet status and stock rules (`domain/status_rules.rs`, shared with PostgreSQL) applied
//! on SQLite. Every change of an existing pet's stock is decided in the domain
//! (`domain::stock_plan`, `domain::order_plan`) from the row [`stock_row`] reads, and
//! written by [`write_stock`], inside the writer's transaction, so the rules hold atomically
//! whatever route the change took (an order, a cancellation, staff, a till's offline sale
//! through `store::Transaction`). A new pet's first stock is set where the pet is made
//! (`imports.rs`, `seed.rs`); a till's copy puts in the stock its server decided
//! (`crate::mirror::local`): docs/ARCHITECTURE.md, "Pet status and stock rules".

use rusqlite::{Connection, OptionalExtension, params};

use crate::domain::PetId;
use crate::domain::stock_plan::{PetStock, StockChange};
use crate::error::Result;

/// The pet's status and stock as a write sees them.
pub(super) fn stock_row(conn: &Connection, pet: PetId) -> Result<Option<PetStock>> {
    // Cached statements, here and below: every order runs them, and parsing the SQL again
    // each time cost the writer more than running it.
    Ok(conn
        .prepare_cached("SELECT status, stock, price_cents, name FROM pets WHERE id = ?1")?
        .query_row([pet], |r| {
            Ok(PetStock {
                id: pet,
                name: r.get(3)?,
                status: r.get(0)?,
                stock: r.get(1)?,
                price: super::pets::price(r, 2)?,
            })
        })
        .optional()?)
}

/// Writes `change`, after the rows of the order it is for (the open orders it counts
/// include them).
///
/// Every order runs this, so it writes no more than changed: an index holding the status
/// (three of them) is rewritten only when the status moves, and the open orders are
/// counted only when no stock is left (the only case where the rules ask). Setting the
/// status to its own value cost each order three more index pages in the WAL.
pub(super) fn write_stock(conn: &Connection, change: &StockChange) -> Result<()> {
    let open_orders = if change.counts_open_orders() {
        conn.prepare_cached(
            "SELECT count(*) FROM orders WHERE pet_id = ?1 AND complete = 0 AND cancelled_at IS NULL",
        )?
        .query_row([change.pet], |r| r.get(0))?
    } else {
        0
    };
    match change.status_after(open_orders) {
        None => conn
            .prepare_cached("UPDATE pets SET stock = ?2, stock_updated_at = ?3 WHERE id = ?1")?
            .execute(params![change.pet, change.stock, change.at])?,
        Some(status) => conn
            .prepare_cached(
                "UPDATE pets SET stock = ?2, stock_updated_at = ?3, status = ?4, updated_at = ?3 WHERE id = ?1",
            )?
            .execute(params![change.pet, change.stock, change.at, status])?,
    };
    Ok(())
}
