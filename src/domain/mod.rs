//! Domain types of the contract. Request types parse their input while deserializing, so
//! a `NewPet` that exists is a valid one; response types are plain data.

#[macro_use]
mod bounded;
mod category;
mod ids;
mod inventory;
mod order;
mod page;
mod pet;
mod text;
mod time;

pub use category::{Category, NewCategory};
pub use ids::{AdjustmentId, CategoryId, OrderId, PetId};
pub use inventory::{
    Delta, InventoryAdjustment, InventoryFilter, InventoryItem, InventoryUpdate, NewInventoryAdjustment,
    StockLevel,
};
pub use order::{NewOrder, Order, OrderFilter, OrderPatch, Quantity};
pub use page::{Page, Paged};
pub use pet::{NewPet, Pet, PetFilter, PetPatch, PetSort, PetStatus};
pub use text::{Description, Name, Reason};
pub use time::Timestamp;

/// Deserializes a field that distinguishes "absent" (outer `None`, via `#[serde(default)]`)
/// from "explicitly null" (`Some(None)`), which PATCH needs to clear a value.
pub(crate) fn double_option<'de, T, D>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    serde::Deserialize::deserialize(d).map(Some)
}
