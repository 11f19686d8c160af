//! Paging at scale: the kept counts behind `X-Total-Count` and every page of every filter
//! and sort, including the back half that is read from the other end, against one plain
//! query of the database (of either engine: the SQL is plain enough for both).

use reqwest::Method;
use rusqlite::Connection;
use serde_json::json;

use crate::support::database::{assert_pet_counts_kept, assert_pet_counts_kept_in};
use crate::support::{TestApp, spawn_app};

/// A shop of `pets` seeded pets, some of them moved to `pending`, to no category and to
/// a new category, so that every kind of count row exists.
async fn shop(pets: u64) -> TestApp {
    let app = spawn_app().await;
    app.db.open().await.seed(pets, Box::new(|_| {})).await.unwrap();
    let extra = app.category("Exotics").await;
    for id in (1..=pets as i64).step_by(7) {
        let reply = app.patch(&format!("/pets/{id}"), json!({ "status": "pending" })).await;
        assert_eq!(reply.status, 200, "{:?}", reply.body);
    }
    for id in (3..=pets as i64).step_by(11) {
        let reply = app.patch(&format!("/pets/{id}"), json!({ "categoryId": null })).await;
        assert_eq!(reply.status, 200, "{:?}", reply.body);
    }
    for id in (5..=pets as i64).step_by(13) {
        let reply = app.patch(&format!("/pets/{id}"), json!({ "categoryId": extra })).await;
        assert_eq!(reply.status, 200, "{:?}", reply.body);
    }
    app
}

/// The ids a plain query of the database lists for `where_sql` in `order`.
fn truth(app: &TestApp, where_sql: &str, order: &str) -> Vec<i64> {
    app.db.i64s(&format!("SELECT id FROM pets {where_sql} ORDER BY {order}"))
}

/// The `id_field` of every item of `list` (a path with its query), read page by page at
/// `limit` until an empty page; each page must count `total` in `X-Total-Count`.
async fn every_page(app: &TestApp, list: &str, id_field: &str, limit: usize, total: usize) -> Vec<i64> {
    let mut listed = Vec::new();
    let mut offset = 0;
    loop {
        let reply = app.get(&format!("{list}&limit={limit}&offset={offset}")).await;
        assert_eq!(reply.status, 200, "{list}: {:?}", reply.body);
        assert_eq!(reply.header("x-total-count"), total.to_string(), "{list} offset={offset}");
        let page = reply.body.as_array().unwrap();
        if page.is_empty() {
            return listed;
        }
        listed.extend(page.iter().map(|item| item[id_field].as_i64().unwrap()));
        offset += limit;
    }
}

#[tokio::test]
async fn every_page_of_every_filter_and_sort_is_the_plain_query_cut_in_pages() {
    let app = shop(600).await;
    let filters = [
        ("", ""),
        ("categoryId=2", "WHERE category_id = 2"),
        ("status=available", "WHERE status = 'available'"),
        ("status=sold&status=pending", "WHERE status IN ('sold', 'pending')"),
        ("categoryId=3&status=available", "WHERE category_id = 3 AND status = 'available'"),
        ("q=ll", "WHERE name_folded LIKE '%ll%'"),
    ];
    let sorts = [
        ("name", "name_folded, id"),
        ("-name", "name_folded DESC, id DESC"),
        ("id", "id"),
        ("-id", "id DESC"),
    ];
    let limit = 9;
    for (query, where_sql) in filters {
        for (sort, order) in sorts {
            let expected = truth(&app, where_sql, order);
            assert!(expected.len() > 2 * limit, "{query}: too few pets for several pages");
            let listed =
                every_page(&app, &format!("/pets?{query}&sort={sort}"), "id", limit, expected.len()).await;
            assert_eq!(listed, expected, "{query} sort={sort}: the pages, put together");
        }
    }
}

#[tokio::test]
async fn every_page_of_the_inventory_is_the_plain_query_cut_in_pages() {
    let app = shop(400).await;
    let filters = [
        ("", ""),
        ("status=pending", "WHERE status = 'pending'"),
        ("status=sold&status=available", "WHERE status IN ('sold', 'available')"),
        ("belowQuantity=6", "WHERE stock < 6"),
        ("status=available&belowQuantity=9", "WHERE status = 'available' AND stock < 9"),
    ];
    let limit = 11;
    for (query, where_sql) in filters {
        let expected = truth(&app, where_sql, "stock, id");
        assert!(expected.len() > 2 * limit, "{query}: too few pets for several pages");
        let listed =
            every_page(&app, &format!("/store/inventory?{query}"), "petId", limit, expected.len()).await;
        assert_eq!(listed, expected, "{query}: the pages, put together");
    }
}

