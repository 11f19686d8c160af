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
