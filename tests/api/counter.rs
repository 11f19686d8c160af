//! The counter's data (what a shop's till needs to sell over the counter): a pet's price and barcode, an order's unit price, total,
//! completion time and customer, on either engine. Every refusal names what is wrong.

use serde_json::{Value, json};

use crate::support::spawn_app;

#[tokio::test]
async fn a_price_is_a_decimal_string_with_two_fraction_digits_up_to_999999_99() {
    let app = spawn_app().await;
    let pet = app.post("/pets", json!({ "name": "Rex", "price": "249.00" })).await.expect_status(201);
    assert_eq!(pet.body["price"], "249.00");
    assert_eq!(pet.body["sku"], Value::Null);
    let top = app.post("/pets", json!({ "name": "Gold", "price": "999999.99" })).await.expect_status(201);
    assert_eq!(top.body["price"], "999999.99");
    let free = app.post("/pets", json!({ "name": "Stray", "price": "0.00" })).await.expect_status(201);
    assert_eq!(free.body["price"], "0.00");
    for bad in [
        json!("1000000.00"),
        json!("12.5"),
        json!("12"),
        json!("-1.00"),
        json!("1,00"),
        json!(12.5),
        json!(12),
    ] {
        let reply = app.post("/pets", json!({ "name": "Odd", "price": bad })).await;
        assert_eq!(
            (reply.status.as_u16(), reply.code()),
            (400, "validation_failed"),
            "{bad}: {}",
            reply.body
        );
        assert!(reply.body["message"].as_str().unwrap().contains("price"), "{}", reply.body);
    }
    // Cleared with null, kept when a patch leaves it out.
    let id = pet.body["id"].as_i64().unwrap();
    let renamed = app.patch(&format!("/pets/{id}"), json!({ "name": "Rex II" })).await.expect_status(200);
    assert_eq!(renamed.body["price"], "249.00");
    let cleared = app.patch(&format!("/pets/{id}"), json!({ "price": null })).await.expect_status(200);
    assert_eq!(cleared.body["price"], Value::Null);
}

#[tokio::test]
async fn a_barcode_is_unique_ignoring_case_and_finds_its_pet() {
    let app = spawn_app().await;
    let rex = app.post("/pets", json!({ "name": "Rex", "sku": " AB-1234 " })).await.expect_status(201);
    assert_eq!(rex.body["sku"], "AB-1234", "trimmed, case kept");
    let taken = app.post("/pets", json!({ "name": "Bella", "sku": "ab-1234" })).await;
    assert_eq!((taken.status.as_u16(), taken.code()), (409, "duplicate_sku"));
    assert!(taken.body["message"].as_str().unwrap().contains("ab-1234"), "{}", taken.body);
    for bad in [json!(""), json!("   "), json!("x".repeat(65)), json!("a\u{0007}b")] {
        let reply = app.post("/pets", json!({ "name": "Odd", "sku": bad })).await;
        assert_eq!(reply.status, 400, "{bad}: {}", reply.body);
    }

    let bella =
        app.post("/pets", json!({ "name": "Bella", "sku": "4006381333931" })).await.expect_status(201);
    let bella_id = bella.body["id"].as_i64().unwrap();
    let moved = app.patch(&format!("/pets/{bella_id}"), json!({ "sku": "AB-1234" })).await;
    assert_eq!((moved.status.as_u16(), moved.code()), (409, "duplicate_sku"), "a patch is checked too");

    let found = app.get("/pets?sku=ab-1234").await.expect_status(200);
    assert_eq!(found.header("x-total-count"), "1");
    assert_eq!(found.body[0]["name"], "Rex");
    let none = app.get("/pets?sku=NOPE").await.expect_status(200);
    assert_eq!((none.header("x-total-count"), none.body.clone()), ("0", json!([])));

    // Released, the code is free for another pet.
    let rex_id = rex.body["id"].as_i64().unwrap();
    app.patch(&format!("/pets/{rex_id}"), json!({ "sku": null })).await.expect_status(200);
    app.patch(&format!("/pets/{bella_id}"), json!({ "sku": "AB-1234" })).await.expect_status(200);
    assert_eq!(app.get("/pets?sku=AB-1234").await.body[0]["name"], "Bella");
}

