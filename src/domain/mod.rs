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

/// The validated newtypes are a plain number or string on the wire, and so in TypeScript.
/// Written by hand because deriving would trip over their `serde(try_from)`.
#[cfg(feature = "ts")]
macro_rules! ts_as {
    ($($ty:ty => $ts:literal),* $(,)?) => {$(
        impl ts_rs::TS for $ty {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;
            fn name(_: &ts_rs::Config) -> String {
                $ts.into()
            }
            fn inline(cfg: &ts_rs::Config) -> String {
                Self::name(cfg)
            }
        }
    )*};
}

#[cfg(feature = "ts")]
ts_as! {
    PetId => "number", CategoryId => "number", OrderId => "number", AdjustmentId => "number",
    Quantity => "number", StockLevel => "number", Delta => "number",
    Name => "string", Reason => "string", Description => "string", Timestamp => "string",
}

/// Deserializes a field that distinguishes "absent" (outer `None`, via `#[serde(default)]`)
/// from "explicitly null" (`Some(None)`), which PATCH needs to clear a value.
pub(crate) fn double_option<'de, T, D>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    serde::Deserialize::deserialize(d).map(Some)
}
