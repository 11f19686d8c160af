//! The window and the local API on one database at once: orders placed through the app's
//! commands and through its REST API at the same moment never oversell, and cancellations
//! and completions racing with placements keep every pet status and stock rule (docs/ARCHITECTURE.md, "Pet status and stock rules").

use std::sync::{Barrier, Mutex};

use petstore::client::Client;
use petstore::domain::{NewOrder, OrderId, OrderPatch, PetId, Quantity};
use petstore::{ErrorCode, Petstore};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response};
use tauri::webview::InvokeRequest;
use tauri::{Manager, WebviewWindow};

use crate::helpers::{TestApp, app};

/// The app's window, which (unlike the app itself) many threads may call commands through
/// at once, as the UI's concurrent `invoke`s do.
#[derive(Clone)]
pub struct Window(WebviewWindow<MockRuntime>);

impl Window {
    pub fn of(app: &TestApp) -> Self {
        Self(app.app.get_webview_window("main").expect("the test app has its window"))
    }

    /// A command as the UI calls it; `Err` holds the error object.
    pub fn call<T: DeserializeOwned>(&self, cmd: &str, args: Value) -> Result<T, Value> {
        let request = InvokeRequest {
            cmd: cmd.into(),
            callback: tauri::ipc::CallbackFn(0),
            error: tauri::ipc::CallbackFn(1),
            url: if cfg!(windows) { "http://tauri.localhost" } else { "tauri://localhost" }.parse().unwrap(),
            body: tauri::ipc::InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        };
        get_ipc_response(&self.0, request).map(|body| body.deserialize::<T>().unwrap())
    }

    pub fn ok(&self, cmd: &str, args: Value) -> Value {
        self.call(cmd, args).unwrap_or_else(|e| panic!("{cmd} failed: {e}"))
    }
}

/// The app's local API, as a till would use it.
fn till(app: &TestApp) -> Client {
    let address = app.ok("get_status", json!({}))["localApi"]["address"].as_str().unwrap().to_owned();
    let key: String = app.call("get_local_api_key", json!({})).unwrap();
    Client::new(&address, &key).unwrap()
}

/// The code as the UI sees it (`insufficient_stock`).
fn code(code: ErrorCode) -> String {
    serde_json::to_value(code).unwrap().as_str().unwrap().to_owned()
}

fn pet_with_stock(app: &TestApp, stock: i64) -> i64 {
    let pet = app.ok("create_pet", json!({ "pet": { "name": "Popular" } }))["id"].as_i64().unwrap();
    app.ok("set_inventory", json!({ "petId": pet, "update": { "quantity": stock } }));
    pet
}

fn new_order(pet: i64, quantity: i64) -> NewOrder {
    NewOrder {
        customer_name: None,
        customer_phone: None,
        note: None,
        pet_id: PetId::try_from(pet).unwrap(),
        quantity: Quantity::try_from(quantity).unwrap(),
        ship_date: None,
        complete: false,
        placed_at: None,
    }
}

/// Every order of `pet`: (id, quantity, complete).
fn orders_of(app: &TestApp, pet: i64) -> Vec<(i64, i64, bool)> {
    let mut all = Vec::new();
    loop {
        let query = json!({ "query": { "petId": pet, "complete": null, "limit": 100, "offset": all.len() } });
        let page = app.ok("list_orders", query);
        let items = page["items"].as_array().unwrap();
        all.extend(items.iter().map(|o| {
            (o["id"].as_i64().unwrap(), o["quantity"].as_i64().unwrap(), o["complete"].as_bool().unwrap())
        }));
        if items.is_empty() || all.len() as u64 >= page["total"].as_u64().unwrap() {
            return all;
        }
    }
}

