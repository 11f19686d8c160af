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
