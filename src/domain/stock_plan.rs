//! A change of a pet's stock decided once, for both engines: each engine reads the pet's
//! row ([`PetStock`]), asks here what to write ([`StockChange`], [`StockPlan`]), and writes
//! it with its own SQL. Every refusal is decided before anything is written, so a refused
//! change writes nothing on either engine, whatever its transaction does with an error.
//!
//! The one thing a plan cannot know from the rows it was given is how many open orders the
//! pet has: the status rules ask only when no stock is left
//! ([`StockChange::counts_open_orders`]), and counting them on every order cost the hot
//! write a read, so the engine counts only then and hands the count to
//! [`StockChange::status_after`].

use super::status_rules::{NamedPet, StockEvent, adjusted, check_stock_limit, next_status};
use super::{AuditRecord, InventoryUpdate, NewInventoryAdjustment, PetId, PetStatus, Price, Timestamp};
use crate::error::{Error, Result};

/// A pet's status and stock as a write reads them (on PostgreSQL, its row locked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PetStock {
    pub id: PetId,
    /// What a refusal calls it ([`NamedPet`]).
    pub name: String,
    pub status: PetStatus,
    pub stock: i64,
    /// What an order placed now costs a unit.
    pub price: Option<Price>,
}

impl PetStock {
    pub fn named(&self) -> NamedPet<'_> {
        NamedPet { id: self.id, name: &self.name }
    }
}

/// A pet's stock to write, and what moved it. Made only through [`StockChange::new`],
/// which refuses a stock above the maximum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StockChange {
    pub pet: PetId,
    /// The stock to write.
    pub stock: i64,
    /// When: the engine writes it as the stock's (and, when the status moves, the pet's)
    /// time of change.
    pub at: Timestamp,
    /// The status as read.
    status: PetStatus,
    /// What moved the stock.
    event: StockEvent,
    /// The order whose quantity moved the stock was completed in the same change: the rules
    /// run again for the completion, and `event` saw that order still open, which the
    /// engine's count (made once the completed order's row is written) no longer includes.
    then_completed: bool,
}

impl StockChange {
    /// `pet`'s stock set to `stock` by `event`, at `at`. Refused above the maximum
    /// (returned units can push a pet restocked meanwhile over it).
    pub fn new(pet: &PetStock, stock: i64, event: StockEvent, at: Timestamp) -> Result<Self> {
        check_stock_limit(pet.named(), stock)?;
        Ok(Self { pet: pet.id, stock, at, status: pet.status, event, then_completed: false })
    }

    /// This change followed by the completion of the order whose quantity moved the stock,
    /// in the same write: the rules run again for the completion.
    pub(super) fn then_completed(self) -> Self {
        Self { then_completed: true, ..self }
    }

    /// Whether the status rules need the pet's open orders: only when no stock is left.
    pub fn counts_open_orders(&self) -> bool {
        self.stock == 0
    }

    /// The status to write, given the pet's open orders as counted after the plan's order
    /// rows are written (0 when [`StockChange::counts_open_orders`] says they are not
    /// needed); `None` when it does not move, so the engine writes the stock alone (an index
    /// holding the status rewritten for nothing cost every order). A status that moves and
    /// moves back is written (the pet's time of change says it moved).
    pub fn status_after(&self, open_orders: i64) -> Option<PetStatus> {
        let still_open = i64::from(self.then_completed);
        let first = next_status(self.status, self.event, self.stock, open_orders + still_open);
        let last = if self.then_completed {
            next_status(first, StockEvent::Completed, self.stock, open_orders)
        } else {
            first
        };
        (first != self.status || last != first).then_some(last)
    }
}

/// Staff's count or adjustment of a pet's stock: the audit record to write (none for a
/// count that changes nothing), then the stock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StockPlan {
    pub audit: Option<AuditRecord>,
    pub stock: StockChange,
}

impl StockPlan {
    /// `PUT /store/inventory/{petId}`: the count set to `quantity`. `pet` is the row read
    /// for `id`, if there is one.
    pub fn count(
        id: PetId,
        pet: Option<&PetStock>,
        update: &InventoryUpdate,
        now: Timestamp,
    ) -> Result<Self> {
        let pet = pet.ok_or_else(|| Error::not_found(PetId::WHAT, id.get()))?;
        let (quantity, delta) = (update.quantity.get(), update.quantity.get() - pet.stock);
        let reason = match &update.reason {
            Some(why) => format!("stock set to {quantity}: {}", why.as_str()),
            None => format!("stock set to {quantity}"),
        };
        let audit = (delta != 0).then(|| AuditRecord::counted(pet.id, delta, reason, quantity));
        Ok(Self { audit, stock: StockChange::new(pet, quantity, StockEvent::Counted, now)? })
    }

