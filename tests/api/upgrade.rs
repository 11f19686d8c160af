//! Upgrades: every database an earlier schema version made (tests/fixtures, each made by
//! the binary of the last commit at that version) opens with today's `Store`, migrates to
//! the latest schema, and keeps every row, sound and usable. The figures are those
//! tests/fixtures/README.md records for each fixture. One test per fixture, all running the
//! same [`upgrade_from`].

use std::path::{Path, PathBuf};

use petstore::domain::*;
use petstore::engine::{Database, Feed, Keys};
use petstore::store::{KeyHolder, KeyMatch, SCHEMA_VERSION};
use petstore::{Petstore, Store};
use rusqlite::Connection;

use crate::support::database::{one, stocked};

/// Schema versions no released Petstore ever made: migrations 0002 and 0003 landed together
/// (9c0e5db), so no Petstore ever made a database at version 2; migrations 0013 and 0014
/// landed with 0015 in one submission (12 has a fixture, as does the last). Versions 16 to
/// 18 (staff, the till's key scope, the staff's proof keys) are not released yet: the
/// fixture of the last is made from the commit that releases it, with the API that serves
/// staff, and it leaves this list then.
const NEVER_RELEASED: &[usize] = &[2, 13, 14, 16, 17, 18, 19, 20];

/// What one fixture holds, as recorded when it was made.
struct Fixture {
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
    /// The named API keys (schema 2 on), in the order they were made.
    keys: &'static [NamedKey],
    /// Idempotency-Key records of POST /store/orders (schema 3 on): key and first status.
    idempotency: &'static [(&'static str, i64)],
    /// Rows of the change feed (schema 8 on), numbered 1 to this.
    changes: i64,
}

/// A named key of a fixture with the secrets the fixture script printed: throwaway keys
/// of a test database, kept so that the test can present them.
struct NamedKey {
    name: &'static str,
    scope: &'static str,
    /// The secret it answers to now.
    secret: &'static str,
    /// A secret it answered to before it was rotated, which must stay refused.
    rotated_from: Option<&'static str>,
    revoked: bool,
}

/// Stock plus ordered quantities of every pet with orders, the same in every fixture: what
/// every version's part of make-schema.sh stocked and ordered (orders move no stocked unit).
const STOCKED: &[(i64, i64)] = &[
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
];

/// What make-schema.sh leaves in a database of schema 3 or later: every such version gave
/// these figures (one category, one open order and one unit more than schema 1: the write
/// key's category and the order placed with an Idempotency-Key), and only the secrets of
/// the keys differ.
const SHOP: Fixture = Fixture {
    version: 0,
    categories: 10,
    pets: (187, 2, 14),
    orders: (7, 8, 18),
    adjustments: 5,
    stock: 2531,
    stocked_fingerprint: 265_836,
    stocked: STOCKED,
    pet: (201, "Kiwi the Kea"),
    category: "Café animals",
    keys: &[],
    idempotency: &[("fixture-order-1", 201), ("fixture-order-2", 409)],
    changes: 0,
};

/// The keys make-schema.sh makes (schema 2 on), in that order, with the secrets it printed.
const fn named_keys(
    till: &'static str,
    printer: &'static str,
    printer_before: &'static str,
    old: &'static str,
) -> [NamedKey; 3] {
    [
        NamedKey { name: "Till 1", scope: "read", secret: till, rotated_from: None, revoked: false },
        NamedKey {
            name: "Label printer",
            scope: "write",
            secret: printer,
            rotated_from: Some(printer_before),
            revoked: false,
        },
        NamedKey { name: "Old script", scope: "write", secret: old, rotated_from: None, revoked: true },
    ]
}

