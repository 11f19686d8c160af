//! The saved remote key goes only to the origin (scheme, host, port) it was saved for: a
//! new address, or the same one over plain http instead of https, needs the key typed
//! again. A "catcher" (a loopback HTTP server that records every Authorization header it
//! receives) stands at the other address; the saved key must never reach it, whether
//! through "Test connection" with the key left blank, saving settings with the key left
//! unchanged, a restart, or a key saved by a version that recorded no origin.
//!
//! Like `remote_key`, these run in every keyring environment (`make keyring-test` too).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{TestApp, app, app_in, pet_query};
use crate::remote_key::{Env, env, keyring_entry, remote_server, settings, unique_key};

/// A loopback HTTP server that records the Authorization header of every request (or
/// `None` for a request without one) and answers 401, as a stranger's server might.
struct Catcher {
    base_url: String,
    seen: Arc<Mutex<Vec<Option<String>>>>,
}

impl Catcher {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let log = log.clone();
                std::thread::spawn(move || catch(stream, &log));
            }
        });
        Self { base_url, seen }
    }

    /// The catcher's port, for addresses that differ from `base_url` in scheme only.
    fn port(&self) -> &str {
        self.base_url.rsplit(':').next().unwrap()
    }

    /// Asserts that no request reached the catcher carrying `key` (in any header form).
    fn assert_never_got(&self, key: &str) {
        let seen = self.seen.lock().unwrap();
        let leaks = seen.iter().flatten().filter(|auth| auth.contains(key)).count();
        assert_eq!(leaks, 0, "the saved key reached {} in {leaks} of {} requests", self.base_url, seen.len());
    }

    /// How many requests reached the catcher with `key`.
    fn times_got(&self, key: &str) -> usize {
        self.seen.lock().unwrap().iter().flatten().filter(|auth| auth.contains(key)).count()
    }
}

