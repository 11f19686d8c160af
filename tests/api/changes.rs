//! The change feed through the real server: `GET /changes` numbers every committed change
//! in order, `GET /events` pushes them and resumes from `Last-Event-ID` without a loss,
//! and a position the feed no longer has is `410 gone`. On the engine under test.

use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};
use reqwest::Method;
use serde_json::{Value, json};

use petstore::api_key::Scope;
use petstore::domain::{Action, Entity, Name};
use petstore::error::ErrorCode;

use crate::support::{KEY, TestApp, openapi, pg_server, spawn_app, spawn_app_configured, spawn_postgres_app};

/// `(entity, id, action)` of each change, for comparing runs of the feed.
fn what(changes: &Value) -> Vec<(String, i64, String)> {
    changes
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["entity"].as_str().unwrap().to_owned(),
                c["id"].as_i64().unwrap_or(0),
                c["action"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn change(entity: &str, id: i64, action: &str) -> (String, i64, String) {
    (entity.to_owned(), id, action.to_owned())
}

/// The feed's position now.
async fn head(app: &TestApp) -> u64 {
    let now = app.get("/changes").await.expect_status(200);
    assert_eq!(now.body["changes"], json!([]), "no since: no changes, only where the feed is");
    now.body["next"].as_u64().unwrap()
}

/// Every change after `since`, read to the end however many pages it takes; waits up to 5 s
/// for at least `at_least` of them (PostgreSQL numbers them just after their commit).
async fn changes_after(app: &TestApp, since: u64, at_least: usize) -> (Vec<Value>, u64) {
    changes_after_in(app, since, at_least, "").await
}

/// [`changes_after`], with `query` added to each read (`&include=activity`).
async fn changes_after_in(app: &TestApp, since: u64, at_least: usize, query: &str) -> (Vec<Value>, u64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (mut all, mut next) = (Vec::new(), since);
        loop {
            let page = app.get(&format!("/changes?since={next}&limit=3{query}")).await.expect_status(200);
            let got = page.body["changes"].as_array().unwrap().clone();
            let page_next = page.body["next"].as_u64().unwrap();
            if got.is_empty() {
                assert_eq!(page_next, next, "an empty page stays where it was");
                break;
            }
            assert_eq!(page_next, got.last().unwrap()["seq"].as_u64().unwrap());
            all.extend(got);
            next = page_next;
        }
        if all.len() >= at_least || std::time::Instant::now() > deadline {
            return (all, next);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn every_committed_change_is_in_the_feed_in_order_and_nothing_else() {
    let app = spawn_app().await;
    let start = head(&app).await;

    let category = app.category("Birds").await;
    let pet = app
        .post("/pets", json!({ "name": "Kiwi", "categoryId": category }))
        .await
        .expect_status(201)
        .body["id"]
        .as_i64()
        .unwrap();
    app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 5 })).await.expect_status(200);
    app.patch(&format!("/pets/{pet}"), json!({ "description": "Sings at dawn" })).await.expect_status(200);
    let order = app.post("/store/orders", json!({ "petId": pet, "quantity": 2 })).await.expect_status(201);
    let order = order.body["id"].as_i64().unwrap();
    app.patch(&format!("/store/orders/{order}"), json!({ "complete": true })).await.expect_status(200);
    // Refused: no change, so nothing in the feed.
    app.post("/store/orders", json!({ "petId": pet, "quantity": 99 })).await.expect_status(409);
    let other = app.category("Fish").await;
    app.delete(&format!("/categories/{other}")).await.expect_status(204);

    let (changes, next) = changes_after(&app, start, 9).await;
    let seqs: Vec<u64> = changes.iter().map(|c| c["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "numbers go up: {seqs:?}");
    assert!(seqs[0] > start);
    let listed = what(&Value::Array(changes.clone()));
    let mut expected = vec![
        change("category", category, "created"),
        change("pet", pet, "created"),
        change("inventory", pet, "updated"),
        change("pet", pet, "updated"),
        change("order", order, "created"),
        change("inventory", pet, "updated"),
        change("order", order, "updated"),
        change("category", other, "created"),
        change("category", other, "deleted"),
    ];
    // An order is placed and its pet's stock taken in one transaction: their two changes
    // come together, in the order the engine's triggers fired.
    if listed[4] != expected[4] {
        expected.swap(4, 5);
    }
    assert_eq!(listed, expected);
    for c in &changes {
        let at = chrono::DateTime::parse_from_rfc3339(c["at"].as_str().unwrap()).unwrap();
        assert!((Utc::now() - at.to_utc()).num_seconds().abs() < 60, "{c}");
    }
    assert_eq!(head(&app).await, next, "the head is the last change");
    // The head of a reader of the log's entries too is its last change, the category's
    // deletion's entry: after the data's.
    let (all, last) = changes_after_in(&app, next, 1, "&include=activity").await;
    assert!(!all.is_empty() && all.iter().all(|c| c["entity"] == "activity"), "{all:?}");
    let now = app.get("/changes?include=activity").await.expect_status(200);
    assert_eq!(now.body["next"].as_u64(), Some(last));
}

#[tokio::test]
async fn an_imported_pet_with_stock_is_a_change_of_its_stock_too() {
    // A till's mirror reads the stock of the pets the feed names as stock changes: an import
    // that made pets with stock must name them so, or the till shows them with none.
    let app = spawn_app().await;
    let start = head(&app).await;
    let reply = app
        .request(Method::POST, "/imports/pets?createCategories=true")
        .header("Content-Type", "text/csv")
        .body("name,category,stock\nRex,Dogs,3\nTom,Dogs,\n")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 201);
    let (changes, _) = changes_after(&app, start, 4).await;
    let mut listed = what(&Value::Array(changes));
    listed.sort();
    let (rex, tom) = (1, 2);
    assert_eq!(
        listed,
        vec![
            change("category", 1, "created"),
            change("inventory", rex, "updated"),
            change("pet", rex, "created"),
            change("pet", tom, "created"),
        ]
    );
}

#[tokio::test]
async fn bad_positions_and_limits_are_refused_with_what_to_do() {
    let app = spawn_app().await;
    app.category("Birds").await;
    let (_, last) = changes_after_in(&app, 0, 2, "&include=activity").await;

    let ahead = app.get(&format!("/changes?since={}", last + 1)).await.expect_status(410);
    assert_eq!(ahead.code(), "gone");
    assert!(ahead.body["message"].as_str().unwrap().contains("read everything again"), "{:?}", ahead.body);
    let bad_ones = ["limit=0", "limit=1001", "since=-1", "since=x", "since=9223372036854775808", "offset=3"];
    for bad in bad_ones.into_iter().chain(["include=orders", "include="]) {
        let reply = app.get(&format!("/changes?{bad}")).await.expect_status(400);
        assert_eq!(reply.code(), "invalid_parameter", "{bad}");
    }
    let reply = app.send(app.request(Method::GET, "/events").header("last-event-id", "soon")).await;
    assert_eq!((reply.status.as_u16(), reply.code()), (400, "invalid_parameter"));
    let reply = app.get("/events?include=everything").await.expect_status(400);
    assert!(reply.body["message"].as_str().unwrap().contains("include must be activity"), "{:?}", reply.body);
}

/// The activity log's entries are in the feed for a reader that asks (`include=activity`),
/// each naming an entry `GET /activity` lists; a sale's is not, its order's change is its
/// news; and a reader that does not ask sees the feed as before the log.
#[tokio::test]
async fn the_activity_log_is_in_the_feed_for_who_asks_and_a_sale_is_its_order() {
    let app = spawn_app().await;
    let start = head(&app).await;
    let mut plain = Events::open(&app, None, &format!("?since={start}")).await;
    let mut with_activity = Events::open(&app, None, &format!("?since={start}&include=activity")).await;

    let birds = app.category("Birds").await;
    let pet = app.post("/pets", json!({ "name": "Kiwi", "categoryId": birds })).await.expect_status(201).body
        ["id"]
        .as_i64()
        .unwrap();
    app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 5 })).await.expect_status(200);
    let order = app.post("/store/orders", json!({ "petId": pet, "quantity": 1 })).await.expect_status(201);
    let order = order.body["id"].as_i64().unwrap();

    // The log, newest first: the sale, the count, the pet, the category.
    let log = app.get("/activity?limit=4").await.expect_status(200).body;
    let kinds: Vec<&str> = log.as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["order_placed", "stock_counted", "pet_created", "category_created"]);
    let entry = |i: usize| log[i]["id"].as_i64().unwrap();

    let data = [
        change("category", birds, "created"),
        change("pet", pet, "created"),
        change("inventory", pet, "updated"),
        change("order", order, "created"),
        change("inventory", pet, "updated"),
    ];
    let (all, _) = changes_after_in(&app, start, 8, "&include=activity").await;
    let listed = what(&Value::Array(all.clone()));
    let (activity, rest): (Vec<_>, Vec<_>) =
        listed.iter().cloned().partition(|(entity, ..)| entity == "activity");
    assert_eq!(
        activity,
        [
            change("activity", entry(3), "created"),
            change("activity", entry(2), "created"),
            change("activity", entry(1), "created")
        ],
        "every entry but the sale's, in the order they were made"
    );
    let mut sorted = rest.clone();
    sorted.sort();
    let mut expected = data.to_vec();
    expected.sort();
    assert_eq!(sorted, expected, "and the data's changes, as ever");
    // Each entry comes after its write's own change, in the same transaction.
    let at = |c: &(String, i64, String)| listed.iter().position(|l| l == c).unwrap();
    assert!(at(&change("category", birds, "created")) < at(&change("activity", entry(3), "created")));

    let (without, _) = changes_after(&app, start, 5).await;
    assert_eq!(what(&Value::Array(without)), rest, "without include: the shop's data only");

    for _ in 0..rest.len() {
        let event = plain.next(Duration::from_secs(5)).await.expect("a change");
        assert_eq!(event.kind, "change", "{event:?}");
    }
    let mut kinds = Vec::new();
    for _ in 0..listed.len() {
        let event = with_activity.next(Duration::from_secs(5)).await.expect("a change or an entry");
        let raw = json!({ "id": event.id, "event": event.kind, "data": event.raw });
        openapi::check_schema("FeedEvent", &raw, "an event of GET /events?include=activity");
        openapi::check_schema("FeedChange", &event.data, "the data of an event");
        assert_eq!(event.kind == "activity", event.data["entity"] == "activity", "{event:?}");
        kinds.push(event.data["seq"].as_u64().unwrap());
    }
    let seqs: Vec<u64> = all.iter().map(|c| c["seq"].as_u64().unwrap()).collect();
    assert_eq!(kinds, seqs, "the stream sends what GET /changes lists, in its order");

    // The plain stream was sent no entry: its next event is the next change of the data.
    let fish = app.category("Fish").await;
    let next = plain.next(Duration::from_secs(5)).await.expect("the next change");
    assert_eq!(what(&json!([next.data])), [change("category", fish, "created")]);
}

