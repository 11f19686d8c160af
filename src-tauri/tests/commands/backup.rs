//! Backup from Settings while the shop keeps selling: orders go on through the window's
//! commands and the local API; every backup must restore cleanly (integrity, foreign keys,
//! schema: `store::restore` checks them all) with every pet's stock plus ordered
//! quantities equal to what was stocked.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use petstore::client::Client;
use petstore::domain::{NewOrder, OrderFilter, Page, PetId, Quantity};
use petstore::{Petstore, Store};
use serde_json::{Value, json};

use crate::concurrency::Window;
use crate::helpers::{TestApp, app};

const STOCK: i64 = 5000;

/// How long the test waits for the next 10 orders: they take milliseconds, so only clients
/// that died or hang miss it, and the test then fails with a message instead of waiting
/// until CI's own limit.
const ORDERS_DEADLINE: Duration = Duration::from_secs(60);

/// Tells the order placers to stop when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn pet_with_stock(app: &TestApp, name: &str) -> i64 {
    let pet = app.ok("create_pet", json!({ "pet": { "name": name } }))["id"].as_i64().unwrap();
    app.ok("set_inventory", json!({ "petId": pet, "update": { "quantity": STOCK } }));
    pet
}

/// Stock plus every order's quantity, per pet, in the database at `path`.
fn stocked(path: &std::path::Path, pets: &[i64]) -> Vec<i64> {
    tauri::async_runtime::block_on(async {
        let store = Store::open(path).unwrap();
        let mut totals = Vec::new();
        for pet in pets {
            let pet = PetId::try_from(*pet).unwrap();
            let stock = store.get_inventory(pet).await.unwrap().quantity;
            let (mut ordered, mut offset) = (0, 0);
            loop {
                let filter = OrderFilter { pet_id: Some(pet), ..OrderFilter::default() };
                let page = store.list_orders(filter, Page::new(100, offset).unwrap()).await.unwrap();
                ordered += page.items.iter().map(|o| o.quantity).sum::<i64>();
                offset += page.items.len() as u32;
                if page.items.is_empty() || offset as u64 >= page.total {
                    break;
                }
            }
            totals.push(stock + ordered);
        }
        totals
    })
}

/// The window: orders placed, completed and cancelled through its commands until `stop`.
/// A fixed mix: every pet, quantities 1 to 3, a third each kept open, cancelled and completed.
fn window_orders(app: &Window, pets: &[i64], seed: usize, stop: &AtomicBool, placed: &AtomicUsize) {
    for i in seed.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let pet = pets[i % pets.len()];
        let quantity = (i % 3 + 1) as i64;
        let order = app.ok("place_order", json!({ "order": { "petId": pet, "quantity": quantity } }));
        placed.fetch_add(1, Ordering::Relaxed);
        match i / pets.len() % 3 {
            0 => drop(app.ok("cancel_order", json!({ "id": order["id"] }))),
            1 => drop(app.ok("update_order", json!({ "id": order["id"], "patch": { "complete": true } }))),
            _ => {}
        }
    }
}

/// A till on the local API, placing orders until `stop`.
fn till_orders(address: &str, key: &str, pets: &[i64], stop: &AtomicBool, placed: &AtomicUsize) {
    let client = Client::new(address, key).unwrap();
    tauri::async_runtime::block_on(async {
        for i in 0.. {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let pet = PetId::try_from(pets[i % pets.len()]).unwrap();
            let new = NewOrder {
                customer_name: None,
                customer_phone: None,
                note: None,
                pet_id: pet,
                quantity: Quantity::default(),
                ship_date: None,
                complete: false,
                placed_at: None,
            };
            client.place_order(new).await.unwrap();
            placed.fetch_add(1, Ordering::Relaxed);
        }
    });
}

