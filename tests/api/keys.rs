//! Named API keys: the store's API (which the CLI and the app's Settings share), the
//! hash-only storage read straight from the SQLite file, and `petstore-server keys` against
//! a running `petstore-server serve` in another process.

use std::fs::File;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use petstore::domain::Name;
use petstore::engine::Keys;
use petstore::store::{KeyMatch, Scope};
use petstore::{ErrorCode, Store, api_key};
use rusqlite::types::ValueRef;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_petstore-server");

fn name(s: &str) -> Name {
    Name::parse(s).unwrap()
}

#[tokio::test]
async fn create_list_revoke_and_rotate_with_clear_refusals() {
    // The API of either engine's store (PETSTORE_TEST_ENGINE); the rest of this file is
    // about the SQLite file and the CLI on it.
    let db = crate::support::TestDb::new();
    let store = db.open().await;

    let till = store.create_key(name("till"), Scope::Write).await.unwrap();
    let secret = till.secret.expose().to_owned();
    assert!(secret.starts_with("psk_") && secret.len() == 68, "256 random bits");
    assert_eq!(till.key.prefix, secret[..12]);
    assert!(till.key.is_active() && till.key.rotated_at.is_none());
    assert!(!format!("{till:?}").contains(&secret[12..]), "Debug never shows the secret");
    let shown = serde_json::to_value(&till).unwrap();
    assert_eq!(shown["secret"], secret.as_str(), "serialized on purpose, to be shown once");
    assert_eq!(shown["key"]["scope"], "write");

    let duplicate = store.create_key(name("TILL"), Scope::Read).await.unwrap_err();
    assert_eq!(duplicate.code, ErrorCode::DuplicateName, "{duplicate}");

    let listed = store.list_keys().await.unwrap();
    assert_eq!(listed, std::slice::from_ref(&till.key));
    let listed_json = serde_json::to_string(&listed).unwrap();
    assert!(!listed_json.contains(&secret) && !listed_json.contains("hash"), "{listed_json}");

    let rotated = store.rotate_key("till").await.unwrap();
    assert_ne!(rotated.secret, till.secret);
    assert_eq!((rotated.key.name.as_str(), rotated.key.scope), ("till", Scope::Write));
    assert!(rotated.key.rotated_at.is_some());
    assert_eq!(store.find_key(api_key::hash(&secret)).await.unwrap(), KeyMatch::Unknown, "old secret");
    assert!(matches!(
        store.find_key(api_key::hash(rotated.secret.expose())).await.unwrap(),
        KeyMatch::Active(_)
    ));

    let revoked = store.revoke_key("till").await.unwrap();
    assert!(revoked.revoked_at.is_some());
    let found = store.find_key(api_key::hash(rotated.secret.expose())).await.unwrap();
    assert_eq!(found, KeyMatch::Revoked { name: "till".into() });

    for refusal in [store.revoke_key("till").await.unwrap_err(), store.rotate_key("till").await.unwrap_err()]
    {
        assert_eq!(refusal.code, ErrorCode::Gone, "{refusal}");
        assert!(refusal.message.contains("revoked"), "{refusal}");
    }
    for refusal in
        [store.revoke_key("nobody").await.unwrap_err(), store.rotate_key("nobody").await.unwrap_err()]
    {
        assert_eq!(refusal.code, ErrorCode::NotFound, "{refusal}");
    }
    let reuse = store.create_key(name("till"), Scope::Read).await.unwrap_err();
    assert!(reuse.message.contains("revoked"), "{reuse}");
}

/// Every value in every table, as text, and every blob's bytes.
fn every_stored_value(db: &Path) -> (Vec<String>, Vec<Vec<u8>>) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let (mut texts, mut blobs) = (Vec::new(), Vec::new());
    for table in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let columns = stmt.column_count();
        let mut rows = stmt.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            for i in 0..columns {
                match row.get_ref(i).unwrap() {
                    ValueRef::Text(t) => texts.push(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => blobs.push(b.to_vec()),
                    _ => {}
                }
            }
        }
    }
    (texts, blobs)
}

#[tokio::test]
async fn only_a_hash_of_each_secret_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("keys.db");
    let store = Store::open(&db).unwrap();
    let mut secrets = Vec::new();
    for (key, scope) in [("till", Scope::Write), ("reporting", Scope::Read), ("old", Scope::Write)] {
        secrets.push(store.create_key(name(key), scope).await.unwrap().secret.expose().to_owned());
    }
    secrets.push(store.rotate_key("reporting").await.unwrap().secret.expose().to_owned());
    store.revoke_key("old").await.unwrap();

    let (texts, blobs) = every_stored_value(&db);
    for secret in &secrets {
        let random_part = &secret[4..];
        let raw = hex::decode(random_part).unwrap();
        assert!(texts.iter().all(|t| !t.contains(random_part)), "a column holds the secret");
        assert!(blobs.iter().all(|b| !b.windows(raw.len()).any(|w| w == raw)), "a blob holds its bytes");
        assert!(blobs.iter().all(|b| !b.windows(secret.len()).any(|w| w == secret.as_bytes())));
    }
    // What is stored is the hash of the current secrets.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let stored: Vec<u8> =
        conn.query_row("SELECT hash FROM api_keys WHERE name = 'till'", [], |r| r.get(0)).unwrap();
    assert_eq!(stored, api_key::hash(&secrets[0]));

    // Nor does any page of the files (database and write-ahead log) carry it. The store is
    // still open, so its write-ahead log is there: a file missing is a failure, never an
    // empty file that would hold no secret.
    for file in ["keys.db", "keys.db-wal"] {
        let path = dir.path().join(file);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for secret in &secrets {
            assert!(!bytes.windows(secret.len() - 4).any(|w| w == &secret.as_bytes()[4..]), "{file}");
        }
    }
}