#[tokio::test]
async fn a_purge_removes_nothing_younger_than_the_retention() {
    // The server purges at start and every hour with "a week ago": changes made since are
    // the feed every till follows, and must stay (PostgreSQL's LEAST ignores a NULL, so a
    // purge that found nothing old once removed all but the newest change).
    let app = spawn_app().await;
    for name in ["Birds", "Fish", "Cats"] {
        app.category(name).await;
    }
    let (before, last) = changes_after(&app, 0, 3).await;
    let store = app.db.open().await;
    let removed = store.purge_changes(Utc::now() - TimeDelta::days(7)).await.unwrap();
    assert_eq!(removed, 0, "nothing is a week old");
    let (after, next) = changes_after(&app, 0, 3).await;
    assert_eq!((what(&Value::Array(after)), next), (what(&Value::Array(before)), last));
}

#[tokio::test]
async fn a_position_behind_the_purged_changes_is_gone_and_the_head_still_good() {
    let app = spawn_app().await;
    for name in ["Birds", "Fish", "Cats"] {
        app.category(name).await;
    }
    // Each with its entry in the activity log: six changes.
    let (_, last) = changes_after_in(&app, 0, 6, "&include=activity").await;
    // The retention passes: everything made until now is purged.
    let store = app.db.open().await;
    let removed = store.purge_changes(Utc::now() + TimeDelta::days(1)).await.unwrap();
    assert_eq!(removed, 5, "all but the newest, which always stays");
    // Another process's commit: the server sees it once its readers take a new snapshot.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while app.get("/changes?since=0").await.status == 200 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    for since in [0, last - 2] {
        let gone = app.get(&format!("/changes?since={since}")).await.expect_status(410);
        assert!(gone.body["message"].as_str().unwrap().contains("no longer kept"), "{:?}", gone.body);
        let stream = app.send(app.request(Method::GET, &format!("/events?since={since}"))).await;
        assert_eq!(stream.status, 410);
    }
    // A client one change behind gets that change; one that had read everything goes on.
    let (kept, _) = changes_after_in(&app, last - 1, 1, "&include=activity").await;
    assert_eq!(kept.len(), 1);
    let now = app.get("/changes?include=activity").await.expect_status(200);
    assert_eq!(now.body["next"].as_u64(), Some(last));
    // The newest kept is an entry of the log: a reader of the data alone is at the horizon,
    // where it misses nothing.
    let data_head = head(&app).await;
    assert_eq!(data_head, last - 1);
    let dog = app.category("Dogs").await;
    for from in [data_head, last] {
        let (after, _) = changes_after(&app, from, 1).await;
        assert_eq!(what(&Value::Array(after)), [change("category", dog, "created")]);
    }
}

