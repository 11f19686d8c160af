//! Settings and remote mode, against a real `petstore` server on port 0.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::helpers::{REMOTE_KEY, app, app_in, pet_query, remote_server};

fn remote_settings(base_url: &str, key: Option<&str>) -> Value {
    json!({ "settings": {
        "backend": "remote", "baseUrl": base_url, "remoteKey": key,
        "localApi": { "enabled": false, "port": 8787 }
    } })
}

#[test]
fn the_defaults_are_local_mode_with_the_local_api_on() {
    let app = app();
    let settings = app.ok("get_settings", json!({}));
    assert_eq!(settings["backend"], "local");
    assert_eq!(settings["localApi"]["enabled"], true);
    assert_eq!(settings["hasRemoteKey"], false);
    let status = app.ok("get_status", json!({}));
    assert_eq!((status["backend"].as_str(), status["reachable"].as_bool()), (Some("local"), Some(true)));
}

#[test]
fn remote_mode_manages_the_remote_store_and_never_shows_its_key() {
    let (addr, _remote) = remote_server();
    let base_url = format!("http://{addr}");
    let app = app();
    app.ok("create_pet", json!({ "pet": { "name": "Local only" } }));

    let report = app.ok("test_connection", json!({ "baseUrl": base_url, "remoteKey": REMOTE_KEY }));
    assert_eq!(report["ok"], true, "{report}");
    let wrong =
        app.ok("test_connection", json!({ "baseUrl": base_url, "remoteKey": "not-the-key-0123456789abc" }));
    assert_eq!(wrong["ok"], false);
    assert!(wrong["message"].as_str().unwrap().contains("not valid"), "{wrong}");

    let saved = app.ok("save_settings", remote_settings(&base_url, Some(REMOTE_KEY)));
    assert_eq!(saved["hasRemoteKey"], true);
    assert!(!saved.to_string().contains(REMOTE_KEY), "the key never goes back to the webview");
    assert!(!app.ok("get_settings", json!({})).to_string().contains(REMOTE_KEY));

    app.ok("create_pet", json!({ "pet": { "name": "Remote Rex" } }));
    let remote_pets = app.ok("list_pets", pet_query(json!({})));
    assert_eq!(remote_pets["total"], 1);
    assert_eq!(remote_pets["items"][0]["name"], "Remote Rex");
    let status = app.ok("get_status", json!({}));
    assert_eq!((status["backend"].as_str(), status["reachable"].as_bool()), (Some("remote"), Some(true)));

    // Saving again with a blank key keeps the saved one.
    app.ok("save_settings", remote_settings(&base_url, None));
    assert_eq!(app.ok("list_pets", pet_query(json!({})))["total"], 1);

    // The choice survives a restart.
    let dir = app.dir;
    drop(app.app);
    let app = app_in(dir);
    assert_eq!(app.ok("get_settings", json!({}))["backend"], "remote");
    assert_eq!(app.ok("list_pets", pet_query(json!({})))["items"][0]["name"], "Remote Rex");

    let mut local = remote_settings(&base_url, None);
    local["settings"]["backend"] = json!("local");
    app.ok("save_settings", local);
    assert_eq!(app.ok("list_pets", pet_query(json!({})))["items"][0]["name"], "Local only");
}