#[tokio::test]
async fn an_order_keeps_its_unit_price_and_its_total_follows_the_quantity() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 10).await;
    app.patch(&format!("/pets/{pet}"), json!({ "price": "12.50" })).await.expect_status(200);
    let order = app.post("/store/orders", json!({ "petId": pet, "quantity": 3 })).await.expect_status(201);
    assert_eq!(
        (order.body["unitPrice"].clone(), order.body["total"].clone()),
        (json!("12.50"), json!("37.50"))
    );
    let id = order.body["id"].as_i64().unwrap();

    // The pet's price changing later changes no order placed before.
    app.patch(&format!("/pets/{pet}"), json!({ "price": "99.00" })).await.expect_status(200);
    let fewer = app.patch(&format!("/store/orders/{id}"), json!({ "quantity": 2 })).await.expect_status(200);
    assert_eq!(
        (fewer.body["unitPrice"].clone(), fewer.body["total"].clone()),
        (json!("12.50"), json!("25.00"))
    );
    assert_eq!(app.get(&format!("/store/orders/{id}")).await.body["total"], "25.00");

    // A pet without a price: no unit price, no total.
    let free = app.pet_with_stock("Stray", 1).await;
    let order = app.post("/store/orders", json!({ "petId": free })).await.expect_status(201);
    assert_eq!((order.body["unitPrice"].clone(), order.body["total"].clone()), (Value::Null, Value::Null));
}

#[tokio::test]
async fn completing_stamps_completed_at_and_leaves_the_planned_ship_date() {
    let app = spawn_app().await;
    let pet = app.pet_with_stock("Rex", 5).await;
    let planned = "2026-12-24T08:00:00Z";
    let order =
        app.post("/store/orders", json!({ "petId": pet, "shipDate": planned })).await.expect_status(201);
    assert_eq!(order.body["completedAt"], Value::Null, "open");
    let id = order.body["id"].as_i64().unwrap();
    let done =
        app.patch(&format!("/store/orders/{id}"), json!({ "complete": true })).await.expect_status(200);
    assert!(done.body["completedAt"].is_string(), "{}", done.body);
    assert_eq!(done.body["shipDate"], planned);

    let sale = app.post("/store/orders", json!({ "petId": pet, "complete": true })).await.expect_status(201);
    // None planned: it shipped when it was sold (the spec's "actual ship date").
    assert!(sale.body["completedAt"].is_string(), "{}", sale.body);
    assert_eq!(sale.body["shipDate"], sale.body["completedAt"]);
}

#[tokio::test]
async fn orders_collected_later_carry_the_customer_and_are_found_by_name() {
    let app = spawn_app().await;
    let rex = app.pet_with_stock("Rex", 5).await;
    let bella = app.pet_with_stock("Bella", 5).await;
    let held = app
        .post(
            "/store/orders",
            json!({ "petId": rex, "customerName": "Ana García", "customerPhone": "+34 600 123 456", "note": "Saturday" }),
        )
        .await
        .expect_status(201);
    assert_eq!(
        (held.body["customerName"].clone(), held.body["customerPhone"].clone(), held.body["note"].clone()),
        (json!("Ana García"), json!("+34 600 123 456"), json!("Saturday"))
    );
    app.post("/store/orders", json!({ "petId": bella })).await.expect_status(201);

    // Ignoring case and accents, the customer's name or the pet's.
    let by_customer = app.get("/store/orders?q=garcia").await.expect_status(200);
    assert_eq!(by_customer.header("x-total-count"), "1");
    assert_eq!(by_customer.body[0]["customerName"], "Ana García");
    let by_pet = app.get("/store/orders?q=BELL").await.expect_status(200);
    assert_eq!((by_pet.header("x-total-count"), by_pet.body[0]["petId"].clone()), ("1", json!(bella)));
    assert_eq!(app.get("/store/orders?q=nobody").await.header("x-total-count"), "0");

    // Changed and cleared later; a blank name is refused.
    let id = held.body["id"].as_i64().unwrap();
    let changed = app
        .patch(&format!("/store/orders/{id}"), json!({ "customerName": "Ana G.", "note": null }))
        .await
        .expect_status(200);
    assert_eq!(
        (changed.body["customerName"].clone(), changed.body["note"].clone()),
        (json!("Ana G."), Value::Null)
    );
    let blank = app.post("/store/orders", json!({ "petId": rex, "customerName": "  " })).await;
    assert_eq!(blank.status, 400, "{}", blank.body);
}