#[tokio::test]
async fn a_read_key_may_follow_the_feed() {
    let app = spawn_app().await;
    // Named keys come from the store (as `petstore-server keys create` makes them).
    let store = app.db.open().await;
    let reader = store.create_key(Name::parse("mirror").unwrap(), Scope::Read).await.unwrap();
    let reply = app.send(app.anonymous(Method::GET, "/changes").bearer_auth(reader.secret.expose())).await;
    assert_eq!(reply.status, 200);
    let events =
        app.anonymous(Method::GET, "/events").bearer_auth(reader.secret.expose()).send().await.unwrap();
    assert_eq!(events.status(), 200);
    assert_eq!(events.headers()["content-type"], "text/event-stream");
}

/// One Server-Sent Events stream, read event by event.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

#[derive(Debug)]
struct Event {
    id: Option<String>,
    kind: String,
    data: Value,
    /// `data` as the server wrote it.
    raw: String,
}

impl Events {
    async fn open(app: &TestApp, last_event_id: Option<u64>, query: &str) -> Self {
        Self::open_with(app, &app.http, KEY, last_event_id.map(|id| id.to_string()), query).await
    }

    /// A stream opened by `http` (from its own address) with `key`, `Last-Event-ID` sent as
    /// it is given.
    async fn open_with(
        app: &TestApp,
        http: &reqwest::Client,
        key: &str,
        last_event_id: Option<String>,
        query: &str,
    ) -> Self {
        let mut request = http.get(format!("{}/events{query}", app.base_url)).bearer_auth(key);
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Self { response, buffer: String::new() }
    }