/// Reads one request head, records its Authorization header and answers 401.
fn catch(mut stream: TcpStream, seen: &Mutex<Vec<Option<String>>>) {
    // A client that connects and never writes must not keep this thread for good.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    // Nothing, or a TLS handshake (an https client at this http port): no header to see,
    // and closing at once spares the client its time-out.
    if head.first().is_none_or(|&b| b == 0x16) {
        return;
    }
    let text = String::from_utf8_lossy(&head);
    let auth = text
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("authorization"))
        .map(|(_, value)| value.trim().to_owned());
    seen.lock().unwrap().push(auth);
    let body = r#"{"code":"unauthorized","message":"the API key is not valid"}"#;
    let _ = stream.write_all(
        format!(
            "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
}

/// Every way the app could reach `catcher` with the key left blank: Test connection, and
/// saving remote settings at its address (then a call and the status, in case it took).
/// `key` must never reach it; each must be refused with a message that names the address
/// and asks for the key.
fn try_the_saved_key_at(app: &TestApp, catcher: &Catcher, key: &str) {
    let address = catcher.base_url.as_str();
    let report = app.ok("test_connection", json!({ "baseUrl": address, "remoteKey": null }));
    catcher.assert_never_got(key);
    assert_eq!(report["ok"], false, "{report}");
    assert_needs_key_typed(report["message"].as_str().unwrap(), address);

    let saved = app.call::<Value>("save_settings", settings("remote", address, Value::Null));
    let _ = app.call::<Value>("list_pets", pet_query(json!({})));
    let _ = app.call::<Value>("get_status", json!({}));
    catcher.assert_never_got(key);
    let refused = saved.expect_err("saving the address with the key left blank is refused");
    assert_eq!(refused["code"], "validation_failed", "{refused}");
    assert_needs_key_typed(refused["message"].as_str().unwrap(), address);
}

/// The message says the key must be typed again for `address`, and names it.
fn assert_needs_key_typed(message: &str, address: &str) {
    assert!(message.contains(address), "the message names the address {address}: {message}");
    assert!(message.contains("type"), "the message asks for the key to be typed again: {message}");
}

/// Deletes the saved key, so that no test leaves one in the session's keyring.
fn forget(app: &TestApp) {
    app.ok("save_settings", settings("local", "", json!("")));
}

fn restart(app: TestApp) -> TestApp {
    let dir = app.dir;
    drop(app.app);
    app_in(dir)
}

#[test]
fn the_saved_key_never_reaches_a_new_address_by_test_connection_or_save_settings() {
    let key = unique_key("origin");
    let (base_url, _remote) = remote_server(&key);
    let catcher = Catcher::start();
    let app = app();
    app.ok("save_settings", settings("remote", &base_url, json!(key)));

    try_the_saved_key_at(&app, &catcher, &key);
    // Nothing changed: the app still works on the server the key was saved for.
    assert_eq!(app.ok("get_settings", json!({}))["baseUrl"], base_url);
    app.ok("create_pet", json!({ "pet": { "name": "Still Remote" } }));

    // Nor after a restart.
    let app = restart(app);
    try_the_saved_key_at(&app, &catcher, &key);
    forget(&app);
}

#[test]
fn a_key_saved_for_https_is_never_sent_over_plain_http_to_the_same_host_and_port() {
    let key = unique_key("https");
    let catcher = Catcher::start();
    let https = format!("https://127.0.0.1:{}", catcher.port());
    let app = app();
    // Saving sends nothing; the key now belongs to the https origin.
    app.ok("save_settings", settings("remote", &https, json!(key)));

    try_the_saved_key_at(&app, &catcher, &key);
    forget(&app);
}

#[test]
fn changing_the_address_in_local_mode_does_not_carry_the_saved_key_to_it() {
    let key = unique_key("local-edit");
    let (base_url, _remote) = remote_server(&key);
    let catcher = Catcher::start();
    let app = app();
    app.ok("save_settings", settings("remote", &base_url, json!(key)));
    // Back to local with the catcher's address typed and the key kept: allowed, since local
    // mode sends no key anywhere; the key stays the other server's.
    app.ok("save_settings", settings("local", &catcher.base_url, Value::Null));
    assert_eq!(app.ok("get_settings", json!({}))["hasRemoteKey"], true);

    let app = restart(app);
    try_the_saved_key_at(&app, &catcher, &key);
    // The key still works where it was saved.
    app.ok("save_settings", settings("remote", &base_url, Value::Null));
    app.ok("create_pet", json!({ "pet": { "name": "Home Again" } }));
    forget(&app);
}

#[test]
fn a_new_address_works_once_the_key_is_typed_again_and_the_same_address_needs_no_retyping() {
    let key = unique_key("retyped");
    // The shop moved its server: the new one accepts the same key.
    let (old, _old_remote) = remote_server(&key);
    let (new, _new_remote) = remote_server(&key);
    let app = app();
    app.ok("save_settings", settings("remote", &old, json!(key)));

    // Same origin, key left blank: Test connection, saving (also with a trailing slash,
    // still the same origin) and a restart all keep using the saved key.
    let report = app.ok("test_connection", json!({ "baseUrl": old, "remoteKey": null }));
    assert_eq!(report["ok"], true, "{report}");
    app.ok("save_settings", settings("remote", &format!("{old}/"), Value::Null));
    app.ok("save_settings", settings("remote", &old, Value::Null));
    let app = restart(app);
    app.ok("create_pet", json!({ "pet": { "name": "Old Server" } }));

    // The new address with the key typed again: tested, saved, used, kept over a restart.
    let report = app.ok("test_connection", json!({ "baseUrl": new, "remoteKey": key }));
    assert_eq!(report["ok"], true, "{report}");
    app.ok("save_settings", settings("remote", &new, json!(key)));
    app.ok("create_pet", json!({ "pet": { "name": "New Server" } }));
    let app = restart(app);
    let report = app.ok("test_connection", json!({ "baseUrl": new, "remoteKey": null }));
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(app.ok("list_pets", pet_query(json!({})))["items"][0]["name"], "New Server");

    // And now the old address is the one that needs the key typed again.
    let report = app.ok("test_connection", json!({ "baseUrl": old, "remoteKey": null }));
    assert_eq!(report["ok"], false, "{report}");
    assert_needs_key_typed(report["message"].as_str().unwrap(), &old);
    forget(&app);
}

/// Writes `key` where a version that recorded no origin kept it: the keyring entry when
/// this environment has a working keyring, else the private file.
fn write_unbound_key(dir: &Path, key: &str) {
    match env() {
        Env::Keyring => keyring_entry(dir).set_password(key).unwrap(),
        Env::NoKeyring | Env::LockedKeyring => std::fs::write(dir.join("remote-api.key"), key).unwrap(),
    }
}

fn write_settings(dir: &Path, saved: Value) {
    std::fs::write(dir.join("settings.json"), saved.to_string()).unwrap();
}

#[test]
fn a_key_saved_without_an_origin_belongs_to_the_address_saved_with_it() {
    let key = unique_key("unbound");
    let (base_url, _remote) = remote_server(&key);
    let catcher = Catcher::start();
    let dir = tempfile::tempdir().unwrap();
    write_settings(
        dir.path(),
        json!({ "settings": {
            "backend": "remote", "baseUrl": base_url, "localApi": { "enabled": false, "port": 8787 }
        } }),
    );
    write_unbound_key(dir.path(), &key);

    // It still works where it was used before.
    let app = app_in(dir);
    app.ok("create_pet", json!({ "pet": { "name": "Upgraded" } }));
    assert_eq!(app.ok("test_connection", json!({ "baseUrl": base_url, "remoteKey": null }))["ok"], true);
    try_the_saved_key_at(&app, &catcher, &key);

    // The address changed in local mode and the app restarted: the key is not the
    // catcher's now either (it was tied to its address at the first start).
    app.ok("save_settings", settings("local", &catcher.base_url, Value::Null));
    let app = restart(app);
    try_the_saved_key_at(&app, &catcher, &key);
    app.ok("save_settings", settings("remote", &base_url, Value::Null));
    app.ok("create_pet", json!({ "pet": { "name": "Still There" } }));
    forget(&app);
}

#[test]
fn a_key_saved_in_settings_json_by_an_earlier_version_belongs_to_the_address_beside_it() {
    let key = unique_key("legacy-origin");
    let (base_url, _remote) = remote_server(&key);
    let catcher = Catcher::start();
    let dir = tempfile::tempdir().unwrap();
    write_settings(
        dir.path(),
        json!({
            "settings": { "backend": "remote", "baseUrl": base_url, "localApi": { "enabled": false, "port": 8787 } },
            "remoteKey": key,
        }),
    );

    let app = app_in(dir);
    app.ok("create_pet", json!({ "pet": { "name": "Migrated" } }));
    try_the_saved_key_at(&app, &catcher, &key);
    let app = restart(app);
    try_the_saved_key_at(&app, &catcher, &key);
    forget(&app);
}

#[test]
fn a_key_saved_without_an_origin_or_an_address_is_sent_nowhere_until_typed_again() {
    let key = unique_key("nowhere");
    let catcher = Catcher::start();
    let dir = tempfile::tempdir().unwrap();
    write_settings(
        dir.path(),
        json!({ "settings": { "backend": "local", "baseUrl": null, "localApi": { "enabled": false, "port": 8787 } } }),
    );
    write_unbound_key(dir.path(), &key);

    let app = app_in(dir);
    assert_eq!(app.ok("get_settings", json!({}))["hasRemoteKey"], true);
    try_the_saved_key_at(&app, &catcher, &key);
    let app = restart(app);
    try_the_saved_key_at(&app, &catcher, &key);

    // Typed again, it goes where it was typed for.
    let report = app.ok("test_connection", json!({ "baseUrl": catcher.base_url, "remoteKey": key }));
    assert_eq!(report["ok"], false, "the catcher refuses every key: {report}");
    assert_eq!(catcher.times_got(&key), 1, "a typed key is sent to the address it was typed for");
    forget(&app);
}
