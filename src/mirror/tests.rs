//! The mirror against a real Petstore server on loopback, stopped and started again on the
//! same port to be "offline".

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use super::*;
use crate::Petstore;
use crate::api::KeyRing;
use crate::client::ClientConfig;
use crate::domain::*;
use crate::engine::Keys;
use crate::engine::{Database, Served};
use crate::server::{Application, ServerConfig};

pub(super) const KEY: &str = "psk_mirror-test-key-0123456789abcdef0123456789";
pub(super) const SETTLE: Duration = Duration::from_secs(20);

/// A server over `store`; stopping it frees the port for the next start.
pub(super) struct Remote {
    store: Store,
    pub(super) addr: SocketAddr,
    stop: Option<(oneshot::Sender<()>, tokio::task::JoinHandle<()>)>,
}

impl Remote {
    pub(super) async fn start(store: Store) -> Self {
        let mut remote = Self { store, addr: SocketAddr::from(([127, 0, 0, 1], 0)), stop: None };
        remote.up().await;
        remote
    }

    pub(super) async fn up(&mut self) {
        let config = ServerConfig::new(self.addr, KeyRing::from_secrets([KEY]));
        let app = Application::bind(Served::all_of(Arc::new(self.store.clone())), config).await.unwrap();
        self.addr = app.local_addr();
        let (stop, stopped) = oneshot::channel();
        let served = tokio::spawn(app.run_until(async {
            let _ = stopped.await;
        }));
        self.stop = Some((stop, served));
    }

    pub(super) async fn down(&mut self) {
        if let Some((stop, served)) = self.stop.take() {
            let _ = stop.send(());
            served.await.unwrap();
        }
    }

    fn client(&self) -> Client {
        let config = ClientConfig::default()
            .connect_timeout(Duration::from_millis(500))
            .request_timeout(Duration::from_secs(2));
        Client::with_config(&format!("http://{}", self.addr), KEY, config).unwrap()
    }
}

pub(super) fn parse<T: serde::de::DeserializeOwned>(json: &str) -> T {
    serde_json::from_str(json).unwrap()
}