    /// The next event (comments skipped), within `wait`.
    async fn next(&mut self, wait: Duration) -> Option<Event> {
        tokio::time::timeout(wait, async {
            loop {
                if let Some(end) = self.buffer.find("\n\n") {
                    let block: String = self.buffer.drain(..end + 2).collect();
                    let (mut id, mut kind, mut data) = (None, "message".to_owned(), String::new());
                    for line in block.lines() {
                        if let Some(v) = line.strip_prefix("id:") {
                            id = Some(v.trim().to_owned());
                        } else if let Some(v) = line.strip_prefix("event:") {
                            kind = v.trim().to_owned();
                        } else if let Some(v) = line.strip_prefix("data:") {
                            data.push_str(v.trim());
                        }
                    }
                    if data.is_empty() && id.is_none() {
                        continue; // a keep-alive comment
                    }
                    return Some(Event { id, kind, data: serde_json::from_str(&data).unwrap(), raw: data });
                }
                match self.response.chunk().await.unwrap() {
                    Some(bytes) => self.buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                    None => return None,
                }
            }
        })
        .await
        .ok()
        .flatten()
    }
}

#[tokio::test]
async fn events_push_each_change_and_a_reconnection_with_last_event_id_loses_nothing() {
    let app = spawn_app().await;
    let start = head(&app).await;
    let mut events = Events::open(&app, None, "").await;

    let birds = app.category("Birds").await;
    let first = events.next(Duration::from_secs(5)).await.expect("the change is pushed");
    assert_eq!(first.kind, "change");
    assert_eq!(what(&json!([first.data])), [change("category", birds, "created")]);
    let seen: u64 = first.id.unwrap().parse().unwrap();
    assert!(seen > start);
    assert_eq!(first.data["seq"].as_u64(), Some(seen));

    // The connection drops; three changes are made meanwhile; the client reconnects.
    drop(events);
    let missed = [app.category("Fish").await, app.category("Cats").await, app.category("Dogs").await];
    let mut events = Events::open(&app, Some(seen), "").await;
    let mut got = Vec::new();
    for _ in 0..3 {
        let event = events.next(Duration::from_secs(5)).await.expect("a missed change");
        got.push(event.data);
    }
    let expected: Vec<_> = missed.iter().map(|&id| change("category", id, "created")).collect();
    assert_eq!(what(&Value::Array(got)), expected);

    // And it goes on live.
    let pet =
        app.post("/pets", json!({ "name": "Kiwi" })).await.expect_status(201).body["id"].as_i64().unwrap();
    let live = events.next(Duration::from_secs(5)).await.expect("a live change");
    assert_eq!(what(&json!([live.data])), [change("pet", pet, "created")]);

    // `since` starts a stream where a client left off too.
    let mut from_start = Events::open(&app, None, &format!("?since={start}")).await;
    let replayed = from_start.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(replayed.data["seq"].as_u64(), Some(seen));
}

