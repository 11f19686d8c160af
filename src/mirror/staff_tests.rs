//! Staff at a till that follows a server, against a real server on loopback: signing in
//! with the server and, while it is down, against the PIN hashes the mirror keeps; the
//! sales and approvals taken offline reaching the server as their makers'; a member
//! deactivated on the server refused at the till once it has heard.

use std::time::Duration;

use super::tests::{Remote, SETTLE, order, parse, shop};
use super::*;
use crate::Petstore;
use crate::client::ClientConfig;
use crate::domain::*;
use crate::engine::{Keys, Staff};
use crate::staff::{Purpose, add_member, change_member};
use crate::store::Scope;

fn pin(digits: &str) -> Pin {
    Pin::try_from(digits.to_owned()).unwrap()
}

/// Adds `name` with `role` and PIN `digits` on the server.
async fn member(server: &Store, name: &str, role: Role, digits: &str) -> StaffId {
    let new = NewStaffMember { name: Name::parse(name).unwrap(), role, pin: pin(digits) };
    add_member(server, new, &Actor::operator()).await.unwrap().id
}

/// A server of `pets` pets with `stock` each, whose owner has PIN 9999 and which has the
/// `staff` (name, role, PIN) beside, serving; and a client with a till's key for it.
async fn till_shop(
    dir: &std::path::Path,
    pets: usize,
    stock: i64,
    staff: &[(&str, Role, &str)],
) -> (Store, Vec<PetId>, Vec<StaffId>, Remote, Client) {
    let (server, pets) = shop(dir, pets, stock).await;
    let owner = StaffId::try_from(1).unwrap();
    let patch = StaffPatch { pin: Some(pin("9999")), ..StaffPatch::default() };
    change_member(&server, owner, patch, &Actor::operator()).await.unwrap();
    let mut ids = Vec::new();
    for (name, role, digits) in staff {
        ids.push(member(&server, name, *role, digits).await);
    }
    let till = server.create_key(Name::parse("till 1").unwrap(), Scope::Till).await.unwrap();
    let remote = Remote::start(server.clone()).await;
    let config = ClientConfig::default()
        .connect_timeout(Duration::from_millis(500))
        .request_timeout(Duration::from_secs(2));
    let client =
        Client::with_config(&format!("http://{}", remote.addr), till.secret.expose(), config).unwrap();
    (server, pets, ids, remote, client)
}

/// Who the record says made it.
fn maker(actor: &Option<Actor>) -> (Option<&str>, Option<&str>) {
    let actor = actor.as_ref().expect("an actor");
    (actor.staff.as_ref().map(|s| s.name.as_str()), actor.approved_by.as_ref().map(|s| s.name.as_str()))
}

