//! Domain types of the contract. Request types parse their input while deserializing, so
//! a `NewPet` that exists is a valid one; response types are plain data.

#[macro_use]
mod bounded;
pub mod activity;
mod category;
mod counter;
mod csv_cell;
mod export;
mod feed;
mod history;
mod ids;
mod import;
mod inventory;
mod money;
mod operation;
mod order;
pub mod order_plan;
mod outbox;
mod page;
mod pet;
mod report;
mod settings;
mod shop_days;
mod staff;
pub mod status_rules;
pub mod stock_plan;
mod text;
mod time;

pub use activity::{ActivityEntry, ActivityFilter, ActivityKind, NewActivity, Subject, UNINDEXED_KIND};
pub use category::{Category, NewCategory, no_such_category};
pub use counter::{CounterAnswer, CounterWrite};
pub use csv_cell::{defuse, undo_defuse};
pub use export::{EXPORT_PAGE, OrderExport, PetExport};
pub use feed::{
    Action, Entity, FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, FeedBounds, FeedChange, FeedPage, FeedScope,
    feed_limit, feed_position, purge_through,
};
pub use history::{AuditRecord, StockEntry, StockEntryKind, history_sql};
pub use ids::{AdjustmentId, CategoryId, OrderId, PetId, StaffId};
pub use import::{
    IMPORT_MAX_LINES, IMPORT_REASON, ImportPlan, ImportReport, ImportRow, parse_pets_csv, read_pets_csv,
    refused_at,
};
pub use inventory::{
    Delta, InventoryAdjustment, InventoryFilter, InventoryItem, InventoryUpdate, NewInventoryAdjustment,
    StockLevel,
};
pub use money::{Money, Price};
pub use operation::Operation;
pub use order::{NewOrder, Order, OrderFilter, OrderPatch, Quantity, shipped_at};
pub use outbox::{
    Command, OutboxCounts, OutboxEntry, OutboxState, PROVISIONAL_ORDER_IDS, REPLAYED_AFTER, is_replayed,
};
pub use page::{Page, Paged};
pub use pet::{
    NewPet, Pet, PetFilter, PetPatch, PetSearch, PetSort, PetStatus, duplicate_sku, pet_has_orders,
};
pub use report::{
    DayRange, FIRST_DAY, LAST_DAY, MAX_REPORT_DAYS, SalesDay, SpanTotals, parse_day, sales_days,
};
pub use settings::{Currency, LowStockBelow, ShopSettings, TimeZone};
pub use shop_days::{DaySpan, day_spans};
pub use staff::{
    Actor, NewStaffMember, PIN_LOCK, PIN_LOCK_MAX, PIN_TRIES, Permission, Pin, Role, StaffCredential,
    StaffMember, StaffPatch, StaffRef, WRONG_PIN_DELAY, alone_without_pin, duplicate_staff_name,
    keep_an_owner, lock_after, may_add_staff, signs_in_without_pin, staff_name_key,
};
pub use text::{
    Description, Name, ONE_TYPO_FROM, Phone, Reason, Sku, fold, fold_sku, like_contains, like_halves,
    like_one_typo, quoted,
};
pub use time::Timestamp;

/// The validated newtypes are a plain number or string on the wire, and so in TypeScript.
/// Written by hand because deriving would trip over their `serde(try_from)` (and a `Pin`
/// is only ever read, never written, so it has no `Serialize` to derive from).
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
    StaffId => "number",
    Quantity => "number", StockLevel => "number", Delta => "number",
    Name => "string", Reason => "string", Description => "string", Timestamp => "string",
    Money => "string", Price => "string", Sku => "string", Phone => "string",
    Currency => "string", TimeZone => "string", LowStockBelow => "number", Pin => "string",
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

/// Deserializes a field that may be absent (`None`, via `#[serde(default)]`) but not
/// `null`: PATCH fields like `status` or `quantity` have no "no value" to go back to, and
/// the document does not mark them nullable, so an explicit `null` is refused rather than
/// read as "leave it".
pub(crate) fn not_null<'de, T, D>(d: D) -> Result<Option<T>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    serde::Deserialize::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_fields_that_are_not_nullable_refuse_null_but_may_be_absent() {
        for body in [r#"{"status": null}"#, r#"{"name": null, "status": "sold"}"#] {
            assert!(serde_json::from_str::<PetPatch>(body).is_err(), "{body}");
        }
        for body in [r#"{"quantity": null}"#, r#"{"complete": null, "quantity": 2}"#] {
            assert!(serde_json::from_str::<OrderPatch>(body).is_err(), "{body}");
        }
        let patch: PetPatch = serde_json::from_str(r#"{"categoryId": null}"#).unwrap();
        assert_eq!((patch.status, patch.category_id), (None, Some(None)));
        let patch: OrderPatch = serde_json::from_str(r#"{"shipDate": null}"#).unwrap();
        assert_eq!((patch.quantity, patch.ship_date), (None, Some(None)));
    }
}