/// The status and stock rules (docs/ARCHITECTURE.md) for one pet nobody set a status on by hand: stock never below 0, stock
/// plus ordered quantities equal to what was stocked, and the status the stock and the
/// open orders call for.
fn check_rules(app: &TestApp, pet: i64, stocked: i64) -> (i64, Vec<(i64, i64, bool)>) {
    let item = app.ok("get_inventory", json!({ "petId": pet }));
    let stock = item["quantity"].as_i64().unwrap();
    let orders = orders_of(app, pet);
    assert!(stock >= 0);
    assert_eq!(stock + orders.iter().map(|o| o.1).sum::<i64>(), stocked, "nothing oversold, nothing lost");
    let open = orders.iter().filter(|o| !o.2).count();
    let expected = match (stock, open) {
        (s, _) if s > 0 => "available",
        (_, 0) => "sold",
        _ => "pending",
    };
    assert_eq!(item["status"], expected, "stock {stock}, {open} open orders");
    (stock, orders)
}

#[test]
fn the_window_and_the_local_api_ordering_at_once_sell_exactly_the_stock() {
    const STOCK: i64 = 30;
    const EACH: usize = 40;
    let app = app();
    let pet = pet_with_stock(&app, STOCK);
    let client = till(&app);
    let window = Window::of(&app);
    let start = Barrier::new(2 * EACH);

    let outcomes: Vec<Result<i64, String>> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for _ in 0..EACH {
            let (window, start) = (&window, &start);
            handles.push(s.spawn(move || {
                start.wait();
                window
                    .call::<Value>("place_order", json!({ "order": { "petId": pet } }))
                    .map(|o| o["id"].as_i64().unwrap())
                    .map_err(|e| e["code"].as_str().unwrap().to_owned())
            }));
        }
        for _ in 0..EACH {
            let (client, start) = (&client, &start);
            handles.push(s.spawn(move || {
                // Connected before the start, so the HTTP side does not begin a handshake
                // behind the window's in-process calls.
                tauri::async_runtime::block_on(client.get_inventory(PetId::try_from(pet).unwrap())).unwrap();
                start.wait();
                tauri::async_runtime::block_on(client.place_order(new_order(pet, 1)))
                    .map(|o| o.id.get())
                    .map_err(|e| code(e.code))
            }));
        }
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let (window, api) = outcomes.split_at(EACH);
    let sold = |side: &[Result<i64, String>]| side.iter().filter(|o| o.is_ok()).count() as i64;
    for refused in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        assert!(refused == "insufficient_stock" || refused == "pet_not_available", "{refused}");
    }
    println!(
        "one pet, {STOCK} in stock: {} sold through the window, {} through the local API",
        sold(window),
        sold(api)
    );
    assert_eq!(sold(window) + sold(api), STOCK, "exactly the stock, never more");
    let (stock, orders) = check_rules(&app, pet, STOCK);
    assert_eq!((stock, orders.len() as i64), (0, STOCK));
}

/// What one worker did; refusals are allowed only with the codes the race explains.
#[derive(Default)]
struct Tally {
    placed: Vec<i64>,
    cancelled: Vec<i64>,
    completed: Vec<i64>,
}

