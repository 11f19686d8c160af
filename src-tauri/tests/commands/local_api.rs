//! The REST API the app serves on localhost, over the same shop as its window.

use std::sync::mpsc;
use std::time::Duration;

use petstore::Petstore;
use petstore::client::Client;
use petstore::domain::{Name, NewPet, PetStatus};
use serde_json::json;
use tauri::Listener;

use crate::helpers::{REMOTE_KEY, app, app_with, pet_query, remote_server};

fn new_pet(name: &str) -> NewPet {
    NewPet {
        price: None,
        sku: None,
        name: Name::parse(name).unwrap(),
        category_id: None,
        status: PetStatus::Available,
        description: None,
    }
}

#[test]
fn a_change_through_the_local_api_reaches_the_window() {
    let app = app();
    let address = app.ok("get_status", json!({}))["localApi"]["address"].as_str().unwrap().to_owned();
    let key: String = app.call("get_local_api_key", json!({})).unwrap();

    let (tx, rx) = mpsc::channel();
    app.app.listen_any("petstore://changed", move |event| {
        let _ = tx.send(event.payload().to_owned());
    });

    let client = Client::new(&address, &key).unwrap();
    let pet = tauri::async_runtime::block_on(client.create_pet(new_pet("From the till"))).unwrap();

    // The event names the pet, so the window reads that row and no more; and the entry the
    // activity log has of it.
    let change: serde_json::Value = serde_json::from_str(
        &rx.recv_timeout(Duration::from_secs(5)).expect("the window hears of the change"),
    )
    .unwrap();
    assert_eq!(
        change,
        json!({
            "reset": false, "pets": [pet.id.get()], "stock": [], "categories": [], "orders": [], "settings": false,
            "activity": true
        })
    );
    let pets = app.ok("list_pets", pet_query(json!({})));
    assert_eq!(pets["items"][0]["name"], "From the till");
}

#[test]
fn a_regenerated_key_replaces_the_old_one() {
    let app = app();
    let old: String = app.call("get_local_api_key", json!({})).unwrap();
    let new: String = app.call("regenerate_local_api_key", json!({})).unwrap();
    assert_ne!(old, new);
    let address = app.ok("get_status", json!({}))["localApi"]["address"].as_str().unwrap().to_owned();

    let refused =
        tauri::async_runtime::block_on(Client::new(&address, &old).unwrap().create_pet(new_pet("Old")));
    assert_eq!(refused.unwrap_err().code, petstore::ErrorCode::Unauthorized);
    tauri::async_runtime::block_on(Client::new(&address, &new).unwrap().create_pet(new_pet("New"))).unwrap();
}

#[test]
fn a_busy_port_is_reported_the_app_still_works_and_the_port_is_taken_once_free() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let launch = petstore_desktop::Launch {
        data_dir: Some(dir.path().to_path_buf()),
        local_api_port: Some(port),
        ..Default::default()
    };
    let app = app_with(launch, dir);
    let status: petstore_desktop::Status =
        tauri::async_runtime::block_on(tauri::Manager::state::<petstore_desktop::Shell>(&app.app).status());
    assert_eq!(status.local_api.address, None);
    let error = status.local_api.error.unwrap_or_default();
    assert!(error.contains("already in use") && error.contains("tries again"), "{error}");
    assert!(status.reachable, "the local database still works");

    // The other program lets go: the API is served on that port without a restart.
    drop(busy);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        let status = app.ok("get_status", json!({}));
        if !status["localApi"]["address"].is_null() || std::time::Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(status["localApi"]["address"], format!("http://127.0.0.1:{port}"), "{status}");
    assert_eq!(status["localApi"]["error"], serde_json::Value::Null);
}

#[test]
fn in_remote_mode_the_local_api_serves_the_remote_shop() {
    let (remote, _dir) = remote_server();
    let remote = format!("http://{remote}");
    let server = Client::new(&remote, REMOTE_KEY).unwrap();
    tauri::async_runtime::block_on(server.create_pet(new_pet("On the server"))).unwrap();
    let app = app();
    app.ok("create_pet", json!({ "pet": { "name": "Only here" } }));
    let key: String = app.call("get_local_api_key", json!({})).unwrap();
    let local_api = |app: &crate::helpers::TestApp| {
        let address = app.ok("get_status", json!({}))["localApi"]["address"].as_str().unwrap().to_owned();
        let client = Client::new(&address, &key).unwrap();
        let pets = tauri::async_runtime::block_on(client.list_pets(Default::default(), Default::default()));
        pets.unwrap().items.into_iter().map(|p| p.name.to_string()).collect::<Vec<_>>()
    };
    assert_eq!(local_api(&app), ["Only here"]);

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let settings = |backend: &str| {
        json!({ "settings": {
            "backend": backend, "baseUrl": remote, "remoteKey": REMOTE_KEY,
            "localApi": { "enabled": true, "port": port }
        } })
    };
    app.ok("save_settings", settings("remote"));
    // The mirror's first copy comes in the background.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while local_api(&app) != ["On the server"] {
        assert!(
            std::time::Instant::now() < deadline,
            "the local API serves the remote shop: {:?}",
            local_api(&app)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The window imports into the shop the local API serves: a till's copy makes no pets,
    // and says where to import them; it exports what it copied.
    let file = app.dir.path().join("pets.csv");
    std::fs::write(&file, "name,category\nRex,Dogs\n").unwrap();
    let refused =
        app.fails("import_pets_csv", json!({ "path": file, "createCategories": true, "dryRun": false }));
    assert_eq!(refused["code"], "forbidden", "{refused}");
    assert_eq!(refused["status"], 403);
    assert_eq!(
        refused["message"],
        "a till in remote mode does not import pets; import them on the server (its API, POST /imports/pets)"
    );
    let exported = app.dir.path().join("pets-export.csv");
    app.ok("export_csv", json!({ "kind": "pets", "path": exported, "from": null, "to": null }));
    let text = std::fs::read_to_string(&exported).unwrap();
    assert!(text.contains("On the server") && !text.contains("Only here"), "{text}");
    app.ok("save_settings", settings("local"));
    assert_eq!(local_api(&app), ["Only here"]);
}
