//! The outbox of a till in remote mode: the writes it took while the server could not be
//! reached, kept in its mirror until the server has them (see `crate::mirror`). Only
//! writes that a shop must be able to make at the counter come here, and each as what it
//! does rather than what it leaves (a stock change is a delta, never a count), so that
//! replaying it later on a server that moved on still means what the clerk meant.

use serde::{Deserialize, Serialize};

use super::{CounterWrite, NewInventoryAdjustment, NewOrder, OrderId, OrderPatch, PetId, Timestamp};

/// Orders placed offline get an id from here up until the server gives them theirs: far
/// above any id a server hands out, and below 2^53, so JavaScript reads it exactly.
pub const PROVISIONAL_ORDER_IDS: i64 = 1 << 52;
const _: () = assert!(PROVISIONAL_ORDER_IDS < (1 << 53), "JavaScript reads ids up to 2^53 exactly");

/// How far behind the server's clock a till's own time for a write (`placedAt`,
/// `completedAt`) puts it among the writes the till queued while it could not reach the
/// server. A write made at the counter is sent at once and carries no such time (or one a
/// clock's error away from now); one from the outbox is as old as the outage it waited out.
pub const REPLAYED_AFTER: chrono::TimeDelta = chrono::TimeDelta::seconds(30);

/// Whether a write the till stamped `till_time` is a replay from its outbox rather than a
/// sale being made now: after an outage a chain's tills replay thousands of them at once,
/// and the server lets them through a few at a time so that a till that stayed online is
/// not kept waiting behind them (`api::permits::REPLAYS_AT_ONCE`).
pub fn is_replayed(till_time: Option<Timestamp>, now: chrono::DateTime<chrono::Utc>) -> bool {
    till_time.is_some_and(|at| at.as_datetime() < now - REPLAYED_AFTER)
}

impl OrderId {
    /// Whether this is an order placed offline that the server has not numbered yet.
    pub fn is_provisional(self) -> bool {
        self.get() >= PROVISIONAL_ORDER_IDS
    }
}

/// A write taken offline.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Command {
    /// An order or a counter sale (`order.complete`), shown meanwhile as `order_id`.
    PlaceOrder {
        order_id: OrderId,
        order: NewOrder,
    },
    CompleteOrder {
        order_id: OrderId,
        /// When the till completed it, stamped when it was queued (unless it may already
        /// be on the server): sent as the patch's `completedAt`.
        #[cfg_attr(feature = "ts", ts(optional))]
        #[serde(default, skip_serializing_if = "Option::is_none")]
        completed_at: Option<Timestamp>,
    },
    CancelOrder {
        order_id: OrderId,
    },
    AdjustInventory {
        pet_id: PetId,
        adjustment: NewInventoryAdjustment,
    },
}

impl Command {
    /// The operation it carries out, whose permission whoever sends it (again) needs.
    pub fn operation(&self) -> super::Operation {
        use super::Operation;
        match self {
            Command::PlaceOrder { .. } => Operation::PlaceOrder,
            Command::CompleteOrder { .. } => Operation::ChangeOrder,
            Command::CancelOrder { .. } => Operation::CancelOrder,
            Command::AdjustInventory { .. } => Operation::AdjustStock,
        }
    }

    /// The counter write it keeps: what is sent to the server under its key, and what a
    /// write sent again under that key is compared with.
    pub fn write(&self) -> CounterWrite {
        match self {
            Self::PlaceOrder { order, .. } => CounterWrite::Place(order.clone()),
            Self::CompleteOrder { order_id, completed_at } => CounterWrite::Update {
                order: *order_id,
                patch: OrderPatch {
                    complete: Some(true),
                    completed_at: *completed_at,
                    ..OrderPatch::default()
                },
            },
            Self::CancelOrder { order_id } => CounterWrite::Cancel(*order_id),
            Self::AdjustInventory { pet_id, adjustment } => {
                CounterWrite::Adjust { pet: *pet_id, adjustment: adjustment.clone() }
            }
        }
    }

    /// Placing `order` offline; its provisional id is given when it is queued.
    pub fn place(order: NewOrder) -> Self {
        Self::PlaceOrder { order_id: OrderId::try_from(PROVISIONAL_ORDER_IDS).expect("positive"), order }
    }

