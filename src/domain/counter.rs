//! A counter write: one of the writes a till may have to send again, and so sends under
//! an idempotency key (placing an order, changing or completing one, cancelling one,
//! deleting one, adjusting stock). One type, so that each engine runs it once per key
//! with one `once`, the HTTP client sends it with one, the till's mirror forwards or
//! queues it with one, and a key reused for another write is told apart by one rule
//! (`crate::idempotency::Request::of`).

use serde::Serialize;

use super::{InventoryItem, NewInventoryAdjustment, NewOrder, Order, OrderId, OrderPatch, PetId};
use crate::error::{Error, Result};

/// What a counter write asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum CounterWrite {
    /// `POST /store/orders`: an order, or a counter sale (`complete`).
    Place(NewOrder),
    /// `PATCH /store/orders/{id}`: changes or completes an order.
    Update { order: OrderId, patch: OrderPatch },
    /// `POST /store/orders/{id}/cancel`: answers the cancelled order.
    Cancel(OrderId),
    /// `DELETE /store/orders/{id}`: answers nothing.
    Delete(OrderId),
    /// `POST /store/inventory/{pet}/adjustments`: a stock delta.
    Adjust { pet: PetId, adjustment: NewInventoryAdjustment },
}

impl CounterWrite {
    /// The order it is about that exists already (placing one is about none yet).
    pub fn order(&self) -> Option<OrderId> {
        match self {
            Self::Update { order, .. } | Self::Cancel(order) | Self::Delete(order) => Some(*order),
            Self::Place(_) | Self::Adjust { .. } => None,
        }
    }

    /// The same write about order `id` instead (an order placed offline, by the id its
    /// server gave it); a write about no order is left as it is.
    pub fn on_order(self, id: OrderId) -> Self {
        match self {
            Self::Update { patch, .. } => Self::Update { order: id, patch },
            Self::Cancel(_) => Self::Cancel(id),
            Self::Delete(_) => Self::Delete(id),
            other => other,
        }
    }
}

/// What a counter write answers: the order, the stock item, or nothing (a deletion). As
/// JSON it is that value alone (`null` for nothing), as the API answers it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[expect(
    clippy::large_enum_variant,
    reason = "an order, the large variant, is the common answer: boxing it would add an allocation to most answers and save nothing"
)]
pub enum CounterAnswer {
    Order(Order),
    Item(InventoryItem),
    Done,
}

impl CounterAnswer {
    /// The order it answers; any other answer is a bug of the engine.
    pub fn into_order(self) -> Result<Order> {
        match self {
            Self::Order(order) => Ok(order),
            other => Err(Error::internal(format!("a counter write answered {other:?}, not an order"))),
        }
    }

    /// The stock item it answers; any other answer is a bug of the engine.
    pub fn into_item(self) -> Result<InventoryItem> {
        match self {
            Self::Item(item) => Ok(item),
            other => Err(Error::internal(format!("a counter write answered {other:?}, not a stock item"))),
        }
    }

    /// The order it is about, if it answers one.
    pub fn order_id(&self) -> Option<OrderId> {
        match self {
            Self::Order(order) => Some(order.id),
            Self::Item(_) | Self::Done => None,
        }
    }
}
