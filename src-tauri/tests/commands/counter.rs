//! The counter's commands as the UI calls them: the shop's settings, the sales report, CSV
//! exports written to a file and CSV imports read from one, over a real database.

use serde_json::{Value, json};

use crate::helpers::{TestApp, app, pet_query};

fn priced_pet(app: &TestApp, name: &str, price: &str, stock: i64) -> i64 {
    let pet =
        app.ok("create_pet", json!({ "pet": { "name": name, "price": price } }))["id"].as_i64().unwrap();
    app.ok("set_inventory", json!({ "petId": pet, "update": { "quantity": stock } }));
    pet
}

#[test]
fn the_shop_settings_are_saved_and_a_bad_currency_is_named() {
    let app = app();
    let defaults = app.ok("get_shop_settings", json!({}));
    assert_eq!((defaults["currency"].clone(), defaults["lowStockBelow"].clone()), (json!("EUR"), json!(5)));

    let mine = json!({ "shopName": "Paws & Co", "currency": "CHF", "timeZone": "Europe/Zurich", "lowStockBelow": 3 });
    assert_eq!(app.ok("save_shop_settings", json!({ "settings": mine })), mine);
    assert_eq!(app.ok("get_shop_settings", json!({})), mine);

    let typo = json!({ "shopName": "Paws & Co", "currency": "EUE", "timeZone": "UTC", "lowStockBelow": 3 });
    let refused = app.fails("save_shop_settings", json!({ "settings": typo }));
    assert_eq!(refused["code"], "validation_failed");
    assert!(refused["message"].as_str().unwrap().starts_with("settings.currency"), "{refused}");
}

#[test]
fn a_counter_sale_is_in_todays_takings() {
    let app = app();
    let settings =
        json!({ "shopName": "Petstore", "currency": "EUR", "timeZone": "UTC", "lowStockBelow": 5 });
    app.ok("save_shop_settings", json!({ "settings": settings }));
    let rex = priced_pet(&app, "Rex", "12.50", 5);
    app.ok("place_order", json!({ "order": { "petId": rex, "quantity": 3, "complete": true } }));

    let today = chrono::Utc::now().date_naive().to_string();
    let days = app.ok("sales_report", json!({ "from": today, "to": today }));
    assert_eq!(days, json!([{ "date": today, "orders": 1, "units": 3, "revenue": "37.50" }]));

    let refused = app.fails("sales_report", json!({ "from": "2025-01-01", "to": "2026-06-30" }));
    assert!(refused["message"].as_str().unwrap().contains("at most 366 days"), "{refused}");
}

#[test]
fn an_export_is_written_whole_where_the_clerk_chose() {
    let app = app();
    priced_pet(&app, "=Rex", "12.50", 4);
    let path = app.dir.path().join("pets.csv");
    let written = app.ok("export_csv", json!({ "kind": "pets", "path": path, "from": null, "to": null }));
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(written.as_u64(), Some(text.len() as u64));
    assert_eq!(
        text, "id,name,category,price,sku,status,stock,description\r\n1,'=Rex,,12.50,,available,4,\r\n",
        "the header, the pet, its formula-like name defused"
    );
    assert!(!app.dir.path().join("pets.csv.part").exists(), "nothing left beside it");

    let relative =
        app.fails("export_csv", json!({ "kind": "pets", "path": "pets.csv", "from": null, "to": null }));
    assert!(relative["message"].as_str().unwrap().contains("not a full path"), "{relative}");
    let half = json!({ "kind": "orders", "path": path, "from": "2026-11-01", "to": null });
    assert!(app.fails("export_csv", half)["message"].as_str().unwrap().contains("both from and to"));
    let nowhere = app.dir.path().join("no such folder").join("pets.csv");
    let refused =
        app.fails("export_csv", json!({ "kind": "inventory", "path": nowhere, "from": null, "to": null }));
    assert!(refused["message"].as_str().unwrap().starts_with("could not write"), "{refused}");
    // Written whole, then refused at the last step (a folder has the file's name): the part
    // written beside it goes too.
    let folder = app.dir.path().join("taken.csv");
    std::fs::create_dir(&folder).unwrap();
    let refused =
        app.fails("export_csv", json!({ "kind": "pets", "path": folder, "from": null, "to": null }));
    assert!(refused["message"].as_str().unwrap().starts_with("could not write"), "{refused}");
    assert!(!app.dir.path().join("taken.csv.part").exists(), "the part is removed after a failure");
}

#[test]
fn an_import_is_checked_first_and_a_bad_line_writes_nothing() {
    let app = app();
    let file = app.dir.path().join("pets.csv");
    let count = |app: &TestApp| app.ok("list_pets", pet_query(json!({})))["total"].clone();
    let import = |app: &TestApp, create: bool, dry: bool| -> Result<Value, Value> {
        app.call("import_pets_csv", json!({ "path": file, "createCategories": create, "dryRun": dry }))
    };

    std::fs::write(&file, "name,category,price,sku,stock\nRex,Dogs,249.00,A-1,3\nTom,Cats,12.5,,\n").unwrap();
    let bad = import(&app, true, true).unwrap_err();
    assert!(bad["message"].as_str().unwrap().starts_with("line 3, column price"), "{bad}");
    assert_eq!(count(&app), 0);

    std::fs::write(&file, "name,category,price,sku,stock\nRex,Dogs,249.00,A-1,3\nTom,Cats,12.50,,\n")
        .unwrap();
    let missing = import(&app, false, true).unwrap_err();
    assert!(missing["message"].as_str().unwrap().starts_with("line 2, column category"), "{missing}");
    let dry = import(&app, true, true).unwrap();
    assert_eq!(dry, json!({ "pets": 2, "categoriesCreated": ["Dogs", "Cats"], "dryRun": true }));
    assert_eq!(count(&app), 0, "a dry run writes nothing");

    assert_eq!(import(&app, true, false).unwrap()["pets"], 2);
    assert_eq!(count(&app), 2);
    let rex = app.ok("list_pets", pet_query(json!({ "sku": "a-1" })))["items"][0].clone();
    assert_eq!(app.ok("get_inventory", json!({ "petId": rex["id"] }))["quantity"], 3);

    let gone = app.dir.path().join("gone.csv");
    let refused =
        app.fails("import_pets_csv", json!({ "path": gone, "createCategories": false, "dryRun": true }));
    assert!(refused["message"].as_str().unwrap().starts_with("could not read"), "{refused}");
}
