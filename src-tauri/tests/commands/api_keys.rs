//! Named API keys made in Settings, tried against the app's real local API.

use petstore::client::Client;
use petstore::domain::{Name, NewCategory, Page, PetFilter};
use petstore::{ErrorCode, Petstore};
use serde_json::{Value, json};

use crate::helpers::{TestApp, app};

fn local_api(app: &TestApp, secret: &str) -> Client {
    let status = app.ok("get_status", json!({}));
    let address = status["localApi"]["address"].as_str().expect("the local API serves");
    Client::new(address, secret).unwrap()
}

fn can_read(client: &Client) -> Result<(), ErrorCode> {
    let listed = client.list_pets(PetFilter::default(), Page::default());
    tauri::async_runtime::block_on(listed).map(drop).map_err(|e| e.code)
}

fn can_write(client: &Client, category: &str) -> Result<(), ErrorCode> {
    let new = NewCategory { name: Name::parse(category).unwrap(), description: None };
    tauri::async_runtime::block_on(client.create_category(new)).map(drop).map_err(|e| e.code)
}

fn secret(issued: &Value) -> String {
    issued["secret"].as_str().expect("the secret, once").to_owned()
}

#[test]
fn scopes_decide_what_a_key_may_do_on_the_local_api() {
    let app = app();
    let read = app.ok("create_api_key", json!({ "name": "label printer", "scope": "read" }));
    let write = app.ok("create_api_key", json!({ "name": "till", "scope": "write" }));
    assert_eq!(read["key"]["scope"], "read");
    assert!(secret(&read).starts_with(read["key"]["prefix"].as_str().unwrap()));

    let reader = local_api(&app, &secret(&read));
    assert_eq!(can_read(&reader), Ok(()));
    assert_eq!(can_write(&reader, "Birds"), Err(ErrorCode::Forbidden));
    let writer = local_api(&app, &secret(&write));
    assert_eq!(can_write(&writer, "Birds"), Ok(()));

    let listed = app.ok("list_api_keys", json!({}));
    let names: Vec<_> = listed.as_array().unwrap().iter().map(|k| k["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["label printer", "till"]);
    for key in listed.as_array().unwrap() {
        assert!(key.get("secret").is_none() && key.get("hash").is_none(), "{key}");
        assert!(key["prefix"].as_str().unwrap().starts_with("psk_"), "{key}");
        assert_eq!(key["revokedAt"], Value::Null);
    }
}

#[test]
fn a_revoked_key_is_refused_at_once() {
    let app = app();
    let till = secret(&app.ok("create_api_key", json!({ "name": "till", "scope": "write" })));
    let client = local_api(&app, &till);
    assert_eq!(can_read(&client), Ok(()));

    let revoked = app.ok("revoke_api_key", json!({ "name": "till" }));
    assert!(revoked["revokedAt"].is_string(), "{revoked}");
    assert_eq!(can_read(&client), Err(ErrorCode::Unauthorized));
    assert!(app.ok("list_api_keys", json!({}))[0]["revokedAt"].is_string());

    let again = app.fails("revoke_api_key", json!({ "name": "till" }));
    assert_eq!(again["code"], "gone", "{again}");
    let rotated = app.fails("rotate_api_key", json!({ "name": "till" }));
    assert_eq!(rotated["code"], "gone", "{rotated}");
}

#[test]
fn a_rotated_key_has_a_new_secret_and_the_old_one_stops_working() {
    let app = app();
    let old = secret(&app.ok("create_api_key", json!({ "name": "script", "scope": "read" })));
    let rotated = app.ok("rotate_api_key", json!({ "name": "script" }));
    let new = secret(&rotated);
    assert_ne!(old, new);
    assert_eq!(rotated["key"]["scope"], "read", "same scope");
    assert!(rotated["key"]["rotatedAt"].is_string(), "{rotated}");

    assert_eq!(can_read(&local_api(&app, &old)), Err(ErrorCode::Unauthorized));
    assert_eq!(can_read(&local_api(&app, &new)), Ok(()));
}

#[test]
fn bad_input_is_refused_naming_the_field() {
    let app = app();
    let blank = app.fails("create_api_key", json!({ "name": "  ", "scope": "read" }));
    assert_eq!(blank["code"], "validation_failed", "{blank}");
    assert!(blank["message"].as_str().unwrap().starts_with("name:"), "{blank}");

    let admin = app.fails("create_api_key", json!({ "name": "root", "scope": "admin" }));
    assert_eq!(admin["code"], "validation_failed", "{admin}");
    assert!(admin["message"].as_str().unwrap().starts_with("scope:"), "{admin}");

    app.ok("create_api_key", json!({ "name": "till", "scope": "read" }));
    let twice = app.fails("create_api_key", json!({ "name": "till", "scope": "write" }));
    assert_eq!(twice["code"], "duplicate_name", "{twice}");
    let missing = app.fails("revoke_api_key", json!({ "name": "nobody" }));
    assert_eq!(missing["code"], "not_found", "{missing}");
    assert_eq!(app.ok("list_api_keys", json!({})).as_array().unwrap().len(), 1, "nothing else was made");
}
