//! Startup failures reach the window (startup_failure) instead of ending the process.

use serde_json::{Value, json};

use crate::helpers::{app, app_in};

#[test]
fn an_app_that_started_has_no_failure() {
    let app = app();
    assert_eq!(app.ok("startup_failure", json!({})), Value::Null);
    let refused = app.fails("open_data_folder", json!({}));
    assert!(refused["message"].as_str().unwrap().contains("shown in Settings"), "{refused}");
}

#[test]
fn an_app_on_a_folder_another_process_holds_says_it_is_already_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    // Another Petstore, as far as the lock goes: util-linux's flock on the same file.
    let mut other = std::process::Command::new("flock")
        .args(["--nonblock", "--exclusive", "--close"])
        .arg(path.join("petstore.lock"))
        .args(["sh", "-c", "echo held; sleep 30"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(other.stdout.take().unwrap()), &mut line)
        .unwrap();
    let app = app_in(dir);
    let failure = app.ok("startup_failure", json!({}));
    other.kill().unwrap();
    other.wait().unwrap();
    assert_eq!(failure["kind"], "alreadyOpen");
    assert_eq!(failure["message"], format!("Petstore is already open on the data folder {}", path.display()));
    assert_eq!(failure["dataDir"], path.display().to_string());
    let refused = app.fails("list_categories", json!({}));
    assert!(!refused.to_string().is_empty(), "the shop's commands have no shop: {refused}");
    assert!(!path.join("petstore.db").exists(), "nothing opened in the folder");
}

#[test]
fn a_database_from_a_newer_petstore_is_named_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("petstore.db");
    rusqlite::Connection::open(&db).unwrap().pragma_update(None, "user_version", 999).unwrap();
    let before = std::fs::read(&db).unwrap();
    let app = app_in(dir);
    let failure = app.ok("startup_failure", json!({}));
    assert_eq!(failure["kind"], "newerDatabase");
    assert!(failure["message"].as_str().unwrap().contains("newer than this Petstore"), "{failure}");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the file was not touched");
}

#[test]
fn a_damaged_database_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("petstore.db"), vec![0x5a; 8192]).unwrap();
    let failure = app_in(dir).ok("startup_failure", json!({}));
    assert_eq!(failure["kind"], "damagedDatabase", "{failure}");
}

#[test]
fn a_damaged_database_is_replaced_by_a_backup_from_the_failure_screen() {
    // A backup of a shop with one pet, made by the app itself.
    let shop = app();
    shop.ok("create_pet", json!({ "pet": { "name": "Rex" } }));
    let backup = shop.dir.path().join("backup.db");
    shop.ok("backup_database", json!({ "to": backup.display().to_string() }));

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("petstore.db"), vec![0x5a; 8192]).unwrap();
    let failed = app_in(dir);
    let refused = failed.fails("restore_backup", json!({ "path": failed.dir.path().join("none.db") }));
    assert!(refused["message"].as_str().unwrap().contains("does not exist"), "{refused}");
    let said = failed.ok("restore_backup", json!({ "path": backup.display().to_string() }));
    assert!(said.as_str().unwrap().starts_with("Restored 1 pets and 0 orders from"), "{said}");
    assert!(said.as_str().unwrap().contains("is kept as"), "the damaged file is kept: {said}");

    // Started again on the folder: the shop of the backup.
    let dir = failed.dir;
    drop(failed.app);
    let restarted = app_in(dir);
    assert_eq!(restarted.ok("startup_failure", json!({})), Value::Null);
    let pets = restarted.ok("list_pets", crate::helpers::pet_query(json!({})));
    assert_eq!(pets["items"][0]["name"], "Rex");
}

#[test]
fn a_backup_is_offered_only_for_a_database_that_stopped_the_start() {
    let started = app();
    let refused = started.fails("restore_backup", json!({ "path": "/tmp/backup.db" }));
    assert!(refused["message"].as_str().unwrap().contains("Petstore started"), "{refused}");
}
