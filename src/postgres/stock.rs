//! The pet status and stock rules (`crate::domain::status_rules`, shared with SQLite)
//! applied on PostgreSQL. Every change of a pet's stock is decided in the domain
//! (`domain::stock_plan`, `domain::order_plan`) from the row [`stock_row`] locked, and
//! written by [`write_stock`] in that transaction, so no two replicas decide on the same
//! stock. (The one exception is the order's fast path in `orders.rs`, a single conditional
//! `UPDATE` for the case where the rules leave the status as it is.)

use deadpool_postgres::GenericClient;

use super::pg;
use super::types::col;
use crate::domain::PetId;
use crate::domain::stock_plan::{PetStock, StockChange};
use crate::error::Result;

/// The pet's status and stock, its row locked until the transaction `c` ends.
pub(super) async fn stock_row(c: &impl GenericClient, pet: PetId) -> Result<Option<PetStock>> {
    let sql = "SELECT status, stock, price_cents, name FROM pets WHERE id = $1 FOR UPDATE";
    let row = c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[&pet.get()]).await.map_err(pg)?;
    row.map(|r| {
        Ok(PetStock {
            id: pet,
            name: col(&r, 3)?,
            status: col(&r, 0)?,
            stock: col(&r, 1)?,
            price: col(&r, 2)?,
        })
    })
    .transpose()
}

/// Writes `change`, after the rows of the order it is for (the open orders it counts
/// include them). The open orders are counted only when no stock is left (the only case
/// where the rules ask), and the status is written only when it moves.
pub(super) async fn write_stock(c: &impl GenericClient, change: &StockChange) -> Result<()> {
    let open_orders: i64 = if change.counts_open_orders() {
        // Planned at each call, not cached: the one plan cached while `orders` was nearly
        // empty (a new shop, a server just started) took the partial index of all open
        // orders, and kept walking every open order of the shop to count one pet's; at
        // 60,000 open orders that was 25,000 index entries read per pet sold out. Planned
        // against the table as it is, it reads `orders_by_pet`. It runs only when a pet's
        // stock reaches zero.
        let sql = "SELECT count(*) FROM orders WHERE pet_id = $1 AND NOT complete AND cancelled_at IS NULL";
        col(&c.query_one(sql, &[&change.pet.get()]).await.map_err(pg)?, 0)?
    } else {
        0
    };
    let (pet, at) = (change.pet.get(), change.at.to_string());
    match change.status_after(open_orders) {
        None => {
            let sql = "UPDATE pets SET stock = $2, stock_updated_at = $3 WHERE id = $1";
            c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&pet, &change.stock, &at]).await
        }
        Some(status) => {
            let sql =
                "UPDATE pets SET stock = $2, stock_updated_at = $3, status = $4, updated_at = $3 WHERE id = $1";
            let status = status.as_str();
            c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&pet, &change.stock, &at, &status]).await
        }
    }
    .map_err(pg)?;
    Ok(())
}
