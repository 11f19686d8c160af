//! The activity log: who did what and when, one entry for every write the shop keeps,
//! written by the engine in the write's own transaction, so no write goes unrecorded.
//! What an entry says is decided here (its kind and subject); the engines store it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{
    Actor, InventoryUpdate, NewInventoryAdjustment, Order, OrderId, PetId, StaffId, StaffMember, Timestamp,
};
use crate::error::{Error, ErrorCode, Result};

macro_rules! activity_kinds {
    ($($kind:ident => $name:literal),* $(,)?) => {
        /// What a write did. Its name on the wire and in the database is the snake_case
        /// one (`order_placed`).
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ActivityKind {
            $($kind),*
        }

        impl ActivityKind {
            pub const ALL: &'static [ActivityKind] = &[$(ActivityKind::$kind),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(ActivityKind::$kind => $name),*
                }
            }
        }
    };
}

activity_kinds! {
    PetCreated => "pet_created",
    PetUpdated => "pet_updated",
    PetDeleted => "pet_deleted",
    CategoryCreated => "category_created",
    CategoryUpdated => "category_updated",
    CategoryDeleted => "category_deleted",
    OrderPlaced => "order_placed",
    OrderUpdated => "order_updated",
    OrderCompleted => "order_completed",
    OrderReopened => "order_reopened",
    OrderCancelled => "order_cancelled",
    OrderDeleted => "order_deleted",
    StockAdjusted => "stock_adjusted",
    StockCounted => "stock_counted",
    PetsImported => "pets_imported",
    SettingsChanged => "settings_changed",
    KeyCreated => "key_created",
    KeyRotated => "key_rotated",
    KeyRevoked => "key_revoked",
    StaffCreated => "staff_created",
    StaffUpdated => "staff_updated",
    SignedIn => "signed_in",
    PinRefused => "pin_refused",
    StaffLockedOut => "staff_locked_out",
}

impl fmt::Display for ActivityKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ActivityKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        ActivityKind::ALL.iter().copied().find(|kind| kind.as_str() == s).ok_or_else(|| {
            Error::new(ErrorCode::InvalidParameter, format!("kind {s:?} is not a kind of activity"))
        })
    }
}

/// One entry of the log, as the API and the app show it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityEntry {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub id: i64,
    pub at: Timestamp,
    pub kind: ActivityKind,
    /// What it was done to: `pet`, `category`, `order`, `key`, `staff` or `settings`, with
    /// its id where it has one (a key's is its name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<Subject>,
    /// Who did it; `None` only for what happened before the shop kept staff.
    pub actor: Option<Actor>,
    /// A few words more, in the shop's data (a reason typed, a quantity): never a secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What an entry is about.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    pub entity: String,
    pub id: String,
}

/// An entry as an engine writes it, in the transaction of the write it records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewActivity {
    pub kind: ActivityKind,
    pub subject: Option<Subject>,
    pub actor: Actor,
    pub detail: Option<String>,
}

impl NewActivity {
    pub fn new(kind: ActivityKind, actor: &Actor) -> Self {
        Self { kind, subject: None, actor: actor.clone(), detail: None }
    }