#[tokio::test]
async fn the_shops_settings_have_defaults_and_are_saved_whole() {
    let app = spawn_app().await;
    let defaults = app.get("/store/settings").await.expect_status(200);
    assert_eq!(
        (defaults.body["shopName"].clone(), defaults.body["currency"].clone()),
        (json!("Petstore"), json!("EUR"))
    );
    assert_eq!(defaults.body["lowStockBelow"], 5);
    assert!(defaults.body["timeZone"].as_str().is_some_and(|z| !z.is_empty()), "{}", defaults.body);

    let mine = json!({ "shopName": "Pets & Co", "currency": "USD", "timeZone": "America/New_York", "lowStockBelow": 3 });
    assert_eq!(app.put("/store/settings", mine.clone()).await.expect_status(200).body, mine);
    assert_eq!(app.get("/store/settings").await.body, mine);
    for (bad, field) in [
        (json!({ "currency": "EUE" }), "currency"),
        (json!({ "currency": "usd" }), "currency"),
        (json!({ "timeZone": "Mars/Olympus" }), "timeZone"),
        (json!({ "lowStockBelow": -1 }), "lowStockBelow"),
        (json!({ "shopName": " " }), "shopName"),
    ] {
        let mut body = mine.clone();
        body.as_object_mut().unwrap().extend(bad.as_object().unwrap().clone());
        let reply = app.put("/store/settings", body).await;
        assert_eq!(reply.status.as_u16(), 400, "{bad}: {}", reply.body);
        assert!(reply.body["message"].as_str().unwrap().contains(field), "{}", reply.body);
    }
    let partial = app.put("/store/settings", json!({ "currency": "GBP" })).await;
    assert_eq!(partial.status.as_u16(), 400, "a full replacement: {}", partial.body);
    assert_eq!(app.get("/store/settings").await.body, mine, "nothing changed by a refusal");
}

