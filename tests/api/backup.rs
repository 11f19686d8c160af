//! Backup and restore: online backups while orders are being placed, each one consistent;
//! restores that check the backup completely before they replace anything; the stale-WAL
//! trap (an old `-wal` beside a restored file would silently undo the restore).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use petstore::store::{RestoreError, SCHEMA_VERSION, restore};
use petstore::{Petstore, Store};
use rusqlite::Connection;
use serde_json::json;
use tokio::task::JoinSet;

use crate::support::database::{one, stocked};
use crate::support::{KEY, spawn_sqlite_app};

const BIN: &str = env!("CARGO_BIN_EXE_petstore-server");

/// The longest any one wait of these tests may take, far more than each needs: a client,
/// server or command that died or hung fails the test with a reason instead of holding it
/// until CI's time limit.
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs the CLI on `db` and waits for it, at most [`DEADLINE`].
fn cli(db: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("PETSTORE_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > DEADLINE {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!("petstore-server {args:?} still running after {DEADLINE:?}: {}", stderr(&out));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

/// An HTTP client whose requests give up after [`DEADLINE`].
fn http_client() -> reqwest::Client {
    reqwest::Client::builder().timeout(DEADLINE).build().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).trim().to_owned()
}

/// Every file in `dir` with its bytes: two equal listings mean nothing was touched.
fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    files
}

fn names(dir: &Path) -> Vec<String> {
    listing(dir).into_iter().map(|(name, _)| name).collect()
}

/// A backup is a sound database in which every pet still has what it was stocked with;
/// answers how many orders it holds.
fn check_backup(path: &Path, pets: &[i64], stock: i64) -> i64 {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    assert_eq!(one::<String>(&conn, "PRAGMA integrity_check"), "ok", "{}", path.display());
    let broken = conn.prepare("PRAGMA foreign_key_check").unwrap().query_map([], |_| Ok(())).unwrap().count();
    assert_eq!(broken, 0, "{}", path.display());
    let expected: Vec<(i64, i64)> = pets.iter().map(|p| (*p, stock)).collect();
    assert_eq!(stocked(&conn), expected, "{}: stock + ordered per pet", path.display());
    let negative: i64 = one(&conn, "SELECT count(*) FROM pets WHERE stock < 0");
    assert_eq!(negative, 0);
    one(&conn, "SELECT count(*) FROM orders")
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn a_backup_is_private_complete_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("shop.db")).unwrap();
    store
        .create_category(petstore::domain::NewCategory {
            name: petstore::domain::Name::parse("Dogs").unwrap(),
            description: None,
        })
        .await
        .unwrap();
    let to = dir.path().join("backup.db");
    store.backup(&to).await.unwrap();
    #[cfg(unix)]
    assert_eq!(mode(&to), 0o600, "the backup holds the shop's data: private, like the key files");
    let conn = Connection::open(&to).unwrap();
    assert_eq!(one::<i64>(&conn, "SELECT count(*) FROM categories"), 1);
    assert_eq!(one::<String>(&conn, "PRAGMA journal_mode"), "delete", "one self-contained file");
    drop(conn);

    std::fs::write(dir.path().join("taken.db"), "someone else's file").unwrap();
    let error = store.backup(&dir.path().join("taken.db")).await.unwrap_err();
    assert!(error.message.contains("already exists"), "{}", error.message);
    assert_eq!(std::fs::read(dir.path().join("taken.db")).unwrap(), b"someone else's file");

    let error = store.backup(&dir.path().join("no/such/folder/b.db")).await.unwrap_err();
    assert!(error.message.contains("cannot write the backup"), "{}", error.message);
    let left: Vec<String> = names(dir.path()).into_iter().filter(|n| n.contains("partial")).collect();
    assert!(left.is_empty(), "no half-written file left: {left:?}");
}