#[test]
fn a_remote_that_is_down_gives_a_clear_message_quickly() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let app = app();
    app.ok("save_settings", remote_settings(&format!("http://{closed}"), Some(REMOTE_KEY)));

    let started = Instant::now();
    let error = app.fails("list_pets", pet_query(json!({})));
    assert_eq!(error["code"], "unreachable", "{error}");
    assert!(error["message"].as_str().unwrap().contains(&closed.to_string()), "{error}");
    let status = app.ok("get_status", json!({}));
    assert_eq!(status["reachable"], false);
    assert!(status["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert!(started.elapsed() < Duration::from_secs(8), "took {:?}", started.elapsed());
}

#[test]
fn invalid_settings_change_nothing() {
    let app = app();
    let no_url = app.fails("save_settings", remote_settings("", Some(REMOTE_KEY)));
    assert_eq!(no_url["code"], "validation_failed");
    let bad_url = app.fails("save_settings", remote_settings("ftp://shop", Some(REMOTE_KEY)));
    assert_eq!(bad_url["code"], "validation_failed", "{bad_url}");
    let no_key = app.fails("save_settings", remote_settings("http://127.0.0.1:9", None));
    assert_eq!(no_key["code"], "validation_failed");
    assert_eq!(app.ok("get_settings", json!({}))["backend"], "local");
}

#[test]
fn in_remote_mode_a_change_made_on_another_till_refreshes_the_window() {
    use tauri::Listener;
    let (addr, _remote) = remote_server();
    let base_url = format!("http://{addr}");
    let app = app();
    app.ok("save_settings", remote_settings(&base_url, Some(REMOTE_KEY)));
    let (heard, hearing) = std::sync::mpsc::channel();
    app.app.listen_any("petstore://changed", move |event| {
        let _ = heard.send(event.payload().to_owned());
    });

    // Another till (a client of its own) adds categories, one every half second, until
    // this window hears of one and shows it: the mirror copies the remote in the
    // background first (which is news too), and a change made before it followed the feed
    // comes with the copy.
    let other = petstore::client::Client::new(&base_url, REMOTE_KEY).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut made = 0;
    loop {
        assert!(Instant::now() < deadline, "no refresh in 10 s after {made} changes on the remote");
        made += 1;
        let name = format!("Made elsewhere {made}");
        let category = serde_json::from_value(json!({ "name": name })).unwrap();
        let made_there =
            tauri::async_runtime::block_on(petstore::Petstore::create_category(&other, category)).unwrap();
        let waited = Instant::now() + Duration::from_millis(500);
        let mut told = false;
        while let Some(left) = waited.checked_duration_since(Instant::now()) {
            match hearing.recv_timeout(left) {
                // The event names the category, read from the mirror's own change feed.
                Ok(payload) => {
                    let changed: serde_json::Value = serde_json::from_str(&payload).unwrap();
                    told |= changed["categories"].as_array().unwrap().contains(&json!(made_there.id.get()));
                }
                Err(_) => break,
            }
        }
        let shown = app.ok("list_categories", json!({ "page": { "limit": 100 } }));
        if told && shown["items"].as_array().unwrap().iter().any(|c| c["name"] == name) {
            break;
        }
    }

    // Back in local mode, the remote's changes are no longer news here.
    let mut local = remote_settings(&base_url, None);
    local["settings"]["backend"] = json!("local");
    app.ok("save_settings", local);
    while hearing.recv_timeout(Duration::from_millis(300)).is_ok() {}
    let category = serde_json::from_value(json!({ "name": "After the switch" })).unwrap();
    tauri::async_runtime::block_on(petstore::Petstore::create_category(&other, category)).unwrap();
    assert!(
        hearing.recv_timeout(Duration::from_secs(2)).is_err(),
        "a remote change refreshed the local window"
    );
}

#[test]
fn the_theme_and_language_follow_the_system_until_chosen_and_the_choice_survives_a_restart() {
    let app = app();
    assert_eq!(app.ok("get_preferences", json!({})), json!({ "theme": "system", "language": "system" }));
    let chosen = json!({ "theme": "dark", "language": "de" });
    assert_eq!(app.ok("save_preferences", json!({ "preferences": chosen })), chosen);
    let refused = app.fails("save_preferences", json!({ "preferences": { "theme": "purple" } }));
    assert_eq!(refused["code"], "validation_failed", "{refused}");
    let refused = app.fails("save_preferences", json!({ "preferences": { "language": "fr" } }));
    assert_eq!(refused["code"], "validation_failed", "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("fr"), "{refused}");
    // The shop's settings are another entry of the file: saving them keeps the preferences.
    let local = json!({ "settings": {
        "backend": "local", "baseUrl": null, "localApi": { "enabled": false, "port": 8787 }
    } });
    app.ok("save_settings", local);

    let dir = app.dir;
    drop(app.app);
    let app = app_in(dir);
    assert_eq!(app.ok("get_preferences", json!({})), chosen);
    assert_eq!(app.ok("get_settings", json!({}))["localApi"]["enabled"], false);
}

#[test]
fn preferences_saved_before_there_were_languages_read_as_the_systems_language() {
    let app = app();
    app.ok("save_preferences", json!({ "preferences": { "theme": "light" } }));
    assert_eq!(app.ok("get_preferences", json!({})), json!({ "theme": "light", "language": "system" }));
}