const FIXTURES: &[Fixture] = &[
    Fixture { version: 1, categories: 9, orders: (6, 8, 17), stock: 2532, idempotency: &[], ..SHOP },
    Fixture {
        version: 3,
        keys: &named_keys(
            "psk_0e410d6d102402f018265c24545f2d9b4d23a7e9cf4a8446e91f0d67fa15ff57",
            "psk_999686c4ef031d6897b685b60bac4d96151a26bd5d58cf72d803c61cc9224c2f",
            "psk_705c48017e3f72a1d8d379b1d034bd21ca1b690f127a1e8991c4f91174ca20a6",
            "psk_8d11adfd9eb13e224a6c51c45d9ff4770f1f511c873cefea1f3b33e6caedaa98",
        ),
        ..SHOP
    },
    Fixture {
        version: 4,
        keys: &named_keys(
            "psk_e8cfd63662040f2326dc38aa7bb2c42af5975e104c6bf751b5e55bd8776e0cc2",
            "psk_cefca16c34d7b6c818afd1b898472da3587e2b7405eee25913bf644e17f99cb3",
            "psk_abf29640967d9c04db26f87da9060295056f4cbe7f4a66457926890af0bc606b",
            "psk_7ce5800639cf57cdb0d68d469b4df2c8c93df762550f33b370f95b0349cfc9e2",
        ),
        ..SHOP
    },
    Fixture {
        version: 5,
        keys: &named_keys(
            "psk_aaf0e8cc83cabf481c1cd2455884e7fe83c808eaab73fc36fdc036e3b9801155",
            "psk_a51775c68b5d0db3d030ede659b57324fcdafcc319aaccafeb1cf121fc96094a",
            "psk_7112dee95ecd0e17ca3039b3c6e8e4fd9f7ae534d2ece47421c7604a84b94e97",
            "psk_e954e5d7713febf46b246d7c4697c5a877bcbb0fe5bf33826e343cc7545ad486",
        ),
        ..SHOP
    },
    Fixture {
        version: 6,
        keys: &named_keys(
            "psk_09c6c2c5c99c4594705dd5f2f276cc44354a83a5d5e3486678ba8ecb0a2e2181",
            "psk_935c1154ee3f253095da3e101eaa5730d3b333605314b5efe2cf029e5914bacd",
            "psk_7b325ecd20e02a713a517837deefd92b74a0c7cf0561d3f2e4b6fc1fa493ce81",
            "psk_7649c169e3ef09a8d51f23fbdd98046c6ccaf71a59c535185ab98168b3f052ac",
        ),
        ..SHOP
    },
    Fixture {
        version: 7,
        keys: &named_keys(
            "psk_f338033e3f60c245f22136e8b0a3ae032887c860e527d1d720958ba9e8e0a8a7",
            "psk_d915b991c3e80930e9ac8e603002e87befb475e8eb61a6f2744ec0a06cc50498",
            "psk_68ef0f2dd095f64a5a40ccda50655a7256bcad684ff6ca76c54ea20f4bc6e69c",
            "psk_0c915a8e8154fe782ad0beecf26830bd912e1c94cc749071b08c8c74f96b8055",
        ),
        ..SHOP
    },
    Fixture {
        version: 8,
        keys: &named_keys(
            "psk_2ff005c5d6d423bb83b0d7d0c9f6e1d11d66ff7fea7a80728df869b124809509",
            "psk_ca1aab5c437e688b5b1c94167d09760ea2f1916d154e097580ab3afa4a548d17",
            "psk_c390b45cc0f750c23bb9ceb322179f29b2d84fe0c1f4f002642c5c1f26579349",
            "psk_48187b062c76a2f6febeef55dbd8ec03b6ec2f5de56d2233e43958e6cc636a4e",
        ),
        changes: 264,
        ..SHOP
    },
    Fixture {
        version: 9,
        keys: &named_keys(
            "psk_4b70db4ae938c9f7abc4852bf889387f393155f02a9738368fd2142208411631",
            "psk_b084bcd7181efee46e2fc2635c849e3677cc9fe99d74ba8db86efc1c131eee40",
            "psk_2cd85ca68ff71b857d6ca561cbc61afe09392449b2f2fbc64e800099e295237b",
            "psk_b3036911dc7d4adf8c2ae25c3576647f8f3fc79fee4f2a47a272415a7392fb38",
        ),
        changes: 264,
        ..SHOP
    },
    // The script's cancelled order is kept here (schema 10); the figures count the orders
    // that hold units, as for the files before.
    Fixture {
        version: 10,
        keys: &named_keys(
            "psk_4f6715eacd79ed2ec9de5003bd36cf46e42f63f28fafacbaaab7976d53f2151f",
            "psk_00d9bb74988974077bf787a5cc061744dd3f4b3554fe82a1c9da64e868b2b9ba",
            "psk_264674772ac356ad75bb84b2813f21a5f5b5cd8f641271a8fa846b041afb1e94",
            "psk_eb58d7929f3611cc46e19390106698fbec09b542a5d0e497025019dc32394f33",
        ),
        changes: 264,
        ..SHOP
    },
    // The feed's table made again with checks that build no temporary b-tree (schema 11).
    Fixture {
        version: 11,
        keys: &named_keys(
            "psk_758e281dc1dac439b146002956a23dd4c6fa42160d15de28e86d04ad8a5c9113",
            "psk_2972f4a4bd40985256f30e5f324a5cc0aec99f62af9e19cbb5c328146fbff560",
            "psk_74471e6ab5cb9a4ab8091409f0615e20d6f009c59920d3cbee1f7b5344ce8171",
            "psk_1b03f934296c6d6985b66cdefb5df72a062f4fa323db505b5a4ee523be510aaa",
        ),
        changes: 264,
        ..SHOP
    },
    // Deleted orders (schema 12): the script cancels with POST .../cancel from then on, so
    // the figures are the same; its completed orders have a shipDate from their completion.
    Fixture {
        version: 12,
        keys: &named_keys(
            "psk_b2fb90ff70a54c95e1af9f9560e7e706e38241bb99f88a19f46a35b446b32313",
            "psk_b8c49339260d69bcd04629b8b57beb534d8b0b15fb53bb5b73ed1ad75dd14b9b",
            "psk_ba9a0f2341089a06e31bc83e64139ad3ee068c2896326ab2e8e060395ab19152",
            "psk_f348f7657b2e0e1a10f725bee44c32936aa2dff74acad403215497982ed7f8f3",
        ),
        changes: 264,
        ..SHOP
    },
    // Version 15: orders' `placed_at`, the `reports` scope, idempotency
    // records scoped by the key's identity. The same script, so the same figures.
    Fixture {
        version: 15,
        keys: &named_keys(
            "psk_506abc625bfeff3ddf06c2ceb4ca0d1ba6b1f866fb4c96478b08a742f7535217",
            "psk_5dec56bd14160012aaa529479d4e7b5982807f2063ab3ec02bd2e5d52266ed5d",
            "psk_ac4f1db36b6d1919c1a1801c05a6fc6515effaf89a3e8170b189feda6d6f7ee6",
            "psk_5bccbdff1d09ac1baea2fd87da077f7186435dfc9d7a0153859f14978dc396e7",
        ),
        changes: 264,
        ..SHOP
    },
];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn file_of(version: usize) -> String {
    format!("schema-v{version}.db")
}