/// An empty `Last-Event-ID` is no position (as none), not a `400`: an `EventSource`
/// whose last event had no id sends an empty one; and each event is what the document's `FeedEvent` says, its
/// `data` a `FeedChange` as written.
#[tokio::test]
async fn an_empty_last_event_id_is_no_position_and_each_event_is_as_documented() {
    let app = spawn_app().await;
    let start = head(&app).await;
    let birds = app.category("Birds").await;
    let mut events =
        Events::open_with(&app, &app.http, KEY, Some(String::new()), &format!("?since={start}")).await;
    let first = events.next(Duration::from_secs(5)).await.expect("the change after since");
    assert_eq!(what(&json!([first.data])), [change("category", birds, "created")]);
    let fish = app.category("Fish").await;
    let second = events.next(Duration::from_secs(5)).await.expect("a live change");
    assert_eq!(what(&json!([second.data])), [change("category", fish, "created")]);
    for event in [first, second] {
        let raw = json!({ "id": event.id, "event": event.kind, "data": event.raw });
        openapi::check_schema("FeedEvent", &raw, "an event of GET /events");
        openapi::check_schema("FeedChange", &event.data, "the data of a change event");
    }
    let blank = Events::open_with(&app, &app.http, KEY, Some(" ".to_owned()), "").await;
    drop(blank);
    for bad in ["+5", "-1", "1.0", "18446744073709551616"] {
        let reply = app.send(app.request(Method::GET, "/events").header("last-event-id", bad)).await;
        assert_eq!((reply.status.as_u16(), reply.code()), (400, "invalid_parameter"), "{bad}");
    }
}

#[tokio::test]
async fn the_event_stream_ends_when_the_server_stops() {
    let mut app = spawn_app().await;
    let mut events = Events::open(&app, None, "").await;
    // Stopping waits for the connections to finish: the stream must end for it to return.
    tokio::time::timeout(Duration::from_secs(10), app.stop()).await.expect("the server stops");
    assert!(events.next(Duration::from_secs(5)).await.is_none(), "the stream ended");
}

/// The client's follower (what the app in remote mode uses) against the real server.
#[tokio::test]
async fn the_clients_follower_gets_each_change_resumes_after_a_position_and_says_when_cut_off() {
    let mut app = spawn_app().await;
    let client = petstore::client::Client::new(&app.base_url, KEY).unwrap();
    let start = client.changes(None, 10).await.unwrap();
    assert!(start.changes.is_empty());

    let mut follower = client.follow(None);
    // The follower connects on its first call, and follows from the moment the server
    // answers its request: only changes made after that are its to give. A call cut short
    // keeps the stream it opened, so calls are cut short until it is connected.
    let connecting = Instant::now();
    while !follower.is_connected() {
        assert!(connecting.elapsed() < Duration::from_secs(10), "the follower did not connect within 10 s");
        if let Ok(given) = tokio::time::timeout(Duration::from_millis(50), follower.next()).await {
            panic!("nothing has changed since the follower started, yet it gave {given:?}");
        }
    }
    let birds = app.category("Birds").await;
    let change = tokio::time::timeout(Duration::from_secs(5), follower.next()).await.unwrap().unwrap();
    assert_eq!((change.entity, change.id, change.action), (Entity::Category, Some(birds), Action::Created));
    assert_eq!(follower.position(), Some(change.seq));

    // From a position: what came after it, in order.
    let fish = app.category("Fish").await;
    let mut from = client.follow(Some(start.next));
    let first = tokio::time::timeout(Duration::from_secs(5), from.next()).await.unwrap().unwrap();
    let second = tokio::time::timeout(Duration::from_secs(5), from.next()).await.unwrap().unwrap();
    assert_eq!((first.id, second.id), (Some(birds), Some(fish)));
    let next = tokio::time::timeout(Duration::from_secs(5), follower.next()).await.unwrap().unwrap();
    assert_eq!(next.id, Some(fish));

    // The server goes away: an error, not a wait; then again on the next call.
    app.stop().await;
    let cut = tokio::time::timeout(Duration::from_secs(5), follower.next()).await.unwrap().unwrap_err();
    assert_eq!(cut.code, ErrorCode::Unreachable, "{cut:?}");
    assert!(!follower.is_connected());
    let refused = tokio::time::timeout(Duration::from_secs(5), follower.next()).await.unwrap().unwrap_err();
    assert_eq!(refused.code, ErrorCode::Unreachable, "{refused:?}");
    assert_eq!(follower.position(), Some(next.seq), "it resumes after the last change it gave");
}