#[test]
fn backups_taken_while_orders_go_on_each_restore_whole() {
    let app = app();
    let pets: Vec<i64> = (0..3).map(|i| pet_with_stock(&app, &format!("Pet {i}"))).collect();
    let address = app.ok("get_status", json!({}))["localApi"]["address"].as_str().unwrap().to_owned();
    let key: String = app.call("get_local_api_key", json!({})).unwrap();
    let stop = AtomicBool::new(false);
    let placed = AtomicUsize::new(0);
    let out = tempfile::tempdir().unwrap();
    let window = Window::of(&app);

    let written = std::thread::scope(|s| {
        // However this closure ends, a panic included, the clients stop: the scope waits for
        // them, and one that never stops would hold the test until CI's own limit.
        let _stop_clients = StopOnDrop(&stop);
        let mut clients = Vec::new();
        for seed in 0..2u64 {
            let (window, pets, stop, placed) = (&window, &pets, &stop, &placed);
            let client = s.spawn(move || window_orders(window, pets, seed as usize, stop, placed));
            clients.push((format!("window {seed}"), client));
        }
        let (pets, stop, placed, address, key) = (&pets, &stop, &placed, &address, &key);
        let till = s.spawn(move || till_orders(address, key, pets, stop, placed));
        clients.push(("till".to_owned(), till));

        let mut written = Vec::new();
        for n in 0..4 {
            let before = placed.load(Ordering::Relaxed);
            let deadline = Instant::now() + ORDERS_DEADLINE;
            while placed.load(Ordering::Relaxed) < before + 10 {
                if Instant::now() >= deadline {
                    let stopped: Vec<&str> = clients
                        .iter()
                        .filter(|(_, c)| c.is_finished())
                        .map(|(name, _)| name.as_str())
                        .collect();
                    panic!(
                        "before backup {n}: {} of 10 orders placed in {} s; clients that stopped: {stopped:?} \
                         (a panic above says why)",
                        placed.load(Ordering::Relaxed) - before,
                        ORDERS_DEADLINE.as_secs()
                    );
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let to = out.path().join(format!("backup-{n}.db"));
            let path: String =
                app.call("backup_database", json!({ "to": to.display().to_string() })).unwrap();
            assert_eq!(path, to.display().to_string());
            written.push(to);
        }
        written
    });

    let mut orders = Vec::new();
    for (n, backup) in written.iter().enumerate() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(backup).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "a backup is private");
        }
        let restored = out.path().join(format!("restored-{n}.db"));
        let report =
            petstore::store::restore(backup, &restored).unwrap_or_else(|e| panic!("backup {n}: {e}"));
        assert_eq!(stocked(&restored, &pets), vec![STOCK; pets.len()], "backup {n}: stock + ordered per pet");
        orders.push(report.orders);
    }
    println!(
        "app backup: 4 backups while {} orders were placed; orders in each: {orders:?}",
        placed.into_inner()
    );
    assert!(orders.windows(2).all(|w| w[0] < w[1]), "the shop kept selling between backups: {orders:?}");
    let live = app.ok("get_status", json!({}))["target"].as_str().unwrap().to_owned();
    assert_eq!(stocked(std::path::Path::new(&live), &pets), vec![STOCK; pets.len()]);
}

#[test]
fn a_backup_is_refused_with_a_clear_message_and_overwrites_nothing() {
    let app = app();
    let taken = app.dir.path().join("taken.db");
    std::fs::write(&taken, "not ours").unwrap();
    let cases: [(Value, &str); 4] = [
        (json!(taken.display().to_string()), "already exists"),
        (json!("petstore-backup.db"), "not a full path"),
        (json!("   "), "type where the backup goes"),
        (json!(app.dir.path().join("no/such/folder.db").display().to_string()), "cannot write the backup"),
    ];
    for (to, words) in cases {
        let error = app.fails("backup_database", json!({ "to": to }));
        assert_eq!(error["code"], "validation_failed", "{error}");
        assert!(error["message"].as_str().unwrap().contains(words), "{to}: {error}");
    }
    assert_eq!(std::fs::read(&taken).unwrap(), b"not ours");
    let missing = app.fails("backup_database", json!({}));
    assert_eq!(missing["code"], "validation_failed");
}

#[test]
fn the_suggested_destination_is_a_free_dated_file_name() {
    let app = app();
    let path: String = app.call("suggest_backup_path", json!({})).unwrap();
    let path = std::path::PathBuf::from(path);
    assert!(path.is_absolute() && !path.exists(), "{}", path.display());
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let today = petstore::domain::Timestamp::now().as_datetime().format("%Y-%m-%d").to_string();
    assert!(name.starts_with(&format!("petstore-backup-{today}")) && name.ends_with(".db"), "{name}");
}