fn fixture(version: usize) -> &'static Fixture {
    FIXTURES.iter().find(|f| f.version == version).unwrap_or_else(|| panic!("no fixture of schema {version}"))
}

fn fingerprint(stocked: &[(i64, i64)]) -> i64 {
    stocked.iter().map(|(id, n)| id * n).sum()
}

/// One test per fixture, each running [`upgrade_from`] on its version; `TESTED` lists them.
macro_rules! upgrades {
    ($($test:ident: $version:literal),+ $(,)?) => {
        $(
            #[tokio::test]
            async fn $test() {
                upgrade_from($version).await;
            }
        )+
        const TESTED: &[usize] = &[$($version),+];
    };
}

upgrades!(
    from_schema_1: 1,
    from_schema_3: 3,
    from_schema_4: 4,
    from_schema_5: 5,
    from_schema_6: 6,
    from_schema_7: 7,
    from_schema_8: 8,
    from_schema_9: 9,
    from_schema_10: 10,
    from_schema_11: 11,
    from_schema_12: 12,
    from_schema_15: 15,
);

#[test]
fn every_released_schema_version_has_a_fixture_with_its_figures_and_a_test() {
    let mut files: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".db"))
        .collect();
    files.sort();
    let mut known: Vec<String> = FIXTURES.iter().map(|f| file_of(f.version)).collect();
    known.sort();
    assert_eq!(files, known, "a fixture without figures in upgrade.rs, or figures without a fixture");
    let versions: Vec<usize> = FIXTURES.iter().map(|f| f.version).collect();
    assert_eq!(TESTED, versions, "each fixture has its test, in the order of FIXTURES");
    let released: Vec<usize> = (1..=SCHEMA_VERSION).filter(|v| !NEVER_RELEASED.contains(v)).collect();
    assert_eq!(
        versions, released,
        "every schema version a Petstore made has a fixture (tests/fixtures/README.md says how to make one)"
    );
    for fixture in FIXTURES {
        let file = file_of(fixture.version);
        let conn = Connection::open_with_flags(
            fixtures_dir().join(&file),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        assert_eq!(one::<i64>(&conn, "PRAGMA user_version") as usize, fixture.version, "{file}");
        assert_eq!(one::<String>(&conn, "PRAGMA journal_mode"), "delete", "{file}: one file, no WAL");
        assert_eq!(one::<String>(&conn, "PRAGMA integrity_check"), "ok", "{file}");
    }
}

