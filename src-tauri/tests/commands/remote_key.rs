//! Where the remote server's API key is kept, against a real server on port 0: never in
//! `settings.json`, never in the webview, never in the log; in the OS keyring when one
//! works, else in a private file the UI warns about.
//!
//! The same tests run in three environments, named by `PETSTORE_KEYRING_TEST`:
//! - unset (`make test`): no Secret Service (no session bus), so the key must land in the
//!   0600 file and the UI is told there is no keyring;
//! - `1` (`make keyring-test`, inside `dbus-run-session` with an unlocked gnome-keyring):
//!   the key must land in the keyring and in no file at all;
//! - `locked` (the same, after the keyring was locked): the keyring is there but refuses,
//!   so the key must land in the file and the UI is told why.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use petstore::api::KeyRing;
use petstore::server::{Application, ServerConfig};
use serde_json::{Value, json};

use crate::helpers::{TestApp, app, app_in, pet_query};

const SERVICE: &str = "org.petstore.desktop";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Env {
    NoKeyring,
    Keyring,
    LockedKeyring,
}

/// The environment this run is in (see the module comment).
pub(crate) fn env() -> Env {
    match std::env::var("PETSTORE_KEYRING_TEST").as_deref() {
        Err(_) => Env::NoKeyring,
        Ok("locked") => Env::LockedKeyring,
        Ok(_) => Env::Keyring,
    }
}

/// What the status bar and Settings must say in this environment.
fn expected_storage() -> &'static str {
    if env() == Env::Keyring { "keyring" } else { "file" }
}

/// A real Petstore server in this process that accepts `key`; it lives as long as the test.
pub(crate) fn remote_server(key: &str) -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = petstore::Store::open(dir.path().join("remote.db")).unwrap();
    let config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), KeyRing::from_secrets([key]));
    let server = tauri::async_runtime::block_on(Application::bind(
        petstore::Served::all_of(std::sync::Arc::new(store)),
        config,
    ))
    .unwrap();
    let addr: SocketAddr = server.local_addr();
    tauri::async_runtime::spawn(server.run_until(std::future::pending()));
    (format!("http://{addr}"), dir)
}

/// A key no other test uses, so that a search of files or the log finds only this one.
pub(crate) fn unique_key(name: &str) -> String {
    format!("{name}-{}-{:x}", std::process::id(), std::time::UNIX_EPOCH.elapsed().unwrap().as_nanos())
}

pub(crate) fn settings(backend: &str, base_url: &str, key: Value) -> Value {
    json!({ "settings": {
        "backend": backend, "baseUrl": base_url, "remoteKey": key,
        "localApi": { "enabled": false, "port": 8787 }
    } })
}

/// The keyring entry of the data directory `dir` (not the default one, so its own account).
pub(crate) fn keyring_entry(dir: &Path) -> keyring::Entry {
    keyring::Entry::new(SERVICE, &format!("remote-api-key:{}", dir.display())).unwrap()
}

/// Every file under `dir` whose bytes contain `needle`.
pub(crate) fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_containing(&path, needle));
        } else if let Ok(bytes) = std::fs::read(&path)
            && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        {
            found.push(path.display().to_string());
        }
    }
    found
}

/// `settings.json` as saved, which must never hold a key.
fn settings_json(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("settings.json")).unwrap()).unwrap()
}

/// What the keyring entry or the file holds: the key and the origin it may be sent to
/// (`base_url`, here always an origin itself: `http://127.0.0.1:<port>`).
fn kept_text(base_url: &str, key: &str) -> String {
    format!("origin={base_url}\nkey={key}")
}

/// The key is kept, for `base_url`, where this environment says, and nowhere else.
fn assert_kept(app: &TestApp, base_url: &str, key: &str) {
    let dir = app.dir.path();
    let view = app.ok("get_settings", json!({}));
    assert_eq!(view["hasRemoteKey"], true);
    assert!(!view.to_string().contains(key), "the key never goes to the webview: {view}");
    let saved = settings_json(dir);
    assert!(saved.get("remoteKey").is_none() && !saved.to_string().contains(key), "settings.json: {saved}");
    match env() {
        Env::Keyring => {
            assert_eq!(view["remoteKeyStorage"], "keyring", "{view}");
            assert_eq!(view["keyringError"], Value::Null);
            assert_eq!(keyring_entry(dir).get_password().unwrap(), kept_text(base_url, key));
            assert_eq!(files_containing(dir, key), Vec::<String>::new(), "the key is in the keyring only");
        }
        Env::NoKeyring => {
            assert_eq!(
                view["keyringError"],
                Value::Null,
                "no keyring at all is not a keyring failure: {view}"
            );
            assert_in_private_file(&view, dir, base_url, key);
        }
        Env::LockedKeyring => {
            let why = view["keyringError"].as_str().unwrap_or_default();
            assert!(why.contains("locked"), "the UI is told why the keyring was not used: {view}");
            assert_in_private_file(&view, dir, base_url, key);
        }
    }
}

