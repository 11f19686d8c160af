//! The pet status and stock rules (docs/ARCHITECTURE.md, "Pet status and stock rules"), in
//! one place for both engines: what status a pet moves to when its stock moves, and the
//! checks every change of stock passes. Pure, so each rule has its own unit test; each
//! engine applies them inside the transaction that changes the stock.

use std::fmt;

use crate::domain::{Order, OrderPatch, PetId, PetStatus, StockLevel};
use crate::error::{Error, ErrorCode, Result};

/// A pet as a refusal names it, "Nemo (#6)": the name is what the clerk at the counter
/// knows it by, the id tells two Nemos apart. Every engine's row that locks a pet for a
/// change of stock reads its name, so the refusals cost no extra read.
#[derive(Debug, Clone, Copy)]
pub struct NamedPet<'a> {
    pub id: PetId,
    pub name: &'a str,
}

impl fmt::Display for NamedPet<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (#{})", self.name, self.id)
    }
}

/// What moved the stock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StockEvent {
    /// An order took stock (placed, or its quantity raised).
    Taken,
    /// An order gave stock back (cancelled, or its quantity lowered).
    Returned,
    /// An order was completed; the stock itself did not move.
    Completed,
    /// A completed order was opened again (the undo of completing); its units stay
    /// reserved, so the stock did not move either.
    Reopened,
    /// Staff set or adjusted the count.
    Counted,
}

/// The status a pet moves to after `event`, given its stock and open orders afterwards.
/// The open orders matter only when no stock is left. Pure, so every row of the rule
/// table has its own unit test.
pub fn next_status(current: PetStatus, event: StockEvent, stock: i64, open_orders: i64) -> PetStatus {
    use PetStatus::*;
    let none_left = if open_orders > 0 { Pending } else { Sold };
    match event {
        StockEvent::Taken | StockEvent::Reopened if stock == 0 => none_left,
        StockEvent::Completed if stock == 0 && open_orders == 0 => Sold,
        StockEvent::Returned | StockEvent::Counted if stock > 0 && current != Available => Available,
        StockEvent::Counted if stock == 0 && current == Available => none_left,
        _ => current,
    }
}

/// Refuses a stock above the maximum. Returning units (a cancellation, a smaller order) can
/// push a pet that was restocked meanwhile over it; refused here, for every caller, rather
/// than by the table's CHECK as an internal error.
pub fn check_stock_limit(pet: NamedPet<'_>, stock: i64) -> Result<()> {
    if stock > StockLevel::MAX {
        return Err(Error::validation(format!(
            "this would raise {pet}'s stock to {stock}, above the maximum {}; lower its stock first",
            StockLevel::MAX
        )));
    }
    Ok(())
}

/// Only an available pet can be ordered.
pub fn ensure_available(pet: NamedPet<'_>, status: PetStatus) -> Result<()> {
    if status != PetStatus::Available {
        return Err(Error::conflict(ErrorCode::PetNotAvailable, format!("{pet} is {status}, not available")));
    }
    Ok(())
}

/// An order may take `wanted` more of a pet that has `stock`.
pub fn ensure_stock(pet: NamedPet<'_>, stock: i64, wanted: i64) -> Result<()> {
    if stock < wanted {
        return Err(Error::conflict(
            ErrorCode::InsufficientStock,
            format!("{pet} has {stock} in stock; {wanted} more were asked for"),
        ));
    }
    Ok(())
}

/// A completed or cancelled order can no longer change.
pub fn ensure_open(order: &Order) -> Result<()> {
    ensure_not_cancelled(order)?;
    if order.complete {
        return Err(Error::conflict(
            ErrorCode::OrderCompleted,
            format!("order {} is completed and can no longer change", order.id),
        ));
    }
    Ok(())
}

/// A cancelled order is kept for the record only: nothing changes it again, not even a
/// second cancellation.
pub fn ensure_not_cancelled(order: &Order) -> Result<()> {
    if order.cancelled_at.is_some() {
        return Err(Error::conflict(
            ErrorCode::OrderCancelled,
            format!("order {} is already cancelled", order.id),
        ));
    }
    Ok(())
}

/// What `DELETE /store/orders/{id}` does to `order`: an open order is cancelled first (its
/// stock returns, as a cancellation's does), a cancelled one is only removed; a completed
/// order is a sale and stays (`order_completed`: reopen it first). Either way the row
/// stays in the database for the shop's records, hidden from the API from then on.
pub fn deletion(order: &Order) -> Result<Deletion> {
    if order.cancelled_at.is_some() {
        return Ok(Deletion::Remove);
    }
    ensure_open(order)?;
    Ok(Deletion::CancelAndRemove)
}

