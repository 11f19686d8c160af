//! What the scenarios share: a throwaway store, the transcript of answers, and builders
//! that make scenarios read as what staff do.

use std::fmt::Debug;

use std::sync::Arc;

use petstore::domain::*;
use petstore::engine::Database;
use petstore::{Error, ErrorCode, Petstore, Result};
use serde::Serialize;
use serde_json::Value;

use crate::support::TestDb;

use PetStatus::*;

/// A store on its own fresh database, on the engine under test (`PETSTORE_TEST_ENGINE`: the
/// SQLite `Store` or the PostgreSQL `PgStore`), removed with it.
pub(super) struct LocalStore {
    pub(super) store: Arc<dyn Database>,
    _db: TestDb,
}

impl LocalStore {
    pub(super) async fn new() -> Self {
        let db = TestDb::new();
        Self { store: db.open().await, _db: db }
    }
}

/// Every step of a scenario with its answer, timestamps masked (the two runs happen at
/// different instants; whether a time is set still counts).
#[derive(Default)]
pub(super) struct Transcript(Vec<(String, Value)>);

impl Transcript {
    fn record<T: Serialize>(&mut self, step: &str, result: &Result<T>) {
        let mut value = serde_json::to_value(result).unwrap();
        mask_times(&mut value);
        self.0.push((step.to_owned(), value));
    }

    /// The step must succeed.
    pub(super) fn ok<T: Serialize + Debug>(&mut self, step: &str, result: Result<T>) -> T {
        self.record(step, &result);
        result.unwrap_or_else(|e| panic!("{step}: expected success, got {e:?}"))
    }

    /// The step must fail with `code` and a message a person can read.
    pub(super) fn fails<T: Serialize + Debug>(
        &mut self,
        step: &str,
        result: Result<T>,
        code: ErrorCode,
    ) -> Error {
        self.record(step, &result);
        let e = result.expect_err(&format!("{step}: expected {code:?}"));
        assert_eq!(e.code, code, "{step}: {e:?}");
        assert!(!e.message.trim().is_empty(), "{step}: the message is empty");
        e
    }

    pub(super) fn assert_same_as(&self, store: &Transcript) {
        for ((step, remote), (_, local)) in self.0.iter().zip(&store.0) {
            assert_eq!(
                remote, local,
                "step {step:?}: the remote backend (left) and the store (right) differ"
            );
        }
        assert_eq!(self.0.len(), store.0.len(), "the runs took different numbers of steps");
    }
}

fn mask_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if matches!(
                    key.as_str(),
                    "createdAt" | "updatedAt" | "shipDate" | "completedAt" | "cancelledAt"
                ) && v.is_string()
                {
                    *v = Value::from("<time>");
                } else {
                    mask_times(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_times),
        _ => {}
    }
}

// Builders for the requests, so scenarios read as what staff do.

pub(super) fn pid(id: i64) -> PetId {
    PetId::try_from(id).unwrap()
}
pub(super) fn cid(id: i64) -> CategoryId {
    CategoryId::try_from(id).unwrap()
}
pub(super) fn oid(id: i64) -> OrderId {
    OrderId::try_from(id).unwrap()
}
pub(super) fn name(text: &str) -> Name {
    Name::parse(text).unwrap()
}
pub(super) fn page(limit: u32, offset: u32) -> Page {
    Page::new(limit, offset).unwrap()
}
pub(super) fn all() -> Page {
    page(100, 0)
}
pub(super) fn time(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

pub(super) fn pet(text: &str) -> NewPet {
    NewPet {
        price: None,
        sku: None,
        name: name(text),
        category_id: None,
        status: Available,
        description: None,
    }
}
pub(super) fn pet_in(text: &str, category: CategoryId) -> NewPet {
    NewPet { category_id: Some(category), ..pet(text) }
}
pub(super) fn category(text: &str) -> NewCategory {
    NewCategory { name: name(text), description: None }
}
pub(super) fn order(pet: PetId, quantity: i64) -> NewOrder {
    NewOrder {
        customer_name: None,
        customer_phone: None,
        note: None,
        placed_at: None,
        pet_id: pet,
        quantity: Quantity::try_from(quantity).unwrap(),
        ship_date: None,
        complete: false,
    }
}
pub(super) fn sale(pet: PetId, quantity: i64) -> NewOrder {
    NewOrder { complete: true, ..order(pet, quantity) }
}
pub(super) fn count(quantity: i64) -> InventoryUpdate {
    InventoryUpdate { quantity: StockLevel::try_from(quantity).unwrap(), reason: None }
}
pub(super) fn adjustment(delta: i64, reason: &str) -> NewInventoryAdjustment {
    NewInventoryAdjustment { delta: Delta::try_from(delta).unwrap(), reason: Reason::parse(reason).unwrap() }
}
pub(super) fn complete() -> OrderPatch {
    OrderPatch { complete: Some(true), ..OrderPatch::default() }
}

pub(super) fn names(pets: &Paged<Pet>) -> Vec<&str> {
    pets.items.iter().map(|p| p.name.as_str()).collect()
}

/// Creates a pet and sets its stock, as staff do when an animal arrives.
pub(super) async fn pet_with_stock(p: &dyn Petstore, t: &mut Transcript, text: &str, stock: i64) -> Pet {
    let created = t.ok(&format!("create {text}"), p.create_pet(pet(text)).await);
    t.ok(&format!("stock {text}"), p.set_inventory(created.id, count(stock)).await);
    t.ok(&format!("get {text}"), p.get_pet(created.id).await)
}

/// The pet's stock and status, read through the inventory.
pub(super) async fn stock_of(p: &dyn Petstore, t: &mut Transcript, pet: PetId) -> (i64, PetStatus) {
    let item = t.ok(&format!("inventory of {pet}"), p.get_inventory(pet).await);
    (item.quantity, item.status)
}
