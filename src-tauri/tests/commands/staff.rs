//! Staff at the till in local mode: the person signed in is kept in the app's Rust state,
//! and every write command checks their role (the one permission table) before it writes,
//! whatever the window shows; a manager's PIN lets one refused action through, and the
//! records and the activity log name both.

use serde_json::{Value, json};

use crate::helpers::{REMOTE_KEY, TestApp, app};

fn member(app: &TestApp, name: &str, role: &str, pin: &str) -> i64 {
    let made = app.ok("create_staff", json!({ "member": { "name": name, "role": role, "pin": pin } }));
    assert_eq!(made["role"], role, "{made}");
    assert!(made.get("pinHash").is_none(), "{made}");
    made["id"].as_i64().unwrap()
}

fn sign_in(app: &TestApp, id: i64, pin: &str) -> Value {
    app.ok("sign_in", json!({ "staffId": id, "pin": pin }))
}

/// The owner's shop with a cashier and a manager, and a pet with 10 in stock; the owner
/// (PIN 9999 now: a PIN-less owner may not sign in beside other staff) is signed out.
fn shop_with_staff(app: &TestApp) -> (i64, i64, i64) {
    let pet = app.ok("create_pet", json!({ "pet": { "name": "Rex" } }))["id"].as_i64().unwrap();
    app.ok("set_inventory", json!({ "petId": pet, "update": { "quantity": 10 } }));
    app.ok("update_staff", json!({ "staffId": 1, "patch": { "pin": "9999" } }));
    let ana = member(app, "Ana", "cashier", "1111");
    let bea = member(app, "Bea", "manager", "2222");
    app.ok("sign_out", json!({}));
    (pet, ana, bea)
}

#[test]
fn a_shop_of_one_pinless_owner_is_signed_in_as_the_owner_without_a_prompt() {
    let app = app();
    let serving = app.ok("current_staff", json!({}));
    assert_eq!(serving["alone"], true, "{serving}");
    // Nobody is added beside a PIN-less owner: nobody could sign in as them after.
    let first =
        app.fails("create_staff", json!({ "member": { "name": "Ana", "role": "cashier", "pin": "1111" } }));
    assert_eq!(first["code"], "pin_required", "{first}");
    assert!(first["message"].as_str().unwrap().contains("set a PIN for Owner first"), "{first}");
    assert_eq!(serving["staff"]["name"], "Owner", "{serving}");
    assert_eq!(serving["remote"], false);
    let pet = app.ok("create_pet", json!({ "pet": { "name": "Rex" } }))["id"].as_i64().unwrap();
    app.ok("set_inventory", json!({ "petId": pet, "update": { "quantity": 3 } }));
    // Locking a shop of one signs the owner in again: there is nobody else to sign in.
    let after = app.ok("sign_out", json!({}));
    assert_eq!(after["staff"]["name"], "Owner", "{after}");
}

#[test]
fn each_write_command_checks_the_signed_in_persons_role() {
    let app = app();
    let (pet, ana, _) = shop_with_staff(&app);

    let locked = app.fails("place_order", json!({ "order": { "petId": pet } }));
    assert_eq!(locked["code"], "staff_required", "{locked}");
    let serving = app.ok("current_staff", json!({}));
    assert_eq!((serving["staff"].clone(), serving["alone"].clone()), (Value::Null, json!(false)));

    let serving = sign_in(&app, ana, "1111");
    assert_eq!(serving["staff"]["name"], "Ana", "{serving}");
    let sale = app.ok("place_order", json!({ "order": { "petId": pet, "complete": true } }));
    assert_eq!(sale["placedBy"]["staff"]["name"], "Ana", "{sale}");

    // A cashier sells; everything else is refused by name, and changes nothing.
    let out = tempfile::tempdir().unwrap();
    let backup = out.path().join("shop.db");
    for (cmd, args, permission) in [
        ("set_inventory", json!({ "petId": pet, "update": { "quantity": 50 } }), "count_stock"),
        (
            "adjust_inventory",
            json!({ "petId": pet, "adjustment": { "delta": 5, "reason": "delivery" } }),
            "adjust_stock",
        ),
        ("create_pet", json!({ "pet": { "name": "Tom" } }), "edit_catalogue"),
        ("delete_pet", json!({ "id": pet }), "edit_catalogue"),
        ("create_category", json!({ "category": { "name": "Birds" } }), "edit_catalogue"),
        (
            "create_staff",
            json!({ "member": { "name": "Cy", "role": "owner", "pin": "3333" } }),
            "manage_staff",
        ),
        ("update_staff", json!({ "staffId": ana, "patch": { "role": "owner" } }), "manage_staff"),
        ("create_api_key", json!({ "name": "till", "scope": "write" }), "manage_keys"),
        ("regenerate_local_api_key", json!({}), "manage_keys"),
        // The operator's key would let anyone round every check through the local API.
        ("get_local_api_key", json!({}), "manage_keys"),
        ("list_activity", json!({ "query": {} }), "view_activity"),
        ("save_till_lock", json!({ "lock": { "idleMinutes": 0 } }), "change_settings"),
        (
            "save_shop_settings",
            json!({ "settings": app.ok("get_shop_settings", json!({})) }),
            "change_settings",
        ),
        // A copy of the whole shop, customers' names and phones with it.
        ("backup_database", json!({ "to": backup.to_str().unwrap() }), "change_settings"),
    ] {
        let refused = app.fails(cmd, args);
        assert_eq!(refused["code"], "permission_denied", "{cmd}: {refused}");
        assert_eq!(refused["status"], 403);
        let message = refused["message"].as_str().unwrap();
        assert!(message.contains("Ana") && message.contains(permission), "{cmd}: {message}");
    }
    assert_eq!(app.ok("get_inventory", json!({ "petId": pet }))["quantity"], 9);
    assert_eq!(app.ok("list_staff", json!({})).as_array().unwrap().len(), 3);
    assert_eq!(app.ok("get_till_lock", json!({}))["idleMinutes"], 5, "the default");
    assert!(!backup.exists(), "no backup made");
}

