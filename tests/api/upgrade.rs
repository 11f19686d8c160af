//! Upgrades: every database an earlier schema version made (tests/fixtures, each made by
//! that release's own binary) opens with today's `Store`, migrates to the latest schema,
//! and keeps every row, sound and usable. The figures are those tests/fixtures/README.md
//! records for each fixture.

use std::path::{Path, PathBuf};

use petstore::domain::*;
use petstore::store::SCHEMA_VERSION;
use petstore::{Petstore, Store};
use rusqlite::Connection;

use crate::support::database::{one, stocked};

/// What one fixture holds, as recorded when it was made.
struct Fixture {
    file: &'static str,
    version: usize,
    categories: i64,
    /// Pets by status: available, pending, sold.
    pets: (i64, i64, i64),
    /// Open and completed orders, and the units they hold.
    orders: (i64, i64, i64),
    adjustments: i64,
    stock: i64,
    /// Sum over every pet of id × (stock + ordered quantities): catches a unit moved
    /// between pets, which the totals alone would not.
    stocked_fingerprint: i64,
    /// Stock plus ordered quantities of every pet that has orders.
    stocked: &'static [(i64, i64)],
    /// A pet in stock to place an order on, its name, and a category name.
    pet: (i64, &'static str),
    category: &'static str,
}

const FIXTURES: &[Fixture] = &[Fixture {
    file: "schema-v1.db",
    version: 1,
    categories: 9,
    pets: (187, 2, 14),
    orders: (6, 8, 17),
    adjustments: 5,
    stock: 2532,
    stocked_fingerprint: 265_836,
    stocked: &[
        (1, 13),
        (2, 15),
        (3, 9),
        (5, 14),
        (8, 24),
        (13, 6),
        (21, 2),
        (34, 17),
        (55, 24),
        (201, 15),
        (202, 3),
        (203, 1),
    ],
    pet: (201, "Kiwi the Kea"),
    category: "Café animals",
}];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fingerprint(stocked: &[(i64, i64)]) -> i64 {
    stocked.iter().map(|(id, n)| id * n).sum()
}

#[test]
fn every_fixture_file_has_its_expected_figures_here() {
    let mut files: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".db"))
        .collect();
    files.sort();
    let known: Vec<&str> = FIXTURES.iter().map(|f| f.file).collect();
    assert_eq!(files, known, "a fixture without figures in upgrade.rs, or figures without a fixture");
    for fixture in FIXTURES {
        assert!(fixture.version <= SCHEMA_VERSION, "{}: from a released version", fixture.file);
        let conn = Connection::open_with_flags(
            fixtures_dir().join(fixture.file),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        assert_eq!(one::<i64>(&conn, "PRAGMA user_version") as usize, fixture.version, "{}", fixture.file);
        assert_eq!(
            one::<String>(&conn, "PRAGMA journal_mode"),
            "delete",
            "{}: one file, no WAL",
            fixture.file
        );
    }
}

#[tokio::test]
async fn every_earlier_schema_opens_migrates_and_keeps_its_data() {
    for fixture in FIXTURES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("petstore.db");
        let original = std::fs::read(fixtures_dir().join(fixture.file)).unwrap();
        std::fs::write(&path, &original).unwrap();

        let store = Store::open(&path).unwrap_or_else(|e| panic!("{}: {e}", fixture.file));
        check_sound_and_complete(&path, fixture);
        check_usable(&store, &path, fixture).await;
        drop(store);
        // Reopening an upgraded database migrates nothing more and still works.
        let again = Store::open(&path).unwrap();
        again.get_pet(PetId::try_from(fixture.pet.0).unwrap()).await.unwrap();
        assert_eq!(
            std::fs::read(fixtures_dir().join(fixture.file)).unwrap(),
            original,
            "the fixture itself is never changed"
        );
    }
}

fn check_sound_and_complete(path: &Path, f: &Fixture) {
    let conn = Connection::open(path).unwrap();
    let version: i64 = one(&conn, "PRAGMA user_version");
    assert_eq!(version as usize, SCHEMA_VERSION, "{}: migrated to the latest schema", f.file);
    assert_eq!(one::<String>(&conn, "PRAGMA integrity_check"), "ok", "{}", f.file);
    let broken: i64 =
        conn.prepare("PRAGMA foreign_key_check").unwrap().query([]).unwrap().mapped(|_| Ok(())).count()
            as i64;
    assert_eq!(broken, 0, "{}: foreign keys", f.file);

    assert_eq!(one::<i64>(&conn, "SELECT count(*) FROM categories"), f.categories, "{}", f.file);
    let by_status = |s: &str| -> i64 {
        conn.query_row("SELECT count(*) FROM pets WHERE status = ?1", [s], |r| r.get(0)).unwrap()
    };
    assert_eq!((by_status("available"), by_status("pending"), by_status("sold")), f.pets, "{}", f.file);
    let orders = (
        one::<i64>(&conn, "SELECT count(*) FROM orders WHERE complete = 0"),
        one::<i64>(&conn, "SELECT count(*) FROM orders WHERE complete = 1"),
        one::<i64>(&conn, "SELECT sum(quantity) FROM orders"),
    );
    assert_eq!(orders, f.orders, "{}", f.file);
    assert_eq!(one::<i64>(&conn, "SELECT count(*) FROM inventory_adjustments"), f.adjustments, "{}", f.file);
    assert_eq!(one::<i64>(&conn, "SELECT sum(stock) FROM pets"), f.stock, "{}", f.file);

    let stocked = stocked(&conn);
    assert_eq!(fingerprint(&stocked), f.stocked_fingerprint, "{}: stock + ordered, per pet", f.file);
    for (pet, expected) in f.stocked {
        assert_eq!(stocked.iter().find(|(id, _)| id == pet).map(|(_, n)| *n), Some(*expected), "pet {pet}");
    }
}

/// The migrated data works through the store: read, order, complete; the stock + ordered
/// figure of the pet does not move, and nothing else does either.
async fn check_usable(store: &Store, path: &Path, f: &Fixture) {
    let pet = PetId::try_from(f.pet.0).unwrap();
    assert_eq!(store.get_pet(pet).await.unwrap().name.as_str(), f.pet.1);
    let categories = store.list_categories(Page::new(100, 0).unwrap()).await.unwrap();
    assert_eq!(categories.total as i64, f.categories);
    assert!(categories.items.iter().any(|c| c.name == f.category), "{}", f.category);
    let trail = store.list_adjustments(pet, Page::new(100, 0).unwrap()).await.unwrap();
    assert!(trail.total > 0, "the audit trail of pet {pet} survived");

    let before = store.get_inventory(pet).await.unwrap().quantity;
    let new =
        NewOrder { pet_id: pet, quantity: Quantity::try_from(2).unwrap(), ship_date: None, complete: false };
    let order = store.place_order(new).await.unwrap();
    let done = store
        .update_order(order.id, OrderPatch { complete: Some(true), ..Default::default() })
        .await
        .unwrap();
    assert!(done.complete && done.ship_date.is_some());
    assert_eq!(store.get_inventory(pet).await.unwrap().quantity, before - 2);

    let conn = Connection::open(path).unwrap();
    assert_eq!(fingerprint(&stocked(&conn)), f.stocked_fingerprint, "an order moves no stocked unit");
    assert_eq!(one::<String>(&conn, "PRAGMA integrity_check"), "ok");
}
