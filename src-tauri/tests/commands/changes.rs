//! What the window hears after a change: the "petstore://changed" event names the rows that
//! changed (read from the change feed), so a screen updates them; the Pets screen's rows
//! carry their stock, one call a page.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use petstore::Seeding;
use petstore_desktop::changes::{DataChanged, Follower, MOST_ROWS};
use serde_json::{Value, json};
use tauri::Listener;

use crate::helpers::{TestApp, app, pet_query};

fn pet(app: &TestApp, name: &str, stock: i64) -> i64 {
    let pet =
        app.ok("create_pet", json!({ "pet": { "name": name, "price": "10.00" } }))["id"].as_i64().unwrap();
    app.ok("set_inventory", json!({ "petId": pet, "update": { "quantity": stock } }));
    pet
}

/// The events heard, merged, from now until `done` holds of them (or 5 s pass).
fn heard(events: &mpsc::Receiver<Value>, done: impl Fn(&Value) -> bool) -> Value {
    let mut merged = json!({ "reset": false, "pets": [], "stock": [], "categories": [], "orders": [], "settings": false, "activity": false });
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done(&merged) {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(event) = events.recv_timeout(left) else { panic!("only heard {merged}") };
        for key in ["reset", "settings", "activity"] {
            merged[key] = json!(merged[key].as_bool().unwrap() || event[key].as_bool().unwrap());
        }
        for key in ["pets", "stock", "categories", "orders"] {
            let mut ids: Vec<i64> =
                merged[key].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
            ids.extend(event[key].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()));
            ids.sort();
            ids.dedup();
            merged[key] = json!(ids);
        }
    }
    merged
}

fn listen(app: &TestApp) -> mpsc::Receiver<Value> {
    let (tx, rx) = mpsc::channel();
    app.app.listen_any("petstore://changed", move |event| {
        let _ = tx.send(serde_json::from_str(event.payload()).unwrap());
    });
    rx
}

/// Waits until nothing more is heard for a while, so the next `heard` starts afresh.
fn quiet(events: &mpsc::Receiver<Value>) {
    while events.recv_timeout(Duration::from_millis(300)).is_ok() {}
}

#[test]
fn a_sale_tells_the_window_its_order_and_the_pets_stock() {
    let app = app();
    let events = listen(&app);
    let rex = pet(&app, "Rex", 2);
    let created = heard(&events, |h| h["stock"] == json!([rex]));
    assert_eq!(created["pets"], json!([rex]));
    assert_eq!(created["reset"], json!(false));
    quiet(&events);

    // One sold of two: the order and the stock, not the pet (still available).
    let order = app.ok("place_order", json!({ "order": { "petId": rex, "quantity": 1, "complete": true } }));
    let sale = heard(&events, |h| h["orders"] == json!([order["id"]]) && h["stock"] == json!([rex]));
    assert_eq!(sale["pets"], json!([]), "{sale}");
    assert_eq!((sale["reset"].clone(), sale["settings"].clone()), (json!(false), json!(false)));
    // A sale's entry in the activity log is its order's news (the feed leaves it out).
    assert_eq!(sale["activity"], json!(false), "{sale}");
    quiet(&events);

    // The last one: the pet is sold, a change of the pet itself.
    let last = app.ok("place_order", json!({ "order": { "petId": rex, "quantity": 1, "complete": true } }));
    let sold_out = heard(&events, |h| h["orders"] == json!([last["id"]]) && h["pets"] == json!([rex]));
    assert_eq!(sold_out["stock"], json!([rex]));
    quiet(&events);

    // The shop's settings have no ids: the event says they changed.
    let settings = json!({ "shopName": "Paws", "currency": "EUR", "timeZone": "UTC", "lowStockBelow": 3 });
    app.ok("save_shop_settings", json!({ "settings": settings }));
    let saved = heard(&events, |h| h["settings"] == json!(true));
    assert_eq!(saved["pets"], json!([]));
}

#[test]
fn a_category_and_a_deleted_pet_are_named_too() {
    let app = app();
    let events = listen(&app);
    let dogs = app.ok("create_category", json!({ "category": { "name": "Dogs" } }))["id"].as_i64().unwrap();
    let rex = pet(&app, "Rex", 1);
    heard(&events, |h| h["categories"] == json!([dogs]) && h["pets"] == json!([rex]));
    quiet(&events);
    app.ok("delete_pet", json!({ "id": rex }));
    // With its entry in the activity log, for the log's screen.
    heard(&events, |h| h["pets"] == json!([rex]) && h["activity"] == json!(true));
}

#[test]
fn pet_rows_carry_their_stock() {
    let app = app();
    let rex = pet(&app, "Rex", 3);
    let tom = pet(&app, "Tom", 0);
    let rows = app.ok("list_pet_rows", pet_query(json!({ "sort": "name" })));
    assert_eq!(rows["total"], 2);
    let items = rows["items"].as_array().unwrap();
    assert_eq!(
        items
            .iter()
            .map(|r| (r["id"].as_i64().unwrap(), r["name"].clone(), r["stock"].clone()))
            .collect::<Vec<_>>(),
        vec![(rex, json!("Rex"), json!(3)), (tom, json!("Tom"), json!(0))]
    );
    // The pet's own fields are all there, as list_pets gives them.
    let pets = app.ok("list_pets", pet_query(json!({ "sort": "name" })));
    let mut row = items[0].clone();
    row.as_object_mut().unwrap().remove("stock");
    assert_eq!(row, pets["items"][0]);
    // The screen's filters apply: one pet by id, as a changed row is read again.
    let one = app.ok("list_pet_rows", pet_query(json!({ "ids": [tom] })));
    assert_eq!((one["total"].clone(), one["items"][0]["stock"].clone()), (json!(1), json!(0)));
}

#[test]
fn a_bulk_load_or_too_many_changes_make_the_window_reload() {
    tauri::async_runtime::block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let store = petstore::Store::open(dir.path().join("petstore.db")).unwrap();
        let mut follower = Follower::start(&store).await;
        assert!(follower.read(&store, &[]).await.is_empty(), "nothing changed yet");

        // Demo data is the whole shop at once: a reset, not thousands of ids.
        store.seed(3, Box::new(|_| {})).await.unwrap();
        assert_eq!(follower.read(&store, &[]).await, DataChanged::reset());
        // And reading goes on from there.
        assert!(follower.read(&store, &[]).await.is_empty());

        // More changes than are told row by row: a reset too.
        let pets = petstore::Petstore::list_pets(
            &store,
            Default::default(),
            petstore::domain::Page::new(100, 0).unwrap(),
        )
        .await
        .unwrap();
        let (mut made, mut round) = (0, 0);
        while made < MOST_ROWS {
            round += 1;
            for p in &pets.items {
                // One in, then out again: the stock never goes below what it was.
                let delta = if round % 2 == 1 { 1 } else { -1 };
                let adjustment =
                    serde_json::from_value(json!({ "delta": delta, "reason": "count" })).unwrap();
                petstore::Petstore::adjust_inventory(&store, p.id, adjustment).await.unwrap();
                made += 1;
            }
        }
        assert_eq!(follower.read(&store, &[]).await, DataChanged::reset());
    });
}