/// The till as `signed` (and the manager of `approval`).
fn as_member(signed: &TillSignIn, approval: Option<&TillSignIn>) -> TillActor {
    TillActor {
        staff: crate::staff::staff_ref(&signed.staff),
        approved_by: approval.map(|a| crate::staff::staff_ref(&a.staff)),
        session: signed.session.clone(),
        approval: approval.and_then(|a| a.session.clone()),
        proof_key: signed.proof_key.clone(),
        approval_key: approval.and_then(|a| a.proof_key.clone()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn staff_sign_in_offline_and_what_they_take_reaches_the_server_as_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let staff = [("Ana", Role::Cashier, "1111"), ("Marta", Role::Manager, "2222")];
    let (server, pets, ids, mut remote, client) = till_shop(dir.path(), 2, 10, &staff).await;
    let (ana, marta) = (ids[0], ids[1]);
    let mirror = Mirror::open(&dir.path().join("mirrors"), client).unwrap();
    assert!(mirror.settle(SETTLE).await);
    assert!(mirror.staff_known().await.unwrap());
    let names: Vec<String> = mirror.list_staff().await.unwrap().iter().map(|m| m.name.to_string()).collect();
    assert_eq!(names, ["Ana", "Marta", "Owner"]);

    // With the server: its session.
    let online = mirror.sign_in(ana, Some(pin("1111")), Purpose::Shift).await.unwrap();
    assert!(online.session.is_some() && online.proof_key.is_some());
    let sale = mirror.acting(as_member(&online, None)).place_order(order(pets[0], 1, true)).await.unwrap();
    assert_eq!(maker(&server.get_order(sale.id).await.unwrap().placed_by), (Some("Ana"), None));

    // Without it: the PIN hashes the till keeps, wrong PINs counted here.
    remote.down().await;
    let wrong = mirror.sign_in(ana, Some(pin("1112")), Purpose::Shift).await.unwrap_err();
    assert_eq!(wrong.code, ErrorCode::WrongPin, "{}", wrong.message);
    let offline = mirror.sign_in(ana, Some(pin("1111")), Purpose::Shift).await.unwrap();
    assert_eq!((offline.session.as_deref(), offline.staff.id), (None, ana));
    let approval = mirror.sign_in(marta, Some(pin("2222")), Purpose::Approval).await.unwrap();
    let by_cashier = mirror.sign_in(ana, Some(pin("1111")), Purpose::Approval).await.unwrap_err();
    assert_eq!(by_cashier.code, ErrorCode::PermissionDenied);

    let sale = mirror.acting(as_member(&offline, None)).place_order(order(pets[0], 2, true)).await.unwrap();
    assert!(sale.id.is_provisional());
    let approved = mirror.acting(as_member(&offline, Some(&approval)));
    approved.adjust_inventory(pets[1], parse(r#"{"delta": -3, "reason": "broken"}"#)).await.unwrap();
    assert_eq!(mirror.outbox_counts().await.unwrap().pending, 2);

    remote.up().await;
    assert!(mirror.settle(SETTLE).await, "{:?}", *mirror.status().borrow());
    assert_eq!(mirror.outbox_counts().await.unwrap(), OutboxCounts::default(), "{:?}", mirror.outbox().await);
    let placed = server.get_order(mirror.get_order(sale.id).await.unwrap().id).await.unwrap();
    assert_eq!(maker(&placed.placed_by), (Some("Ana"), None));
    let trail = server.list_adjustments(pets[1], Page::new(10, 0).unwrap()).await.unwrap().items;
    assert_eq!(maker(&trail[0].made_by), (Some("Ana"), Some("Marta")));
    assert_eq!(server.get_inventory(pets[1]).await.unwrap().quantity, 7);

    // Deactivated on the server: once the till has heard (a sign-in with the server reads
    // the staff again), refused there even while the server is down.
    let gone = StaffPatch { active: Some(false), ..StaffPatch::default() };
    change_member(&server, ana, gone, &Actor::operator()).await.unwrap();
    mirror.sign_in(marta, Some(pin("2222")), Purpose::Shift).await.unwrap();
    remote.down().await;
    let refused = mirror.sign_in(ana, Some(pin("1111")), Purpose::Shift).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::StaffInactive, "{}", refused.message);
    assert!(!mirror.store().get_staff(ana).await.unwrap().active);
}

/// Rounds of outages and a restart of the till: every sale two people take offline reaches
/// the server once and as the one who made it, the proofs kept in the outbox file across
/// the restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sales_by_two_people_through_outages_and_a_restart_are_each_theirs_once() {
    let dir = tempfile::tempdir().unwrap();
    let staff = [("Ana", Role::Cashier, "1111"), ("Bea", Role::Cashier, "3333")];
    let (server, pets, ids, mut remote, client) = till_shop(dir.path(), 1, 100, &staff).await;
    let (ana, bea) = (ids[0], ids[1]);
    let mirrors = dir.path().join("mirrors");
    let mut mirror = Mirror::open(&mirrors, client.clone()).unwrap();
    assert!(mirror.settle(SETTLE).await);

    let mut sold = Vec::new();
    for round in 0..4 {
        remote.down().await;
        let signed_ana = mirror.sign_in(ana, Some(pin("1111")), Purpose::Shift).await.unwrap();
        let signed_bea = mirror.sign_in(bea, Some(pin("3333")), Purpose::Shift).await.unwrap();
        for (n, signed) in [&signed_ana, &signed_bea, &signed_ana].into_iter().enumerate() {
            let quantity = 1 + (round + n) as i64 % 2;
            let sale =
                mirror.acting(as_member(signed, None)).place_order(order(pets[0], quantity, true)).await;
            sold.push((sale.unwrap().id, signed.staff.name.to_string(), quantity));
        }
        if round == 1 {
            // The till restarts with its outbox waiting.
            drop(mirror);
            mirror = Mirror::open(&mirrors, client.clone()).unwrap();
        }
        remote.up().await;
        assert!(mirror.settle(SETTLE).await, "round {round}: {:?}", *mirror.status().borrow());
    }
    assert_eq!(mirror.outbox_counts().await.unwrap(), OutboxCounts::default(), "{:?}", mirror.outbox().await);
    let on_server =
        server.list_orders(OrderFilter::default(), Page::new(100, 0).unwrap()).await.unwrap().items;
    assert_eq!(on_server.len(), sold.len(), "each sale once");
    let mut total = 0;
    for (id, name, quantity) in &sold {
        let order = server.get_order(mirror.get_order(*id).await.unwrap().id).await.unwrap();
        assert_eq!(
            (maker(&order.placed_by).0, order.quantity),
            (Some(name.as_str()), *quantity),
            "{order:?}"
        );
        total += quantity;
    }
    assert_eq!(server.get_inventory(pets[0]).await.unwrap().quantity, 100 - total);
}

/// A program at the till signs a member in through the local API in remote mode, as the
/// window does, and sells as them: online and offline alike the sales reach the server as
/// the member's, proved with the PIN typed at the sign-in. Wrong PINs are counted at the
/// till; staff and the log stay the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_signed_in_at_the_local_api_sells_as_themselves_online_and_offline() {
    let dir = tempfile::tempdir().unwrap();
    let staff = [("Ana", Role::Cashier, "1111"), ("Marta", Role::Manager, "2222")];
    let (server, pets, ids, mut remote, client) = till_shop(dir.path(), 1, 10, &staff).await;
    let (ana, marta) = (ids[0], ids[1]);
    let mirror = Mirror::open(&dir.path().join("mirrors"), client.clone()).unwrap();
    assert!(mirror.settle(SETTLE).await);
    assert!(mirror.staff_known().await.unwrap());
    let (url, stop) = super::tests::local_api(&mirror).await;
    let http = reqwest::Client::new();
    let local = |method: reqwest::Method, path: &str| {
        http.request(method, format!("{url}{path}")).bearer_auth(super::tests::LOCAL_KEY)
    };
    let sign_in = |digits: &'static str| {
        local(reqwest::Method::POST, "/staff/sessions")
            .json(&serde_json::json!({"staffId": ana, "pin": digits}))
            .send()
    };
    let sell = |session: String, key: &'static str| {
        local(reqwest::Method::POST, "/store/orders")
            .header("Petstore-Staff", session)
            .header("Idempotency-Key", key)
            .json(&serde_json::json!({"petId": pets[0], "quantity": 1, "complete": true}))
            .send()
    };

    let wrong = sign_in("1112").await.unwrap();
    assert_eq!(wrong.status(), 401);
    assert_eq!(wrong.json::<serde_json::Value>().await.unwrap()["code"], "wrong_pin");
    let signed: serde_json::Value = sign_in("1111").await.unwrap().json().await.unwrap();
    let session = signed["token"].as_str().expect("a session").to_owned();
    let online = sell(session.clone(), "sale-1").await.unwrap();
    assert_eq!(online.status(), 201);
    let online: Order = online.json().await.unwrap();
    assert_eq!(maker(&server.get_order(online.id).await.unwrap().placed_by), (Some("Ana"), None));

    // A catalogue edit needs the server's session, which the sign-in got while it answered:
    // the server's log says the manager made it (a till key alone would be refused).
    let manager = local(reqwest::Method::POST, "/staff/sessions")
        .json(&serde_json::json!({"staffId": marta, "pin": "2222"}));
    let manager: serde_json::Value = manager.send().await.unwrap().json().await.unwrap();
    let edit = local(reqwest::Method::PATCH, &format!("/pets/{}", pets[0]))
        .header("Petstore-Staff", manager["token"].as_str().unwrap())
        .json(&serde_json::json!({"description": "Sings at dawn"}));
    assert_eq!(edit.send().await.unwrap().status(), 200);
    let filter = ActivityFilter { kind: Some(ActivityKind::PetUpdated), ..ActivityFilter::default() };
    let log = server.list_activity(filter, Page::new(1, 0).unwrap()).await.unwrap().items;
    assert_eq!(maker(&log[0].actor), (Some("Marta"), None));

    // Offline: the same session, and a new sign-in against the PIN hashes the till keeps.
    remote.down().await;
    let queued = sell(session, "sale-2").await.unwrap();
    assert_eq!(queued.status(), 202);
    let signed: serde_json::Value = sign_in("1111").await.unwrap().json().await.unwrap();
    let last_session = signed["token"].as_str().unwrap().to_owned();
    let queued_again = sell(last_session.clone(), "sale-3").await.unwrap();
    assert_eq!(queued_again.status(), 202);
    let provisional: Vec<Order> = vec![queued.json().await.unwrap(), queued_again.json().await.unwrap()];

    remote.up().await;
    assert!(mirror.settle(SETTLE).await, "{:?}", *mirror.status().borrow());
    assert_eq!(mirror.outbox_counts().await.unwrap(), OutboxCounts::default(), "{:?}", mirror.outbox().await);
    for order in provisional {
        let placed = server.get_order(mirror.get_order(order.id).await.unwrap().id).await.unwrap();
        assert_eq!(maker(&placed.placed_by), (Some("Ana"), None), "{placed:?}");
    }
    assert_eq!(server.get_inventory(pets[0]).await.unwrap().quantity, 7);

    // The server's to manage and to keep.
    let add = local(reqwest::Method::POST, "/staff")
        .json(&serde_json::json!({"name": "Eve", "role": "cashier", "pin": "4444"}));
    assert_eq!(add.send().await.unwrap().status(), 403);
    assert_eq!(local(reqwest::Method::GET, "/activity").send().await.unwrap().status(), 403);

    // The till restarts: the proof key its sign-in made was in memory only, so the session
    // kept in the copy asks for a sign-in again instead of writing as the till's key.
    drop(stop);
    drop(mirror);
    let mirror = Mirror::open(&dir.path().join("mirrors"), client).unwrap();
    assert!(mirror.settle(SETTLE).await);
    let (url, _stop) = super::tests::local_api(&mirror).await;
    let after_restart = http
        .post(format!("{url}/store/orders"))
        .bearer_auth(super::tests::LOCAL_KEY)
        .header("Petstore-Staff", last_session)
        .header("Idempotency-Key", "sale-4")
        .json(&serde_json::json!({"petId": pets[0], "quantity": 1, "complete": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(after_restart.status(), 401);
    assert_eq!(server.get_inventory(pets[0]).await.unwrap().quantity, 7, "nothing sold");
}