/// Copies the fixture of `version` aside, opens it with today's `Store` (which migrates it)
/// and checks that it is sound, complete and usable, and that it opens again.
async fn upgrade_from(version: usize) {
    let fixture = fixture(version);
    let file = file_of(version);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("petstore.db");
    let original = std::fs::read(fixtures_dir().join(&file)).unwrap();
    std::fs::write(&path, &original).unwrap();

    let unshipped = completed_without_ship_date(&path);
    let store = Store::open(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    check_shipped(&path, fixture, &unshipped);
    check_sound_and_complete(&path, fixture, !unshipped.is_empty());
    check_keys(&store, fixture).await;
    let last_change = fixture.changes + i64::from(!unshipped.is_empty());
    check_usable(&store, &path, fixture, last_change as u64).await;
    check_idempotency_replays(&store, fixture).await;
    drop(store);
    // Reopening an upgraded database migrates nothing more and still works.
    let again = Store::open(&path).unwrap();
    again.get_pet(PetId::try_from(fixture.pet.0).unwrap()).await.unwrap();
    assert_eq!(
        std::fs::read(fixtures_dir().join(&file)).unwrap(),
        original,
        "the fixture itself is never changed"
    );
}

/// The completed orders with a completion time and no `shipDate` in the database at `path`
/// before it is migrated (none before schema 9, which added `completed_at`): id and when.
fn completed_without_ship_date(path: &Path) -> Vec<(i64, String)> {
    let conn = Connection::open(path).unwrap();
    let has_completed_at = conn
        .prepare("SELECT 1 FROM pragma_table_info('orders') WHERE name = 'completed_at'")
        .unwrap()
        .exists([])
        .unwrap();
    if !has_completed_at {
        return Vec::new();
    }
    let sql = "SELECT id, completed_at FROM orders WHERE complete AND ship_date IS NULL AND completed_at IS NOT NULL";
    conn.prepare(sql)
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

/// Migration 12 gave each of `unshipped` its completion time as its `shipDate` (the spec's
/// "actual ship date"), and left no completed order with one but no shipDate.
fn check_shipped(path: &Path, f: &Fixture, unshipped: &[(i64, String)]) {
    let file = file_of(f.version);
    let conn = Connection::open(path).unwrap();
    for (id, completed_at) in unshipped {
        let shipped: Option<String> =
            conn.query_row("SELECT ship_date FROM orders WHERE id = ?1", [id], |r| r.get(0)).unwrap();
        assert_eq!(shipped.as_ref(), Some(completed_at), "{file}: order {id} shipped when completed");
    }
    let left =
        "SELECT count(*) FROM orders WHERE complete AND ship_date IS NULL AND completed_at IS NOT NULL";
    assert_eq!(one::<i64>(&conn, left), 0, "{file}");
}

/// `backfilled`: migration 12 gave completed orders their ship dates, and told the feed's
/// followers to read everything again with one `reset` of the shop.
fn check_sound_and_complete(path: &Path, f: &Fixture, backfilled: bool) {
    let file = file_of(f.version);
    let conn = Connection::open(path).unwrap();
    let version: i64 = one(&conn, "PRAGMA user_version");
    assert_eq!(version as usize, SCHEMA_VERSION, "{file}: migrated to the latest schema");
    assert_eq!(one::<String>(&conn, "PRAGMA integrity_check"), "ok", "{file}");
    let broken: i64 =
        conn.prepare("PRAGMA foreign_key_check").unwrap().query([]).unwrap().mapped(|_| Ok(())).count()
            as i64;
    assert_eq!(broken, 0, "{file}: foreign keys");

    assert_eq!(one::<i64>(&conn, "SELECT count(*) FROM categories"), f.categories, "{file}");
    let by_status = |s: &str| -> i64 {
        conn.query_row("SELECT count(*) FROM pets WHERE status = ?1", [s], |r| r.get(0)).unwrap()
    };
    assert_eq!((by_status("available"), by_status("pending"), by_status("sold")), f.pets, "{file}");
    let orders = (
        // Cancelled orders are kept from schema 10 on; they hold no units.
        one::<i64>(&conn, "SELECT count(*) FROM orders WHERE complete = 0 AND cancelled_at IS NULL"),
        one::<i64>(&conn, "SELECT count(*) FROM orders WHERE complete = 1"),
        one::<i64>(&conn, "SELECT sum(quantity) FROM orders WHERE cancelled_at IS NULL"),
    );
    assert_eq!(orders, f.orders, "{file}");
    // The audit trail's counts and adjustments (from schema 10 on, a change of an order's
    // quantity is recorded beside them, naming the order, for the stock history).
    let trail = "SELECT count(*) FROM inventory_adjustments WHERE order_id IS NULL";
    assert_eq!(one::<i64>(&conn, trail), f.adjustments, "{file}");
    assert_eq!(one::<i64>(&conn, "SELECT sum(stock) FROM pets"), f.stock, "{file}");
    check_before_staff(&conn, &file);

    let stocked = stocked(&conn);
    assert_eq!(fingerprint(&stocked), f.stocked_fingerprint, "{file}: stock + ordered, per pet");
    for (pet, expected) in f.stocked {
        assert_eq!(stocked.iter().find(|(id, _)| id == pet).map(|(_, n)| *n), Some(*expected), "pet {pet}");
    }

    let idempotency: Vec<(String, i64)> = conn
        .prepare("SELECT key, status FROM idempotency_keys ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let expected: Vec<(String, i64)> = f.idempotency.iter().map(|(k, s)| (k.to_string(), *s)).collect();
    assert_eq!(idempotency, expected, "{file}: the Idempotency-Key records");
    let feed = (
        one::<i64>(&conn, "SELECT count(*) FROM changes"),
        one::<i64>(&conn, "SELECT coalesce(max(seq), 0) FROM changes"),
    );
    let changes = f.changes + i64::from(backfilled);
    assert_eq!(feed, (changes, changes), "{file}: the change feed, numbered 1 to {changes}");
    if backfilled {
        let last = "SELECT entity || ' ' || action FROM changes ORDER BY seq DESC LIMIT 1";
        assert_eq!(one::<String>(&conn, last), "shop reset", "{file}: the backfill's one change");
    }
}

/// Migration 0016 gave the shop its one owner, with no PIN (so a shop of one owner works as
/// before), and left every existing record made by nobody: the shop did not know who then.
fn check_before_staff(conn: &Connection, file: &str) {
    let owner: (String, String, Option<String>, bool) = conn
        .query_row("SELECT name, role, pin_hash, active FROM staff WHERE id = 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap();
    assert_eq!(
        owner,
        ("Owner".into(), "owner".into(), None, true),
        "{file}: the owner every shop starts with"
    );
    assert_eq!(one::<i64>(conn, "SELECT count(*) FROM staff"), 1, "{file}");
    let attributed = "SELECT count(*) FROM orders
                      WHERE placed_by IS NOT NULL OR completed_by IS NOT NULL OR cancelled_by IS NOT NULL";
    assert_eq!(one::<i64>(conn, attributed), 0, "{file}: orders from before staff name nobody");
    let made = "SELECT count(*) FROM inventory_adjustments WHERE made_by IS NOT NULL";
    assert_eq!(one::<i64>(conn, made), 0, "{file}: adjustments from before staff name nobody");
    assert_eq!(one::<i64>(conn, "SELECT count(*) FROM activity"), 0, "{file}: the log starts empty");
}

/// The named keys are all there, as they were, and each secret still authenticates (or is
/// refused) as it did before the upgrade.
async fn check_keys(store: &Store, f: &Fixture) {
    let file = file_of(f.version);
    let mut listed: Vec<(String, &str, bool, bool)> = store
        .list_keys()
        .await
        .unwrap()
        .into_iter()
        .map(|k| (k.name, k.scope.as_str(), k.rotated_at.is_some(), k.revoked_at.is_some()))
        .collect();
    let mut expected: Vec<(String, &str, bool, bool)> =
        f.keys.iter().map(|k| (k.name.to_owned(), k.scope, k.rotated_from.is_some(), k.revoked)).collect();
    listed.sort_by_key(|k| k.0.to_lowercase());
    expected.sort_by_key(|k| k.0.to_lowercase());
    assert_eq!(listed, expected, "{file}: the named keys");
    for key in f.keys {
        let found = store.find_key(petstore::api_key::hash(key.secret)).await.unwrap();
        if key.revoked {
            assert_eq!(found, KeyMatch::Revoked { name: key.name.to_owned() }, "{file}: {}", key.name);
        } else {
            let KeyMatch::Active(KeyHolder { name, scope, .. }) = found else {
                panic!("{file}: the secret of {} no longer works: {found:?}", key.name)
            };
            assert_eq!((name.as_str(), scope.as_str()), (key.name, key.scope), "{file}");
        }
        if let Some(old) = key.rotated_from {
            let found = store.find_key(petstore::api_key::hash(old)).await.unwrap();
            assert_eq!(found, KeyMatch::Unknown, "{file}: {}'s secret from before its rotation", key.name);
        }
    }
}

/// The fixture's operator key, with which `make-schema.sh` placed its keyed orders.
const FIXTURE_KEY: &str = "fixture-key-0123456789abcdefghijkl";

/// The orders placed with an `Idempotency-Key` before the upgrade are still known after it,
/// to the key's identity (the operator's key, whatever its secret becomes): the server
/// moves the records its operator key kept, as it starts (`Application::bind`), and a
/// retry of each then replays its first response and places nothing.
async fn check_idempotency_replays(store: &Store, f: &Fixture) {
    let file = file_of(f.version);
    let moved = store
        .move_idempotency_scopes(petstore::api::KeyRing::from_secrets([FIXTURE_KEY]).idempotency_moves())
        .await
        .unwrap();
    // Migration 0015 scoped the records by identity.
    let scoped_by_secret = f.version < 15;
    assert_eq!(moved as usize, if scoped_by_secret { f.idempotency.len() } else { 0 }, "{file}");
    let orders = store.list_orders(Default::default(), Page::new(100, 0).unwrap()).await.unwrap().total;
    let conn = Connection::open(store.path()).unwrap();
    for (key, status) in f.idempotency {
        // The order asked for, from the first response (the refused one names its pet).
        let (body, expires_at): (String, i64) = conn
            .query_row("SELECT body, expires_at FROM idempotency_keys WHERE key = ?1", [key], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        // Within the record's window, whenever the fixture was made.
        let now = chrono::DateTime::from_timestamp(expires_at - 60, 0).unwrap();
        let first: serde_json::Value = serde_json::from_str(&body).unwrap();
        let pet = first["petId"].as_i64().or_else(|| {
            let message = first["message"].as_str()?;
            message.split(|c: char| !c.is_ascii_digit()).find(|n| !n.is_empty())?.parse().ok()
        });
        let new = NewOrder {
            customer_name: None,
            customer_phone: None,
            note: None,
            pet_id: PetId::try_from(pet.unwrap_or_else(|| panic!("{file}: no pet in {body}"))).unwrap(),
            quantity: Quantity::try_from(1).unwrap(),
            ship_date: None,
            complete: false,
            placed_at: None,
        };
        let identity = petstore::api_key::KeyIdentity::Operator(0).label();
        let idempotency_key = petstore::idempotency::IdempotencyKey::new(&identity, key).unwrap();
        let replay = store.once(idempotency_key, CounterWrite::Place(new), now).await.unwrap();
        assert!(replay.replayed, "{file}: {key} was placed again, not replayed");
        let replayed_status = match replay.outcome {
            Ok(_) => 201,
            Err(e) => i64::from(e.code.status()),
        };
        assert_eq!(replayed_status, *status, "{file}: {key}");
    }
    let after = store.list_orders(Default::default(), Page::new(100, 0).unwrap()).await.unwrap().total;
    assert_eq!(after, orders, "{file}: nothing placed by the retries");
}

/// The migrated data works through the store: read, order, complete; the stock + ordered
/// figure of the pet does not move, and nothing else does either.
/// `last_change`: the feed's last change after the migration.
async fn check_usable(store: &Store, path: &Path, f: &Fixture, last_change: u64) {
    let pet = PetId::try_from(f.pet.0).unwrap();
    assert_eq!(store.get_pet(pet).await.unwrap().name.as_str(), f.pet.1);
    let categories = store.list_categories(Page::new(100, 0).unwrap()).await.unwrap();
    assert_eq!(categories.total as i64, f.categories);
    assert!(categories.items.iter().any(|c| c.name == f.category), "{}", f.category);
    let trail = store.list_adjustments(pet, Page::new(100, 0).unwrap()).await.unwrap();
    assert!(trail.total > 0, "the audit trail of pet {pet} survived");

    // Made before staff: by nobody, on the wire as null.
    let kept = store.list_orders(Default::default(), Page::new(100, 0).unwrap()).await.unwrap();
    assert!(kept.items.iter().all(|o| o.placed_by.is_none() && o.completed_by.is_none()), "orders by nobody");
    assert!(trail.items.iter().all(|a| a.made_by.is_none()), "adjustments by nobody");
    let history = store.stock_history(pet, Page::new(100, 0).unwrap()).await.unwrap();
    assert!(history.items.iter().all(|e| e.by.is_none()), "history by nobody");
    assert_eq!(serde_json::to_value(&kept.items[0]).unwrap()["placedBy"], serde_json::Value::Null);

    let before = store.get_inventory(pet).await.unwrap().quantity;
    let new = NewOrder {
        customer_name: None,
        customer_phone: None,
        note: None,
        placed_at: None,
        pet_id: pet,
        quantity: Quantity::try_from(2).unwrap(),
        ship_date: None,
        complete: false,
    };
    let order = store.place_order(new).await.unwrap();
    let done = store
        .update_order(order.id, OrderPatch { complete: Some(true), ..Default::default() })
        .await
        .unwrap();
    assert!(done.complete && done.completed_at.is_some());
    assert_eq!((&order.placed_by, &done.completed_by), (&Some(Actor::operator()), &Some(Actor::operator())));
    assert_eq!(store.get_inventory(pet).await.unwrap().quantity, before - 2);

    let conn = Connection::open(path).unwrap();
    assert_eq!(fingerprint(&stocked(&conn)), f.stocked_fingerprint, "an order moves no stocked unit");
    // The feed goes on after the fixture's last change: the order, its stock, completing it.
    let after = store.changes_since(last_change, 100, FeedScope::Data).await.unwrap();
    let what: Vec<(Entity, Action)> = after.changes.iter().map(|c| (c.entity, c.action)).collect();
    assert_eq!(
        what,
        [
            (Entity::Order, Action::Created),
            (Entity::Inventory, Action::Updated),
            (Entity::Order, Action::Updated)
        ]
    );
    assert_eq!(one::<String>(&conn, "PRAGMA integrity_check"), "ok");
}
