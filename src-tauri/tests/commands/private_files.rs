//! The app's data is for the user's eyes only: every folder the app creates for it is 0700,
//! every file it writes itself (the settings, the key files) 0600, and ones an older
//! version (or a copy, or an unpacked backup) left readable to others are tightened at
//! start, with a log line saying what changed. (The database files are the store's.)
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use petstore_desktop::Launch;
use serde_json::{Value, json};

use crate::helpers::{app_in, app_with};
use crate::remote_key::{Env, captured_log, env, settings, unique_key};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Asserts `path` has `expected`, naming the path and the mode found.
fn assert_mode(path: &Path, expected: u32) {
    let found = mode(path);
    assert_eq!(found, expected, "{}: mode {found:o}, expected {expected:o}", path.display());
}

#[test]
fn a_new_data_folder_and_the_files_the_app_writes_are_private() {
    let root = tempfile::tempdir().unwrap();
    // Open to everyone, as a shared parent such as /srv may be: only what the app creates
    // below it must be private.
    set_mode(root.path(), 0o755);
    let data = root.path().join("profiles").join("till-2");
    let launch = Launch { data_dir: Some(data.clone()), local_api_port: Some(0), ..Default::default() };
    let app = app_with(launch, tempfile::tempdir().unwrap());

    assert_mode(root.path(), 0o755);
    assert_mode(&root.path().join("profiles"), 0o700);
    assert_mode(&data, 0o700);
    let key: String = app.call("get_local_api_key", json!({})).unwrap();
    assert!(!key.is_empty());
    assert_mode(&data.join("local-api.key"), 0o600);

    // The settings file is written at the first save; the remote key lands in a file when
    // there is no working keyring.
    app.ok("save_settings", settings("remote", "http://127.0.0.1:9", json!(unique_key("private"))));
    assert_mode(&data.join("settings.json"), 0o600);
    if env() != Env::Keyring {
        assert_mode(&data.join("remote-api.key"), 0o600);
    }
    app.ok("save_settings", settings("local", "", json!("")));
    assert_mode(&data.join("settings.json"), 0o600);
}

#[test]
fn a_data_folder_and_files_left_open_to_others_are_tightened_at_start_with_a_log_line() {
    let log = captured_log();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let saved = json!({ "settings": {
        "backend": "local", "baseUrl": "http://127.0.0.1:9", "localApi": { "enabled": false, "port": 8787 }
    } });
    std::fs::write(data.join("settings.json"), saved.to_string()).unwrap();
    std::fs::write(data.join("local-api.key"), format!("{}\n", unique_key("local-api-key-0123456789")))
        .unwrap();
    std::fs::write(data.join("remote-api.key"), unique_key("loose")).unwrap();
    for file in ["settings.json", "local-api.key", "remote-api.key"] {
        set_mode(&data.join(file), 0o644);
    }
    set_mode(data, 0o755);

    let app = app_in(dir);
    let data = app.dir.path();
    assert_mode(data, 0o700);
    assert_mode(&data.join("settings.json"), 0o600);
    assert_mode(&data.join("local-api.key"), 0o600);
    if env() != Env::Keyring {
        assert_mode(&data.join("remote-api.key"), 0o600);
    }
    // The files are still what they were: only their permissions changed.
    assert_eq!(app.ok("get_settings", json!({}))["baseUrl"], "http://127.0.0.1:9");
    assert_eq!(app.ok("get_settings", json!({}))["hasRemoteKey"], true);

    let text = String::from_utf8_lossy(&log.lock().unwrap()).into_owned();
    for path in [data.to_path_buf(), data.join("settings.json"), data.join("local-api.key")] {
        let line = text.lines().find(|l| l.contains("tightened") && l.contains(&*path.to_string_lossy()));
        let line = line.unwrap_or_else(|| panic!("no log line about {}", path.display()));
        assert!(line.contains("644") || line.contains("755"), "the line says what the mode was: {line}");
    }
    app.ok("save_settings", settings("local", "", Value::String(String::new())));
}
