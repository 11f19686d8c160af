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

#[test]
fn the_stock_history_lists_sales_and_orders_and_ends_at_the_stock_now() {
    let app = app();
    let pet = app.ok("create_pet", json!({ "pet": { "name": "Rex" } }))["id"].clone();
    app.ok("set_inventory", json!({ "petId": pet, "update": { "quantity": 5 } }));
    let order = app.ok("place_order", json!({ "order": { "petId": pet, "quantity": 2 } }));
    app.ok("cancel_order", json!({ "id": order["id"] }));
    app.ok("place_order", json!({ "order": { "petId": pet, "complete": true } }));

    let history = app.ok("stock_history", json!({ "petId": pet, "page": null }));
    let entries: Vec<(&str, i64, i64)> = history["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (e["kind"].as_str().unwrap(), e["delta"].as_i64().unwrap(), e["stockAfter"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(entries.first().map(|e| e.2), Some(4), "the newest is the stock now: {entries:?}");
    let mut kinds: Vec<(&str, i64)> = entries.iter().map(|e| (e.0, e.1)).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        vec![("adjusted", 5), ("counter_sale", -1), ("order_cancelled", 2), ("order_placed", -2)]
    );
    assert_eq!(history["total"], 4);
}
