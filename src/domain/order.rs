use serde::{Deserialize, Serialize};

use super::{OrderId, PetId, Timestamp, double_option};

/// How many of a pet one order takes: 1..=10000.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct Quantity(i64);

impl Quantity {
    pub const MAX: i64 = 10_000;

    pub fn get(self) -> i64 {
        self.0
    }
}

impl Default for Quantity {
    fn default() -> Self {
        Self(1)
    }
}

impl TryFrom<i64> for Quantity {
    type Error = String;

    fn try_from(v: i64) -> Result<Self, String> {
        if (1..=Self::MAX).contains(&v) {
            Ok(Self(v))
        } else {
            Err(format!("quantity must be between 1 and {}, got {v}", Self::MAX))
        }
    }
}

impl From<Quantity> for i64 {
    fn from(q: Quantity) -> i64 {
        q.0
    }
}

/// Body of `POST /store/orders`. `complete: true` is a counter sale: placed and completed
/// in one step.
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrderPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<Quantity>,
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub ship_date: Option<Option<Timestamp>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
}

impl OrderPatch {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

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
