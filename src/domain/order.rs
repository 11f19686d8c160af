use serde::{Deserialize, Serialize};

use super::{OrderId, PetId, Timestamp, double_option, not_null};

bounded_int! {
    /// How many of a pet one order takes.
    Quantity, "quantity", 1..=10_000
}

impl Default for Quantity {
    fn default() -> Self {
        Self(1)
    }
}

/// Body of `POST /store/orders`. `complete: true` is a counter sale: placed and completed
/// in one step.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewOrder {
    pub pet_id: PetId,
    #[serde(default)]
    pub quantity: Quantity,
    #[serde(default)]
    pub ship_date: Option<Timestamp>,
    #[serde(default)]
    pub complete: bool,
}

/// Body of `PATCH /store/orders/{orderId}`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrderPatch {
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, deserialize_with = "not_null", skip_serializing_if = "Option::is_none")]
    pub quantity: Option<Quantity>,
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub ship_date: Option<Option<Timestamp>>,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, deserialize_with = "not_null", skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
}

impl OrderPatch {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    pub id: OrderId,
    pub pet_id: PetId,
    pub quantity: i64,
    pub ship_date: Option<Timestamp>,
    pub complete: bool,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderFilter {
    pub pet_id: Option<PetId>,
    pub complete: Option<bool>,
}