#[tokio::test]
async fn the_clients_follower_says_gone_for_a_position_the_feed_no_longer_has() {
    let app = spawn_app().await;
    let client = petstore::client::Client::new(&app.base_url, KEY).unwrap();
    app.category("Birds").await;
    let (_, last) = changes_after(&app, 0, 1).await;
    let mut ahead = client.follow(Some(last + 5));
    let gone = tokio::time::timeout(Duration::from_secs(5), ahead.next()).await.unwrap().unwrap_err();
    assert_eq!(gone.code, ErrorCode::Gone, "{gone:?}");
    let bad_key = petstore::client::Client::new(&app.base_url, "not-the-key-0123456789").unwrap();
    let refused = bad_key.follow(None).next().await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::Unauthorized);
}

/// A client whose connections come from `address` (any of 127.0.0.0/8 is this machine).
fn client_from(address: &str) -> reqwest::Client {
    reqwest::Client::builder().local_address(address.parse::<std::net::IpAddr>().unwrap()).build().unwrap()
}

#[tokio::test]
async fn a_revoked_keys_stream_ends_and_gets_no_change_made_after_the_revocation() {
    let app = spawn_app().await;
    let store = app.db.open().await;
    let reader = store.create_key(Name::parse("till").unwrap(), Scope::Read).await.unwrap();
    let mut events = Events::open_with(&app, &app.http, reader.secret.expose(), None, "").await;
    let birds = app.category("Birds").await;
    let seen = events.next(Duration::from_secs(5)).await.expect("a change while the key is good");
    assert_eq!(what(&json!([seen.data])), [change("category", birds, "created")]);

    store.revoke_key("till").await.unwrap();
    app.category("Fish").await;
    app.category("Cats").await;
    // The stream ends (within a second or so); not one change made after the revocation
    // reaches it first.
    let after = events.next(Duration::from_secs(10)).await;
    assert!(after.is_none(), "a revoked key's stream got {after:?}");
    // And the key opens no new stream.
    let again = app.send(app.anonymous(Method::GET, "/events").bearer_auth(reader.secret.expose())).await;
    assert_eq!(again.status, 401);
}

#[tokio::test]
async fn a_revoked_keys_quiet_stream_ends_too() {
    let app = spawn_app().await;
    let store = app.db.open().await;
    let reader = store.create_key(Name::parse("till").unwrap(), Scope::Read).await.unwrap();
    let mut events = Events::open_with(&app, &app.http, reader.secret.expose(), None, "").await;
    store.revoke_key("till").await.unwrap();
    // Nothing changes: the stream ends anyway, rather than at its keep-alive or lifetime.
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while events.response.chunk().await.is_ok_and(|chunk| chunk.is_some()) {}
    })
    .await;
    assert!(ended.is_ok(), "the stream of a revoked key stayed open");
}

