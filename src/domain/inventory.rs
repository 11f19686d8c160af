use serde::{Deserialize, Serialize};

use super::{Actor, AdjustmentId, PetId, PetStatus, Reason, Timestamp};
use crate::error::Error;

bounded_int! {
    /// A pet's stock.
    StockLevel, "quantity", 0..=1_000_000
}

/// A relative stock change: non-zero and no larger than the whole stock range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct Delta(i64);

impl Delta {
    pub fn get(self) -> i64 {
        self.0
    }
}

impl TryFrom<i64> for Delta {
    type Error = String;

    fn try_from(v: i64) -> Result<Self, String> {
        if v == 0 {
            Err("delta must not be 0".into())
        } else if !(-StockLevel::MAX..=StockLevel::MAX).contains(&v) {
            // Not `v.abs()`: that overflows (a panic in debug builds) for i64::MIN.
            Err(format!("delta must be between -{0} and {0}, got {v}", StockLevel::MAX))
        } else {
            Ok(Self(v))
        }
    }
}

impl From<Delta> for i64 {
    fn from(d: Delta) -> i64 {
        d.0
    }
}

/// Body of `PUT /store/inventory/{petId}`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InventoryUpdate {
    pub quantity: StockLevel,
    /// Why the count is what it is ("stock-take", "found two more in the back"), kept on
    /// the stock history's entry and in the activity log beside the count.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "super::not_null")]
    pub reason: Option<Reason>,
}

/// Body of `POST /store/inventory/{petId}/adjustments`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewInventoryAdjustment {
    pub delta: Delta,
    pub reason: Reason,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InventoryItem {
    pub pet_id: PetId,
    pub pet_name: String,
    pub status: PetStatus,
    pub quantity: i64,
    pub updated_at: Timestamp,
}

/// One entry of a pet's stock audit trail.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InventoryAdjustment {
    pub id: AdjustmentId,
    pub pet_id: PetId,
    pub delta: i64,
    pub reason: String,
    pub quantity_after: i64,
    pub created_at: Timestamp,
    /// Who made it; null for an adjustment made before the shop kept staff.
    #[serde(default)]
    pub made_by: Option<Actor>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct InventoryFilter {
    pub statuses: Vec<PetStatus>,
    /// Only items whose quantity is strictly below this: the low-stock view.
    pub below_quantity: Option<i64>,
}

impl InventoryFilter {
    /// Refuses a `belowQuantity` outside the stock's range (one past it lists every pet).
    pub fn check(&self) -> Result<(), Error> {
        if self.below_quantity.is_some_and(|b| !(0..=StockLevel::MAX + 1).contains(&b)) {
            return Err(Error::invalid_parameter(format!(
                "belowQuantity must be between 0 and {}",
                StockLevel::MAX + 1
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_quantity_is_within_the_stock_range_or_one_past_it() {
        let below = |b| InventoryFilter { below_quantity: Some(b), ..InventoryFilter::default() }.check();
        assert!(
            below(0).is_ok()
                && below(StockLevel::MAX + 1).is_ok()
                && InventoryFilter::default().check().is_ok()
        );
        for bad in [-1, StockLevel::MAX + 2] {
            assert_eq!(below(bad).unwrap_err().message, "belowQuantity must be between 0 and 1000001");
        }
    }

    #[test]
    fn deltas_are_non_zero_and_within_the_stock_range_even_at_the_extremes() {
        for ok in [1, -1, StockLevel::MAX, -StockLevel::MAX] {
            assert_eq!(Delta::try_from(ok).unwrap().get(), ok);
        }
        for bad in [0, StockLevel::MAX + 1, -StockLevel::MAX - 1, i64::MAX, i64::MIN] {
            assert!(Delta::try_from(bad).is_err(), "{bad}");
        }
    }
}
