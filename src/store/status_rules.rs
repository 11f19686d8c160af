//! The pet status and stock rules (docs/ARCHITECTURE.md, "Pet status and stock rules"), in one place. Every change of a pet's
//! stock goes through [`set_stock`], inside the writer's transaction, so the rules hold
//! atomically whatever route the change took (an order, a cancellation, staff).

use rusqlite::{Connection, OptionalExtension, params};

use crate::domain::{PetId, PetStatus, StockLevel, Timestamp};
use crate::error::{Error, Result};

/// What moved the stock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StockEvent {
    /// An order took stock (placed, or its quantity raised).
    Taken,
    /// An order gave stock back (cancelled, or its quantity lowered).
    Returned,
    /// An order was completed; the stock itself did not move.
    Completed,
    /// Staff set or adjusted the count.
    Counted,
}

/// The status a pet moves to after `event`, given its stock and open orders afterwards.
/// The open orders matter only when no stock is left. Pure, so every row of the rule
/// table has its own unit test.
pub(super) fn next_status(current: PetStatus, event: StockEvent, stock: i64, open_orders: i64) -> PetStatus {
    use PetStatus::*;
    let none_left = if open_orders > 0 { Pending } else { Sold };
    match event {
        StockEvent::Taken if stock == 0 => none_left,
        StockEvent::Completed if stock == 0 && open_orders == 0 => Sold,
        StockEvent::Returned | StockEvent::Counted if stock > 0 && current != Available => Available,
        StockEvent::Counted if stock == 0 && current == Available => none_left,
        _ => current,
    }
}

/// A pet's status and stock as a write sees them.
pub(super) struct StockRow {
    pub status: PetStatus,
    pub stock: i64,
}

pub(super) fn stock_row(conn: &Connection, pet: PetId) -> Result<Option<StockRow>> {
    // Cached statements, here and below: every order runs them, and parsing the SQL again
    // each time cost the writer more than running it.
    Ok(conn
        .prepare_cached("SELECT status, stock FROM pets WHERE id = ?1")?
        .query_row([pet], |r| Ok(StockRow { status: r.get(0)?, stock: r.get(1)? }))
        .optional()?)
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
    // Returning units (a cancellation, a smaller order) can push a pet that was restocked
    // meanwhile over the maximum; refuse it here, for every caller, rather than let the
    // table's CHECK turn it into an internal error.
    if stock > StockLevel::MAX {
        return Err(Error::validation(format!(
            "this would raise pet {pet}'s stock to {stock}, above the maximum {}; lower its stock first",
            StockLevel::MAX
        )));
    }
    let open_orders = if stock == 0 {
        conn.prepare_cached("SELECT count(*) FROM orders WHERE pet_id = ?1 AND complete = 0")?
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

#[cfg(test)]
mod tests {
    use super::StockEvent::*;
    use super::*;
    use PetStatus::*;

    #[test]
    fn taking_the_last_stock_makes_the_pet_pending_while_orders_are_open() {
        assert_eq!(next_status(Available, Taken, 0, 1), Pending);
        assert_eq!(next_status(Available, Taken, 3, 1), Available);
    }

    #[test]
    fn a_counter_sale_of_the_last_stock_sells_the_pet() {
        // The counter sale's order is already complete, so no open order remains.
        assert_eq!(next_status(Available, Taken, 0, 0), Sold);
    }

    #[test]
    fn completing_the_last_open_order_with_no_stock_sells_the_pet() {
        assert_eq!(next_status(Pending, Completed, 0, 0), Sold);
        assert_eq!(next_status(Pending, Completed, 0, 1), Pending);
        assert_eq!(next_status(Available, Completed, 2, 0), Available);
    }

    #[test]
    fn returned_stock_makes_pending_and_sold_pets_available() {
        assert_eq!(next_status(Pending, Returned, 1, 0), Available);
        assert_eq!(next_status(Sold, Returned, 2, 1), Available);
        assert_eq!(next_status(Available, Returned, 2, 0), Available);
    }

    #[test]
    fn counting_stock_above_zero_makes_the_pet_available() {
        assert_eq!(next_status(Sold, Counted, 5, 0), Available);
        assert_eq!(next_status(Pending, Counted, 5, 2), Available);
    }

    #[test]
    fn counting_stock_to_zero_makes_an_available_pet_pending_or_sold() {
        assert_eq!(next_status(Available, Counted, 0, 2), Pending);
        assert_eq!(next_status(Available, Counted, 0, 0), Sold);
        // A status staff set by hand is left alone when nothing says otherwise.
        assert_eq!(next_status(Pending, Counted, 0, 0), Pending);
    }
}
