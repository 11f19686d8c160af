//! A pet's stock history (`GET /store/inventory/{petId}/history`): the counts and
//! adjustments staff made, merged with what the pet's orders did to its stock. Placing an
//! order writes no audit row (it is the hot write): its entries are derived from the order
//! row, when it was placed, completed and cancelled. The one stock movement of an order its
//! row cannot tell, a change of its quantity, is an adjustment naming the order, and the
//! placement takes what was placed: the quantity now less those changes. Each entry's
//! `stockAfter` is counted back from the live stock, so the newest one is the stock now.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{Actor, Order, OrderId, PetId, Timestamp};

/// A row of the audit trail (`inventory_adjustments`) as an engine writes it: `pet`'s stock
/// moved by `delta` to `after` for `reason`; `order` names the order whose quantity changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub pet: PetId,
    pub delta: i64,
    pub reason: String,
    pub after: i64,
    pub order: Option<OrderId>,
}

impl AuditRecord {
    /// Staff's count or adjustment, or an import.
    pub fn counted(pet: PetId, delta: i64, reason: impl Into<String>, after: i64) -> Self {
        Self { pet, delta, reason: reason.into(), after, order: None }
    }

    /// `order`'s quantity changed to `now`, which moved its pet's stock by `delta` to
    /// `after`: the one stock movement of an order its row cannot tell.
    pub fn order_changed(order: &Order, now: i64, delta: i64, after: i64) -> Self {
        let reason = format!("quantity {} → {now}", order.quantity);
        Self { pet: order.pet_id, delta, reason, after, order: Some(order.id) }
    }
}

/// What moved the stock.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StockEntryKind {
    /// Staff set the count or adjusted it (with a reason), or an import stocked the pet.
    Adjusted,
    /// An order was placed: its quantity is reserved.
    OrderPlaced,
    /// A counter sale: an order placed and completed at once.
    CounterSale,
    /// An open order's quantity changed: the difference was taken or given back.
    OrderChanged,
    /// An order placed earlier was completed; the stock did not move.
    OrderCompleted,
    /// An order was cancelled: its quantity came back.
    OrderCancelled,
}

impl StockEntryKind {
    const ALL: [(Self, &'static str); 6] = [
        (Self::Adjusted, "adjusted"),
        (Self::OrderPlaced, "order_placed"),
        (Self::CounterSale, "counter_sale"),
        (Self::OrderChanged, "order_changed"),
        (Self::OrderCompleted, "order_completed"),
        (Self::OrderCancelled, "order_cancelled"),
    ];
}

impl FromStr for StockEntryKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .iter()
            .find(|(_, name)| *name == s)
            .map(|(kind, _)| *kind)
            .ok_or_else(|| format!("no stock entry kind {s:?}"))
    }
}

/// One entry of a pet's stock history.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StockEntry {
    pub kind: StockEntryKind,
    /// How the stock moved (0 for a completion).
    pub delta: i64,
    pub at: Timestamp,
    /// Staff's reason for a count or an adjustment; what changed, for an order's quantity.
    pub reason: Option<String>,
    /// The order the entry is about.
    pub order_id: Option<OrderId>,
    /// The stock right after this entry.
    pub stock_after: i64,
    /// Who made it (placed, completed or cancelled the order, or counted or adjusted the
    /// stock); null for what was done before the shop kept staff.
    #[serde(default)]
    pub by: Option<Actor>,
}

/// The entries of pet `{pet}` (a bound parameter), in one statement both engines run: the
/// adjustments, and per order its placement, its later completion and its cancellation,
/// each with `rank` and `tie` to order entries of the same second: counts and adjustments
/// (a delivery is sold from), placements, quantity changes, completions, cancellations.
/// Integers are cast so PostgreSQL's sums stay `bigint`.
const ENTRIES: &str = "
    SELECT CASE WHEN a.order_id IS NULL THEN 'adjusted' ELSE 'order_changed' END AS kind,
           a.delta AS delta, a.created_at AS at, a.reason AS reason, a.order_id AS order_id,
           CASE WHEN a.order_id IS NULL THEN 0 ELSE 2 END AS rank, a.id AS tie, a.made_by AS made_by
      FROM inventory_adjustments a WHERE a.pet_id = {pet}
    UNION ALL
    SELECT CASE WHEN o.complete AND o.completed_at = coalesce(o.placed_at, o.created_at) THEN 'counter_sale' ELSE 'order_placed' END,
           CAST(-(o.quantity + coalesce((SELECT sum(c.delta) FROM inventory_adjustments c
                                          WHERE c.order_id = o.id), 0)) AS bigint),
           o.created_at, NULL, o.id, 1, o.id, o.placed_by
      FROM orders o WHERE o.pet_id = {pet}
    UNION ALL
    SELECT 'order_completed', 0, o.completed_at, NULL, o.id, 3, o.id, o.completed_by
      FROM orders o
     WHERE o.pet_id = {pet} AND o.completed_at IS NOT NULL AND o.completed_at <> coalesce(o.placed_at, o.created_at)
    UNION ALL
    SELECT 'order_cancelled', o.quantity, o.cancelled_at, NULL, o.id, 4, o.id, o.cancelled_by
      FROM orders o WHERE o.pet_id = {pet} AND o.cancelled_at IS NOT NULL";

/// The history's statements for an engine whose placeholders for the pet, the limit and the
/// offset are `pet`, `limit` and `offset`: how many entries there are, and one page of
/// them, newest first, columns kind, delta, at, reason, order_id, stock_after, made_by (who,
/// as the record keeps it: the actor's JSON, or NULL before staff).
pub fn history_sql(pet: &str, limit: &str, offset: &str) -> (String, String) {
    let entries = ENTRIES.replace("{pet}", pet);
    let count = format!("WITH entries AS ({entries}) SELECT count(*) FROM entries");
    let page = format!(
        "WITH entries AS ({entries})
         SELECT kind, delta, at, reason, order_id,
                (SELECT stock FROM pets WHERE id = {pet})
                  - CAST(coalesce(sum(delta) OVER (ORDER BY at DESC, rank DESC, tie DESC
                                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS bigint)
                  AS stock_after,
                made_by
           FROM entries ORDER BY at DESC, rank DESC, tie DESC LIMIT {limit} OFFSET {offset}"
    );
    (count, page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_name() {
        for (kind, name) in StockEntryKind::ALL {
            assert_eq!(name.parse::<StockEntryKind>().unwrap(), kind);
            assert_eq!(serde_json::to_value(kind).unwrap(), name);
        }
        assert!("sold".parse::<StockEntryKind>().is_err());
    }
}
