//! Orders on PostgreSQL: the same operations, messages and order as `src/store/orders.rs`.
//!
//! Placing an order is the shop's hot write, and most orders leave stock behind: then the
//! status rules keep the pet `available` (`next_status(Available, Taken, stock > 0, _)`,
//! held by a unit test), and the whole order is ONE statement in autocommit ([`place_fast`]):
//! a conditional `UPDATE` that takes the stock only if the pet is available and keeps some,
//! and the `INSERT` of the order from what it returned. The row lock of
//! that `UPDATE` is what keeps two replicas from selling the same stock: the second waits
//! for the first to commit, and its condition is then checked against the new stock. When
//! the statement changes nothing (no such pet, not available, not enough stock, or the last
//! of it), the general path [`place`] runs in a transaction with the pet's row locked and
//! gives the exact refusal or moves the status.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

use super::paging::{self, Filter, List, limit_offset};
use super::pg;
use super::stock::{StockEvent, set_stock, stock_row};
use super::types::col;
use crate::domain::status_rules::{ensure_available, ensure_open, ensure_stock};
use crate::domain::{NewOrder, Order, OrderFilter, OrderId, OrderPatch, Page, Paged, PetId, Timestamp};
use crate::error::{Error, ErrorCode, Result};

fn from_row(r: &Row, at: usize) -> Result<Order> {
    Ok(Order {
        id: col(r, at)?,
        pet_id: col(r, at + 1)?,
        quantity: col(r, at + 2)?,
        ship_date: col(r, at + 3)?,
        complete: col(r, at + 4)?,
        created_at: col(r, at + 5)?,
    })
}

pub(super) async fn list(c: &impl GenericClient, filter: &OrderFilter, page: Page) -> Result<Paged<Order>> {
    let mut w = Filter::default();
    if let Some(pet) = filter.pet_id {
        w.and("pet_id = $?", pet.get());
    }
    if let Some(complete) = filter.complete {
        w.and("complete = $?", complete);
    }
    let where_sql = w.sql();
    let limit = limit_offset(&mut w, page);
    let list = List {
        columns: "p.id, p.pet_id, p.quantity, p.ship_date, p.complete, p.created_at",
        total: format!("SELECT count(*) FROM orders {where_sql}"),
        page: format!(
            "SELECT id, pet_id, quantity, ship_date, complete, created_at FROM orders {where_sql}
             ORDER BY id DESC {limit}"
        ),
        order: "p.id DESC",
    };
    paging::page(c, list, &w, |r| from_row(r, 1)).await
}

pub(super) async fn get(c: &impl GenericClient, id: OrderId) -> Result<Order> {
    let sql = "SELECT id, pet_id, quantity, ship_date, complete, created_at FROM orders WHERE id = $1";
    c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get()])
        .await
        .map_err(pg)?
        .map(|r| from_row(&r, 0))
        .transpose()?
        .ok_or_else(|| Error::not_found(OrderId::WHAT, id.get()))
}

/// The order's row locked until the transaction `c` ends, and refused if completed.
async fn get_open(c: &impl GenericClient, id: OrderId) -> Result<Order> {
    let sql =
        "SELECT id, pet_id, quantity, ship_date, complete, created_at FROM orders WHERE id = $1 FOR UPDATE";
    let order = c
        .query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get()])
        .await
        .map_err(pg)?
        .map(|r| from_row(&r, 0))
        .transpose()?
        .ok_or_else(|| Error::not_found(OrderId::WHAT, id.get()))?;
    ensure_open(&order)?;
    Ok(order)
}

/// What an order stores besides its pet and quantity.
fn dates(new: &NewOrder) -> (Timestamp, Option<Timestamp>) {
    let now = Timestamp::now();
    let ship_date = if new.complete { Some(new.ship_date.unwrap_or(now)) } else { new.ship_date };
    (now, ship_date)
}

/// The order placed in one statement, if the pet is available
/// and keeps stock after it; `None`, with nothing changed, in every other case.
pub(super) async fn place_fast(c: &impl GenericClient, new: &NewOrder) -> Result<Option<Order>> {
    let sql = "WITH taken AS (
                   UPDATE pets SET stock = stock - $2, stock_updated_at = $3
                   WHERE id = $1 AND status = 'available' AND stock > $2
                   RETURNING id),
               placed AS (
                   INSERT INTO orders (pet_id, quantity, ship_date, complete, created_at)
                   SELECT id, $2, $4, $5, $3 FROM taken
                   RETURNING id)
               SELECT id FROM placed";
    let (now, ship_date) = dates(new);
    let quantity = new.quantity.get();
    let row = c
        .query_opt(
            &c.prepare_cached(sql).await.map_err(pg)?,
            &[
                &new.pet_id.get(),
                &quantity,
                &now.to_string(),
                &ship_date.map(|t| t.to_string()),
                &new.complete,
            ],
        )
        .await
        .map_err(pg)?;
    let Some(row) = row else { return Ok(None) };
    Ok(Some(Order {
        id: col(&row, 0)?,
        pet_id: new.pet_id,
        quantity,
        ship_date,
        complete: new.complete,
        created_at: now,
    }))
}