#[tokio::test]
async fn the_sales_report_counts_completed_orders_per_day_in_json_and_csv() {
    let app = spawn_app().await;
    let settings = json!({ "shopName": "Pets", "currency": "EUR", "timeZone": "UTC", "lowStockBelow": 5 });
    app.put("/store/settings", settings).await.expect_status(200);
    let pet = app.pet_with_stock("Rex", 20).await;
    app.patch(&format!("/pets/{pet}"), json!({ "price": "10.00" })).await.expect_status(200);
    app.post("/store/orders", json!({ "petId": pet, "quantity": 2, "complete": true }))
        .await
        .expect_status(201);
    app.post("/store/orders", json!({ "petId": pet, "quantity": 1, "complete": true }))
        .await
        .expect_status(201);
    app.post("/store/orders", json!({ "petId": pet, "quantity": 5 })).await.expect_status(201);
    let today = chrono::Utc::now().date_naive();
    let yesterday = today.pred_opt().unwrap();

    let report =
        app.get(&format!("/store/reports/sales?from={yesterday}&to={today}")).await.expect_status(200);
    assert_eq!(
        report.body,
        json!([
            { "date": yesterday.to_string(), "orders": 0, "units": 0, "revenue": "0.00" },
            { "date": today.to_string(), "orders": 2, "units": 3, "revenue": "30.00" },
        ]),
        "an open order is not a sale"
    );
    let csv = app
        .request(reqwest::Method::GET, &format!("/store/reports/sales?from={today}&to={today}"))
        .header("Accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), 200);
    assert!(csv.headers()["content-type"].to_str().unwrap().starts_with("text/csv"));
    assert_eq!(csv.text().await.unwrap(), format!("date,orders,units,revenue\r\n{today},2,3,30.00\r\n"));

    for (query, why) in [
        ("from=2026-01-01&to=2027-01-02", "at most 366"),
        ("from=2026-02-02&to=2026-02-01", "before"),
        ("from=2026-02-30&to=2026-03-01", "from"),
        ("to=2026-03-01", "from is required"),
    ] {
        let reply = app.get(&format!("/store/reports/sales?{query}")).await;
        assert_eq!(
            (reply.status.as_u16(), reply.code()),
            (400, "invalid_parameter"),
            "{query}: {}",
            reply.body
        );
        assert!(reply.body["message"].as_str().unwrap().contains(why), "{query}: {}", reply.body);
    }
}

async fn csv(app: &crate::support::TestApp, path: &str) -> String {
    let reply = app.request(reqwest::Method::GET, path).send().await.unwrap();
    assert_eq!(reply.status(), 200, "{path}");
    assert!(reply.headers()["content-type"].to_str().unwrap().starts_with("text/csv"), "{path}");
    assert!(reply.headers()["content-disposition"].to_str().unwrap().starts_with("attachment"), "{path}");
    reply.text().await.unwrap()
}

#[tokio::test]
async fn the_exports_are_rfc_4180_csv_with_formulas_defused() {
    let app = spawn_app().await;
    let dogs = app.post("/categories", json!({ "name": "Dogs" })).await.expect_status(201).body["id"].clone();
    let rex = app
        .post(
            "/pets",
            json!({ "name": "Rex, the \"good\" boy", "categoryId": dogs, "price": "249.00", "sku": "=1+2" }),
        )
        .await
        .expect_status(201)
        .body["id"]
        .as_i64()
        .unwrap();
    app.put(&format!("/store/inventory/{rex}"), json!({ "quantity": 3 })).await.expect_status(200);
    app.post("/pets", json!({ "name": "@Bella", "description": "two\nlines" })).await.expect_status(201);

    let pets = csv(&app, "/exports/pets.csv").await;
    assert_eq!(
        pets,
        format!(
            "id,name,category,price,sku,status,stock,description\r\n\
             {rex},\"Rex, the \"\"good\"\" boy\",Dogs,249.00,'=1+2,available,3,\r\n\
             {},'@Bella,,,,available,0,\"two\nlines\"\r\n",
            rex + 1
        )
    );
    let inventory = csv(&app, "/exports/inventory.csv").await;
    assert!(inventory.starts_with("petId,name,status,stock,updatedAt\r\n"), "{inventory}");
    assert_eq!(inventory.lines().count(), 3);

    app.post(
        "/store/orders",
        json!({ "petId": rex, "quantity": 2, "complete": true, "customerName": "-Ana" }),
    )
    .await
    .expect_status(201);
    // A sale the till made offline a minute ago: the export says when it was made.
    let made = (chrono::Utc::now() - chrono::TimeDelta::minutes(1)).format("%Y-%m-%dT%H:%M:%SZ").to_string();
    app.post("/store/orders", json!({ "petId": rex, "complete": true, "placedAt": made }))
        .await
        .expect_status(201);
    let today = chrono::Utc::now().date_naive();
    let orders = csv(&app, &format!("/exports/orders.csv?from={today}&to={today}")).await;
    let mut lines = orders.lines();
    assert_eq!(
        lines.next(),
        Some(
            "id,petId,pet,quantity,unitPrice,total,complete,createdAt,completedAt,shipDate,customerName,customerPhone,note,placedAt"
        )
    );
    let row = lines.next().unwrap();
    assert!(row.contains(",2,249.00,498.00,true,") && row.contains(",'-Ana,") && row.ends_with(','), "{row}");
    // The pet's name follows the order's own columns, however many the order has.
    assert!(row.contains(&format!(",{rex},\"Rex, the \"\"good\"\" boy\",2,")), "{row}");
    let offline = lines.next().unwrap();
    assert!(offline.ends_with(&format!(",{made}")), "placedAt last: {offline}");
    assert_eq!(lines.next(), None);
    let yesterday = today.pred_opt().unwrap();
    assert_eq!(
        csv(&app, &format!("/exports/orders.csv?from={yesterday}&to={yesterday}")).await.lines().count(),
        1
    );
    let half = app.get(&format!("/exports/orders.csv?from={today}")).await;
    assert_eq!((half.status.as_u16(), half.code()), (400, "invalid_parameter"));
}

#[tokio::test]
async fn an_export_of_more_than_a_page_has_every_pet_once() {
    let app = spawn_app().await;
    app.db.open().await.seed(2_345, Box::new(|_| {})).await.unwrap();
    let pets = csv(&app, "/exports/pets.csv").await;
    let ids: Vec<i64> = pets.lines().skip(1).map(|l| l.split(',').next().unwrap().parse().unwrap()).collect();
    assert_eq!(ids.len(), 2_345);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "in id order, none twice");
}