    pub fn on(mut self, entity: &str, id: impl fmt::Display) -> Self {
        self.subject = Some(Subject { entity: entity.to_owned(), id: id.to_string() });
        self
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The staff member it names, for the log's filter by person (the approver of an
    /// override is found under their own name too).
    pub fn staff_ids(&self) -> (Option<StaffId>, Option<StaffId>) {
        (self.actor.staff.as_ref().map(|s| s.id), self.actor.approved_by.as_ref().map(|s| s.id))
    }
}

/// The entities an entry can be about, by their names in the log.
pub mod entity {
    pub const PET: &str = "pet";
    pub const CATEGORY: &str = "category";
    pub const ORDER: &str = "order";
    pub const KEY: &str = "key";
    pub const STAFF: &str = "staff";
    pub const SETTINGS: &str = "settings";
}

/// The entry of an order just placed: what and how many, and whether it was a counter sale.
pub fn order_placed(order: &Order, actor: &Actor) -> NewActivity {
    let sale = if order.complete { "counter sale: " } else { "" };
    NewActivity::new(ActivityKind::OrderPlaced, actor)
        .on(entity::ORDER, order.id)
        .detail(format!("{sale}{} × pet {}", order.quantity, order.pet_id))
}

/// What a change of an order (`PATCH`) did, judged by its `complete` before and after: an
/// open order completed, a completed one reopened, or anything else about it changed.
pub fn order_update_kind(before: &Order, after: &Order) -> ActivityKind {
    match (before.complete, after.complete) {
        (false, true) => ActivityKind::OrderCompleted,
        (true, false) => ActivityKind::OrderReopened,
        _ => ActivityKind::OrderUpdated,
    }
}

/// The entry of a change of an order, `before` and `after` it: its kind
/// ([`order_update_kind`]), and a new quantity in the detail.
pub fn order_updated(before: &Order, after: &Order, actor: &Actor) -> NewActivity {
    let entry = NewActivity::new(order_update_kind(before, after), actor).on(entity::ORDER, after.id);
    if before.quantity != after.quantity {
        entry.detail(format!("quantity {} → {}", before.quantity, after.quantity))
    } else {
        entry
    }
}

pub fn order_cancelled(order: OrderId, actor: &Actor) -> NewActivity {
    NewActivity::new(ActivityKind::OrderCancelled, actor).on(entity::ORDER, order)
}

pub fn order_deleted(order: OrderId, actor: &Actor) -> NewActivity {
    NewActivity::new(ActivityKind::OrderDeleted, actor).on(entity::ORDER, order)
}

/// The entry of an adjustment of pet `pet`'s stock: "+3 delivery", "-1 broken cage".
pub fn stock_adjusted(pet: PetId, adjustment: &NewInventoryAdjustment, actor: &Actor) -> NewActivity {
    NewActivity::new(ActivityKind::StockAdjusted, actor).on(entity::PET, pet).detail(format!(
        "{:+} {}",
        adjustment.delta.get(),
        adjustment.reason.as_str()
    ))
}

/// The entry of a count of pet `pet`'s stock: "12 (was 9)".
pub fn stock_counted(pet: PetId, before: i64, update: &InventoryUpdate, actor: &Actor) -> NewActivity {
    let counted = update.quantity.get();
    let detail = match &update.reason {
        Some(why) => format!("{counted} (was {before}): {}", why.as_str()),
        None => format!("{counted} (was {before})"),
    };
    NewActivity::new(ActivityKind::StockCounted, actor).on(entity::PET, pet).detail(detail)
}

/// The entry of a pet created, changed or deleted (`kind`), named when it still has a name.
pub fn pet_written(kind: ActivityKind, pet: PetId, name: Option<&str>, actor: &Actor) -> NewActivity {
    let entry = NewActivity::new(kind, actor).on(entity::PET, pet);
    match name {
        Some(name) => entry.detail(name),
        None => entry,
    }
}

/// The entry of a category created, changed or deleted (`kind`).
pub fn category_written(
    kind: ActivityKind,
    category: impl fmt::Display,
    name: Option<&str>,
    actor: &Actor,
) -> NewActivity {
    let entry = NewActivity::new(kind, actor).on(entity::CATEGORY, category);
    match name {
        Some(name) => entry.detail(name),
        None => entry,
    }
}

/// The entry of an import: how many pets, and the categories made for it.
pub fn pets_imported(pets: u64, categories_created: usize, actor: &Actor) -> NewActivity {
    let categories = match categories_created {
        0 => String::new(),
        1 => ", 1 new category".to_owned(),
        n => format!(", {n} new categories"),
    };
    NewActivity::new(ActivityKind::PetsImported, actor).detail(format!("{pets} pets{categories}"))
}

pub fn settings_changed(actor: &Actor) -> NewActivity {
    NewActivity::new(ActivityKind::SettingsChanged, actor).on(entity::SETTINGS, "shop")
}

/// The entry of a key created, rotated or revoked (`kind`): its name is its id, its scope
/// the detail. Never its secret.
pub fn key_written(kind: ActivityKind, name: &str, scope: &str, actor: &Actor) -> NewActivity {
    NewActivity::new(kind, actor).on(entity::KEY, name).detail(format!("scope {scope}"))
}

/// The entry of a staff member added: their name and role. Never their PIN.
pub fn staff_created(member: &StaffMember, actor: &Actor) -> NewActivity {
    NewActivity::new(ActivityKind::StaffCreated, actor).on(entity::STAFF, member.id).detail(format!(
        "{} {}",
        member.role,
        member.name.as_str()
    ))
}

/// The entry of a change of a staff member, `before` and `after` it, saying what changed
/// in words: "role cashier → manager, PIN changed". Never the PIN nor its hash.
pub fn staff_updated(
    before: &StaffMember,
    after: &StaffMember,
    pin_changed: bool,
    actor: &Actor,
) -> NewActivity {
    let mut changes = Vec::new();
    if before.name != after.name {
        changes.push(format!("name {} → {}", before.name.as_str(), after.name.as_str()));
    }
    if before.role != after.role {
        changes.push(format!("role {} → {}", before.role, after.role));
    }
    if pin_changed {
        changes.push("PIN changed".to_owned());
    }
    if before.active != after.active {
        changes.push(if after.active { "reactivated" } else { "deactivated" }.to_owned());
    }
    let entry = NewActivity::new(ActivityKind::StaffUpdated, actor).on(entity::STAFF, after.id);
    if changes.is_empty() { entry } else { entry.detail(changes.join(", ")) }
}

/// The entry of a sign-in of `member`, for a shift or an approval (`purpose`).
pub fn signed_in(member: StaffId, purpose: &str, actor: &Actor) -> NewActivity {
    NewActivity::new(ActivityKind::SignedIn, actor).on(entity::STAFF, member).detail(purpose)
}

/// The entries of a wrong PIN typed for `member`, the `failures`-th in a row: `pin_refused`,
/// and `staff_locked_out` when it locked them out until `locked_until`.
pub fn pin_refused(
    member: StaffId,
    failures: u32,
    locked_until: Option<Timestamp>,
    actor: &Actor,
) -> Vec<NewActivity> {
    let refused = NewActivity::new(ActivityKind::PinRefused, actor)
        .on(entity::STAFF, member)
        .detail(format!("{failures} wrong in a row"));
    let locked = locked_until.map(|until| {
        NewActivity::new(ActivityKind::StaffLockedOut, actor)
            .on(entity::STAFF, member)
            .detail(format!("until {until}"))
    });
    std::iter::once(refused).chain(locked).collect()
}

/// `GET /activity`'s filters: by person (as the one who acted or who approved), by kind,
/// and by time (`from` inclusive, `to` exclusive).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActivityFilter {
    pub staff: Option<StaffId>,
    pub kind: Option<ActivityKind>,
    pub from: Option<Timestamp>,
    pub to: Option<Timestamp>,
}