/// A shop of `pets` pets in two categories, each with `stock` in stock.
pub(super) async fn shop(dir: &Path, pets: usize, stock: i64) -> (Store, Vec<PetId>) {
    let store = Store::open(dir.join("server.db")).unwrap();
    let dogs = store.create_category(parse(r#"{"name": "Dogs"}"#)).await.unwrap();
    store.create_category(parse(r#"{"name": "Cats"}"#)).await.unwrap();
    let mut ids = Vec::new();
    for n in 0..pets {
        let body = format!(r#"{{"name": "Pet {n}", "categoryId": {}, "status": "available"}}"#, dogs.id);
        let pet = store.create_pet(parse(&body)).await.unwrap();
        store.set_inventory(pet.id, parse(&format!(r#"{{"quantity": {stock}}}"#))).await.unwrap();
        ids.push(pet.id);
    }
    (store, ids)
}

pub(super) fn order(pet: PetId, quantity: i64, complete: bool) -> NewOrder {
    parse(&format!(r#"{{"petId": {pet}, "quantity": {quantity}, "complete": {complete}}}"#))
}

pub(super) async fn orders_of(store: &impl Petstore) -> Vec<Order> {
    store.list_orders(OrderFilter::default(), Page::new(100, 0).unwrap()).await.unwrap().items
}

pub(super) async fn stock_of(store: &impl Petstore, pet: PetId) -> i64 {
    store.get_inventory(pet).await.unwrap().quantity
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_copies_the_shop_then_follows_its_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (server, pets) = shop(dir.path(), 250, 7).await;
    server.place_order(order(pets[3], 2, false)).await.unwrap();
    let remote = Remote::start(server.clone()).await;

    let mirror = Mirror::open(&dir.path().join("mirrors"), remote.client()).unwrap();
    assert!(mirror.settle(SETTLE).await, "the first copy ends: {:?}", *mirror.status().borrow());
    let all = Page::new(100, 0).unwrap();
    assert_eq!(mirror.list_pets(PetFilter::default(), all).await.unwrap().total, 250);
    assert_eq!(mirror.list_categories(all).await.unwrap().items.len(), 2);
    assert_eq!(stock_of(&mirror, pets[3]).await, 5);
    assert_eq!(stock_of(&mirror, pets[200]).await, 7);
    assert_eq!(orders_of(&mirror).await, orders_of(&server).await);

    // Changes on the server reach the mirror through the feed.
    server.update_pet(pets[0], parse(r#"{"name": "Renamed"}"#)).await.unwrap();
    server.adjust_inventory(pets[1], parse(r#"{"delta": 3, "reason": "delivery"}"#)).await.unwrap();
    server.delete_pet(pets[2]).await.unwrap();
    assert!(mirror.settle(SETTLE).await);
    assert_eq!(mirror.get_pet(pets[0]).await.unwrap().name, "Renamed");
    assert_eq!(stock_of(&mirror, pets[1]).await, 10);
    assert_eq!(mirror.get_pet(pets[2]).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(mirror.status().borrow().state, SyncState::Synced);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sales_taken_offline_reach_the_server_once_when_it_returns() {
    let dir = tempfile::tempdir().unwrap();
    let (server, pets) = shop(dir.path(), 3, 10).await;
    let mut remote = Remote::start(server.clone()).await;
    let mirrors = dir.path().join("mirrors");
    let mirror = Mirror::open(&mirrors, remote.client()).unwrap();
    assert!(mirror.settle(SETTLE).await);

    remote.down().await;
    let sale = mirror.place_order(order(pets[0], 2, true)).await.unwrap();
    assert!(sale.id.is_provisional(), "an order taken offline has a provisional id: {sale:?}");
    let open = mirror.place_order(order(pets[1], 1, false)).await.unwrap();
    mirror.adjust_inventory(pets[2], parse(r#"{"delta": -4, "reason": "broken"}"#)).await.unwrap();
    mirror.update_order(open.id, parse(r#"{"complete": true}"#)).await.unwrap();
    assert_eq!(stock_of(&mirror, pets[0]).await, 8, "the sale reserves its stock at once");
    assert_eq!(stock_of(&mirror, pets[2]).await, 6);
    assert_eq!(mirror.outbox_counts().await.unwrap(), OutboxCounts { pending: 4, attention: 0 });
    let refused = mirror.create_pet(parse(r#"{"name": "New"}"#)).await.unwrap_err();
    assert!(refused.message.contains("needs the server"), "{}", refused.message);

    // A restart of the till keeps its outbox.
    drop(mirror);
    let mirror = Mirror::open(&mirrors, remote.client()).unwrap();
    assert_eq!(mirror.outbox_counts().await.unwrap().pending, 4);

    remote.up().await;
    assert!(mirror.settle(SETTLE).await, "{:?}", *mirror.status().borrow());
    let placed = orders_of(&server).await;
    assert_eq!(placed.len(), 2, "{placed:?}");
    assert!(placed.iter().all(|o| o.complete));
    assert_eq!(stock_of(&server, pets[0]).await, 8);
    assert_eq!(stock_of(&server, pets[1]).await, 9);
    assert_eq!(stock_of(&server, pets[2]).await, 6);
    // The provisional ids now name the server's orders.
    let server_sale = mirror.get_order(sale.id).await.unwrap();
    assert!(!server_sale.id.is_provisional());
    assert_eq!(orders_of(&mirror).await, placed);
    assert_eq!(stock_of(&mirror, pets[0]).await, 8);

    // Replayed again (a lost answer, a restart): nothing more is placed.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(orders_of(&server).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sale_taken_offline_keeps_the_moment_it_was_made_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (server, pets) = shop(dir.path(), 1, 10).await;
    let mut remote = Remote::start(server.clone()).await;
    let mirror = Mirror::open(&dir.path().join("mirrors"), remote.client()).unwrap();
    assert!(mirror.settle(SETTLE).await);

    let open = mirror.place_order(order(pets[0], 2, false)).await.unwrap();
    remote.down().await;
    let sale = mirror.place_order(order(pets[0], 1, true)).await.unwrap();
    let made = sale.placed_at.expect("stamped when taken offline");
    assert_eq!(sale.completed_at, Some(made));
    let completed = mirror.update_order(open.id, parse(r#"{"complete": true}"#)).await.unwrap();
    let done = completed.completed_at.expect("completed offline");
    // The server comes back a while later.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    remote.up().await;
    assert!(mirror.settle(SETTLE).await, "{:?}", *mirror.status().borrow());

    // The order completed offline is completed when the till did it, too.
    let completed_on_server = server.get_order(open.id).await.unwrap();
    assert_eq!(completed_on_server.completed_at, Some(done), "{completed_on_server:?}");
    let on_server = server.get_order(mirror.get_order(sale.id).await.unwrap().id).await.unwrap();
    assert_eq!(on_server.placed_at, Some(made), "{on_server:?}");
    assert_eq!(on_server.completed_at, Some(made), "counted when it was made");
    let late = on_server.created_at.as_datetime() - made.as_datetime();
    assert!(late >= chrono::TimeDelta::seconds(1), "received later: {late}");
    assert_eq!(mirror.get_order(sale.id).await.unwrap(), on_server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tills_offline_selling_the_last_one_place_one_order_and_the_other_needs_attention() {
    let dir = tempfile::tempdir().unwrap();
    let (server, pets) = shop(dir.path(), 1, 1).await;
    let mut remote = Remote::start(server.clone()).await;
    let a = Mirror::open(&dir.path().join("till-a"), remote.client()).unwrap();
    let b = Mirror::open(&dir.path().join("till-b"), remote.client()).unwrap();
    for till in [&a, &b] {
        assert!(till.settle(SETTLE).await, "{:?}", *till.status().borrow());
    }

    remote.down().await;
    a.place_order(order(pets[0], 1, true)).await.unwrap();
    b.place_order(order(pets[0], 1, true)).await.unwrap();
    remote.up().await;
    assert!(a.settle(SETTLE).await && b.settle(SETTLE).await);

    assert_eq!(orders_of(&server).await.len(), 1, "one order stands");
    assert_eq!(stock_of(&server, pets[0]).await, 0, "nothing oversold");
    let attention: Vec<_> =
        [a.outbox().await.unwrap(), b.outbox().await.unwrap()].into_iter().flatten().collect();
    assert_eq!(attention.len(), 1, "{attention:?}");
    assert_eq!(attention[0].state, OutboxState::Attention);
    // In the server's words: the last one sold, the pet (by name and id) is sold.
    assert!(
        attention[0].reason.as_deref().unwrap_or("").contains(&format!("(#{}) is sold", pets[0])),
        "{attention:?}"
    );
    for till in [&a, &b] {
        assert_eq!(orders_of(till).await.len(), 1, "each till shows the one order that stands");
        assert_eq!(stock_of(till, pets[0]).await, 0);
    }

    // Dropped, it is gone for good; the server is untouched.
    let till = if a.outbox().await.unwrap().is_empty() { &b } else { &a };
    till.drop_queued(attention[0].seq).await.unwrap();
    assert!(till.outbox().await.unwrap().is_empty());
    assert_eq!(orders_of(&server).await.len(), 1);
}

/// The mirror served as the local API serves it in remote mode, on a free loopback port.
pub(super) async fn local_api(mirror: &Mirror) -> (String, oneshot::Sender<()>) {
    local_api_with_key(mirror, LOCAL_KEY).await
}

/// [`local_api`] with the local key `key` (made anew in Settings, say).
async fn local_api_with_key(mirror: &Mirror, key: &str) -> (String, oneshot::Sender<()>) {
    let config = ServerConfig::new(SocketAddr::from(([127, 0, 0, 1], 0)), KeyRing::from_secrets([key]));
    let app = Application::bind(mirror.served(), config).await.unwrap();
    let url = format!("http://{}", app.local_addr());
    let (stop, stopped) = oneshot::channel();
    tokio::spawn(app.run_until(async {
        let _ = stopped.await;
    }));
    (url, stop)
}

pub(super) const LOCAL_KEY: &str = "psk_local-api-key-of-the-till-0123456789abcdef";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_api_serves_the_mirror_and_answers_202_for_a_sale_taken_offline() {
    let dir = tempfile::tempdir().unwrap();
    let (server, pets) = shop(dir.path(), 2, 5).await;
    let mut remote = Remote::start(server.clone()).await;
    let own = Store::open(dir.path().join("own.db")).unwrap();
    let named = own.create_key(parse(r#""label-printer""#), crate::api_key::Scope::Write).await.unwrap();
    let mirror = Mirror::open_with_keys(&dir.path().join("mirrors"), remote.client(), Some(own)).unwrap();
    assert!(mirror.settle(SETTLE).await);
    let (url, _stop) = local_api(&mirror).await;
    let http = reqwest::Client::new();
    let sell = |key: &'static str, quantity: i64| {
        http.post(format!("{url}/store/orders"))
            .bearer_auth(LOCAL_KEY)
            .header("Idempotency-Key", key)
            .json(&serde_json::json!({"petId": pets[0], "quantity": quantity, "complete": true}))
            .send()
    };

    // Online: the server's order, as the server answers it.
    let online = sell("sale-1", 1).await.unwrap();
    assert_eq!(online.status(), 201, "{:?} {:?}", *mirror.status().borrow(), mirror.outbox().await);
    assert!(online.headers().get("petstore-sync").is_none());

    remote.down().await;
    // The remote shop, read from the mirror, with the computer's own named keys.
    let pets_page = http.get(format!("{url}/pets")).bearer_auth(named.secret.expose()).send().await.unwrap();
    assert_eq!(pets_page.status(), 200);
    assert_eq!(pets_page.headers()["x-total-count"], "2");

    let queued = sell("sale-2", 2).await.unwrap();
    assert_eq!(queued.status(), 202);
    assert_eq!(queued.headers()["petstore-sync"], "pending");
    let order: Order = queued.json().await.unwrap();
    assert!(order.id.is_provisional(), "{order:?}");
    // A retry answers the order queued, and queues nothing more; another request under the
    // same key is refused as the server would refuse it.
    let again: Order = sell("sale-2", 2).await.unwrap().json().await.unwrap();
    assert_eq!(again.id, order.id);
    assert_eq!(mirror.outbox_counts().await.unwrap().pending, 1);
    assert_eq!(sell("sale-2", 3).await.unwrap().status(), 422);
    let edit = http
        .post(format!("{url}/pets"))
        .bearer_auth(LOCAL_KEY)
        .json(&serde_json::json!({"name": "New"}))
        .send()
        .await
        .unwrap();
    assert_eq!(edit.status(), 503, "adding a pet needs the server");

    remote.up().await;
    assert!(mirror.settle(SETTLE).await, "{:?}", *mirror.status().borrow());
    assert_eq!(orders_of(&server).await.len(), 2, "each sale once");
    assert_eq!(stock_of(&server, pets[0]).await, 2);
    // A retry once it was sent gets the server's order, placed once.
    let late = sell("sale-2", 2).await.unwrap();
    assert_eq!(late.status(), 201);
    let late: Order = late.json().await.unwrap();
    assert_eq!(mirror.get_order(order.id).await.unwrap().id, late.id, "the provisional id names it");
    assert_eq!(orders_of(&server).await.len(), 2);
}

/// The local API in remote mode serves what the mirror has (its exports, its change feed)
/// and answers an import, which it lacks, with the refusal that names where pets are
/// imported; nothing reaches the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_api_of_a_mirror_exports_and_follows_but_refuses_imports() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = shop(dir.path(), 2, 5).await;
    let remote = Remote::start(server.clone()).await;
    let mirror = Mirror::open(&dir.path().join("mirrors"), remote.client()).unwrap();
    assert!(mirror.settle(SETTLE).await);
    let (url, _stop) = local_api(&mirror).await;
    let http = reqwest::Client::new();
    let get = |path: &str| http.get(format!("{url}{path}")).bearer_auth(LOCAL_KEY).send();

    let exported = get("/exports/pets.csv").await.unwrap();
    assert_eq!(exported.status(), 200);
    assert_eq!(exported.text().await.unwrap().lines().count(), 3, "the header and the two pets");
    let changes = get("/changes?since=0").await.unwrap();
    assert_eq!(changes.status(), 200);
    let changes: FeedPage = changes.json().await.unwrap();
    assert!(!changes.changes.is_empty(), "the mirror's own feed numbers what it took in");

    let import = http
        .post(format!("{url}/imports/pets?createCategories=true"))
        .bearer_auth(LOCAL_KEY)
        .header("Content-Type", "text/csv")
        .body("name,category,price,sku,status,stock\r\nRex,Dogs,249.00,A-9,,3\r\n")
        .send()
        .await
        .unwrap();
    assert_eq!(import.status(), 403);
    let refusal: serde_json::Value = import.json().await.unwrap();
    assert_eq!(refusal["code"], "forbidden", "{refusal}");
    assert_eq!(
        refusal["message"],
        "a till in remote mode does not import pets; import them on the server (its API, POST /imports/pets)"
    );
    assert_eq!(server.list_pets(PetFilter::default(), Page::default()).await.unwrap().total, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sale_sent_again_while_offline_gets_the_servers_order_not_a_second_sale() {
    let dir = tempfile::tempdir().unwrap();
    let (server, pets) = shop(dir.path(), 2, 10).await;
    server.set_inventory(pets[1], parse(r#"{"quantity": 1}"#)).await.unwrap();
    let mut remote = Remote::start(server.clone()).await;
    let mirror = Mirror::open(&dir.path().join("mirrors"), remote.client()).unwrap();
    assert!(mirror.settle(SETTLE).await);
    let (url, _stop) = local_api(&mirror).await;
    let http = reqwest::Client::new();
    let sell = |key: &'static str, pet: PetId| {
        http.post(format!("{url}/store/orders"))
            .bearer_auth(LOCAL_KEY)
            .header("Idempotency-Key", key)
            .json(&serde_json::json!({"petId": pet, "quantity": 1, "complete": true}))
            .send()
    };
    let a: Order = sell("k-a", pets[0]).await.unwrap().json().await.unwrap();
    let b: Order = sell("k-b", pets[1]).await.unwrap().json().await.unwrap();
    // Queued behind another write, so both go through the outbox and are sent by the replay.
    remote.down().await;
    let queued = sell("k-c", pets[0]).await.unwrap();
    assert_eq!(queued.status(), 202);
    remote.up().await;
    assert!(mirror.settle(SETTLE).await);

    remote.down().await;
    // The client lost the answers and sends them again while the server is away.
    let again_a = sell("k-a", pets[0]).await.unwrap();
    assert_eq!(again_a.status(), 201, "the server's order, not one queued again");
    assert_eq!(again_a.json::<Order>().await.unwrap().id, a.id);
    let again_b = sell("k-b", pets[1]).await.unwrap();
    assert_eq!(again_b.status(), 201, "not 409 for the last one, which this very sale took");
    assert_eq!(again_b.json::<Order>().await.unwrap().id, b.id);
    assert_eq!(mirror.outbox_counts().await.unwrap(), OutboxCounts::default());
    assert_eq!(stock_of(&mirror, pets[0]).await, 8);

    remote.up().await;
    assert!(mirror.settle(SETTLE).await);
    assert_eq!(orders_of(&server).await.len(), 3);
    assert_eq!(stock_of(&server, pets[0]).await, 8);
    assert_eq!(stock_of(&mirror, pets[0]).await, 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sale_whose_answer_was_lost_is_queued_even_where_the_mirror_shows_no_stock_and_placed_once() {
    let dir = tempfile::tempdir().unwrap();
    let (server, pets) = shop(dir.path(), 1, 1).await;
    let mut remote = Remote::start(server.clone()).await;
    let mirror = Mirror::open(&dir.path().join("mirrors"), remote.client()).unwrap();
    assert!(mirror.settle(SETTLE).await);

    // While the answers are lost: the server is restocked to 2 and takes two sales the
    // till sent, each under its key; the mirror still shows 1.
    remote.down().await;
    server.set_inventory(pets[0], parse(r#"{"quantity": 2}"#)).await.unwrap();
    let now = chrono::Utc::now();
    for key in ["lost-1", "lost-2"] {
        // As the server scopes the key of a request with its (operator) key.
        let operator = crate::api_key::KeyIdentity::Operator(0).label();
        let key = crate::idempotency::IdempotencyKey::new(&operator, key).unwrap();
        server.once(key, CounterWrite::Place(order(pets[0], 1, true)), now).await.unwrap().outcome.unwrap();
    }
    // The till's side of the time-outs: both queued, the second with no stock to reserve.
    let local = &mirror.inner.shared.local;
    let (first, _) = local
        .queue("lost-1".into(), Command::place(order(pets[0], 1, true)), true, local::Proofs::default())
        .await
        .unwrap();
    let (second, _) = local
        .queue("lost-2".into(), Command::place(order(pets[0], 1, true)), true, local::Proofs::default())
        .await
        .unwrap();
    use super::local::Queued;
    assert!(matches!((&first, &second), (Queued::Order(_), Queued::Order(_))), "{first:?} {second:?}");
    // Sure it never reached the server (a refused connection), the mirror's refusal stands.
    let sure = local
        .queue("never-sent".into(), Command::place(order(pets[0], 1, true)), false, local::Proofs::default())
        .await;
    assert_eq!(sure.unwrap_err().code, ErrorCode::PetNotAvailable);

    remote.up().await;
    assert!(mirror.settle(SETTLE).await, "{:?}", *mirror.status().borrow());
    assert_eq!(orders_of(&server).await.len(), 2, "each placed once");
    assert!(mirror.outbox().await.unwrap().is_empty(), "{:?}", mirror.outbox().await);
    assert_eq!(stock_of(&server, pets[0]).await, 0);
    assert_eq!(stock_of(&mirror, pets[0]).await, 0, "the mirror keeps no reservation the server has not");
    assert_eq!(orders_of(&mirror).await, orders_of(&server).await);
}

async fn cancelled_of(store: &impl Petstore) -> Vec<Order> {
    let cancelled = OrderFilter { cancelled: true, ..OrderFilter::default() };
    store.list_orders(cancelled, Page::new(100, 0).unwrap()).await.unwrap().items
}

/// Cancelled orders are kept on the server; a till shows them as the server has them, from
/// its first copy, from the feed, from its own cancellation, and from one made offline and
/// replayed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_till_keeps_cancelled_orders_as_the_server_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let (server, pets) = shop(dir.path(), 2, 10).await;
    let copied = server.place_order(order(pets[0], 2, false)).await.unwrap();
    server.cancel_order(copied.id).await.unwrap();
    let mut remote = Remote::start(server.clone()).await;
    let mirror = Mirror::open(&dir.path().join("mirrors"), remote.client()).unwrap();
    assert!(mirror.settle(SETTLE).await, "{:?}", *mirror.status().borrow());
    assert_eq!(cancelled_of(&mirror).await, cancelled_of(&server).await, "in the first copy");

    let fed = server.place_order(order(pets[0], 1, false)).await.unwrap();
    server.cancel_order(fed.id).await.unwrap();
    let mine = mirror.place_order(order(pets[1], 3, false)).await.unwrap();
    mirror.cancel_order(mine.id).await.unwrap();
    assert!(mirror.settle(SETTLE).await);
    assert_eq!(cancelled_of(&mirror).await, cancelled_of(&server).await, "from the feed and its own");
    assert_eq!(cancelled_of(&server).await.len(), 3);

    // Offline: the cancellation takes effect on the till at once and reaches the server once.
    let open = mirror.place_order(order(pets[1], 4, false)).await.unwrap();
    assert!(mirror.settle(SETTLE).await);
    remote.down().await;
    mirror.cancel_order(open.id).await.unwrap();
    assert_eq!(stock_of(&mirror, pets[1]).await, 10);
    assert!(cancelled_of(&mirror).await.iter().any(|o| o.id == open.id), "kept on the till");
    let again = mirror.cancel_order(open.id).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::OrderCancelled);
    remote.up().await;
    assert!(mirror.settle(SETTLE).await);
    assert_eq!(stock_of(&server, pets[1]).await, 10, "its stock returned once");
    assert!(server.get_order(open.id).await.unwrap().cancelled_at.is_some());
    assert_eq!(orders_of(&mirror).await, orders_of(&server).await);
    assert_eq!(cancelled_of(&mirror).await, cancelled_of(&server).await);
}

/// A till cancels with `POST .../cancel` (above) and deletes only on its server: a deletion
/// queued offline would show the order gone while the server still has it.
/// A deletion made on the server reaches the till as the feed's order `deleted`; one made
/// on the till is forwarded; offline it is refused, with nothing changed or queued, and
/// the order can still be cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_till_deletes_orders_on_its_server_and_refuses_to_while_offline() {
    use crate::engine::Database;
    let dir = tempfile::tempdir().unwrap();
    let (server, pets) = shop(dir.path(), 1, 10).await;
    let mut remote = Remote::start(server.clone()).await;
    let mirror = Mirror::open(&dir.path().join("mirrors"), remote.client()).unwrap();
    assert!(mirror.settle(SETTLE).await, "{:?}", *mirror.status().borrow());

    let theirs = server.place_order(order(pets[0], 1, false)).await.unwrap();
    assert!(mirror.settle(SETTLE).await);
    mirror.get_order(theirs.id).await.unwrap();
    server.delete_order(theirs.id).await.unwrap();
    assert!(mirror.settle(SETTLE).await);
    assert_eq!(mirror.get_order(theirs.id).await.unwrap_err().code, ErrorCode::NotFound, "the feed");

    let mine = mirror.place_order(order(pets[0], 2, false)).await.unwrap();
    Database::delete_order(&mirror, mine.id).await.unwrap();
    assert_eq!(server.get_order(mine.id).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(mirror.get_order(mine.id).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(stock_of(&server, pets[0]).await, 10, "its stock returned");

    let open = mirror.place_order(order(pets[0], 3, false)).await.unwrap();
    assert!(mirror.settle(SETTLE).await);
    remote.down().await;
    let refused = Database::delete_order(&mirror, open.id).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::Unreachable, "{refused:?}");
    assert!(refused.message.contains("needs the server"), "{}", refused.message);
    assert!(mirror.outbox().await.unwrap().is_empty(), "nothing queued");
    assert_eq!(mirror.get_order(open.id).await.unwrap(), open, "nothing changed");
    remote.up().await;
    assert!(mirror.settle(SETTLE).await);
    Database::delete_order(&mirror, open.id).await.unwrap();
    assert_eq!(server.get_order(open.id).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(stock_of(&server, pets[0]).await, 10);
}

/// The local API forwards a client's `Idempotency-Key` to the server as a value of its own
/// per client and key. After the local key is made anew (Settings), a client's retry of a
/// sale it is unsure of is the same client's: forwarded as the same value, placed once.
/// Before, the value hashed the local key's secret: the retry was a second sale.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_through_the_local_api_after_its_key_was_made_anew_is_placed_once() {
    let dir = tempfile::tempdir().unwrap();
    let (server, pets) = shop(dir.path(), 1, 10).await;
    let remote = Remote::start(server.clone()).await;
    let mirror = Mirror::open(&dir.path().join("mirrors"), remote.client()).unwrap();
    assert!(mirror.settle(SETTLE).await);
    let pet = pets[0];
    let sell = |url: String, key: &'static str| async move {
        let sale = serde_json::json!({"petId": pet, "quantity": 2, "complete": true});
        let reply = reqwest::Client::new()
            .post(format!("{url}/store/orders"))
            .bearer_auth(key)
            .header("Idempotency-Key", "sale-1")
            .json(&sale)
            .send()
            .await
            .unwrap();
        (reply.status().as_u16(), reply.json::<serde_json::Value>().await.unwrap())
    };

    let (url, stop) = local_api(&mirror).await;
    let first = sell(url, LOCAL_KEY).await;
    assert_eq!(first.0, 201, "{first:?}");
    let _ = stop.send(());
    const MADE_ANEW: &str = "psk_the-local-api-key-made-anew-0123456789abcdef";
    let (url, _stop) = local_api_with_key(&mirror, MADE_ANEW).await;
    let retry = sell(url, MADE_ANEW).await;
    assert_eq!(retry, first, "the retry is answered with the first sale");
    assert_eq!(orders_of(&server).await.len(), 1, "placed once at the server");
    assert_eq!(stock_of(&server, pets[0]).await, 8);
}

/// The named keys a till's local API serves are the computer's own, kept in its own store:
/// written as an actor's, they are logged there as theirs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_computers_own_keys_are_written_as_the_actors_and_logged_in_its_own_store() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = shop(dir.path(), 1, 1).await;
    let remote = Remote::start(server.clone()).await;
    let own = Store::open(dir.path().join("own.db")).unwrap();
    let mirror =
        Mirror::open_with_keys(&dir.path().join("mirrors"), remote.client(), Some(own.clone())).unwrap();
    let owner = Actor::key("setup script");
    let issued = mirror
        .keys_acting(owner.clone())
        .create_key(parse(r#""label-printer""#), crate::api_key::Scope::Write)
        .await;
    assert_eq!(issued.unwrap().key.name, "label-printer");
    assert_eq!(own.list_keys().await.unwrap().len(), 1, "kept in the computer's own store");
    use crate::engine::Staff;
    let log = own.list_activity(ActivityFilter::default(), Page::default()).await.unwrap();
    let entries: Vec<_> = log.items.into_iter().map(|e| (e.kind, e.actor)).collect();
    assert_eq!(entries, [(ActivityKind::KeyCreated, Some(owner))]);
    let on_server = server.list_activity(ActivityFilter::default(), Page::default()).await.unwrap();
    assert!(on_server.items.iter().all(|e| e.kind != ActivityKind::KeyCreated), "nothing on the server");
}