#[test]
fn cancellations_and_completions_racing_placements_keep_every_rule() {
    const STOCK: i64 = 30;
    const OPS: usize = 150;
    let app = app();
    let pet = pet_with_stock(&app, STOCK);
    let client = till(&app);
    let window = Window::of(&app);
    // Orders any worker may cancel or complete: placed by anyone, through either door.
    let pool: Mutex<Vec<i64>> = Mutex::new(Vec::new());
    let start = Barrier::new(4);

    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for worker in 0..4usize {
            let (app, client, pool, start) = (&window, &client, &pool, &start);
            handles.push(s.spawn(move || {
                let mut tally = Tally::default();
                start.wait();
                for i in 0..OPS {
                    // Workers 0 and 1 use the window, 2 and 3 the local API; each
                    // places, cancels and completes in its own rhythm.
                    let through_window = worker < 2;
                    let picked = || pool.lock().unwrap().get((i * 7 + worker) % 16).copied();
                    match (i + worker) % 3 {
                        0 => {
                            let quantity = (i % 2 + 1) as i64;
                            let placed = if through_window {
                                app.call::<Value>(
                                    "place_order",
                                    json!({ "order": { "petId": pet, "quantity": quantity } }),
                                )
                                .map(|o| o["id"].as_i64().unwrap())
                                .map_err(|e| e["code"].as_str().unwrap().to_owned())
                            } else {
                                tauri::async_runtime::block_on(client.place_order(new_order(pet, quantity)))
                                    .map(|o| o.id.get())
                                    .map_err(|e| code(e.code))
                            };
                            match placed {
                                Ok(id) => {
                                    tally.placed.push(id);
                                    let mut pool = pool.lock().unwrap();
                                    pool.insert(0, id);
                                    pool.truncate(16);
                                }
                                Err(code) => assert!(
                                    code == "insufficient_stock" || code == "pet_not_available",
                                    "place: {code}"
                                ),
                            }
                        }
                        step => {
                            let Some(id) = picked() else { continue };
                            let cancel = step == 1;
                            let outcome = match (through_window, cancel) {
                                (true, true) => {
                                    app.call::<Value>("cancel_order", json!({ "id": id })).map(drop)
                                }
                                (true, false) => app
                                    .call::<Value>(
                                        "update_order",
                                        json!({ "id": id, "patch": { "complete": true } }),
                                    )
                                    .map(drop),
                                (false, true) => tauri::async_runtime::block_on(
                                    client.cancel_order(OrderId::try_from(id).unwrap()),
                                )
                                .map(drop)
                                .map_err(|e| json!({ "code": code(e.code) })),
                                (false, false) => tauri::async_runtime::block_on(client.update_order(
                                    OrderId::try_from(id).unwrap(),
                                    OrderPatch { complete: Some(true), ..Default::default() },
                                ))
                                .map(drop)
                                .map_err(|e| json!({ "code": code(e.code) })),
                            };
                            match outcome {
                                Ok(()) if cancel => tally.cancelled.push(id),
                                Ok(()) => tally.completed.push(id),
                                // Someone else got there first (a cancelled order is kept).
                                Err(e) => assert!(
                                    e["code"] == "order_cancelled" || e["code"] == "order_completed",
                                    "{}: {e}",
                                    if cancel { "cancel" } else { "complete" }
                                ),
                            }
                        }
                    }
                }
                tally
            }));
        }
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let all = |f: fn(&Tally) -> &Vec<i64>| {
        let mut ids: Vec<i64> = tallies.iter().flat_map(|t| f(t).iter().copied()).collect();
        ids.sort();
        ids
    };
    let (placed, cancelled, completed) = (all(|t| &t.placed), all(|t| &t.cancelled), all(|t| &t.completed));
    let (_, orders) = check_rules(&app, pet, STOCK);
    println!(
        "racing on one pet ({STOCK} in stock): {} placed, {} cancelled, {} completed, {} left",
        placed.len(),
        cancelled.len(),
        completed.len(),
        orders.len()
    );
    let mut unique = cancelled.clone();
    unique.dedup();
    assert_eq!(unique, cancelled, "no order was cancelled twice");
    assert!(
        completed.iter().all(|id| cancelled.binary_search(id).is_err()),
        "no order both cancelled and completed"
    );
    let mut left: Vec<i64> =
        placed.iter().copied().filter(|id| cancelled.binary_search(id).is_err()).collect();
    left.sort();
    let mut existing: Vec<i64> = orders.iter().map(|o| o.0).collect();
    existing.sort();
    assert_eq!(existing, left, "exactly the placed and not cancelled orders exist");
    for id in &completed {
        assert!(orders.iter().any(|o| o.0 == *id && o.2), "order {id} stays completed");
    }
    assert!(!placed.is_empty() && !cancelled.is_empty() && !completed.is_empty(), "the race happened");
}