#[tokio::test]
async fn a_list_by_ids_pages_and_counts_like_any_other_list() {
    let app = shop(120).await;
    // 30 existing ids (one repeated), one that names no pet, in no particular order.
    let mut asked: Vec<i64> = (1..=30).map(|i| (i * 37) % 120 + 1).collect();
    asked.extend([asked[0], 10_000]);
    let ids: String = asked.iter().map(|id| format!("id={id}&")).collect();
    let in_list = asked.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
    for (sort, order) in [("name", "name_folded, id"), ("-id", "id DESC")] {
        let expected = truth(&app, &format!("WHERE id IN ({in_list})"), order);
        assert_eq!(expected.len(), 30);
        for (limit, offset) in [(7, 0), (7, 7), (7, 28), (7, 30), (100, 0), (5, 200)] {
            let reply = app.get(&format!("/pets?{ids}status=available&status=sold&status=pending&sort={sort}&limit={limit}&offset={offset}")).await;
            assert_eq!(reply.status, 200, "{:?}", reply.body);
            assert_eq!(reply.header("x-total-count"), "30", "sort={sort} limit={limit} offset={offset}");
            let page: Vec<i64> =
                reply.body.as_array().unwrap().iter().map(|p| p["id"].as_i64().unwrap()).collect();
            let end = (offset + limit).min(expected.len());
            assert_eq!(page, expected[offset.min(end)..end], "sort={sort} limit={limit} offset={offset}");
        }
    }
}

#[tokio::test]
async fn a_page_past_the_end_is_empty_and_still_counts_the_list() {
    let app = shop(120).await;
    let total = truth(&app, "", "id").len();
    let reply = app.get(&format!("/pets?limit=10&offset={total}")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, json!([]));
    assert_eq!(reply.header("x-total-count"), total.to_string());
    // The last partial page, read from the other end, in the right order.
    let reply = app.get(&format!("/pets?sort=id&limit=10&offset={}", total - 3)).await.expect_status(200);
    let ids: Vec<i64> = reply.body.as_array().unwrap().iter().map(|p| p["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, truth(&app, "", "id")[total - 3..]);
}

#[tokio::test]
async fn the_kept_counts_follow_every_kind_of_pet_change() {
    let app = shop(200).await;
    assert_pet_counts_kept_in(&app.db);

    let cats = app.category("Cats and more").await;
    let pet = app.pet_with_stock("Tiger", 3).await;
    app.patch(&format!("/pets/{pet}"), json!({ "categoryId": cats })).await.expect_status(200);
    // The last unit ordered: the status rules move the pet to pending, and the counts with it;
    // cancelling the order moves it back.
    let order = app.post("/store/orders", json!({ "petId": pet, "quantity": 3 })).await.expect_status(201);
    assert_eq!(app.get(&format!("/pets/{pet}")).await.body["status"], "pending");
    let reply = app.send(app.request(Method::DELETE, &format!("/store/orders/{}", order.body["id"]))).await;
    assert_eq!(reply.status, 204);
    assert_eq!(app.get(&format!("/pets/{pet}")).await.body["status"], "available");
    // A status set by hand.
    app.put(&format!("/pets/{pet}"), json!({ "name": "Tiger", "status": "sold" })).await.expect_status(200);
    let doomed = app.pet_with_stock("Doomed", 0).await;
    assert_eq!(app.delete(&format!("/pets/{doomed}")).await.status, 204);
    // A counter sale of the last one in stock, of a pet in a category: the sale itself
    // moves the pet from available to sold.
    let parrot = app.pet_with_stock("Polly", 1).await;
    app.patch(&format!("/pets/{parrot}"), json!({ "categoryId": cats })).await.expect_status(200);
    let sale = app.post("/store/orders", json!({ "petId": parrot, "quantity": 1, "complete": true })).await;
    assert_eq!(sale.expect_status(201).body["complete"], true);
    assert_eq!(app.get(&format!("/pets/{parrot}")).await.body["status"], "sold");
    assert_pet_counts_kept_in(&app.db);

    // What the API shows comes from them.
    let categories = app.get("/categories?limit=100").await.expect_status(200);
    for category in categories.body.as_array().unwrap() {
        let id = category["id"].as_i64().unwrap();
        let real = app.db.one_i64(&format!("SELECT count(*) FROM pets WHERE category_id = {id}"));
        assert_eq!(category["petCount"], real, "{}", category["name"]);
    }
    let available = app.get("/pets?status=available&limit=1").await;
    let real = app.db.one_i64("SELECT count(*) FROM pets WHERE status = 'available'");
    assert_eq!(available.header("x-total-count"), real.to_string());
}

#[test]
fn a_bulk_seed_keeps_the_counts_the_indexes_and_the_triggers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bulk.db");
    drop(petstore::store::Store::open(&path).unwrap());
    let mut conn = Connection::open(&path).unwrap();
    let schema = |conn: &Connection| -> Vec<(String, String)> {
        conn.prepare("SELECT name, sql FROM sqlite_schema WHERE tbl_name = 'pets' ORDER BY name")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get::<_, Option<String>>(1)?.unwrap_or_default())))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    let before = schema(&conn);
    // Above the size from which the seed drops and rebuilds indexes and triggers.
    petstore::store::seed::seed(&mut conn, 100_000, |_| {}).unwrap();
    assert_eq!(schema(&conn), before, "every index and trigger of pets is back, unchanged");
    assert_pet_counts_kept(&conn);
    // The triggers work again.
    conn.execute_batch(
        "UPDATE pets SET status = 'pending' WHERE id % 10 = 3; DELETE FROM pets WHERE id % 97 = 0",
    )
    .unwrap();
    assert_pet_counts_kept(&conn);
}