#[tokio::test]
async fn streams_are_capped_overall_per_key_and_per_address_and_the_operator_is_still_answered() {
    // Uncapped, 10,000 streams of one read key left /health with the operator's key
    // unanswered 30 times of 30. The same at a small scale: caps of 6 overall, 2 per key
    // and 3 per address, and many times as many streams asked for.
    let app = spawn_app_configured(|config| {
        config.streams.overall = 6;
        config.streams.per_key = 2;
        config.streams.per_address = 3;
    })
    .await;
    let store = app.db.open().await;
    let reader = store.create_key(Name::parse("reporting").unwrap(), Scope::Read).await.unwrap();
    let (two, three) = (client_from("127.0.0.2"), client_from("127.0.0.3"));
    // Refusals come to `app.http`, from 127.0.0.1, and are checked against the document.
    let refused = async |key: &str| {
        let reply = app.send(app.anonymous(Method::GET, "/events").bearer_auth(key)).await;
        let retry = reply.header("retry-after").parse::<u64>().unwrap_or(0);
        assert!(retry > 0, "Retry-After {:?}", reply.header("retry-after"));
        (reply.status.as_u16(), reply.code().to_owned())
    };

    let mut held = Vec::new();
    held.push(Events::open_with(&app, &two, reader.secret.expose(), None, "").await);
    held.push(Events::open_with(&app, &three, reader.secret.expose(), None, "").await);
    assert_eq!(refused(reader.secret.expose()).await, (429, "rate_limited".into()), "per key");
    for _ in 0..3 {
        held.push(Events::open_with(&app, &app.http, KEY, None, "").await);
    }
    assert_eq!(refused(KEY).await, (429, "rate_limited".into()), "per address");
    held.push(Events::open_with(&app, &two, KEY, None, "").await);
    for _ in 0..40 {
        assert_eq!(refused(KEY).await, (503, "busy".into()), "overall");
    }
    // The operator's requests are answered meanwhile.
    for _ in 0..5 {
        app.get("/health").await.expect_status(200);
        app.get("/pets").await.expect_status(200);
    }
    // A stream that ends makes room for another.
    drop(held.pop());
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let reply = two.get(format!("{}/events", app.base_url)).bearer_auth(KEY).send().await.unwrap();
        if reply.status() == 200 || std::time::Instant::now() > deadline {
            assert_eq!(reply.status(), 200, "room again once a stream closed");
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_stream_ends_after_its_lifetime_and_resumes_with_last_event_id_losing_nothing() {
    let app = spawn_app_configured(|config| config.streams.lifetime = Duration::from_secs(1)).await;
    let mut events = Events::open(&app, None, "").await;
    let birds = app.category("Birds").await;
    let first = events.next(Duration::from_secs(5)).await.expect("a change");
    assert_eq!(what(&json!([first.data])), [change("category", birds, "created")]);
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while events.next(Duration::from_secs(20)).await.is_some() {}
    })
    .await;
    assert!(ended.is_ok(), "the stream outlived its lifetime");
    let fish = app.category("Fish").await;
    let seen: u64 = first.id.unwrap().parse().unwrap();
    let mut resumed = Events::open(&app, Some(seen), "").await;
    let next = resumed.next(Duration::from_secs(5)).await.expect("the change made meanwhile");
    assert_eq!(what(&json!([next.data])), [change("category", fish, "created")]);
}

/// Makes `count` changes one after another, each received by every stream before the next
/// is made, so that no read of the feed can serve two of them.
async fn change_and_receive(app: &TestApp, streams: &mut [Events], count: usize) {
    for i in 0..count {
        let id = app.category(&format!("Round {i} {}", fastrand::u32(..))).await;
        for events in streams.iter_mut() {
            let event = events.next(Duration::from_secs(10)).await.expect("every stream gets every change");
            assert_eq!(what(&json!([event.data])), [change("category", id, "created")]);
        }
    }
}

#[tokio::test]
async fn fifty_streams_cost_the_feeds_reads_per_commit_of_one() {
    // Each stream read the feed itself on every commit: N streams, N reads (and more). Now
    // one reader serves them all: the count is the server's own, of the reads it makes for
    // event streams.
    const COMMITS: usize = 20;
    let app = spawn_app().await;
    let mut streams = vec![Events::open(&app, None, "").await];
    change_and_receive(&app, &mut streams, 1).await;
    let before = app.feed().reads();
    change_and_receive(&app, &mut streams, COMMITS).await;
    let one = app.feed().reads() - before;

    for _ in 0..49 {
        streams.push(Events::open(&app, None, "").await);
    }
    change_and_receive(&app, &mut streams, 1).await;
    let before = app.feed().reads();
    change_and_receive(&app, &mut streams, COMMITS).await;
    let fifty = app.feed().reads() - before;
    // At least a read per commit either way; beyond that only the reader's once-a-second
    // look, whose count depends on how long the rounds took.
    assert!(one >= COMMITS as u64, "{one}");
    assert!(fifty <= one + COMMITS as u64 / 2, "50 streams: {fifty} reads for {COMMITS} commits; one: {one}");
}