#[test]
fn a_managers_pin_lets_the_one_refused_action_through_and_both_are_named() {
    let app = app();
    let (pet, ana, bea) = shop_with_staff(&app);
    sign_in(&app, ana, "1111");
    let count = json!({ "petId": pet, "update": { "quantity": 7 } });
    assert_eq!(app.fails("set_inventory", count.clone())["code"], "permission_denied");

    // A cashier cannot approve, a wrong PIN approves nothing.
    let cashier = app.fails("approve", json!({ "staffId": ana, "pin": "1111" }));
    assert_eq!(cashier["code"], "permission_denied", "{cashier}");
    let wrong = app.fails("approve", json!({ "staffId": bea, "pin": "2223" }));
    assert_eq!(wrong["code"], "wrong_pin", "{wrong}");
    assert!(wrong["message"].as_str().unwrap().contains("Bea"), "{wrong}");
    assert_eq!(app.fails("set_inventory", count.clone())["code"], "permission_denied");

    let manager = app.ok("approve", json!({ "staffId": bea, "pin": "2222" }));
    assert_eq!(manager["name"], "Bea");
    assert_eq!(app.ok("set_inventory", count.clone())["quantity"], 7);
    // Used up by the one action.
    let again = json!({ "petId": pet, "update": { "quantity": 8 } });
    assert_eq!(app.fails("set_inventory", again)["code"], "permission_denied");

    // The manager reads the log: the count, done by Ana and approved by Bea.
    sign_in(&app, bea, "2222");
    let log = app.ok("list_activity", json!({ "query": { "kind": "stock_counted" } }));
    let entry = &log["items"][0];
    assert_eq!(entry["actor"]["staff"]["name"], "Ana", "{log}");
    assert_eq!(entry["actor"]["approvedBy"]["name"], "Bea", "{log}");
    // Found under the manager too, as the one who approved it.
    let by_bea = app.ok("list_activity", json!({ "query": { "staffId": bea, "limit": 50 } }));
    assert!(by_bea["items"].as_array().unwrap().iter().any(|e| e["kind"] == "stock_counted"), "{by_bea}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("activity.csv");
    let query = json!({ "kind": "stock_counted" });
    app.ok("export_activity_csv", json!({ "query": query, "path": path.display().to_string() }));
    let csv = std::fs::read_to_string(&path).unwrap();
    assert!(csv.starts_with("id,at,kind,"), "{csv}");
    assert!(csv.contains("Ana") && csv.contains("Bea"), "{csv}");
}

#[test]
fn an_owner_manages_staff_and_a_deactivated_member_is_signed_out() {
    let app = app();
    let (_, ana, bea) = shop_with_staff(&app);
    sign_in(&app, 1, "9999");
    let renamed =
        app.ok("update_staff", json!({ "staffId": bea, "patch": { "name": "Beatriz", "role": "owner" } }));
    assert_eq!((renamed["name"].clone(), renamed["role"].clone()), (json!("Beatriz"), json!("owner")));
    let taken =
        app.fails("create_staff", json!({ "member": { "name": "ana", "role": "cashier", "pin": "1234" } }));
    assert_eq!(taken["code"], "duplicate_name", "{taken}");
    let short =
        app.fails("create_staff", json!({ "member": { "name": "Cy", "role": "cashier", "pin": "12" } }));
    assert_eq!(short["code"], "validation_failed", "{short}");
    // The app reads the API's own request types: a `null` field is refused, as the API
    // refuses it, never read as "leave it".
    let nulled = app.fails("update_staff", json!({ "staffId": ana, "patch": { "role": null } }));
    assert_eq!(nulled["code"], "validation_failed", "{nulled}");

    sign_in(&app, ana, "1111");
    sign_in(&app, bea, "2222");
    app.ok("update_staff", json!({ "staffId": ana, "patch": { "active": false } }));
    let refused = app.fails("sign_in", json!({ "staffId": ana, "pin": "1111" }));
    assert_eq!(refused["code"], "staff_inactive", "{refused}");
    // An owner who deactivates themselves (another owner is left) is signed out.
    app.ok("update_staff", json!({ "staffId": bea, "patch": { "active": false } }));
    assert_eq!(app.ok("current_staff", json!({}))["staff"], Value::Null);
}

/// A server with a cashier Ana (PIN 1111) and a manager Marta (2222) beside its owner (9999),
/// a pet (id 1) with 10 in stock, and a till's key; answers its address, the key's secret,
/// the server's store and its folder.
fn server_with_staff() -> (String, String, petstore::Store, tempfile::TempDir) {
    use petstore::api::KeyRing;
    use petstore::domain::{Actor, Name, NewStaffMember, Pin, Role, StaffId, StaffPatch};
    use petstore::engine::Keys;
    use petstore::server::{Application, ServerConfig};
    use petstore::staff::{add_member, change_member};
    let dir = tempfile::tempdir().unwrap();
    let store = petstore::Store::open(dir.path().join("remote.db")).unwrap();
    let pin = |digits: &str| Pin::try_from(digits.to_owned()).unwrap();
    let till = tauri::async_runtime::block_on(async {
        use petstore::Petstore;
        let pet = store.create_pet(serde_json::from_value(json!({ "name": "Rex" })).unwrap()).await.unwrap();
        store
            .set_inventory(pet.id, serde_json::from_value(json!({ "quantity": 10 })).unwrap())
            .await
            .unwrap();
        let owner = StaffPatch { pin: Some(pin("9999")), ..StaffPatch::default() };
        change_member(&store, StaffId::try_from(1).unwrap(), owner, &Actor::operator()).await.unwrap();
        for (name, role, digits) in [("Ana", Role::Cashier, "1111"), ("Marta", Role::Manager, "2222")] {
            let new = NewStaffMember { name: Name::parse(name).unwrap(), role, pin: pin(digits) };
            add_member(&store, new, &Actor::operator()).await.unwrap();
        }
        store.create_key(Name::parse("till 1").unwrap(), petstore::store::Scope::Till).await.unwrap()
    });
    let config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), KeyRing::from_secrets([REMOTE_KEY]));
    let served = petstore::Served::all_of(std::sync::Arc::new(store.clone()));
    let server = tauri::async_runtime::block_on(Application::bind(served, config)).unwrap();
    let base_url = format!("http://{}", server.local_addr());
    tauri::async_runtime::spawn(server.run_until(std::future::pending()));
    (base_url, till.secret.expose().to_owned(), store, dir)
}

