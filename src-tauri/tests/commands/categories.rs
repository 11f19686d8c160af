use serde_json::json;

use crate::helpers::app;

#[test]
fn categories_are_unique_and_cannot_be_deleted_while_used() {
    let app = app();
    let cats = app.ok("create_category", json!({ "category": { "name": "Cats" } }));
    let duplicate = app.fails("create_category", json!({ "category": { "name": "CATS" } }));
    assert_eq!(
        (duplicate["code"].as_str(), duplicate["status"].as_u64()),
        (Some("duplicate_name"), Some(409))
    );

    app.ok("create_pet", json!({ "pet": { "name": "Tom", "categoryId": cats["id"] } }));
    let listed = app.ok("list_categories", json!({ "page": null }));
    assert_eq!(listed["items"][0]["petCount"], 1);
    let in_use = app.fails("delete_category", json!({ "id": cats["id"] }));
    assert_eq!(in_use["code"], "category_in_use");

    let renamed = app.ok("replace_category", json!({ "id": cats["id"], "category": { "name": "Felines" } }));
    assert_eq!(renamed["name"], "Felines");
}