/// See [`deletion`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    /// An open order: cancelled (stock returned), then removed.
    CancelAndRemove,
    /// An order cancelled before: only removed.
    Remove,
}

/// What a patch does to order `order`: the undo of completing (`complete: false` alone, on
/// a completed order) reopens it; anything else needs an open order.
pub fn patch_kind(order: &Order, patch: &OrderPatch) -> Result<PatchKind> {
    ensure_not_cancelled(order)?;
    if order.complete && *patch == (OrderPatch { complete: Some(false), ..OrderPatch::default() }) {
        return Ok(PatchKind::Reopen);
    }
    ensure_open(order)?;
    Ok(PatchKind::Change)
}

/// See [`patch_kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// A completed order becomes open again: its units stay reserved, so the stock does
    /// not move; only the status rules run again (a sold pet with no stock is pending).
    Reopen,
    /// An open order's fields change, or it is completed.
    Change,
}

/// The stock after staff adjust `current` by `delta`, if it stays within 0 and the maximum.
pub fn adjusted(pet: NamedPet<'_>, current: i64, delta: i64) -> Result<i64> {
    let after = current + delta;
    if after < 0 {
        return Err(Error::conflict(
            ErrorCode::InsufficientStock,
            format!("{pet} has {current} in stock; cannot remove {}", -delta),
        ));
    }
    if after > StockLevel::MAX {
        return Err(Error::validation(format!(
            "delta {delta} would raise {pet}'s stock to {after}, above the maximum {}",
            StockLevel::MAX
        )));
    }
    Ok(after)
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
    fn reopening_an_order_of_a_pet_with_no_stock_makes_it_pending_again() {
        assert_eq!(next_status(Sold, Reopened, 0, 1), Pending);
        assert_eq!(next_status(Available, Reopened, 4, 1), Available);
        assert_eq!(next_status(Sold, Reopened, 4, 1), Sold, "stock counted meanwhile decides, not the undo");
    }

    #[test]
    fn only_complete_false_alone_reopens_a_completed_order_and_nothing_changes_a_cancelled_one() {
        let order: Order = serde_json::from_value(serde_json::json!({
            "id": 12, "petId": 6, "quantity": 1, "shipDate": null, "complete": true,
            "createdAt": "2026-11-24T10:00:00Z", "unitPrice": null, "total": null,
            "completedAt": "2026-11-24T10:01:00Z", "customerName": null, "customerPhone": null,
            "note": null, "cancelledAt": null
        }))
        .unwrap();
        let reopen = OrderPatch { complete: Some(false), ..OrderPatch::default() };
        assert_eq!(patch_kind(&order, &reopen).unwrap(), PatchKind::Reopen);
        let more = OrderPatch {
            complete: Some(false),
            quantity: Some(crate::domain::Quantity::try_from(2).unwrap()),
            ..reopen.clone()
        };
        assert_eq!(patch_kind(&order, &more).unwrap_err().code, ErrorCode::OrderCompleted);
        let open = Order { complete: false, completed_at: None, ..order.clone() };
        assert_eq!(
            patch_kind(&open, &reopen).unwrap(),
            PatchKind::Change,
            "false on an open order changes nothing"
        );
        let cancelled = Order { cancelled_at: Some(open.created_at), ..open };
        let refused = patch_kind(&cancelled, &reopen).unwrap_err();
        assert_eq!(
            (refused.code, refused.message.as_str()),
            (ErrorCode::OrderCancelled, "order 12 is already cancelled")
        );
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
    fn refusals_name_the_pet_by_name_and_id() {
        let nemo = NamedPet { id: PetId::try_from(6).unwrap(), name: "Nemo" };
        let short = ensure_stock(nemo, 2, 3).unwrap_err();
        assert_eq!(short.message, "Nemo (#6) has 2 in stock; 3 more were asked for");
        let sold = ensure_available(nemo, Sold).unwrap_err();
        assert_eq!(sold.message, "Nemo (#6) is sold, not available");
        assert_eq!(adjusted(nemo, 2, -3).unwrap_err().message, "Nemo (#6) has 2 in stock; cannot remove 3");
        assert!(ensure_stock(nemo, 3, 3).is_ok() && ensure_available(nemo, Available).is_ok());
    }

    #[test]
    fn counting_stock_to_zero_makes_an_available_pet_pending_or_sold() {
        assert_eq!(next_status(Available, Counted, 0, 2), Pending);
        assert_eq!(next_status(Available, Counted, 0, 0), Sold);
        // A status staff set by hand is left alone when nothing says otherwise.
        assert_eq!(next_status(Pending, Counted, 0, 0), Pending);
    }
}