/// Clients keep placing, completing and cancelling orders while backups are taken, from
/// inside the server's process (as the app does) and by the CLI, a second process. Each
/// backup must be a consistent snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn online_backups_while_orders_go_on_are_each_consistent() {
    const PETS: usize = 6;
    const STOCK: i64 = 5000;
    let app = spawn_sqlite_app().await;
    let mut pets = Vec::new();
    for i in 0..PETS {
        pets.push(app.pet_with_stock(&format!("Pet {i}"), STOCK).await);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let placed = Arc::new(AtomicUsize::new(0));
    let mut clients = JoinSet::new();
    for client in 0..6u64 {
        let (http, base, pets) = (http_client(), app.base_url.clone(), pets.clone());
        let (stop, placed) = (stop.clone(), placed.clone());
        clients.spawn(async move {
            let mut rng = fastrand::Rng::with_seed(client);
            while !stop.load(Ordering::Relaxed) {
                let pet = pets[rng.usize(..pets.len())];
                let body = json!({ "petId": pet, "quantity": rng.i64(1..=3) });
                let reply =
                    http.post(format!("{base}/store/orders")).bearer_auth(KEY).json(&body).send().await;
                let reply = reply.unwrap();
                assert_eq!(reply.status(), 201);
                placed.fetch_add(1, Ordering::Relaxed);
                let id = reply.json::<serde_json::Value>().await.unwrap()["id"].as_i64().unwrap();
                let url = format!("{base}/store/orders/{id}");
                match rng.u8(..4) {
                    0 => assert_eq!(http.delete(url).bearer_auth(KEY).send().await.unwrap().status(), 204),
                    1 => {
                        let done = http.patch(url).bearer_auth(KEY).json(&json!({ "complete": true }));
                        assert_eq!(done.send().await.unwrap().status(), 200);
                    }
                    _ => {}
                }
            }
        });
    }

    let dir = tempfile::tempdir().unwrap();
    let second = Store::open(app.db_path()).unwrap();
    let mut counts = Vec::new();
    for round in 0..6 {
        // Let the clients get going (and keep going) between backups.
        // A client ends only when told to stop: one that ended has failed, with its reason.
        let before = placed.load(Ordering::Relaxed);
        let waiting = Instant::now();
        while placed.load(Ordering::Relaxed) < before + 20 {
            if let Some(ended) = clients.try_join_next() {
                ended.unwrap();
                panic!("a client stopped placing orders before it was told to");
            }
            assert!(waiting.elapsed() < DEADLINE, "round {round}: not 20 orders placed in {DEADLINE:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let to = dir.path().join(format!("backup-{round}.db"));
        if round % 2 == 0 {
            let backup = tokio::time::timeout(DEADLINE, second.backup(&to)).await;
            backup.unwrap_or_else(|_| panic!("round {round}: no backup in {DEADLINE:?}")).unwrap();
        } else {
            let (db, to) = (app.db_path().to_path_buf(), to.clone());
            let out =
                tokio::task::spawn_blocking(move || cli(&db, &["backup", "--to", to.to_str().unwrap()]))
                    .await
                    .unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
        }
        counts.push(check_backup(&to, &pets, STOCK));
    }
    stop.store(true, Ordering::Relaxed);
    let stopped = tokio::time::timeout(DEADLINE, async {
        while let Some(done) = clients.join_next().await {
            done.unwrap();
        }
    });
    stopped.await.unwrap_or_else(|_| panic!("the clients did not stop within {DEADLINE:?}"));
    let last = check_backup(app.db_path(), &pets, STOCK);
    println!(
        "online backup: 6 backups (3 in-process, 3 by the CLI) while {} orders were placed; orders in each: {counts:?}",
        placed.load(Ordering::Relaxed)
    );
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "orders went on between backups: {counts:?}");
    assert!(*counts.last().unwrap() < last, "and after the last one");
}

/// A database with committed orders and a server that then dies: `-wal` keeps what the
/// main file does not have yet.
struct Killed {
    dir: tempfile::TempDir,
    db: PathBuf,
    backup: PathBuf,
    /// Orders in the backup and in the database when the server died.
    orders_in_backup: i64,
    orders_at_kill: i64,
}

fn spawn_server(db: &Path) -> (Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(BIN)
        .arg("--db")
        .arg(db)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("PETSTORE_API_KEY", KEY)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(10), "the server never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, port)
}

async fn killed_with_a_wal() -> Killed {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("petstore.db");
    let (mut server, port) = spawn_server(&db);
    let http = http_client();
    let base = format!("http://127.0.0.1:{port}");
    let created = http.post(format!("{base}/pets")).bearer_auth(KEY).json(&json!({ "name": "Rex" }));
    let created = created.send().await.unwrap();
    assert_eq!(created.status(), 201);
    let pet = created.json::<serde_json::Value>().await.unwrap()["id"].as_i64().unwrap();
    let put =
        http.put(format!("{base}/store/inventory/{pet}")).bearer_auth(KEY).json(&json!({ "quantity": 100 }));
    assert_eq!(put.send().await.unwrap().status(), 200);
    let order = || http.post(format!("{base}/store/orders")).bearer_auth(KEY).json(&json!({ "petId": pet }));
    for _ in 0..5 {
        assert_eq!(order().send().await.unwrap().status(), 201);
    }
    let backup = dir.path().join("backup.db");
    let out = cli(&db, &["backup", "--to", backup.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    for _ in 0..7 {
        assert_eq!(order().send().await.unwrap().status(), 201);
    }
    server.kill().unwrap();
    server.wait().unwrap();
    let wal = std::fs::metadata(dir.path().join("petstore.db-wal")).map(|m| m.len()).unwrap_or(0);
    assert!(wal > 0, "the killed server left its committed orders in the WAL");
    Killed { db, backup, orders_in_backup: 5, orders_at_kill: 12, dir }
}

fn orders_in(db: &Path) -> i64 {
    one(&Connection::open(db).unwrap(), "SELECT count(*) FROM orders")
}

#[tokio::test]
async fn a_restore_replaces_the_database_and_no_old_wal_undoes_it() {
    let k = killed_with_a_wal().await;
    let out = cli(&k.db, &["restore", "--from", k.backup.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("Restored") && said.contains("1 pets, 5 orders"), "{said}");

    let beside: Vec<String> =
        names(k.dir.path()).into_iter().filter(|n| n.starts_with("petstore.db-")).collect();
    assert!(beside.is_empty(), "no -wal or -shm of the old database beside the restored one: {beside:?}");
    // Opening it as the server does (which would replay any WAL) sees the backup.
    let store = Store::open(&k.db).unwrap();
    let page = petstore::domain::Page::new(100, 0).unwrap();
    assert_eq!(store.list_orders(Default::default(), page).await.unwrap().total as i64, k.orders_in_backup);
    drop(store);
    assert_eq!(one::<String>(&Connection::open(&k.db).unwrap(), "PRAGMA integrity_check"), "ok");

    // What was replaced is kept, with the orders that were only in its WAL.
    let kept: Vec<String> =
        names(k.dir.path()).into_iter().filter(|n| n.contains(".before-restore-")).collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(said.contains(&kept[0]), "the operator is told where: {said}");
    assert_eq!(orders_in(&k.dir.path().join(&kept[0])), k.orders_at_kill);
}

#[tokio::test]
async fn a_damaged_database_with_a_stale_wal_is_replaced_by_the_backup() {
    let k = killed_with_a_wal().await;
    // The main file is garbage now, but its WAL is still there to be (wrongly) replayed.
    std::fs::write(&k.db, vec![0xA5; 8192]).unwrap();
    let restored = restore(&k.backup, &k.db).unwrap();
    assert_eq!((restored.pets, restored.orders), (1, k.orders_in_backup));
    assert!(!k.dir.path().join("petstore.db-wal").exists());
    drop(Store::open(&k.db).unwrap());
    assert_eq!(orders_in(&k.db), k.orders_in_backup);
}

#[tokio::test]
async fn an_old_schema_backup_is_restored_and_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("petstore.db");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema-v1.db");
    let restored = restore(&fixture, &target).unwrap();
    assert_eq!((restored.from_version, restored.pets, restored.orders, restored.kept), (1, 203, 14, None));
    let conn = Connection::open(&target).unwrap();
    assert_eq!(
        one::<i64>(&conn, "PRAGMA user_version") as usize,
        SCHEMA_VERSION,
        "migrated before it was put in place"
    );
    drop(conn);
    drop(Store::open(&target).unwrap());
}

/// Backups that must be refused, each with the words the operator should see.
fn bad_backups(dir: &Path, good: &Path) -> Vec<(&'static str, PathBuf, &'static str)> {
    let damaged = dir.join("damaged.db");
    std::fs::copy(good, &damaged).unwrap();
    {
        let conn = Connection::open(&damaged).unwrap();
        let root: i64 = one(&conn, "SELECT rootpage FROM sqlite_schema WHERE name = 'orders'");
        let page: i64 = one(&conn, "PRAGMA page_size");
        drop(conn);
        let mut bytes = std::fs::read(&damaged).unwrap();
        let at = ((root - 1) * page + 8) as usize;
        bytes[at..at + 16].fill(0xFF);
        std::fs::write(&damaged, bytes).unwrap();
    }
    // An index that disagrees with its table: the file's structure is sound, so copying
    // and migrating it work; only a full integrity check finds it.
    let index = dir.join("index.db");
    std::fs::copy(good, &index).unwrap();
    {
        let conn = Connection::open(&index).unwrap();
        let root: i64 = one(&conn, "SELECT rootpage FROM sqlite_schema WHERE name = 'pets_by_name'");
        let page: i64 = one(&conn, "PRAGMA page_size");
        let folded: String = one(&conn, "SELECT name_folded FROM pets LIMIT 1");
        drop(conn);
        let mut bytes = std::fs::read(&index).unwrap();
        let start = ((root - 1) * page) as usize;
        let page = &mut bytes[start..start + page as usize];
        let at =
            page.windows(folded.len()).position(|w| w == folded.as_bytes()).expect("the name in the index");
        page[at] = b'X';
        std::fs::write(&index, bytes).unwrap();
    }
    let truncated = dir.join("truncated.db");
    let bytes = std::fs::read(good).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let foreign = dir.join("notes.sqlite");
    Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE notes (text); PRAGMA user_version = 1;")
        .unwrap();
    let newer = dir.join("newer.db");
    std::fs::copy(good, &newer).unwrap();
    Connection::open(&newer)
        .unwrap()
        .execute_batch(&format!("PRAGMA user_version = {}", SCHEMA_VERSION + 1))
        .unwrap();
    let text = dir.join("list.db");
    std::fs::write(&text, "kibble, hay, a new lead").unwrap();
    let empty = dir.join("empty.db");
    std::fs::write(&empty, "").unwrap();
    vec![
        ("damaged", damaged, "damaged"),
        ("index", index, "missing from index"),
        ("truncated", truncated, "damaged"),
        ("foreign", foreign, "not a Petstore backup"),
        ("newer", newer, "newer than this Petstore"),
        ("text", text, "not a Petstore backup"),
        ("empty", empty, "not a Petstore backup"),
        ("missing", dir.join("nowhere.db"), "does not exist"),
    ]
}

#[tokio::test]
async fn a_damaged_or_foreign_backup_is_refused_and_the_database_is_untouched() {
    let k = killed_with_a_wal().await;
    let elsewhere = tempfile::tempdir().unwrap();
    let before = listing(k.dir.path());
    for (what, backup, words) in bad_backups(elsewhere.path(), &k.backup) {
        let out = cli(&k.db, &["restore", "--from", backup.to_str().unwrap()]);
        let message = stderr(&out);
        assert!(!out.status.success(), "{what}: refused");
        assert!(message.contains(words) && message.contains("nothing was restored"), "{what}: {message}");
        assert_eq!(message.lines().count(), 1, "{what}: one clear line: {message}");
        assert!(
            listing(k.dir.path()) == before,
            "{what}: the database, its WAL and its folder are byte for byte unchanged"
        );
    }
    let same = cli(&k.db, &["restore", "--from", k.db.to_str().unwrap()]);
    assert!(stderr(&same).contains("is the database itself"), "{}", stderr(&same));
    assert!(listing(k.dir.path()) == before);
}

#[tokio::test]
async fn a_restore_is_refused_while_the_database_is_open() {
    let k = killed_with_a_wal().await;
    // The server process holds it open.
    let (mut server, _) = spawn_server(&k.db);
    let out = cli(&k.db, &["restore", "--from", k.backup.to_str().unwrap()]);
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(stderr(&out).contains("is in use: stop the Petstore server"), "{}", stderr(&out));
    assert_eq!(orders_in(&k.db), k.orders_at_kill);

    // A store in this very process (the app's case) holds it open, even idle.
    let store = Store::open(&k.db).unwrap();
    let before = std::fs::read(&k.db).unwrap();
    assert!(matches!(restore(&k.backup, &k.db), Err(RestoreError::InUse(_))));
    assert_eq!(std::fs::read(&k.db).unwrap(), before);
    drop(store);
    assert!(!names(k.dir.path()).iter().any(|n| n.contains("restoring")), "no staged file left");
    restore(&k.backup, &k.db).unwrap();
    assert_eq!(orders_in(&k.db), k.orders_in_backup);
}

/// A plain copy of a (cleanly closed) live database is in WAL mode; reading it must not
/// leave a -wal or -shm beside the operator's file.
#[tokio::test]
async fn a_copied_live_database_restores_and_leaves_nothing_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.db");
    drop(Store::open(&live).unwrap());
    let copies = tempfile::tempdir().unwrap();
    let copy = copies.path().join("copy.db");
    std::fs::copy(&live, &copy).unwrap();
    assert_eq!(one::<String>(&Connection::open(&copy).unwrap(), "PRAGMA journal_mode"), "wal");
    let before = listing(copies.path());
    restore(&copy, &dir.path().join("petstore.db")).unwrap();
    assert!(listing(copies.path()) == before, "{:?}", names(copies.path()));
}