    /// `POST /store/inventory/{petId}/adjustments`: the count moved by the adjustment's
    /// delta, within 0 and the maximum, always recorded with its reason.
    pub fn adjust(
        id: PetId,
        pet: Option<&PetStock>,
        adjustment: &NewInventoryAdjustment,
        now: Timestamp,
    ) -> Result<Self> {
        let pet = pet.ok_or_else(|| Error::not_found(PetId::WHAT, id.get()))?;
        let delta = adjustment.delta.get();
        let after = adjusted(pet.named(), pet.stock, delta)?;
        let audit = AuditRecord::counted(pet.id, delta, adjustment.reason.as_str(), after);
        Ok(Self { audit: Some(audit), stock: StockChange::new(pet, after, StockEvent::Counted, now)? })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::domain::{Delta, Reason, StockLevel};
    use crate::error::ErrorCode;
    use PetStatus::*;

    pub fn nemo(status: PetStatus, stock: i64) -> PetStock {
        PetStock { id: PetId::try_from(6).unwrap(), name: "Nemo".into(), status, stock, price: None }
    }

    pub fn at() -> Timestamp {
        Timestamp::parse("2026-11-27T10:00:00Z").unwrap()
    }

    #[test]
    fn a_change_that_leaves_stock_moves_the_status_only_by_the_rules_and_asks_no_count() {
        let change = StockChange::new(&nemo(Available, 5), 3, StockEvent::Taken, at()).unwrap();
        assert!(!change.counts_open_orders());
        assert_eq!(change.status_after(0), None, "an available pet that keeps stock stays so");
        let back = StockChange::new(&nemo(Sold, 0), 2, StockEvent::Returned, at()).unwrap();
        assert_eq!(back.status_after(0), Some(Available));
    }

    #[test]
    fn the_last_of_the_stock_asks_for_the_open_orders() {
        let change = StockChange::new(&nemo(Available, 2), 0, StockEvent::Taken, at()).unwrap();
        assert!(change.counts_open_orders());
        assert_eq!(change.status_after(1), Some(Pending));
        assert_eq!(change.status_after(0), Some(Sold));
    }

    #[test]
    fn a_stock_above_the_maximum_is_refused_before_anything_is_written() {
        let refused = StockChange::new(&nemo(Available, 1), StockLevel::MAX + 1, StockEvent::Returned, at())
            .unwrap_err();
        assert_eq!(refused.code, ErrorCode::ValidationFailed);
        assert!(refused.message.starts_with("this would raise Nemo (#6)'s stock to 1000001"), "{refused:?}");
    }

    #[test]
    fn taking_the_last_stock_and_completing_at_once_counts_the_order_open_for_the_first_step() {
        // The order's quantity took the last unit while it was open (pending), then it was
        // completed with no other open order (sold): the status moved, even if it ends
        // where it began, and the pet's time of change says so.
        let change = StockChange::new(&nemo(Sold, 1), 0, StockEvent::Taken, at()).unwrap().then_completed();
        assert_eq!(change.status_after(0), Some(Sold));
        assert_eq!(change.status_after(2), Some(Pending));
        let available =
            StockChange::new(&nemo(Available, 1), 0, StockEvent::Taken, at()).unwrap().then_completed();
        assert_eq!(available.status_after(0), Some(Sold));
    }

    #[test]
    fn a_count_records_what_changed_and_nothing_when_nothing_did() {
        let count = |n: i64, reason: Option<&str>| InventoryUpdate {
            quantity: StockLevel::try_from(n).unwrap(),
            reason: reason.map(|r| Reason::try_from(r.to_owned()).unwrap()),
        };
        let pet = nemo(Sold, 0);
        let plan = StockPlan::count(pet.id, Some(&pet), &count(4, None), at()).unwrap();
        let audit = plan.audit.unwrap();
        assert_eq!((audit.delta, audit.reason.as_str(), audit.after), (4, "stock set to 4", 4));
        assert_eq!((plan.stock.stock, plan.stock.status_after(0)), (4, Some(Available)));
        let told = StockPlan::count(pet.id, Some(&pet), &count(4, Some("stock-take")), at()).unwrap();
        assert_eq!(
            told.audit.unwrap().reason,
            "stock set to 4: stock-take",
            "the reason stays with the count"
        );
        let same = StockPlan::count(pet.id, Some(&pet), &count(0, None), at()).unwrap();
        assert_eq!(same.audit, None);
        let missing = StockPlan::count(pet.id, None, &count(1, None), at()).unwrap_err();
        assert_eq!((missing.code, missing.message.as_str()), (ErrorCode::NotFound, "pet 6 does not exist"));
    }

    #[test]
    fn an_adjustment_stays_within_zero_and_the_maximum_and_is_always_recorded() {
        let pet = nemo(Available, 2);
        let adjustment = |delta: i64| NewInventoryAdjustment {
            delta: Delta::try_from(delta).unwrap(),
            reason: Reason::try_from("broken".to_owned()).unwrap(),
        };
        let plan = StockPlan::adjust(pet.id, Some(&pet), &adjustment(-2), at()).unwrap();
        assert_eq!(plan.audit.unwrap(), AuditRecord::counted(pet.id, -2, "broken", 0));
        assert!(plan.stock.counts_open_orders());
        assert_eq!(plan.stock.status_after(1), Some(Pending));
        let refused = StockPlan::adjust(pet.id, Some(&pet), &adjustment(-3), at()).unwrap_err();
        assert_eq!(refused.message, "Nemo (#6) has 2 in stock; cannot remove 3");
    }
}
