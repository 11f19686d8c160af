use serde_json::json;

use crate::helpers::{app, pet_query};

#[test]
fn pets_are_created_listed_filtered_and_deleted() {
    let app = app();
    let dogs = app.ok("create_category", json!({ "category": { "name": "Dogs" } }))["id"].clone();
    let rex = app.ok("create_pet", json!({ "pet": { "name": "Rex", "categoryId": dogs } }));
    assert_eq!(rex["status"], "available");
    app.ok("create_pet", json!({ "pet": { "name": "Tom", "status": "sold" } }));

    let all = app.ok("list_pets", pet_query(json!({})));
    assert_eq!(all["total"], 2);
    let in_dogs = app.ok("list_pets", pet_query(json!({ "categoryId": dogs })));
    assert_eq!(in_dogs["items"][0]["name"], "Rex");
    let sold = app.ok("list_pets", pet_query(json!({ "statuses": ["sold"], "q": "to" })));
    assert_eq!(sold["total"], 1);

    let id = &rex["id"];
    let patched = app.ok("update_pet", json!({ "id": id, "patch": { "status": "pending" } }));
    assert_eq!(patched["status"], "pending");
    app.ok("delete_pet", json!({ "id": id }));
    assert_eq!(app.fails("get_pet", json!({ "id": id }))["code"], "not_found");
}

#[test]
fn bad_input_reaches_the_ui_as_the_error_object() {
    let app = app();
    let blank = app.fails("create_pet", json!({ "pet": { "name": "   " } }));
    assert_eq!(blank["code"], "validation_failed", "{blank}");
    assert_eq!(blank["status"], 400);
    assert!(blank["message"].as_str().unwrap().starts_with("pet.name:"), "names the field: {blank}");
    let ghost = app.fails("create_pet", json!({ "pet": { "name": "Ghost", "categoryId": 99 } }));
    assert_eq!((ghost["code"].as_str(), ghost["status"].as_u64()), (Some("invalid_reference"), Some(400)));
    let sort = app.fails("list_pets", pet_query(json!({ "sort": "colour" })));
    assert_eq!(sort["code"], "validation_failed");
    let page = app.fails("list_pets", pet_query(json!({ "limit": 1000 })));
    assert_eq!(page["code"], "invalid_parameter");
}