/// Places an order, taking its quantity from stock at once (a reservation), in the
/// transaction `c`, with the pet's row locked. With `complete` it is a counter sale,
/// placed and completed in one step. Every refusal comes before any write.
pub(super) async fn place(c: &impl GenericClient, new: &NewOrder) -> Result<Order> {
    let pet = stock_row(c, new.pet_id).await?.ok_or_else(|| no_such_pet(new.pet_id))?;
    ensure_available(new.pet_id, pet.status)?;
    let quantity = new.quantity.get();
    ensure_stock(new.pet_id, pet.stock, quantity)?;

    let (now, ship_date) = dates(new);
    let sql = "INSERT INTO orders (pet_id, quantity, ship_date, complete, created_at)
               VALUES ($1, $2, $3, $4, $5) RETURNING id";
    let row = c
        .query_one(
            &c.prepare_cached(sql).await.map_err(pg)?,
            &[
                &new.pet_id.get(),
                &quantity,
                &ship_date.map(|t| t.to_string()),
                &new.complete,
                &now.to_string(),
            ],
        )
        .await
        .map_err(pg)?;
    let id: OrderId = col(&row, 0)?;
    set_stock(c, new.pet_id, &pet, pet.stock - quantity, StockEvent::Taken).await?;
    Ok(Order { id, pet_id: new.pet_id, quantity, ship_date, complete: new.complete, created_at: now })
}

fn no_such_pet(pet: PetId) -> Error {
    Error::new(ErrorCode::InvalidReference, format!("petId {pet} names no pet"))
}

/// Changes an open order's quantity or ship date, or completes it. The order's row is
/// locked first, then its pet's (always in that order, so two such writes never wait
/// for each other in a circle).
pub(super) async fn update(c: &impl GenericClient, id: OrderId, patch: &OrderPatch) -> Result<Order> {
    if patch.is_empty() {
        return Err(Error::validation("the patch changes nothing: give quantity, shipDate or complete"));
    }
    let order = get_open(c, id).await?;

    if let Some(quantity) = patch.quantity {
        let more = quantity.get() - order.quantity;
        if more != 0 {
            let pet =
                stock_row(c, order.pet_id).await?.ok_or_else(|| Error::internal("order without pet"))?;
            ensure_stock(order.pet_id, pet.stock, more)?;
            let sql = "UPDATE orders SET quantity = $2 WHERE id = $1";
            c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get(), &quantity.get()])
                .await
                .map_err(pg)?;
            let event = if more > 0 { StockEvent::Taken } else { StockEvent::Returned };
            set_stock(c, order.pet_id, &pet, pet.stock - more, event).await?;
        }
    }
    if let Some(ship_date) = patch.ship_date {
        let sql = "UPDATE orders SET ship_date = $2 WHERE id = $1";
        c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get(), &ship_date.map(|t| t.to_string())])
            .await
            .map_err(pg)?;
    }
    if patch.complete == Some(true) {
        let ship_date = patch.ship_date.flatten().unwrap_or_else(Timestamp::now);
        let sql = "UPDATE orders SET complete = true, ship_date = $2 WHERE id = $1";
        c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get(), &ship_date.to_string()])
            .await
            .map_err(pg)?;
        let pet = stock_row(c, order.pet_id).await?.ok_or_else(|| Error::internal("order without pet"))?;
        set_stock(c, order.pet_id, &pet, pet.stock, StockEvent::Completed).await?;
    }
    get(c, id).await
}

/// Cancels an open order; its quantity returns to stock.
pub(super) async fn cancel(c: &impl GenericClient, id: OrderId) -> Result<()> {
    let order = get_open(c, id).await?;
    let pet = stock_row(c, order.pet_id).await?.ok_or_else(|| Error::internal("order without pet"))?;
    let sql = "DELETE FROM orders WHERE id = $1";
    c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get()]).await.map_err(pg)?;
    set_stock(c, order.pet_id, &pet, pet.stock + order.quantity, StockEvent::Returned).await
}

#[cfg(test)]
mod tests {
    use crate::domain::PetStatus::*;
    use crate::domain::status_rules::{StockEvent, next_status};

    /// The fast path moves no status: it is right only while the rules agree that an
    /// available pet that keeps stock after an order stays available, open orders or not.
    #[test]
    fn an_order_that_leaves_stock_keeps_an_available_pet_available() {
        for stock_after in [1, 2, 999_999] {
            for open_orders in [0, 1, 50] {
                assert_eq!(next_status(Available, StockEvent::Taken, stock_after, open_orders), Available);
            }
        }
    }
}
