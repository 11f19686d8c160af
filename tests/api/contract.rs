//! The contract suite: local and remote mode are one interface (DESIGN.md 2), so every
//! scenario is written once against `&dyn Petstore` and run on both backends, the SQLite
//! `Store` on a fresh database and the HTTP `Client` against a real server on port 0.
//!
//! Each scenario asserts what the contract says (ids included: both start empty). It also
//! records every answer in a [`Transcript`]; the client's test then replays the scenario on
//! a fresh store and requires the very same answers, messages included, so any difference
//! between the backends fails even where a scenario asserts nothing in particular.

use std::fmt::Debug;
use std::time::Duration;

use petstore::client::Client;
use petstore::domain::*;
use petstore::{Error, ErrorCode, Petstore, Result, Store};
use serde::Serialize;
use serde_json::Value;
use tempfile::TempDir;

use ErrorCode::*;
use PetStatus::*;

/// Generates, for each scenario, `store::<scenario>` and `client::<scenario>`.
macro_rules! on_both_backends {
    ($($scenario:ident),+ $(,)?) => {
        mod store {
            $(
                #[tokio::test]
                async fn $scenario() {
                    let local = super::LocalStore::new();
                    super::$scenario(&local.store, &mut super::Transcript::default()).await;
                }
            )+
        }
        mod client {
            $(
                #[tokio::test]
                async fn $scenario() {
                    let app = crate::helpers::spawn_app().await;
                    let client = petstore::client::Client::new(&app.base_url, crate::helpers::KEY).unwrap();
                    let mut remote = super::Transcript::default();
                    super::$scenario(&client, &mut remote).await;

                    let local = super::LocalStore::new();
                    let mut expected = super::Transcript::default();
                    super::$scenario(&local.store, &mut expected).await;
                    remote.assert_same_as(&expected);
                }
            )+
        }
    };
}

on_both_backends!(
    pets_are_listed_filtered_sorted_and_paged,
    missing_resources_are_not_found,
    categories_are_unique_and_kept_while_in_use,
    orders_take_stock_and_completing_the_last_sells_the_pet,
    cancelling_or_shrinking_an_order_returns_stock,
    a_counter_sale_sells_the_last_one,
    stock_counts_move_the_status_and_are_audited,
    completed_orders_are_final,
    references_and_deletions_are_checked,
    inventory_is_listed_lowest_first_with_filters,
);

/// A store on its own temporary database, removed with it.
struct LocalStore {
    store: Store,
    _dir: TempDir,
}

impl LocalStore {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self { store: Store::open(dir.path().join("petstore.db")).unwrap(), _dir: dir }
    }
}

/// Every step of a scenario with its answer, timestamps masked (the two runs happen at
/// different instants; whether a time is set still counts).
#[derive(Default)]
struct Transcript(Vec<(String, Value)>);

impl Transcript {
    fn record<T: Serialize>(&mut self, step: &str, result: &Result<T>) {
        let mut value = serde_json::to_value(result).unwrap();
        mask_times(&mut value);
        self.0.push((step.to_owned(), value));
    }

    /// The step must succeed.
    fn ok<T: Serialize + Debug>(&mut self, step: &str, result: Result<T>) -> T {
        self.record(step, &result);
        result.unwrap_or_else(|e| panic!("{step}: expected success, got {e:?}"))
    }

    /// The step must fail with `code` and a message a person can read.
    fn fails<T: Serialize + Debug>(&mut self, step: &str, result: Result<T>, code: ErrorCode) -> Error {
        self.record(step, &result);
        let e = result.expect_err(&format!("{step}: expected {code:?}"));
        assert_eq!(e.code, code, "{step}: {e:?}");
        assert!(!e.message.trim().is_empty(), "{step}: the message is empty");
        e
    }

    fn assert_same_as(&self, store: &Transcript) {
        for ((step, client), (_, local)) in self.0.iter().zip(&store.0) {
            assert_eq!(client, local, "step {step:?}: the client (left) and the store (right) differ");
        }
        assert_eq!(self.0.len(), store.0.len(), "the runs took different numbers of steps");
    }
}

