use serde_json::json;

use crate::helpers::app;

#[test]
fn adjustments_need_a_reason_and_are_kept_in_the_history() {
    let app = app();
    let pet = app.ok("create_pet", json!({ "pet": { "name": "Goldie" } }))["id"].clone();
    let adjusted = app
        .ok("adjust_inventory", json!({ "petId": pet, "adjustment": { "delta": 4, "reason": "delivery" } }));
    assert_eq!(adjusted["quantity"], 4);
    let no_reason =
        app.fails("adjust_inventory", json!({ "petId": pet, "adjustment": { "delta": 1, "reason": "" } }));
    assert_eq!(no_reason["code"], "validation_failed");
    let too_many = app
        .fails("adjust_inventory", json!({ "petId": pet, "adjustment": { "delta": -5, "reason": "loss" } }));
    assert_eq!(too_many["code"], "insufficient_stock");

    let history = app.ok("list_adjustments", json!({ "petId": pet, "page": null }));
    assert_eq!(history["total"], 1);
    assert_eq!(history["items"][0]["reason"], "delivery");

    let low = app.ok(
        "list_inventory",
        json!({ "query": { "statuses": [], "belowQuantity": 5, "limit": null, "offset": null } }),
    );
    assert_eq!(low["items"][0]["petName"], "Goldie");
}
