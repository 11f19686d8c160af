use serde::{Deserialize, Serialize};

use super::{
    Actor, Description, Money, Name, OrderId, PetId, Phone, Price, Timestamp, double_option, not_null,
};

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
    // Left out of the JSON when absent, so an order without them hashes as it did before
    // they existed (`crate::idempotency::fingerprint`): a retry across an upgrade matches.
    /// Who collects it later, and how to reach them.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_name: Option<Name>,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_phone: Option<Phone>,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<Description>,
    /// When the till made it, if that was earlier than now: a sale taken offline and sent
    /// when the server could be reached again. The server keeps it beside its own time of
    /// receipt (`createdAt`), within bounds (`api::orders`).
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placed_at: Option<Timestamp>,
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
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub customer_name: Option<Option<Name>>,
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub customer_phone: Option<Option<Phone>>,
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub note: Option<Option<Description>>,
    /// With `complete: true`: when the till completed it, if earlier than now (completed
    /// while the server could not be reached). Bounded as `NewOrder::placed_at`.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, deserialize_with = "not_null", skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Timestamp>,
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
    /// When the server received it.
    pub created_at: Timestamp,
    /// When the till made it, if it said (an order taken offline); null when it was placed
    /// straight on the server, at `createdAt`.
    #[serde(default)]
    pub placed_at: Option<Timestamp>,
    /// The pet's price when the order was placed; none if it had none.
    pub unit_price: Option<Price>,
    /// `unitPrice` times `quantity`, kept right when the quantity changes.
    pub total: Option<Money>,
    /// When it was completed (the planned `shipDate` is another thing).
    pub completed_at: Option<Timestamp>,
    pub customer_name: Option<String>,
    pub customer_phone: Option<String>,
    pub note: Option<String>,
    /// When it was cancelled: the order is kept for the record, its stock returned.
    pub cancelled_at: Option<Timestamp>,
    /// Who placed it, completed it and cancelled it: null for what was done before the
    /// shop kept staff (and for what was not done).
    #[serde(default)]
    pub placed_by: Option<Actor>,
    #[serde(default)]
    pub completed_by: Option<Actor>,
    #[serde(default)]
    pub cancelled_by: Option<Actor>,
}

impl NewOrder {
    /// The order this request places as `id` at `now`, the pet costing `unit_price`.
    pub fn placed(&self, id: OrderId, now: Timestamp, unit_price: Option<Price>) -> Order {
        let quantity = self.quantity.get();
        Order {
            id,
            pet_id: self.pet_id,
            quantity,
            ship_date: self.ship_date_at(now),
            complete: self.complete,
            created_at: now,
            placed_at: self.placed_at,
            unit_price,
            total: Order::total_of(unit_price, quantity),
            completed_at: self.complete.then_some(self.placed_at.unwrap_or(now)),
            customer_name: self.customer_name.as_ref().map(|n| n.as_str().to_owned()),
            customer_phone: self.customer_phone.as_ref().map(|p| p.as_str().to_owned()),
            note: self.note.as_ref().map(|n| n.as_str().to_owned()),
            cancelled_at: None,
            placed_by: None,
            completed_by: None,
            cancelled_by: None,
        }
    }
}

impl NewOrder {
    /// When this order placed at `now` was completed, if it is a counter sale: when the
    /// till made it (`placedAt`, a sale taken offline), else `now`.
    pub fn completed_at(&self, now: Timestamp) -> Option<Timestamp> {
        self.complete.then(|| self.placed_at.unwrap_or(now))
    }

    /// The `shipDate` of this order placed at `now`: the one planned; a counter sale
    /// (`complete`) with none planned went when it was completed (see [`shipped_at`]).
    pub fn ship_date_at(&self, now: Timestamp) -> Option<Timestamp> {
        match self.completed_at(now) {
            Some(completed) => Some(shipped_at(self.ship_date, completed)),
            None => self.ship_date,
        }
    }
}

/// The `shipDate` of an order completed at `completed_at`: the date planned, else the
/// completion itself. The spec's `shipDate` is the "expected or actual ship date", so a
/// client that reads only the spec's fields learns when a completed order went.
pub fn shipped_at(planned: Option<Timestamp>, completed_at: Timestamp) -> Timestamp {
    planned.unwrap_or(completed_at)
}

impl Order {
    /// This order, just placed, as `actor`'s: who placed it, and who completed it when it
    /// is a counter sale (placed and completed in one step).
    pub fn placed_by(self, actor: &Actor) -> Self {
        let completed_by = self.complete.then(|| actor.clone());
        Self { placed_by: Some(actor.clone()), completed_by, ..self }
    }

    /// `unit_price` times `quantity`.
    pub fn total_of(unit_price: Option<Price>, quantity: i64) -> Option<Money> {
        unit_price.and_then(|p| p.money().times(quantity))
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderFilter {
    pub pet_id: Option<PetId>,
    pub complete: Option<bool>,
    /// Only cancelled orders; without it, cancelled orders are left out (clients from
    /// before orders were kept see what they saw).
    pub cancelled: bool,
    /// Part of the customer's or the pet's name, ignoring case and accents.
    pub q: Option<Name>,
}

impl OrderFilter {
    /// Which orders the list shows as SQL both engines' `orders` tables read alike: the
    /// cancelled and not deleted ones, or the not cancelled ones. Each is a range of one
    /// index (`orders_cancelled`; `orders_by_complete` for the open and the completed), and a
    /// deleted order is always cancelled, so the other lists never meet one.
    pub fn kept_sql(&self) -> &'static str {
        if self.cancelled {
            "cancelled_at IS NOT NULL AND deleted_at IS NULL"
        } else {
            "cancelled_at IS NULL"
        }
    }
}