fn mask_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if matches!(key.as_str(), "createdAt" | "updatedAt" | "shipDate") && v.is_string() {
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

fn pid(id: i64) -> PetId {
    PetId::try_from(id).unwrap()
}
fn cid(id: i64) -> CategoryId {
    CategoryId::try_from(id).unwrap()
}
fn oid(id: i64) -> OrderId {
    OrderId::try_from(id).unwrap()
}
fn name(text: &str) -> Name {
    Name::parse(text).unwrap()
}
fn page(limit: u32, offset: u32) -> Page {
    Page::new(limit, offset).unwrap()
}
fn all() -> Page {
    page(100, 0)
}
fn time(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

fn pet(text: &str) -> NewPet {
    NewPet { name: name(text), category_id: None, status: Available, description: None }
}
fn pet_in(text: &str, category: CategoryId) -> NewPet {
    NewPet { category_id: Some(category), ..pet(text) }
}
fn category(text: &str) -> NewCategory {
    NewCategory { name: name(text), description: None }
}
fn order(pet: PetId, quantity: i64) -> NewOrder {
    NewOrder {
        pet_id: pet,
        quantity: Quantity::try_from(quantity).unwrap(),
        ship_date: None,
        complete: false,
    }
}
fn sale(pet: PetId, quantity: i64) -> NewOrder {
    NewOrder { complete: true, ..order(pet, quantity) }
}
fn count(quantity: i64) -> InventoryUpdate {
    InventoryUpdate { quantity: StockLevel::try_from(quantity).unwrap() }
}
fn adjustment(delta: i64, reason: &str) -> NewInventoryAdjustment {
    NewInventoryAdjustment { delta: Delta::try_from(delta).unwrap(), reason: Reason::parse(reason).unwrap() }
}
fn complete() -> OrderPatch {
    OrderPatch { complete: Some(true), ..OrderPatch::default() }
}

fn names(pets: &Paged<Pet>) -> Vec<&str> {
    pets.items.iter().map(|p| p.name.as_str()).collect()
}

/// Creates a pet and sets its stock, as staff do when an animal arrives.
async fn pet_with_stock(p: &dyn Petstore, t: &mut Transcript, text: &str, stock: i64) -> Pet {
    let created = t.ok(&format!("create {text}"), p.create_pet(pet(text)).await);
    t.ok(&format!("stock {text}"), p.set_inventory(created.id, count(stock)).await);
    t.ok(&format!("get {text}"), p.get_pet(created.id).await)
}

/// The pet's stock and status, read through the inventory.
async fn stock_of(p: &dyn Petstore, t: &mut Transcript, pet: PetId) -> (i64, PetStatus) {
    let item = t.ok(&format!("inventory of {pet}"), p.get_inventory(pet).await);
    (item.quantity, item.status)
}

// The scenarios.

async fn pets_are_listed_filtered_sorted_and_paged(p: &dyn Petstore, t: &mut Transcript) {
    let dogs = t.ok("create Dogs", p.create_category(category("Dogs")).await).id;
    let cats = t.ok("create Cats", p.create_category(category("Cats")).await).id;
    assert_eq!((dogs, cats), (cid(1), cid(2)));

    let rex = t.ok("create Rex", p.create_pet(pet_in("Rex", dogs)).await);
    assert_eq!(
        (rex.id, rex.name.as_str(), rex.category_id, rex.status),
        (pid(1), "Rex", Some(dogs), Available)
    );
    assert_eq!(rex.description, None);
    let shy = NewPet {
        status: Pending,
        description: Some(Description::parse("Shy").unwrap()),
        ..pet_in(" bella ", cats)
    };
    let bella = t.ok("create bella", p.create_pet(shy).await);
    assert_eq!((bella.id, bella.name.as_str(), bella.status), (pid(2), "bella", Pending));
    assert_eq!(bella.description.as_deref(), Some("Shy"));
    t.ok("create Élise", p.create_pet(pet_in("Élise", cats)).await);
    t.ok("create Max", p.create_pet(NewPet { status: Sold, ..pet_in("Max", dogs) }).await);
    t.ok("create Charlie", p.create_pet(pet("Charlie")).await);
    assert_eq!(t.ok("get Rex", p.get_pet(rex.id).await), rex);

    let list = |filter: PetFilter, page: Page| p.list_pets(filter, page);
    let everything = t.ok("list all", list(PetFilter::default(), all()).await);
    assert_eq!(names(&everything), ["Rex", "bella", "Élise", "Max", "Charlie"]);
    assert_eq!(everything.total, 5);
    assert_eq!(everything.items[0], rex);

    let by_status = PetFilter { statuses: vec![Pending, Sold], ..Default::default() };
    let listed = t.ok("pending or sold", list(by_status, all()).await);
    assert_eq!((names(&listed), listed.total), (vec!["bella", "Max"], 2));

    let listed = t.ok("cats", list(PetFilter { category_id: Some(cats), ..Default::default() }, all()).await);
    assert_eq!(names(&listed), ["bella", "Élise"]);
    let available_dogs =
        PetFilter { category_id: Some(dogs), statuses: vec![Available], ..Default::default() };
    assert_eq!(names(&t.ok("available dogs", list(available_dogs, all()).await)), ["Rex"]);

    // Case-insensitive, and beyond ASCII: "ÉLI" finds "Élise".
    for (q, expected) in [("ÉLI", vec!["Élise"]), ("éLiSe", vec!["Élise"]), ("LI", vec!["Élise", "Charlie"])]
    {
        let filter = PetFilter { name_contains: Some(name(q)), ..Default::default() };
        let listed = t.ok(&format!("q={q}"), list(filter, all()).await);
        assert_eq!(names(&listed), expected, "q={q}");
        assert_eq!(listed.total, expected.len() as u64);
    }
    // LIKE wildcards in the search text match literally.
    for q in ["%", "_"] {
        let filter = PetFilter { name_contains: Some(name(q)), ..Default::default() };
        let listed = t.ok(&format!("q={q}"), list(filter, all()).await);
        assert_eq!((listed.items.len(), listed.total), (0, 0), "q={q}");
    }

    let by_ids = PetFilter { ids: vec![pid(5), pid(1), pid(99)], ..Default::default() };
    let listed = t.ok("ids 5, 1, 99", list(by_ids, all()).await);
    assert_eq!((names(&listed), listed.total), (vec!["Rex", "Charlie"], 2));

    // Sorting by name is checked on the ASCII names; ids break ties.
    let ascii = vec![pid(1), pid(2), pid(4), pid(5)];
    let sorted = PetFilter { ids: ascii.clone(), sort: PetSort::Name, ..Default::default() };
    assert_eq!(names(&t.ok("sort name", list(sorted, all()).await)), ["bella", "Charlie", "Max", "Rex"]);
    let sorted = PetFilter { ids: ascii, sort: PetSort::NameDesc, ..Default::default() };
    assert_eq!(names(&t.ok("sort -name", list(sorted, all()).await)), ["Rex", "Max", "Charlie", "bella"]);
    let sorted = PetFilter { sort: PetSort::IdDesc, ..Default::default() };
    assert_eq!(
        names(&t.ok("sort -id", list(sorted, all()).await)),
        ["Charlie", "Max", "Élise", "bella", "Rex"]
    );

    for (limit, offset, expected) in
        [(2, 0, vec!["Rex", "bella"]), (2, 2, vec!["Élise", "Max"]), (2, 4, vec!["Charlie"])]
    {
        let listed =
            t.ok(&format!("page {limit}/{offset}"), list(PetFilter::default(), page(limit, offset)).await);
        assert_eq!((names(&listed), listed.total), (expected, 5));
    }
    let beyond = t.ok("page beyond the end", list(PetFilter::default(), page(2, 10)).await);
    assert_eq!((beyond.items.len(), beyond.total), (0, 5));
}

async fn missing_resources_are_not_found(p: &dyn Petstore, t: &mut Transcript) {
    // The client asks `GET /pets?id=7` and must turn the empty list into the store's error.
    let e = t.fails("get pet 7", p.get_pet(pid(7)).await, NotFound);
    assert_eq!(e, Error::not_found(PetId::WHAT, 7));

    let rex = t.ok("create Rex", p.create_pet(pet("Rex")).await);
    t.ok("delete Rex", p.delete_pet(rex.id).await);
    let e = t.fails("get deleted Rex", p.get_pet(rex.id).await, NotFound);
    assert_eq!(e, Error::not_found(PetId::WHAT, 1));

    let patch = PetPatch { name: Some(name("Ghost")), ..Default::default() };
    t.fails("replace pet 7", p.replace_pet(pid(7), pet("Ghost")).await, NotFound);
    t.fails("update pet 7", p.update_pet(pid(7), patch).await, NotFound);
    t.fails("delete pet 7", p.delete_pet(pid(7)).await, NotFound);
    t.fails("inventory of 7", p.get_inventory(pid(7)).await, NotFound);
    t.fails("count 7", p.set_inventory(pid(7), count(3)).await, NotFound);
    t.fails("adjust 7", p.adjust_inventory(pid(7), adjustment(1, "found")).await, NotFound);
    t.fails("trail of 7", p.list_adjustments(pid(7), all()).await, NotFound);
    t.fails("get category 7", p.get_category(cid(7)).await, NotFound);
    t.fails("replace category 7", p.replace_category(cid(7), category("Ghosts")).await, NotFound);
    t.fails("delete category 7", p.delete_category(cid(7)).await, NotFound);
    t.fails("get order 7", p.get_order(oid(7)).await, NotFound);
    t.fails("complete order 7", p.update_order(oid(7), complete()).await, NotFound);
    t.fails("cancel order 7", p.cancel_order(oid(7)).await, NotFound);
}

async fn categories_are_unique_and_kept_while_in_use(p: &dyn Petstore, t: &mut Transcript) {
    let described =
        NewCategory { description: Some(Description::parse("Good boys").unwrap()), ..category("Dogs") };
    let dogs = t.ok("create Dogs", p.create_category(described).await);
    assert_eq!((dogs.id, dogs.name.as_str(), dogs.pet_count), (cid(1), "Dogs", 0));
    assert_eq!(dogs.description.as_deref(), Some("Good boys"));
    assert_eq!(t.ok("get Dogs", p.get_category(dogs.id).await), dogs);

    t.fails("create dogs", p.create_category(category("dogs")).await, DuplicateName);
    t.fails("create DOGS", p.create_category(category("  DOGS ")).await, DuplicateName);
    let cats = t.ok("create Cats", p.create_category(category("Cats")).await);
    assert_eq!(cats.id, cid(2));

    let felines = t.ok("rename Cats", p.replace_category(cats.id, category("Felines")).await);
    assert_eq!(
        (felines.id, felines.name.as_str(), felines.created_at),
        (cats.id, "Felines", cats.created_at)
    );
    t.fails("rename Felines to DOGS", p.replace_category(cats.id, category("DOGS")).await, DuplicateName);
    // A category may change the case of its own name; the replacement drops the description.
    let renamed = t.ok("rename Dogs to DOGS", p.replace_category(dogs.id, category("DOGS")).await);
    assert_eq!((renamed.name.as_str(), renamed.description), ("DOGS", None));

    let rex = t.ok("create Rex", p.create_pet(pet_in("Rex", dogs.id)).await);
    t.ok("create Fido", p.create_pet(pet_in("Fido", dogs.id)).await);
    assert_eq!(t.ok("get DOGS", p.get_category(dogs.id).await).pet_count, 2);

    let listed = t.ok("list", p.list_categories(all()).await);
    let rows: Vec<(&str, i64)> = listed.items.iter().map(|c| (c.name.as_str(), c.pet_count)).collect();
    assert_eq!((rows, listed.total), (vec![("DOGS", 2), ("Felines", 0)], 2));
    let second = t.ok("list page 2", p.list_categories(page(1, 1)).await);
    assert_eq!((second.items[0].id, second.total), (cats.id, 2));

    t.fails("delete DOGS", p.delete_category(dogs.id).await, CategoryInUse);
    t.ok("delete Felines", p.delete_category(cats.id).await);
    t.fails("get Felines", p.get_category(cats.id).await, NotFound);

    let homeless = PetPatch { category_id: Some(None), ..Default::default() };
    let moved = t.ok("Rex leaves DOGS", p.update_pet(rex.id, homeless).await);
    assert_eq!(moved.category_id, None);
    assert_eq!(t.ok("get DOGS", p.get_category(dogs.id).await).pet_count, 1);
}

async fn orders_take_stock_and_completing_the_last_sells_the_pet(p: &dyn Petstore, t: &mut Transcript) {
    let rex = pet_with_stock(p, t, "Rex", 3).await.id;
    let first = t.ok("order 2", p.place_order(order(rex, 2)).await);
    assert_eq!(
        (first.id, first.pet_id, first.quantity, first.complete, first.ship_date),
        (oid(1), rex, 2, false, None)
    );
    assert_eq!(stock_of(p, t, rex).await, (1, Available));
    t.fails("order 2 more", p.place_order(order(rex, 2)).await, InsufficientStock);

    let second = t.ok("order the last", p.place_order(order(rex, 1)).await);
    assert_eq!(stock_of(p, t, rex).await, (0, Pending));
    t.fails("order a pending pet", p.place_order(order(rex, 1)).await, PetNotAvailable);

    let done = t.ok("complete the first", p.update_order(first.id, complete()).await);
    assert!(done.complete && done.ship_date.is_some());
    assert_eq!(stock_of(p, t, rex).await, (0, Pending), "one order is still open");
    let shipped = OrderPatch { ship_date: Some(Some(time("2026-12-01T09:00:00Z"))), ..complete() };
    let done = t.ok("complete the second", p.update_order(second.id, shipped).await);
    assert_eq!(done.ship_date, Some(time("2026-12-01T09:00:00Z")));
    assert_eq!(stock_of(p, t, rex).await, (0, Sold));
    assert_eq!(t.ok("get Rex", p.get_pet(rex).await).status, Sold);
    t.fails("order a sold pet", p.place_order(order(rex, 1)).await, PetNotAvailable);

    let of_rex = OrderFilter { pet_id: Some(rex), ..Default::default() };
    let listed = t.ok("orders of Rex", p.list_orders(of_rex.clone(), all()).await);
    let ids: Vec<OrderId> = listed.items.iter().map(|o| o.id).collect();
    assert_eq!((ids, listed.total), (vec![second.id, first.id], 2), "newest first");
    assert_eq!(t.ok("get the first", p.get_order(first.id).await), listed.items[1]);
    let open = OrderFilter { complete: Some(false), ..of_rex.clone() };
    assert_eq!(t.ok("open orders", p.list_orders(open, all()).await).total, 0);
    let closed = OrderFilter { complete: Some(true), ..of_rex };
    assert_eq!(t.ok("completed orders", p.list_orders(closed, page(1, 1)).await).items[0].id, first.id);
}

async fn cancelling_or_shrinking_an_order_returns_stock(p: &dyn Petstore, t: &mut Transcript) {
    let rex = pet_with_stock(p, t, "Rex", 1).await.id;
    let first = t.ok("order the last", p.place_order(order(rex, 1)).await);
    assert_eq!(stock_of(p, t, rex).await, (0, Pending));
    t.ok("cancel it", p.cancel_order(first.id).await);
    assert_eq!(stock_of(p, t, rex).await, (1, Available));
    t.fails("get the cancelled order", p.get_order(first.id).await, NotFound);
    t.fails("cancel it again", p.cancel_order(first.id).await, NotFound);

    let second = t.ok("order again", p.place_order(order(rex, 1)).await);
    assert_eq!(second.id, oid(2), "ids are never reused");
    let more = OrderPatch { quantity: Some(Quantity::try_from(3).unwrap()), ..Default::default() };
    t.fails("raise beyond stock", p.update_order(second.id, more.clone()).await, InsufficientStock);
    t.ok("count 3 more", p.set_inventory(rex, count(3)).await);
    assert_eq!(stock_of(p, t, rex).await, (3, Available));
    assert_eq!(t.ok("raise to 3", p.update_order(second.id, more).await).quantity, 3);
    assert_eq!(stock_of(p, t, rex).await, (1, Available));
    let fewer = OrderPatch { quantity: Some(Quantity::try_from(1).unwrap()), ..Default::default() };
    assert_eq!(t.ok("lower to 1", p.update_order(second.id, fewer).await).quantity, 1);
    assert_eq!(stock_of(p, t, rex).await, (3, Available));

    let date = OrderPatch { ship_date: Some(Some(time("2026-12-24T08:00:00Z"))), ..Default::default() };
    let dated = t.ok("set a ship date", p.update_order(second.id, date).await);
    assert_eq!((dated.ship_date, dated.complete), (Some(time("2026-12-24T08:00:00Z")), false));
}

async fn a_counter_sale_sells_the_last_one(p: &dyn Petstore, t: &mut Transcript) {
    let rex = pet_with_stock(p, t, "Rex", 2).await.id;
    let first = t.ok("sell one", p.place_order(sale(rex, 1)).await);
    assert!(first.complete && first.ship_date.is_some());
    assert_eq!(stock_of(p, t, rex).await, (1, Available));
    let dated = NewOrder { ship_date: Some(time("2026-11-30T16:45:00Z")), ..sale(rex, 1) };
    let last = t.ok("sell the last", p.place_order(dated).await);
    assert_eq!((last.complete, last.ship_date), (true, Some(time("2026-11-30T16:45:00Z"))));
    assert_eq!(stock_of(p, t, rex).await, (0, Sold));
}

async fn stock_counts_move_the_status_and_are_audited(p: &dyn Petstore, t: &mut Transcript) {
    let rex = t.ok("create Rex", p.create_pet(pet("Rex")).await).id;
    assert_eq!(stock_of(p, t, rex).await, (0, Available), "a new pet has no stock");
    t.ok("count 0", p.set_inventory(rex, count(0)).await);
    assert_eq!(stock_of(p, t, rex).await, (0, Sold), "0 with no open orders is sold");

    assert_eq!(t.ok("count 5", p.set_inventory(rex, count(5)).await).status, Available);
    t.ok("count 5 again", p.set_inventory(rex, count(5)).await);
    let item = t.ok("delivery", p.adjust_inventory(rex, adjustment(3, "Delivery from the breeder")).await);
    assert_eq!((item.pet_id, item.pet_name.as_str(), item.quantity), (rex, "Rex", 8));
    assert_eq!(t.ok("loss", p.adjust_inventory(rex, adjustment(-2, "Returned")).await).quantity, 6);
    t.fails("remove too many", p.adjust_inventory(rex, adjustment(-7, "Lost")).await, InsufficientStock);
    t.fails(
        "beyond the maximum",
        p.adjust_inventory(rex, adjustment(1_000_000, "Flood")).await,
        ValidationFailed,
    );

    let reserved = t.ok("order all 6", p.place_order(order(rex, 6)).await);
    assert_eq!(stock_of(p, t, rex).await, (0, Pending));
    assert_eq!(t.ok("two more", p.adjust_inventory(rex, adjustment(2, "Found two")).await).status, Available);
    assert_eq!(t.ok("count 0 with an open order", p.set_inventory(rex, count(0)).await).status, Pending);
    t.ok("cancel the order", p.cancel_order(reserved.id).await);
    assert_eq!(stock_of(p, t, rex).await, (6, Available));
    assert_eq!(t.ok("count 0 without orders", p.set_inventory(rex, count(0)).await).status, Sold);

    let trail = t.ok("the trail", p.list_adjustments(rex, all()).await);
    let rows: Vec<(i64, &str, i64)> =
        trail.items.iter().map(|a| (a.delta, a.reason.as_str(), a.quantity_after)).collect();
    let expected = [
        (-6, "stock set to 0", 0),
        (-2, "stock set to 0", 0),
        (2, "Found two", 2),
        (-2, "Returned", 6),
        (3, "Delivery from the breeder", 8),
        (5, "stock set to 5", 5),
    ];
    assert_eq!(
        (rows, trail.total),
        (expected.to_vec(), 6),
        "newest first; no entry for a count that changed nothing"
    );
    assert!(trail.items.iter().all(|a| a.pet_id == rex));
    let ids: Vec<i64> = trail.items.iter().map(|a| a.id.get()).collect();
    assert_eq!(ids, [6, 5, 4, 3, 2, 1]);
    let second_page = t.ok("the trail, page 2", p.list_adjustments(rex, page(4, 4)).await);
    assert_eq!((second_page.items.len(), second_page.total), (2, 6));
}

async fn completed_orders_are_final(p: &dyn Petstore, t: &mut Transcript) {
    let rex = pet_with_stock(p, t, "Rex", 2).await.id;
    let done = t.ok("order", p.place_order(order(rex, 1)).await);
    t.ok("complete it", p.update_order(done.id, complete()).await);
    let more = OrderPatch { quantity: Some(Quantity::try_from(2).unwrap()), ..Default::default() };
    t.fails("change a completed order", p.update_order(done.id, more).await, OrderCompleted);
    t.fails("complete it again", p.update_order(done.id, complete()).await, OrderCompleted);
    t.fails("cancel a completed order", p.cancel_order(done.id).await, OrderCompleted);
    t.fails("empty patch", p.update_order(done.id, OrderPatch::default()).await, ValidationFailed);
    let open = t.ok("another order", p.place_order(order(rex, 1)).await);
    t.fails(
        "empty patch on an open order",
        p.update_order(open.id, OrderPatch::default()).await,
        ValidationFailed,
    );
    assert_eq!(stock_of(p, t, rex).await, (0, Pending));
}

async fn references_and_deletions_are_checked(p: &dyn Petstore, t: &mut Transcript) {
    t.fails("create in category 9", p.create_pet(pet_in("Rex", cid(9))).await, InvalidReference);
    t.fails("order pet 9", p.place_order(order(pid(9), 1)).await, InvalidReference);
    let rex = pet_with_stock(p, t, "Rex", 1).await;
    assert_eq!(rex.id, pid(1), "a refused create takes no id");
    t.fails("move into category 9", p.replace_pet(rex.id, pet_in("Rex", cid(9))).await, InvalidReference);
    let into_nothing = PetPatch { category_id: Some(Some(cid(9))), ..Default::default() };
    t.fails("patch into category 9", p.update_pet(rex.id, into_nothing).await, InvalidReference);
    t.fails("empty patch", p.update_pet(rex.id, PetPatch::default()).await, ValidationFailed);

    let full =
        NewPet { status: Sold, description: Some(Description::parse("Old boy").unwrap()), ..pet("Rex II") };
    let replaced = t.ok("replace Rex", p.replace_pet(rex.id, full).await);
    assert_eq!((replaced.name.as_str(), replaced.status), ("Rex II", Sold));
    assert_eq!((replaced.description.as_deref(), replaced.created_at), (Some("Old boy"), rex.created_at));
    let partial = PetPatch { status: Some(Available), description: Some(None), ..Default::default() };
    let patched = t.ok("patch Rex", p.update_pet(rex.id, partial).await);
    assert_eq!((patched.name.as_str(), patched.status, patched.description), ("Rex II", Available, None));

    t.ok("order Rex", p.place_order(order(rex.id, 1)).await);
    t.fails("delete Rex", p.delete_pet(rex.id).await, PetHasOrders);
    let fido = t.ok("create Fido", p.create_pet(pet("Fido")).await);
    t.ok("delete Fido", p.delete_pet(fido.id).await);
    let left = t.ok("list", p.list_pets(PetFilter::default(), all()).await);
    assert_eq!((names(&left), left.total), (vec!["Rex II"], 1));
}

async fn inventory_is_listed_lowest_first_with_filters(p: &dyn Petstore, t: &mut Transcript) {
    for (text, stock) in [("Rex", 5), ("Bella", 0), ("Max", 2), ("Luna", 10)] {
        pet_with_stock(p, t, text, stock).await;
    }
    let rows = |items: &Paged<InventoryItem>| -> Vec<(String, i64)> {
        items.items.iter().map(|i| (i.pet_name.clone(), i.quantity)).collect()
    };
    let s =
        |v: &[(&str, i64)]| -> Vec<(String, i64)> { v.iter().map(|(n, q)| (n.to_string(), *q)).collect() };

    let listed = t.ok("all", p.list_inventory(InventoryFilter::default(), all()).await);
    assert_eq!(rows(&listed), s(&[("Bella", 0), ("Max", 2), ("Rex", 5), ("Luna", 10)]));
    assert_eq!(listed.total, 4);
    assert_eq!(listed.items[0].status, Sold, "counting 0 on an available pet without orders sells it");

    let low = InventoryFilter { below_quantity: Some(3), ..Default::default() };
    let listed = t.ok("below 3", p.list_inventory(low, all()).await);
    assert_eq!((rows(&listed), listed.total), (s(&[("Bella", 0), ("Max", 2)]), 2));
    let sold = InventoryFilter { statuses: vec![Sold], ..Default::default() };
    assert_eq!(rows(&t.ok("sold", p.list_inventory(sold, all()).await)), s(&[("Bella", 0)]));
    let filter = InventoryFilter { statuses: vec![Available, Pending], below_quantity: Some(6) };
    assert_eq!(
        rows(&t.ok("available below 6", p.list_inventory(filter, all()).await)),
        s(&[("Max", 2), ("Rex", 5)])
    );
    let paged = t.ok("page 2", p.list_inventory(InventoryFilter::default(), page(1, 1)).await);
    assert_eq!((rows(&paged), paged.total), (s(&[("Max", 2)]), 4));

    let rex = t.ok("Rex's stock", p.get_inventory(pid(1)).await);
    assert_eq!((rex.pet_id, rex.pet_name.as_str(), rex.status, rex.quantity), (pid(1), "Rex", Available, 5));
}

// The failures only a remote has.

#[tokio::test]
async fn a_client_of_a_closed_port_reports_unreachable_quickly() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}");
    let client = Client::new(&base, crate::helpers::KEY).unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), client.get_pet(pid(1))).await;
    let e = answer.expect("no answer within 5 s").unwrap_err();
    assert_eq!(e.code, Unreachable, "{e:?}");
    assert!(e.message.starts_with(&format!("cannot reach {base}: connection refused")), "{}", e.message);
}

#[tokio::test]
async fn a_client_with_a_wrong_key_is_unauthorized() {
    let app = crate::helpers::spawn_app().await;
    let client = Client::new(&app.base_url, "wrong-key-0123456789abcdefghij").unwrap();
    let e = client.list_pets(PetFilter::default(), all()).await.unwrap_err();
    assert_eq!(e, Error::new(Unauthorized, "the API key is not valid"));
    assert_eq!(client.create_pet(pet("Rex")).await.unwrap_err().code, Unauthorized);
    assert!(!format!("{client:?}").contains("wrong-key"));
}

#[tokio::test]
async fn a_trailing_slash_on_the_base_url_changes_nothing() {
    let app = crate::helpers::spawn_app().await;
    let client = Client::new(&format!("{}/", app.base_url), crate::helpers::KEY).unwrap();
    let rex = client.create_pet(pet("Rex")).await.unwrap();
    assert_eq!(client.get_pet(rex.id).await.unwrap(), rex);
    assert_eq!(client.base_url(), app.base_url);
}
