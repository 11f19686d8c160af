//! The pet status and stock rules (`crate::domain::status_rules`, shared with SQLite)
//! applied on PostgreSQL. Every change of a pet's stock goes through [`set_stock`], in the
//! transaction that locked the pet's row with [`stock_row`], so no two replicas decide on
//! the same stock. (The one exception is the order's fast path in `orders.rs`, a single
//! conditional `UPDATE` for the case where the rules leave the status as it is.)

use deadpool_postgres::GenericClient;

use super::pg;
use super::types::col;
pub(super) use crate::domain::status_rules::StockEvent;
use crate::domain::status_rules::{NamedPet, check_stock_limit, next_status};
use crate::domain::{PetId, PetStatus, Timestamp};
use crate::error::Result;

/// A pet's status and stock as a write sees them, its row locked.
pub(super) struct StockRow {
    pub id: PetId,
    /// What a refusal calls it ([`NamedPet`]).
    pub name: String,
    pub status: PetStatus,
    pub stock: i64,
    /// What an order placed now costs a unit.
    pub price: Option<crate::domain::Price>,
}

/// The pet's status and stock, its row locked until the transaction `c` ends.
pub(super) async fn stock_row(c: &impl GenericClient, pet: PetId) -> Result<Option<StockRow>> {
    let sql = "SELECT status, stock, price_cents, name FROM pets WHERE id = $1 FOR UPDATE";
    let row = c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[&pet.get()]).await.map_err(pg)?;
    row.map(|r| {
        Ok(StockRow {
            id: pet,
            name: col(&r, 3)?,
            status: col(&r, 0)?,
            stock: col(&r, 1)?,
            price: col(&r, 2)?,
        })
    })
    .transpose()
}

impl StockRow {
    pub fn named(&self) -> NamedPet<'_> {
        NamedPet { id: self.id, name: &self.name }
    }
}

/// Stores `stock` for `pet`, whose row the caller locked as `current`, and moves its
/// status by the rules. The open orders are counted only when no stock is left (the only
/// case where the rules ask), and the status is written only when it moves.
pub(super) async fn set_stock(
    c: &impl GenericClient,
    pet: PetId,
    current: &StockRow,
    stock: i64,
    event: StockEvent,
) -> Result<()> {
    check_stock_limit(current.named(), stock)?;
    let open_orders: i64 = if stock == 0 {
        // Planned at each call, not cached: the one plan cached while `orders` was nearly
        // empty (a new shop, a server just started) took the partial index of all open
        // orders, and kept walking every open order of the shop to count one pet's; at
        // 60,000 open orders that was 25,000 index entries read per pet sold out. Planned
        // against the table as it is, it reads `orders_by_pet`. It runs only when a pet's
        // stock reaches zero.
        let sql = "SELECT count(*) FROM orders WHERE pet_id = $1 AND NOT complete AND cancelled_at IS NULL";
        col(&c.query_one(sql, &[&pet.get()]).await.map_err(pg)?, 0)?
    } else {
        0
    };
    let status = next_status(current.status, event, stock, open_orders);
    let now = Timestamp::now().to_string();
    if status == current.status {
        let sql = "UPDATE pets SET stock = $2, stock_updated_at = $3 WHERE id = $1";
        c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&pet.get(), &stock, &now])
            .await
            .map_err(pg)?;
    } else {
        let sql =
            "UPDATE pets SET stock = $2, stock_updated_at = $3, status = $4, updated_at = $3 WHERE id = $1";
        c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&pet.get(), &stock, &now, &status.as_str()])
            .await
            .map_err(pg)?;
    }
    Ok(())
}