/// A till that follows a server with a till's key signs the server's staff in, and its
/// sales are theirs on the server; what the role does not allow is refused at the till.
#[test]
fn a_till_following_a_server_signs_its_staff_in_and_sells_as_them() {
    let (base_url, till_key, server, _dir) = server_with_staff();
    let app = app();
    let settings = json!({ "settings": {
        "backend": "remote", "baseUrl": base_url, "remoteKey": till_key,
        "localApi": { "enabled": false, "port": 8787 }
    } });
    app.ok("save_settings", settings);
    // The mirror reads the server's staff as it connects.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let serving = loop {
        let serving = app.ok("current_staff", json!({}));
        if serving["alone"] == false || std::time::Instant::now() > deadline {
            break serving;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(
        (serving["remote"].clone(), serving["alone"].clone()),
        (json!(true), json!(false)),
        "{serving}"
    );
    assert_eq!(serving["staff"], Value::Null, "locked until someone signs in");
    let staff = app.ok("list_staff", json!({}));
    let ana = staff.as_array().unwrap().iter().find(|m| m["name"] == "Ana").unwrap()["id"].as_i64().unwrap();

    let locked = app.fails("place_order", json!({ "order": { "petId": 1 } }));
    assert_eq!(locked["code"], "staff_required", "{locked}");
    let wrong = app.fails("sign_in", json!({ "staffId": ana, "pin": "1112" }));
    assert_eq!(wrong["code"], "wrong_pin", "the server counts it: {wrong}");
    assert_eq!(sign_in(&app, ana, "1111")["staff"]["name"], "Ana");

    let sale = app.ok("place_order", json!({ "order": { "petId": 1, "complete": true } }));
    assert_eq!(sale["placedBy"]["staff"]["name"], "Ana", "{sale}");
    assert_eq!(sale["placedBy"]["key"], "till 1", "{sale}");
    let id = petstore::domain::OrderId::try_from(sale["id"].as_i64().unwrap()).unwrap();
    let on_server = tauri::async_runtime::block_on(petstore::Petstore::get_order(&server, id)).unwrap();
    assert_eq!(on_server.placed_by.unwrap().staff.unwrap().name.as_str(), "Ana");

    let refused =
        app.fails("set_inventory", json!({ "petId": 1, "update": { "quantity": 50, "reason": "count" } }));
    assert_eq!(refused["code"], "permission_denied", "{refused}");
    let serving = app.ok("sign_out", json!({}));
    assert_eq!(serving["staff"], Value::Null);
}