async fn import(app: &crate::support::TestApp, query: &str, csv: &str) -> (u16, Value) {
    let reply = app
        .request(reqwest::Method::POST, &format!("/imports/pets{query}"))
        .header("Content-Type", "text/csv")
        .body(csv.to_owned())
        .send()
        .await
        .unwrap();
    (reply.status().as_u16(), reply.json().await.unwrap())
}

#[tokio::test]
async fn an_import_is_all_or_nothing_and_names_the_bad_line() {
    let app = spawn_app().await;
    app.post("/categories", json!({ "name": "Dogs" })).await.expect_status(201);
    let file = "name,category,price,sku,status,stock\r\nRex,Dogs,249.00,A-1,,3\r\nTom,Cats,,,sold,\r\n";

    let (status, refused) = import(&app, "", file).await;
    assert_eq!(status, 400, "{refused}");
    assert!(refused["message"].as_str().unwrap().starts_with("line 3, column category"), "{refused}");
    assert_eq!(app.get("/pets").await.header("x-total-count"), "0", "nothing was written");

    let (status, dry) = import(&app, "?createCategories=true&dryRun=true", file).await;
    assert_eq!((status, dry), (200, json!({ "pets": 2, "categoriesCreated": ["Cats"], "dryRun": true })));
    assert_eq!(app.get("/pets").await.header("x-total-count"), "0", "a dry run writes nothing");
    assert_eq!(app.get("/categories").await.header("x-total-count"), "1");

    let (status, done) = import(&app, "?createCategories=true", file).await;
    assert_eq!((status, done), (201, json!({ "pets": 2, "categoriesCreated": ["Cats"], "dryRun": false })));
    let rex = app.get("/pets?sku=a-1").await.body[0].clone();
    assert_eq!((rex["name"].clone(), rex["price"].clone()), (json!("Rex"), json!("249.00")));
    let stock = app.get(&format!("/store/inventory/{}", rex["id"])).await.body["quantity"].clone();
    assert_eq!(stock, 3);
    let history = app.get(&format!("/store/inventory/{}/adjustments", rex["id"])).await.body;
    assert_eq!(
        (history[0]["delta"].clone(), history[0]["reason"].clone(), history[0]["quantityAfter"].clone()),
        (json!(3), json!("imported"), json!(3)),
        "the stock's audit record: {history}"
    );

    let (status, again) = import(&app, "", "name,category,sku\nBella,Dogs,a-1\n").await;
    assert_eq!(status, 400);
    assert!(again["message"].as_str().unwrap().starts_with("line 2, column sku"), "{again}");
    let (status, wrong) = import(&app, "", "name,category,price\nBella,Dogs,12.5\n").await;
    assert_eq!(status, 400);
    assert!(wrong["message"].as_str().unwrap().starts_with("line 2, column price"), "{wrong}");

    let json_body = app.post("/imports/pets", json!({ "name": "Rex" })).await;
    assert_eq!(json_body.status.as_u16(), 415);
}

#[tokio::test]
async fn an_import_takes_up_to_10_mb_and_not_a_byte_more() {
    let app = spawn_app().await;
    app.post("/categories", json!({ "name": "Dogs" })).await.expect_status(201);
    let mut file = String::from("name,category,description\n");
    let line = format!("Rex,Dogs,{}\n", "x".repeat(490));
    while file.len() + line.len() <= 10 * 1024 * 1024 - 1_000 {
        file.push_str(&line);
    }
    let lines = file.lines().count() - 1;
    let (status, done) = import(&app, "?dryRun=true", &file).await;
    assert_eq!((status, done["pets"].as_u64()), (200, Some(lines as u64)), "{done}");

    let too_big = format!("{file}{}", line.repeat(3));
    let (status, refused) = import(&app, "", &too_big).await;
    assert_eq!((status, refused["code"].as_str()), (413, Some("payload_too_large")), "{refused}");
}