fn assert_in_private_file(view: &Value, dir: &Path, base_url: &str, key: &str) {
    assert_eq!(view["remoteKeyStorage"], "file", "{view}");
    let file = dir.join("remote-api.key");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), kept_text(base_url, key));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "only the user may read the file: mode {mode:o}");
    }
    assert_eq!(files_containing(dir, key), vec![file.display().to_string()], "the file and nothing else");
}

/// The key is nowhere: not in the keyring, not in any file.
fn assert_gone(app: &TestApp, key: &str) {
    let dir = app.dir.path();
    assert_eq!(app.ok("get_settings", json!({}))["hasRemoteKey"], false);
    assert_eq!(files_containing(dir, key), Vec::<String>::new());
    if env() == Env::Keyring {
        assert!(matches!(keyring_entry(dir).get_password(), Err(keyring::Error::NoEntry)));
    }
}

/// The pets of the remote store, asked directly with `key`.
fn remote_pet_names(base_url: &str, key: &str) -> Vec<String> {
    use petstore::Petstore;
    let client = petstore::client::Client::new(base_url, key).unwrap();
    let page = petstore::domain::Page::new(50, 0).unwrap();
    let pets = tauri::async_runtime::block_on(client.list_pets(Default::default(), page)).unwrap();
    pets.items.into_iter().map(|p| p.name).collect()
}

#[test]
fn the_saved_key_is_kept_outside_settings_used_for_remote_calls_and_forgotten() {
    let key = unique_key("kept");
    let (base_url, _remote) = remote_server(&key);
    let app = app();

    app.ok("save_settings", settings("remote", &base_url, json!(key)));
    assert_kept(&app, &base_url, &key);
    app.ok("create_pet", json!({ "pet": { "name": "Remote Rex" } }));
    assert_eq!(remote_pet_names(&base_url, &key), ["Remote Rex"], "the app called the remote with the key");
    let status = app.ok("get_status", json!({}));
    assert_eq!(status["reachable"], true, "{status}");
    assert_eq!(status["remoteKeyStorage"], expected_storage(), "the status bar knows where the key is");

    // After a restart the key comes back from where it is kept.
    let dir = app.dir;
    drop(app.app);
    let app = app_in(dir);
    assert_kept(&app, &base_url, &key);
    assert_eq!(app.ok("list_pets", pet_query(json!({})))["items"][0]["name"], "Remote Rex");

    // A blank key in remote mode is refused and deletes nothing.
    let refused = app.fails("save_settings", settings("remote", &base_url, json!("  ")));
    assert_eq!(refused["code"], "validation_failed", "{refused}");
    assert_kept(&app, &base_url, &key);

    // Switching to local with the key blanked deletes it from wherever it is.
    app.ok("save_settings", settings("local", &base_url, json!("")));
    assert_gone(&app, &key);
    let status = app.ok("get_status", json!({}));
    assert_eq!(status["remoteKeyStorage"], Value::Null, "local mode has no remote key to warn about");
    let dir = app.dir;
    drop(app.app);
    let app = app_in(dir);
    assert_gone(&app, &key);
}

