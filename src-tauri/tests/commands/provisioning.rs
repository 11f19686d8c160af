//! Provisioning: a remote set by the environment (`PETSTORE_REMOTE_URL` with
//! `PETSTORE_REMOTE_KEY` or `PETSTORE_REMOTE_KEY_FILE`), as IT sets up many tills. Here it is
//! handed in through `Launch` (the tests run in parallel, so none sets a process variable),
//! against a real server on port 0. It wins over the saved settings and is written nowhere.

use std::path::Path;

use petstore_desktop::{Launch, Provisioning};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::helpers::{TestApp, app, app_in, app_with, pet_query};
use crate::remote_key::{
    Env, captured_log, env, files_containing, keyring_entry, remote_server, settings, unique_key,
};

/// The app on `dir`, launched with these values of the three variables.
fn launched(dir: TempDir, url: Option<&str>, key: Option<&str>, key_file: Option<&Path>) -> TestApp {
    let provisioning =
        Provisioning::from_vars(url.map(Into::into), key.map(Into::into), key_file.map(Into::into));
    app_with(Launch { data_dir: Some(dir.path().to_path_buf()), local_api_port: Some(0), provisioning }, dir)
}

/// A till as it is before IT provisions it: local mode saved, a pet in the local database.
/// Returns its data directory and `settings.json` as saved.
fn local_till() -> (TempDir, Value) {
    let app = app();
    app.ok("create_pet", json!({ "pet": { "name": "Local only" } }));
    app.ok("save_settings", settings("local", "", Value::Null));
    let dir = app.dir;
    drop(app.app);
    let saved = settings_json(dir.path());
    assert_eq!(saved["settings"]["backend"], "local", "{saved}");
    (dir, saved)
}

fn settings_json(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("settings.json")).unwrap()).unwrap()
}