/// The one kind the log's index by kind leaves out (SQLite migration 0019, PostgreSQL
/// 0015): an order placed is most of a shop's log and its entry is written with every
/// sale, so indexing it cost each sale a second index write; it is listed by reading the
/// log newest first, where nearly every entry is one. For the same reason the change feed
/// leaves its entries out (SQLite 0020, PostgreSQL 0016): the sale's order is in the feed.
pub const UNINDEXED_KIND: ActivityKind = ActivityKind::OrderPlaced;

impl ActivityKind {
    /// The condition of the log's partial index by kind, for a query of any other kind to
    /// carry beside its `kind = ?` (SQL, the same on both engines): a planner uses a
    /// partial index only where the query itself implies the index's condition, which a
    /// bound parameter does not. `None` for [`UNINDEXED_KIND`].
    pub fn index_condition(self) -> Option<String> {
        (self != UNINDEXED_KIND).then(|| format!("kind <> '{UNINDEXED_KIND}'"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_name() {
        for kind in ActivityKind::ALL {
            assert_eq!(kind.as_str().parse::<ActivityKind>().unwrap(), *kind);
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
        assert_eq!("order_stolen".parse::<ActivityKind>().unwrap_err().code, ErrorCode::InvalidParameter);
    }

    #[test]
    fn an_orders_change_is_judged_by_complete_before_and_after() {
        let json = serde_json::json!({ "petId": 6, "quantity": 1 });
        let new: crate::domain::NewOrder = serde_json::from_value(json).unwrap();
        let open = new.placed(OrderId::try_from(3).unwrap(), Timestamp::now(), None);
        let done = Order { complete: true, ..open.clone() };
        assert_eq!(order_update_kind(&open, &done), ActivityKind::OrderCompleted);
        assert_eq!(order_update_kind(&done, &open), ActivityKind::OrderReopened);
        assert_eq!(
            order_update_kind(&open, &Order { note: Some("gift".into()), ..open.clone() }),
            ActivityKind::OrderUpdated
        );
        assert_eq!(order_update_kind(&done, &done), ActivityKind::OrderUpdated);
        let placed = order_placed(&done, &Actor::operator());
        assert_eq!(placed.detail.as_deref(), Some("counter sale: 1 × pet 6"));
        assert_eq!(placed.subject, Some(Subject { entity: "order".into(), id: "3".into() }));
    }

    #[test]
    fn details_say_what_moved_and_never_a_secret() {
        let pet = PetId::try_from(6).unwrap();
        let broken: NewInventoryAdjustment =
            serde_json::from_value(serde_json::json!({ "delta": -1, "reason": "broken cage" })).unwrap();
        assert_eq!(
            stock_adjusted(pet, &broken, &Actor::operator()).detail.as_deref(),
            Some("-1 broken cage")
        );
        let counted: InventoryUpdate = serde_json::from_value(serde_json::json!({ "quantity": 12 })).unwrap();
        assert_eq!(stock_counted(pet, 9, &counted, &Actor::operator()).detail.as_deref(), Some("12 (was 9)"));
        let told: InventoryUpdate =
            serde_json::from_value(serde_json::json!({ "quantity": 12, "reason": "stock-take" })).unwrap();
        assert_eq!(
            stock_counted(pet, 9, &told, &Actor::operator()).detail.as_deref(),
            Some("12 (was 9): stock-take")
        );

        let member = StaffId::try_from(4).unwrap();
        let until = Timestamp::parse("2026-11-27T10:05:00Z").unwrap();
        let kinds = |entries: Vec<NewActivity>| entries.into_iter().map(|e| e.kind).collect::<Vec<_>>();
        assert_eq!(kinds(pin_refused(member, 4, None, &Actor::operator())), [ActivityKind::PinRefused]);
        assert_eq!(
            kinds(pin_refused(member, 5, Some(until), &Actor::operator())),
            [ActivityKind::PinRefused, ActivityKind::StaffLockedOut]
        );
    }
}