fn cli(db: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("PETSTORE_API_KEY")
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_owned()
}

/// Runs the CLI, expects success, and returns its output.
fn ok(db: &Path, args: &[&str]) -> String {
    let output = cli(db, args);
    assert!(output.status.success(), "{args:?}: {}", text(&output.stderr));
    text(&output.stdout)
}

/// Runs the CLI, expects a failure given as one line, and returns that line.
fn refused(db: &Path, args: &[&str]) -> String {
    let output = cli(db, args);
    assert!(!output.status.success(), "{args:?} succeeded");
    let message = text(&output.stderr);
    assert_eq!(message.lines().count(), 1, "{args:?}: one clear line, got {message}");
    message
}

/// `petstore-server serve` in its own process, its log (stdout and stderr) going to files.
struct Server {
    child: Child,
    base_url: String,
    logs: [PathBuf; 2],
}

const OPERATOR_KEY: &str = "operator-key-0123456789abcdefghijkl";

impl Server {
    fn start(db: &Path, dir: &Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let logs = [dir.join("serve.out"), dir.join("serve.err")];
        let child = Command::new(BIN)
            .arg("--db")
            .arg(db)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .env("PETSTORE_API_KEY", OPERATOR_KEY)
            // More than an operator would log, to catch a secret in any line.
            .env("RUST_LOG", "debug")
            .stdout(Stdio::from(File::create(&logs[0]).unwrap()))
            .stderr(Stdio::from(File::create(&logs[1]).unwrap()))
            .spawn()
            .unwrap();
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(10), "the server never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, base_url: format!("http://127.0.0.1:{port}"), logs }
    }

    async fn status(&self, method: reqwest::Method, path: &str, key: &str) -> u16 {
        let request =
            reqwest::Client::new().request(method, format!("{}{path}", self.base_url)).bearer_auth(key);
        request.json(&json!({ "name": "Cats" })).send().await.unwrap().status().as_u16()
    }

    /// Stops the server (SIGTERM) and returns all it logged.
    fn stop(mut self) -> String {
        Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        assert!(self.child.wait().unwrap().success());
        self.logs.iter().map(|log| std::fs::read_to_string(log).unwrap()).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn cli_keys_work_at_once_on_a_running_server_and_never_show_up_again() {
    use reqwest::Method;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    let server = Server::start(&db, dir.path());

    let created = ok(&db, &["keys", "create", "--name", "till", "--scope", "write"]);
    let till = created.lines().next().unwrap().to_owned();
    assert!(till.starts_with("psk_") && till.len() == 68, "{created}");
    assert!(created.contains("will not be shown again"), "{created}");
    let reporting = ok(&db, &["keys", "create", "--name", "reporting", "--scope", "read"]);
    let reporting = reporting.lines().next().unwrap().to_owned();

    assert_eq!(server.status(Method::GET, "/pets", &till).await, 200, "no restart needed");
    assert_eq!(server.status(Method::POST, "/categories", &till).await, 201);
    assert_eq!(server.status(Method::GET, "/categories", &reporting).await, 200);
    assert_eq!(server.status(Method::POST, "/categories", &reporting).await, 403, "a read key");

    let listed = ok(&db, &["keys", "list"]);
    for expected in ["till", "reporting", "write", "read", &format!("{}…", &till[..12]), "active"] {
        assert!(listed.contains(expected), "{expected:?} in\n{listed}");
    }

    assert!(ok(&db, &["keys", "revoke", "till"]).contains("Revoked"));
    assert_eq!(server.status(Method::GET, "/pets", &till).await, 401, "revoked while the server runs");
    assert!(ok(&db, &["keys", "list"]).contains("revoked"));

    let rotated = ok(&db, &["keys", "rotate", "reporting"]);
    let rotated = rotated.lines().next().unwrap().to_owned();
    assert_eq!(server.status(Method::GET, "/pets", &reporting).await, 401, "the old secret is dead");
    assert_eq!(server.status(Method::GET, "/pets", &rotated).await, 200);
    assert_eq!(server.status(Method::GET, "/pets", OPERATOR_KEY).await, 200);

    assert!(
        refused(&db, &["keys", "create", "--name", "Till", "--scope", "read"]).contains("already exists")
    );
    assert!(refused(&db, &["keys", "revoke", "nobody"]).contains("no API key named \"nobody\""));
    assert!(refused(&db, &["keys", "revoke", "till"]).contains("revoked"));
    assert!(refused(&db, &["keys", "rotate", "till"]).contains("revoked"));
    assert!(refused(&db, &["keys", "list", "--db", "/nonexistent/shop.db"]).contains("does not exist"));
    let script = ok(&db, &["keys", "create", "--name", "sales script", "--scope", "reports"]);
    assert!(script.contains("scope reports"), "{script}");
    let bad_scope = cli(&db, &["keys", "create", "--name", "x", "--scope", "admin"]);
    assert!(!bad_scope.status.success() && text(&bad_scope.stderr).contains("read, write, reports or till"));
    let blank = cli(&db, &["keys", "create", "--name", " ", "--scope", "read"]);
    assert!(!blank.status.success() && text(&blank.stderr).contains("blank"));

    let listed = ok(&db, &["keys", "list"]);
    let log = server.stop();
    assert!(log.contains("/pets"), "the server logged its requests:\n{log}");
    for secret in [&till, &reporting, &rotated, &OPERATOR_KEY.to_owned()] {
        assert!(!listed.contains(&secret[4..]), "a listing shows a secret:\n{listed}");
        assert!(!log.contains(&secret[4..]), "the server log holds a secret:\n{log}");
        assert!(!listed.contains(&hex::encode(api_key::hash(secret))), "a listing shows a hash");
    }
}