/// The provisioned key and address are in no file of the data directory and not in the
/// keyring: `settings.json` holds what was saved before, and the app keeps the key nowhere.
fn assert_written_nowhere(dir: &Path, base_url: &str, key: &str, saved: &Value) {
    assert_eq!(&settings_json(dir), saved, "settings.json is as it was saved");
    assert_eq!(files_containing(dir, key), Vec::<String>::new(), "the key is in no file");
    let settings_text = std::fs::read_to_string(dir.join("settings.json")).unwrap();
    assert!(!settings_text.contains(base_url), "the address is not saved: {settings_text}");
    if env() == Env::Keyring {
        let kept = keyring_entry(dir).get_password();
        assert!(!kept.is_ok_and(|k| k.contains(key)), "the key is not in the keyring");
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
fn the_provisioned_remote_wins_over_saved_local_settings_and_is_written_nowhere() {
    let key = unique_key("provisioned");
    let (base_url, _remote) = remote_server(&key);
    let (dir, saved) = local_till();

    let app = launched(dir, Some(&format!("{base_url}/")), Some(&key), None);
    let view = app.ok("get_settings", json!({}));
    assert_eq!(
        (view["backend"].as_str(), view["baseUrl"].as_str()),
        (Some("remote"), Some(base_url.as_str()))
    );
    assert_eq!((view["provisioned"].as_bool(), view["hasRemoteKey"].as_bool()), (Some(true), Some(true)));
    assert!(!view.to_string().contains(&key), "the key never goes to the webview: {view}");

    // Every command works on the remote store, not on the local one.
    assert_eq!(app.ok("list_pets", pet_query(json!({})))["total"], 0);
    app.ok("create_pet", json!({ "pet": { "name": "Remote Rex" } }));
    assert_eq!(remote_pet_names(&base_url, &key), ["Remote Rex"]);
    let status = app.ok("get_status", json!({}));
    assert_eq!(status["backend"], "remote", "{status}");
    assert_eq!(
        (status["target"].as_str(), status["reachable"].as_bool()),
        (Some(base_url.as_str()), Some(true))
    );
    assert_eq!(status["message"], Value::Null);
    assert_eq!(status["remoteKeyStorage"], Value::Null, "the app keeps this key nowhere: {status}");
    // "Test connection" with a blank key uses the environment's key at its own address.
    let report = app.ok("test_connection", json!({ "baseUrl": base_url, "remoteKey": null }));
    assert_eq!(report["ok"], true, "{report}");
    assert_written_nowhere(app.dir.path(), &base_url, &key, &saved);

    // Started without it, the till is as it was saved.
    let dir = app.dir;
    drop(app.app);
    assert_written_nowhere(dir.path(), &base_url, &key, &saved);
    let app = app_in(dir);
    let view = app.ok("get_settings", json!({}));
    assert_eq!(view["backend"], "local");
    assert!(view.get("provisioned").is_none(), "{view}");
    assert_eq!(app.ok("list_pets", pet_query(json!({})))["items"][0]["name"], "Local only");
}

#[test]
fn saving_while_provisioned_keeps_the_remote_and_saves_only_the_local_api() {
    let key = unique_key("provisioned-save");
    let (base_url, _remote) = remote_server(&key);
    let (dir, saved) = local_till();
    let app = launched(dir, Some(&base_url), Some(&key), None);

    // The backend, the address and the key are the environment's.
    let to_local = app.fails("save_settings", settings("local", "", Value::Null));
    assert_eq!(to_local["code"], "validation_failed", "{to_local}");
    assert!(
        to_local["message"].as_str().unwrap().contains("remote mode is set by PETSTORE_REMOTE_URL"),
        "{to_local}"
    );
    let elsewhere = app.fails("save_settings", settings("remote", "http://127.0.0.1:9", Value::Null));
    assert_eq!(elsewhere["code"], "validation_failed", "{elsewhere}");
    let other_key =
        app.fails("save_settings", settings("remote", &base_url, json!("another-key-0123456789")));
    assert!(other_key["message"].as_str().unwrap().contains("PETSTORE_REMOTE_KEY"), "{other_key}");
    assert_written_nowhere(app.dir.path(), &base_url, &key, &saved);

    // What Settings sends back unchanged saves the local API's settings, and only them.
    let mut input = settings("remote", &base_url, Value::Null);
    input["settings"]["localApi"]["port"] = json!(8799);
    let view = app.ok("save_settings", input);
    assert_eq!((view["provisioned"].as_bool(), view["backend"].as_str()), (Some(true), Some("remote")));
    assert_eq!(view["localApi"]["port"], 8799);
    let mut expected = saved.clone();
    expected["settings"]["localApi"]["port"] = json!(8799);
    assert_written_nowhere(app.dir.path(), &base_url, &key, &expected);
    assert_eq!(expected["settings"]["backend"], "local");
    app.ok("create_pet", json!({ "pet": { "name": "Still remote" } }));
    assert_eq!(remote_pet_names(&base_url, &key), ["Still remote"]);

    let dir = app.dir;
    drop(app.app);
    let app = app_in(dir);
    let view = app.ok("get_settings", json!({}));
    assert_eq!((view["backend"].as_str(), view["localApi"]["port"].as_u64()), (Some("local"), Some(8799)));
}

#[test]
fn the_key_can_come_from_a_file_read_at_start_and_trimmed() {
    let key = unique_key("provisioned-file");
    let (base_url, _remote) = remote_server(&key);
    let elsewhere = tempfile::tempdir().unwrap();
    let key_file = elsewhere.path().join("till.key");
    std::fs::write(&key_file, format!("{key}\n")).unwrap();

    let app = launched(tempfile::tempdir().unwrap(), Some(&base_url), None, Some(&key_file));
    assert_eq!(app.ok("get_settings", json!({}))["provisioned"], true);
    app.ok("create_pet", json!({ "pet": { "name": "From the file" } }));
    assert_eq!(remote_pet_names(&base_url, &key), ["From the file"]);
    assert_eq!(app.ok("get_status", json!({}))["reachable"], true);
    assert_eq!(files_containing(app.dir.path(), &key), Vec::<String>::new());
}

#[test]
fn a_bad_provisioning_starts_the_till_as_saved_and_the_status_bar_says_why() {
    let key = unique_key("provisioned-bad");
    let missing = tempfile::tempdir().unwrap().path().join("missing.key");
    // The three variables, and what the status bar must say.
    type Case<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a Path>, &'a str);
    let cases: [Case; 5] = [
        (Some("shop-server.lan:8787"), Some(&key), None, "PETSTORE_REMOTE_URL cannot be used"),
        (Some("http://127.0.0.1:9"), None, Some(&missing), "PETSTORE_REMOTE_KEY_FILE"),
        (Some("http://127.0.0.1:9"), Some(&key), Some(&missing), "set only one"),
        (Some("http://127.0.0.1:9"), None, None, "neither PETSTORE_REMOTE_KEY nor"),
        (None, Some(&key), None, "PETSTORE_REMOTE_URL is not"),
    ];
    for (url, key_value, key_file, why) in cases {
        let app = launched(tempfile::tempdir().unwrap(), url, key_value, key_file);
        let status = app.ok("get_status", json!({}));
        assert_eq!(status["backend"], "local", "{status}");
        assert_eq!(status["reachable"], false, "the staff see something is wrong: {status}");
        let message = status["message"].as_str().unwrap_or_default();
        assert!(message.contains(why) && message.contains("saved settings"), "{why:?}: {status}");
        assert!(!message.contains(&key), "{status}");
        let view = app.ok("get_settings", json!({}));
        assert!(view.get("provisioned").is_none(), "{view}");
        // The till works on what was saved.
        app.ok("create_pet", json!({ "pet": { "name": "Sold anyway" } }));
        assert_eq!(app.ok("list_pets", pet_query(json!({})))["total"], 1);
    }
}

#[test]
fn a_bad_provisioning_keeps_a_saved_remote() {
    let key = unique_key("provisioned-saved-remote");
    let (base_url, _remote) = remote_server(&key);
    let app = app();
    app.ok("save_settings", settings("remote", &base_url, json!(key)));
    app.ok("create_pet", json!({ "pet": { "name": "Saved remote" } }));
    let dir = app.dir;
    drop(app.app);

    let app = launched(dir, Some("http://127.0.0.1:9"), None, None);
    assert_eq!(app.ok("list_pets", pet_query(json!({})))["items"][0]["name"], "Saved remote");
    let status = app.ok("get_status", json!({}));
    assert_eq!((status["backend"].as_str(), status["reachable"].as_bool()), (Some("remote"), Some(false)));
    assert!(
        status["message"].as_str().unwrap_or_default().contains("PETSTORE_REMOTE_URL is set"),
        "{status}"
    );
}

#[test]
fn the_provisioned_key_never_reaches_the_log_or_a_debug_form() {
    let log = captured_log();
    let key = unique_key("provisioned-logged");
    let (base_url, _remote) = remote_server(&key);
    let provisioning = Provisioning::from_vars(Some(base_url.clone()), Some(key.clone()), None);
    let dir = tempfile::tempdir().unwrap();
    let launch = Launch { data_dir: Some(dir.path().to_path_buf()), local_api_port: Some(0), provisioning };
    let debug = format!("{launch:?}");
    assert!(!debug.contains(&key) && debug.contains(&base_url), "{debug}");

    let app = app_with(launch, dir);
    app.ok("create_pet", json!({ "pet": { "name": "Logged Lou" } }));
    app.fails("get_pet", json!({ "id": 999_999 }));
    app.ok("test_connection", json!({ "baseUrl": base_url, "remoteKey": null }));
    app.fails("save_settings", settings("local", "", Value::Null));
    app.ok("get_status", json!({}));
    // A key that cannot be sent is refused without repeating it.
    let bad = format!("{key}\nsecond line");
    drop(launched(tempfile::tempdir().unwrap(), Some(&base_url), Some(&bad), None));

    let text = String::from_utf8_lossy(&log.lock().unwrap()).into_owned();
    assert!(text.contains("remote mode, as set by PETSTORE_REMOTE_URL"), "nothing was captured:\n{text}");
    let leaks: Vec<_> = text.lines().filter(|l| l.contains(key.as_str())).collect();
    assert!(leaks.is_empty(), "the key is in the log:\n{}", leaks.join("\n"));
}
