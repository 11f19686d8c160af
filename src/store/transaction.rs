//! The store's one seam for SQL of another module's (a till's mirror, `crate::mirror`):
//! one write of the writer's group, in which the shop's own rules are offered as
//! operations, so an order taken offline is placed, completed or cancelled, and stock
//! adjusted, exactly as the store does it, in the same transaction as the caller's own
//! rows. Crate-private: nothing outside the core writes around the store's rules.

use rusqlite::Connection;

use super::{Store, inventory, orders};
use crate::domain::{
    Actor, InventoryItem, NewInventoryAdjustment, NewOrder, Order, OrderId, OrderPatch, PetId,
};
use crate::engine::Change;
use crate::error::Result;

/// One write in progress (a savepoint of the writer's group transaction): what the
/// callback does commits with the group, or is rolled back alone if it fails.
pub(crate) struct Transaction<'c> {
    conn: &'c Connection,
    /// Whose writes these are: the store handle's actor.
    by: &'c Actor,
}

impl<'c> Transaction<'c> {
    /// The connection itself, for the caller's own tables and for server state taken in
    /// as the server gave it (which the server's rules made already).
    pub(crate) fn sql(&self) -> &'c Connection {
        self.conn
    }

    /// Places an order by the shop's rules: available pet, enough stock, taken at once.
    pub(crate) fn place_order(&self, new: &NewOrder) -> Result<Order> {
        orders::place(self.conn, new, self.by)
    }

    /// `new` stored as order `id` as it is: no rule checked, no stock taken (an order its
    /// server may have placed already, shown until the server says).
    pub(crate) fn insert_order_as_is(&self, id: OrderId, new: &NewOrder) -> Result<Order> {
        orders::insert_as_is(self.conn, id, new, self.by)
    }

    pub(crate) fn update_order(&self, id: OrderId, patch: &OrderPatch) -> Result<Order> {
        orders::update(self.conn, id, patch, self.by)
    }

    pub(crate) fn cancel_order(&self, id: OrderId) -> Result<Order> {
        orders::cancel(self.conn, id, self.by)
    }

    pub(crate) fn adjust_inventory(
        &self,
        pet: PetId,
        adjustment: &NewInventoryAdjustment,
    ) -> Result<InventoryItem> {
        inventory::adjust(self.conn, pet, adjustment, self.by)
    }

    pub(crate) fn order(&self, id: OrderId) -> Result<Order> {
        orders::get(self.conn, id)
    }

    pub(crate) fn inventory_item(&self, pet: PetId) -> Result<InventoryItem> {
        inventory::get(self.conn, pet)
    }
}

impl Store {
    /// Runs `f` as one write (see [`Store::write`]); announces `change` once committed,
    /// when there is one.
    pub(crate) async fn transact<T, F>(&self, change: Option<Change>, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T> + Send + 'static,
    {
        let by = self.actor.clone();
        self.inner.engine.write(change, move |conn| f(&Transaction { conn, by: &by })).await
    }
}