    /// The pet whose stock it moves by itself, if it names one (placing an order, an
    /// adjustment; a cancellation names only its order).
    pub fn pet_id(&self) -> Option<PetId> {
        match self {
            Self::PlaceOrder { order, .. } => Some(order.pet_id),
            Self::AdjustInventory { pet_id, .. } => Some(*pet_id),
            Self::CompleteOrder { .. } | Self::CancelOrder { .. } => None,
        }
    }

    /// The order it is about, if any (a provisional id for an order placed offline).
    pub fn order_id(&self) -> Option<OrderId> {
        match self {
            Self::PlaceOrder { order_id, .. }
            | Self::CompleteOrder { order_id, .. }
            | Self::CancelOrder { order_id } => Some(*order_id),
            Self::AdjustInventory { .. } => None,
        }
    }

    /// Whether it is about an order placed offline that the server has not numbered yet,
    /// and so must follow it through the queue. Placing an order is about no order yet.
    pub fn waits_on_provisional_order(&self) -> bool {
        match self {
            Self::PlaceOrder { .. } | Self::AdjustInventory { .. } => false,
            Self::CompleteOrder { order_id, .. } | Self::CancelOrder { order_id } => {
                order_id.is_provisional()
            }
        }
    }

    /// What it is, for the "needs attention" list: "sale of 2 of pet 7".
    pub fn describe(&self) -> String {
        match self {
            Self::PlaceOrder { order, .. } if order.complete => {
                format!("sale of {} of pet {}", order.quantity.get(), order.pet_id)
            }
            Self::PlaceOrder { order, .. } => {
                format!("order of {} of pet {}", order.quantity.get(), order.pet_id)
            }
            Self::CompleteOrder { order_id, .. } => format!("completing order {order_id}"),
            Self::CancelOrder { order_id } => format!("cancelling order {order_id}"),
            Self::AdjustInventory { pet_id, adjustment } => {
                format!("stock of pet {pet_id} {:+} ({})", adjustment.delta.get(), adjustment.reason.as_str())
            }
        }
    }
}

/// Where a queued write stands.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OutboxState {
    /// Waiting for the server; its effect shows in the mirror.
    Pending,
    /// The server refused it; its effect was taken back, and staff decide: send it again
    /// or drop it.
    Attention,
}

impl OutboxState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Attention => "attention",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "attention" => Some(Self::Attention),
            _ => None,
        }
    }
}

/// One queued write.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxEntry {
    /// Its place in the queue: replayed in this order.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seq: i64,
    /// The `Idempotency-Key` it is sent with, a UUID: a replay whose answer was lost is
    /// sent again with it and applied once.
    pub key: String,
    pub command: Command,
    pub state: OutboxState,
    /// Why the server refused it, in its words, while it needs attention.
    pub reason: Option<String>,
    pub created_at: Timestamp,
    /// The name of the pet it is about, as the till has it now: what staff read, rather
    /// than an id.
    pub pet_name: Option<String>,
}

/// How many queued writes wait, and how many need attention: the badge.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxCounts {
    pub pending: u32,
    pub attention: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_keep_their_meaning_as_json() {
        let command = Command::AdjustInventory {
            pet_id: PetId::try_from(7).unwrap(),
            adjustment: serde_json::from_str(r#"{"delta": -2, "reason": "broken"}"#).unwrap(),
        };
        let json = serde_json::to_string(&command).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"adjustInventory","petId":7,"adjustment":{"delta":-2,"reason":"broken"}}"#
        );
        assert_eq!(serde_json::from_str::<Command>(&json).unwrap(), command);
        assert_eq!(command.describe(), "stock of pet 7 -2 (broken)");
    }

    #[test]
    fn provisional_ids_are_far_above_the_servers_and_exact_in_javascript() {
        assert!(OrderId::try_from(PROVISIONAL_ORDER_IDS).unwrap().is_provisional());
        assert!(!OrderId::try_from(PROVISIONAL_ORDER_IDS - 1).unwrap().is_provisional());
    }
}