#[tokio::test]
async fn fifty_streams_opened_at_once_cost_the_feed_the_readers_reads() {
    // A chain's tills reconnect at once after a restart. Each stream opened before the
    // shared reader had read used to read the feed itself, twice (its head, its page): the
    // streams now wait for the reader's first read.
    async fn reads_to_open(streams: usize) -> u64 {
        let app = spawn_app().await;
        let before = app.feed().reads();
        let opening = (0..streams).map(|_| Events::open(&app, None, ""));
        let mut streams = futures_util::future::join_all(opening).await;
        let reads = app.feed().reads() - before;
        change_and_receive(&app, &mut streams, 1).await;
        reads
    }
    // Each on a fresh server, whose reader is idle until the first stream opens.
    let one = reads_to_open(1).await;
    let fifty = reads_to_open(50).await;
    assert!(fifty <= one + 2, "50 streams opened at once: {fifty} reads of the feed; one stream: {one}");
}

#[tokio::test]
async fn streams_behind_the_shared_reader_read_the_database_and_miss_nothing() {
    // 5,000 changes in one import: more than the reader keeps in memory. A stream live
    // through them, and one that starts from before them, both get every change in order.
    let app = spawn_app().await;
    let start = head(&app).await;
    let mut live = Events::open(&app, None, "").await;
    let csv: String = std::iter::once("name,category\n".to_owned())
        .chain((0..5000).map(|i| format!("Pet {i},Dogs\n")))
        .collect();
    let reply = app
        .request(Method::POST, "/imports/pets?createCategories=true")
        .header("Content-Type", "text/csv")
        .body(csv)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 201);
    let mut late = Events::open(&app, Some(start), "").await;
    for events in [&mut live, &mut late] {
        let (mut last, mut pets) = (start, Vec::new());
        while pets.len() < 5000 {
            let event = events.next(Duration::from_secs(20)).await.unwrap_or_else(|| panic!("after {last}"));
            let seq: u64 = event.id.unwrap().parse().unwrap();
            assert!(seq > last, "in order, none twice: {seq} after {last}");
            last = seq;
            if event.data["entity"] == "pet" {
                pets.push(event.data["id"].as_i64().unwrap());
            }
        }
        let mut sorted = pets.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 5000, "every pet once");
    }
}

/// On PostgreSQL whatever the engine under test: the numbering of its feed.
#[tokio::test]
async fn a_transaction_open_in_another_database_of_the_cluster_holds_nothing_back() {
    // The sequencer numbered only the rows below the snapshot's xmin, which is the whole
    // cluster's: a transaction left open in another database held the feed back on every
    // replica (20.5 s measured), here for as long as it stayed open.
    let app = spawn_postgres_app().await;
    let other = pg_server::database();
    let (client, connection) = tokio_postgres::connect(&other.url, tokio_postgres::NoTls).await.unwrap();
    let connection = tokio::spawn(connection);
    client.batch_execute("BEGIN; CREATE TABLE held (x int); INSERT INTO held VALUES (1)").await.unwrap();

    let mut events = Events::open(&app, None, "").await;
    let pet =
        app.post("/pets", json!({ "name": "Kiwi" })).await.expect_status(201).body["id"].as_i64().unwrap();
    app.put(&format!("/store/inventory/{pet}"), json!({ "quantity": 5 })).await.expect_status(200);
    let order = app.post("/store/orders", json!({ "petId": pet, "quantity": 1 })).await.expect_status(201);
    let order = order.body["id"].as_i64().unwrap();
    let mut delivered = Vec::new();
    while !delivered.contains(&change("order", order, "created")) {
        let event = events.next(Duration::from_secs(10)).await;
        let event = event.expect("the order's change is numbered and sent while the other transaction runs");
        delivered.push(what(&json!([event.data])).remove(0));
    }
    client.batch_execute("COMMIT").await.unwrap();
    drop(client);
    let _ = connection.await;
}