#[test]
fn a_key_saved_in_settings_json_by_an_earlier_version_moves_out_on_first_start() {
    let key = unique_key("legacy");
    let (base_url, _remote) = remote_server(&key);
    let dir = tempfile::tempdir().unwrap();
    // What versions before the keyring wrote.
    let legacy = json!({
        "settings": { "backend": "remote", "baseUrl": base_url, "localApi": { "enabled": false, "port": 8787 } },
        "remoteKey": key,
    });
    std::fs::write(dir.path().join("settings.json"), legacy.to_string()).unwrap();

    let app = app_in(dir);
    assert_kept(&app, &base_url, &key);
    assert_eq!(settings_json(app.dir.path())["settings"]["baseUrl"], base_url, "the settings stay");
    app.ok("create_pet", json!({ "pet": { "name": "Migrated Max" } }));
    assert_eq!(remote_pet_names(&base_url, &key), ["Migrated Max"]);

    // And it stays moved.
    let dir = app.dir;
    drop(app.app);
    let app = app_in(dir);
    assert_kept(&app, &base_url, &key);
    app.ok("save_settings", settings("local", &base_url, json!("")));
    assert_gone(&app, &key);
}

/// Everything logged in this process, at every level, from `tracing` and from the `log`
/// crate (reqwest, the keyring crate); set up once for the whole test binary.
pub(crate) fn captured_log() -> Arc<Mutex<Vec<u8>>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || Capture(sink.clone()))
            .try_init()
            .expect("no other test installs a logger");
        log
    })
    .clone()
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_remote_key_never_reaches_the_log() {
    let log = captured_log();
    let key = unique_key("logged");
    let wrong = unique_key("wrong");
    let (base_url, _remote) = remote_server(&key);
    let app = app();

    // A whole remote session: tests (right and wrong key), saving, calls, a remote error,
    // the status, a restart, forgetting the key.
    assert_eq!(app.ok("test_connection", json!({ "baseUrl": base_url, "remoteKey": key }))["ok"], true);
    assert_eq!(app.ok("test_connection", json!({ "baseUrl": base_url, "remoteKey": wrong }))["ok"], false);
    app.fails("save_settings", settings("remote", "ftp://nowhere", json!(key)));
    app.ok("save_settings", settings("remote", &base_url, json!(key)));
    app.ok("create_pet", json!({ "pet": { "name": "Logged Lou" } }));
    app.fails("get_pet", json!({ "id": 999_999 }));
    app.ok("get_status", json!({}));
    let dir = app.dir;
    drop(app.app);
    let app = app_in(dir);
    app.ok("list_pets", pet_query(json!({})));
    app.ok("save_settings", settings("local", &base_url, json!("")));

    let text = String::from_utf8_lossy(&log.lock().unwrap()).into_owned();
    // The capture works: the client's request lines are there...
    assert!(text.contains("petstore client request"), "nothing was captured:\n{text}");
    assert!(text.lines().count() > 20, "too little was captured:\n{text}");
    // ...and neither key is.
    for secret in [&key, &wrong] {
        let leaks: Vec<_> = text.lines().filter(|l| l.contains(secret.as_str())).collect();
        assert!(leaks.is_empty(), "the key is in the log:\n{}", leaks.join("\n"));
    }
}

/// Locks the session keyring's default collection, as a screen lock or a user would.
fn lock_the_keyring() {
    let status = std::process::Command::new("dbus-send")
        .args([
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.secrets",
            "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.Lock",
            "array:objpath:/org/freedesktop/secrets/aliases/default",
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("dbus-send");
    assert!(status.success());
}

#[test]
#[ignore = "locks the session's keyring for good: run alone by `make keyring-test`"]
fn a_keyring_that_refuses_after_start_keeps_the_key_in_the_file_and_says_why() {
    assert_eq!(env(), Env::Keyring, "needs an unlocked keyring at the start");
    let key = unique_key("refused");
    let (base_url, _remote) = remote_server(&key);
    let app = app();
    assert_eq!(app.ok("get_settings", json!({}))["remoteKeyStorage"], "keyring");

    lock_the_keyring();
    app.ok("save_settings", settings("remote", &base_url, json!(key)));
    let view = app.ok("get_settings", json!({}));
    let why = view["keyringError"].as_str().unwrap_or_default();
    assert!(why.contains("locked"), "the UI is told why the keyring was not used: {view}");
    assert_in_private_file(&view, app.dir.path(), &base_url, &key);
    assert!(!settings_json(app.dir.path()).to_string().contains(&key));
    assert_eq!(app.ok("get_status", json!({}))["remoteKeyStorage"], "file");
    app.ok("create_pet", json!({ "pet": { "name": "Kept Kim" } }));
    assert_eq!(remote_pet_names(&base_url, &key), ["Kept Kim"]);
}
