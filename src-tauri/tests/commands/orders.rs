use serde_json::{Value, json};

use crate::helpers::{TestApp, app};

fn stock(app: &TestApp, pet: &Value) -> (String, i64) {
    let item = app.ok("get_inventory", json!({ "petId": pet }));
    (item["status"].as_str().unwrap().to_owned(), item["quantity"].as_i64().unwrap())
}

#[test]
fn placing_completing_and_cancelling_follow_the_rules() {
    let app = app();
    let pet = app.ok("create_pet", json!({ "pet": { "name": "Rex" } }))["id"].clone();
    app.ok("set_inventory", json!({ "petId": pet, "update": { "quantity": 2 } }));

    let first = app.ok("place_order", json!({ "order": { "petId": pet, "quantity": 1 } }));
    let second = app.ok("place_order", json!({ "order": { "petId": pet, "quantity": 1 } }));
    assert_eq!(stock(&app, &pet), ("pending".into(), 0));
    let refused = app.fails("place_order", json!({ "order": { "petId": pet } }));
    assert_eq!(refused["code"], "pet_not_available");

    app.ok("cancel_order", json!({ "id": second["id"] }));
    assert_eq!(stock(&app, &pet), ("available".into(), 1));

    let done = app.ok("update_order", json!({ "id": first["id"], "patch": { "complete": true } }));
    assert_eq!(done["complete"], true);
    let again = app.fails("cancel_order", json!({ "id": first["id"] }));
    assert_eq!(again["code"], "order_completed");

    let sale = app.ok("place_order", json!({ "order": { "petId": pet, "complete": true } }));
    assert_eq!(sale["complete"], true);
    assert_eq!(stock(&app, &pet), ("sold".into(), 0));

    let open = app.ok(
        "list_orders",
        json!({ "query": { "petId": pet, "complete": false, "limit": null, "offset": null } }),
    );
    assert_eq!(open["total"], 0);
    let completed = app
        .ok("list_orders", json!({ "query": { "petId": null, "complete": true, "limit": 10, "offset": 0 } }));
    assert_eq!(completed["total"], 2);
}

#[test]
fn a_cancelled_order_is_kept_and_listed_on_its_own() {
    let app = app();
    let pet = app.ok("create_pet", json!({ "pet": { "name": "Rex" } }))["id"].clone();
    app.ok("set_inventory", json!({ "petId": pet, "update": { "quantity": 2 } }));
    let order = app.ok("place_order", json!({ "order": { "petId": pet, "quantity": 2 } }));

    app.ok("cancel_order", json!({ "id": order["id"] }));
    assert_eq!(stock(&app, &pet), ("available".into(), 2));
    let again = app.fails("cancel_order", json!({ "id": order["id"] }));
    assert_eq!(again["code"], "order_cancelled");

    let query = |cancelled: Option<bool>| {
        let mut query = json!({ "petId": null, "complete": null, "limit": 10, "offset": 0 });
        if let Some(cancelled) = cancelled {
            query["cancelled"] = json!(cancelled);
        }
        app.ok("list_orders", json!({ "query": query }))
    };
    assert_eq!(query(None)["total"], 0, "left out by default");
    let cancelled = query(Some(true));
    assert_eq!((cancelled["total"].as_i64(), &cancelled["items"][0]["id"]), (Some(1), &order["id"]));
    assert!(cancelled["items"][0]["cancelledAt"].is_string(), "kept, stamped when: {cancelled}");
}

#[test]
fn completing_is_undone_by_reopening_and_the_units_stay_reserved() {
    let app = app();
    let pet = app.ok("create_pet", json!({ "pet": { "name": "Goldie" } }))["id"].clone();
    app.ok("set_inventory", json!({ "petId": pet, "update": { "quantity": 1 } }));
    let sale = app.ok("place_order", json!({ "order": { "petId": pet, "complete": true } }));
    assert_eq!(stock(&app, &pet), ("sold".into(), 0));

    let reopened = app.ok("update_order", json!({ "id": sale["id"], "patch": { "complete": false } }));
    assert_eq!((&reopened["complete"], &reopened["completedAt"]), (&json!(false), &Value::Null));
    assert_eq!(stock(&app, &pet), ("pending".into(), 0));
    app.ok("cancel_order", json!({ "id": sale["id"] }));
    assert_eq!(stock(&app, &pet), ("available".into(), 1));
}
