//! Staff at the till, over HTTP on the engine under test (`PETSTORE_TEST_ENGINE`): every
//! permission of the one table (`Permission::least_role`) allowed and refused by role, a
//! till's key that writes nothing without a staff member, a write key acting as itself,
//! signing in and out, wrong PINs and the lockout, a manager's approval used once, the
//! activity log naming both people, and the shop's last owner kept.

use petstore::domain::{Name, Permission, Pin, Role, StaffId, Timestamp};
use petstore::staff::proof::{self, Vouch};
use petstore::store::Scope;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::openapi::operations;
use crate::support::{Reply, TestApp, spawn_app};

const TILL: &str = "till 1";

/// A shop with a pet (id 1, 20 in stock), a cashier Ana (PIN 1111), a manager Marta
/// (2222), a second owner Olga (3333), and a till's key.
struct Shop {
    app: TestApp,
    till: String,
    cashier: i64,
    manager: i64,
    owner: i64,
}

impl Shop {
    async fn new() -> Self {
        let app = spawn_app().await;
        assert_eq!(app.pet_with_stock("Rex", 20).await, 1);
        // The owner every shop starts with has no PIN: theirs comes before anyone else.
        app.patch("/staff/1", json!({ "pin": "9999" })).await.expect_status(200);
        let member = |name: &str, role: &str, pin: &str| {
            app.post("/staff", json!({ "name": name, "role": role, "pin": pin }))
        };
        let cashier = member("Ana", "cashier", "1111").await.expect_status(201).body["id"].as_i64().unwrap();
        let manager =
            member("Marta", "manager", "2222").await.expect_status(201).body["id"].as_i64().unwrap();
        let owner = member("Olga", "owner", "3333").await.expect_status(201).body["id"].as_i64().unwrap();
        let till = app.db.open().await.create_key(Name::parse(TILL).unwrap(), Scope::Till).await.unwrap();
        Self { app, till: till.secret.expose().to_owned(), cashier, manager, owner }
    }

    /// Signs `staff` in at the till with `pin` for `purpose`.
    async fn sign_in(&self, staff: i64, pin: &str, purpose: &str) -> Reply {
        let body = json!({ "staffId": staff, "pin": pin, "purpose": purpose });
        self.app.send(self.till(Method::POST, "/staff/sessions").json(&body)).await
    }

    /// A shift's token for `staff`.
    async fn shift(&self, staff: i64, pin: &str) -> String {
        let reply = self.sign_in(staff, pin, "shift").await.expect_status(201);
        reply.body["token"].as_str().unwrap().to_owned()
    }

    /// A request with the till's key.
    fn till(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.app.anonymous(method, path).bearer_auth(&self.till)
    }

    /// A request with the till's key, for the member signed in with `session`.
    fn by(&self, session: &str, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.till(method, path).header("Petstore-Staff", session)
    }
}

/// One request that needs `permission`, sent fresh each time (a completed order to reopen,
/// a name not taken yet).
async fn attempt(shop: &Shop, session: &str, permission: Permission, n: usize) -> Reply {
    let app = &shop.app;
    let send = |method: Method, path: &str, body: Value| {
        let path = path.to_owned();
        async move {
            let request = shop.by(session, method, &path);
            app.send(if body.is_null() { request } else { request.json(&body) }).await
        }
    };
    match permission {
        Permission::Sell => send(Method::POST, "/store/orders", json!({ "petId": 1 })).await,
        Permission::AdjustStock => {
            send(Method::POST, "/store/inventory/1/adjustments", json!({ "delta": 1, "reason": "delivery" }))
                .await
        }
        Permission::CountStock => send(Method::PUT, "/store/inventory/1", json!({ "quantity": 20 })).await,
        Permission::EditCatalogue => {
            send(Method::POST, "/categories", json!({ "name": format!("C{n}") })).await
        }
        Permission::ReopenOrders => {
            let order =
                app.post("/store/orders", json!({ "petId": 1, "complete": true })).await.expect_status(201);
            let path = format!("/store/orders/{}", order.body["id"]);
            send(Method::PATCH, &path, json!({ "complete": false })).await
        }
        Permission::Override => {
            shop.sign_in(staff_of(shop, session).await, pin_of(shop, session).await, "approval").await
        }
        Permission::ViewActivity => send(Method::GET, "/activity", Value::Null).await,
        Permission::ManageStaff => {
            send(
                Method::POST,
                "/staff",
                json!({ "name": format!("New {n}"), "role": "cashier", "pin": "5555" }),
            )
            .await
        }
        // Keys are managed in the app and with `petstore-server keys`, not over the API.
        Permission::ManageKeys => unreachable!("no API operation"),
        Permission::ChangeSettings => {
            let settings = app.get("/store/settings").await.expect_status(200).body;
            send(Method::PUT, "/store/settings", settings).await
        }
    }
}

async fn staff_of(shop: &Shop, session: &str) -> i64 {
    let reply = shop.app.send(shop.by(session, Method::GET, "/staff/sessions/current")).await;
    reply.expect_status(200).body["staff"]["id"].as_i64().unwrap()
}

async fn pin_of(shop: &Shop, session: &str) -> &'static str {
    match staff_of(shop, session).await {
        id if id == shop.cashier => "1111",
        id if id == shop.manager => "2222",
        _ => "3333",
    }
}

/// Every permission of the table, tried by a cashier, a manager and an owner signed in at
/// a till: allowed exactly where `Role::may` says, refused otherwise with
/// `permission_denied` naming the person and the permission.
#[tokio::test]
async fn every_permission_is_allowed_and_refused_as_the_table_says() {
    let shop = Shop::new().await;
    let people = [
        (Role::Cashier, shop.cashier, "1111"),
        (Role::Manager, shop.manager, "2222"),
        (Role::Owner, shop.owner, "3333"),
    ];
    let mut n = 0;
    for (role, id, pin) in people {
        let session = shop.shift(id, pin).await;
        for permission in Permission::ALL.into_iter().filter(|p| *p != Permission::ManageKeys) {
            n += 1;
            let reply = attempt(&shop, &session, permission, n).await;
            if role.may(permission) {
                assert!(reply.status.is_success(), "{role} {permission}: {:?}", reply.body);
            } else {
                assert_eq!(
                    (reply.status.as_u16(), reply.code()),
                    (403, "permission_denied"),
                    "{role} {permission}"
                );
                let message = reply.body["message"].as_str().unwrap();
                assert!(
                    message.contains(role.as_str()) && message.contains(permission.as_str()),
                    "{message}"
                );
            }
        }
    }
}

/// A refused write changes nothing: the cashier's count leaves the stock as it was.
#[tokio::test]
async fn a_refused_write_changes_nothing() {
    let shop = Shop::new().await;
    let ana = shop.shift(shop.cashier, "1111").await;
    let refused =
        shop.app.send(shop.by(&ana, Method::PUT, "/store/inventory/1").json(&json!({ "quantity": 3 }))).await;
    assert_eq!(refused.code(), "permission_denied");
    assert_eq!(shop.app.get("/store/inventory/1").await.body["quantity"], 20);
}

/// A till's key without a staff member reads, signs staff in, and writes nothing: every
/// write operation of the document is refused with `staff_required`, before it runs.
#[tokio::test]
async fn a_till_key_without_staff_reads_and_writes_nothing() {
    let shop = Shop::new().await;
    assert_eq!(shop.app.send(shop.till(Method::GET, "/pets")).await.status, 200);
    assert_eq!(shop.app.send(shop.till(Method::GET, "/staff")).await.status, 200);
    let mut writes = 0;
    for (method, path, secured) in operations() {
        if !secured || method == Method::GET || (method == Method::POST && path == "/staff/sessions") {
            continue;
        }
        writes += 1;
        let reply = shop.app.send(shop.till(method.clone(), &path).json(&json!({}))).await;
        assert_eq!((reply.status.as_u16(), reply.code()), (403, "staff_required"), "{method} {path}");
        assert!(reply.body["message"].as_str().unwrap().contains(TILL));
    }
    assert!(writes >= 16, "every write operation was tried ({writes})");

    // A session header that is no session lets nothing through either: every write handler
    // resolves its actor (the key check only looked for the header). Signing out of
    // nothing is the one write that answers, and ends nothing.
    let forged = format!("pss_{}", "0".repeat(64));
    for (method, path, secured) in operations() {
        if !secured || method == Method::GET || path.starts_with("/staff/sessions") {
            continue;
        }
        let reply = shop.app.send(shop.by(&forged, method.clone(), &path).json(&json!({}))).await;
        assert_eq!((reply.status.as_u16(), reply.code()), (401, "unauthorized"), "{method} {path}");
    }
    let log = shop.app.send(shop.till(Method::GET, "/activity")).await;
    assert_eq!(log.code(), "staff_required", "the log needs a person too");
    assert_eq!(shop.app.get("/store/inventory/1").await.body["quantity"], 20);
}

/// Keys that are not a till's act as themselves, as before staff, and are named so.
#[tokio::test]
async fn a_write_key_acts_as_itself_and_is_named_on_the_record() {
    let shop = Shop::new().await;
    let script =
        shop.app.db.open().await.create_key(Name::parse("script").unwrap(), Scope::Write).await.unwrap();
    let script = script.secret.expose().to_owned();
    let as_script = |method: Method, path: &str| shop.app.anonymous(method, path).bearer_auth(&script);
    let order = shop.app.send(as_script(Method::POST, "/store/orders").json(&json!({ "petId": 1 }))).await;
    assert_eq!(order.status, 201, "{:?}", order.body);
    assert_eq!(order.body["placedBy"], json!({ "key": "script" }));
    let by_operator = shop.app.post("/store/orders", json!({ "petId": 1 })).await.expect_status(201);
    assert_eq!(by_operator.body["placedBy"], json!({}), "the operator's key is no named key");

    let log = shop.app.send(as_script(Method::GET, "/activity?kind=order_placed")).await.expect_status(200);
    let actors: Vec<&Value> = log.body.as_array().unwrap().iter().map(|e| &e["actor"]).collect();
    assert_eq!(actors, [&json!({}), &json!({ "key": "script" })], "newest first");

    // An import is the script's too: its entry in the log names the key.
    let csv = "name,category\nBella,Dogs\n";
    let import = as_script(Method::POST, "/imports/pets?createCategories=true")
        .header("content-type", "text/csv")
        .body(csv);
    shop.app.send(import).await.expect_status(201);
    let log = shop.app.send(as_script(Method::GET, "/activity?kind=pets_imported")).await.expect_status(200);
    assert_eq!(log.body[0]["actor"], json!({ "key": "script" }), "{:?}", log.body);
}

/// A shift: signed in with the PIN, known by its token, named on what it writes (with the
/// till's key), and over at sign-out, after which the token is refused naming the header.
#[tokio::test]
async fn a_shift_signs_in_writes_as_its_member_and_signs_out() {
    let shop = Shop::new().await;
    let signed = shop.sign_in(shop.cashier, "1111", "shift").await.expect_status(201);
    let token = signed.body["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("pss_") && token.len() == 68, "{token}");
    assert_eq!(signed.body["staff"]["name"], "Ana");
    assert_eq!(signed.body["purpose"], "shift");

    let current =
        shop.app.send(shop.by(&token, Method::GET, "/staff/sessions/current")).await.expect_status(200);
    assert_eq!(current.body["staff"]["id"], shop.cashier);
    let nobody = shop.app.send(shop.till(Method::GET, "/staff/sessions/current")).await.expect_status(200);
    assert_eq!(nobody.body["staff"], Value::Null);

    let order =
        shop.app.send(shop.by(&token, Method::POST, "/store/orders").json(&json!({ "petId": 1 }))).await;
    assert_eq!(order.status, 201, "{:?}", order.body);
    assert_eq!(
        order.body["placedBy"],
        json!({ "staff": { "id": shop.cashier, "name": "Ana", "role": "cashier" }, "key": TILL })
    );

    shop.app.send(shop.by(&token, Method::DELETE, "/staff/sessions/current")).await.expect_status(204);
    shop.app.send(shop.by(&token, Method::DELETE, "/staff/sessions/current")).await.expect_status(204);
    let after =
        shop.app.send(shop.by(&token, Method::POST, "/store/orders").json(&json!({ "petId": 1 }))).await;
    assert_eq!((after.status.as_u16(), after.code()), (401, "unauthorized"));
    assert!(after.body["message"].as_str().unwrap().contains("Petstore-Staff"));
    let forged = shop.app.send(shop.by("pss_not-a-token", Method::GET, "/staff/sessions/current")).await;
    assert_eq!(forged.code(), "unauthorized");
}

/// Wrong PINs say how many tries are left; the fifth locks the member out with
/// `Retry-After`, and then even the right PIN waits; an owner's new PIN ends the lockout.
#[tokio::test]
async fn wrong_pins_lock_the_member_out_until_an_owner_sets_a_new_pin() {
    let shop = Shop::new().await;
    for left in (1..5).rev() {
        let wrong = shop.sign_in(shop.cashier, "9999", "shift").await;
        assert_eq!((wrong.status.as_u16(), wrong.code()), (401, "wrong_pin"));
        let message = wrong.body["message"].as_str().unwrap();
        assert!(message.contains("Ana") && message.contains(&format!("{left} tr")), "{message}");
    }
    let fifth = shop.sign_in(shop.cashier, "9999", "shift").await;
    assert_eq!((fifth.status.as_u16(), fifth.code()), (429, "staff_locked"));
    let wait: u64 = fifth.header("retry-after").parse().unwrap();
    assert!((295..=300).contains(&wait), "the first lockout is 5 minutes: {wait}");
    let right = shop.sign_in(shop.cashier, "1111", "shift").await;
    assert_eq!(right.code(), "staff_locked", "locked means locked, for the right PIN too");
    assert!(right.header("retry-after").parse::<u64>().unwrap() >= 1);
    let member = shop.app.get(&format!("/staff/{}", shop.cashier)).await;
    assert!(member.body["lockedUntil"].is_string());

    shop.app.patch(&format!("/staff/{}", shop.cashier), json!({ "pin": "4444" })).await.expect_status(200);
    shop.sign_in(shop.cashier, "4444", "shift").await.expect_status(201);
    let refused = shop.app.get(&format!("/activity?staffId={}&kind=pin_refused", shop.cashier)).await;
    assert_eq!(refused.header("x-total-count"), "5", "every wrong PIN is in the log");
}

/// A deactivated member cannot sign in, and their open session stops working.
#[tokio::test]
async fn a_deactivated_member_signs_in_no_more() {
    let shop = Shop::new().await;
    let ana = shop.shift(shop.cashier, "1111").await;
    shop.app.patch(&format!("/staff/{}", shop.cashier), json!({ "active": false })).await.expect_status(200);
    let refused = shop.sign_in(shop.cashier, "1111", "shift").await;
    assert_eq!((refused.status.as_u16(), refused.code()), (403, "staff_inactive"));
    let write =
        shop.app.send(shop.by(&ana, Method::POST, "/store/orders").json(&json!({ "petId": 1 }))).await;
    assert_eq!(write.code(), "unauthorized");
}

/// A manager's approval lets the cashier's one refused action through, and only one; the
/// record and the log name both, and the log finds it under either person.
#[tokio::test]
async fn a_managers_approval_lets_one_action_through_and_the_log_names_both() {
    let shop = Shop::new().await;
    let ana = shop.shift(shop.cashier, "1111").await;
    let cashier_approves = shop.sign_in(shop.cashier, "1111", "approval").await;
    assert_eq!(cashier_approves.code(), "permission_denied", "only a role that may override approves");
    let approval = shop.sign_in(shop.manager, "2222", "approval").await.expect_status(201);
    assert_eq!(approval.body["purpose"], "approval");
    let approval = approval.body["token"].as_str().unwrap().to_owned();

    let count = |approval: Option<&str>| {
        let mut request = shop.by(&ana, Method::POST, "/store/inventory/1/adjustments");
        if let Some(approval) = approval {
            request = request.header("Petstore-Approval", approval);
        }
        shop.app.send(request.json(&json!({ "delta": -2, "reason": "broken" })))
    };
    // A manager's shift is no approval (it would approve again and again), nor is an
    // approval a shift: each token is found only for what it was made for.
    let marta_shift = shop.shift(shop.manager, "2222").await;
    let shift_as_approval = count(Some(&marta_shift)).await;
    assert_eq!(shift_as_approval.code(), "unauthorized", "{:?}", shift_as_approval.body);
    let approval_as_shift = shop.app.send(shop.by(&approval, Method::GET, "/staff/sessions/current")).await;
    assert_eq!(approval_as_shift.code(), "unauthorized");

    let approved = count(Some(&approval)).await;
    assert_eq!(approved.status, 200, "{:?}", approved.body);
    assert_eq!(approved.body["quantity"], 18);
    let again = count(Some(&approval)).await;
    assert_eq!((again.status.as_u16(), again.code()), (401, "unauthorized"), "used up");
    assert!(again.body["message"].as_str().unwrap().contains("Petstore-Approval"));
    assert_eq!(count(None).await.code(), "permission_denied");
    assert_eq!(shop.app.get("/store/inventory/1").await.body["quantity"], 18, "one adjustment only");

    let trail = shop.app.get("/store/inventory/1/adjustments").await.expect_status(200);
    let made_by = &trail.body[0]["madeBy"];
    assert_eq!(made_by["staff"]["name"], "Ana");
    assert_eq!(made_by["approvedBy"]["name"], "Marta");

    for person in [shop.cashier, shop.manager] {
        let log =
            shop.app.get(&format!("/activity?staffId={person}&kind=stock_adjusted")).await.expect_status(200);
        assert_eq!(log.header("x-total-count"), "1", "found under {person}");
        let actor = &log.body[0]["actor"];
        assert_eq!(
            (actor["staff"]["name"].as_str(), actor["approvedBy"]["name"].as_str()),
            (Some("Ana"), Some("Marta"))
        );
    }
    let file = shop.app.get("/exports/activity.csv?kind=stock_adjusted").await.expect_status(200);
    let text = file.body.as_str().unwrap();
    let mut lines = text.split("\r\n");
    assert_eq!(
        lines.next(),
        Some("id,at,kind,subject,subjectId,staffId,staff,role,approvedById,approvedBy,key,detail")
    );
    let row = lines.next().unwrap();
    assert!(
        row.contains(",stock_adjusted,") && row.contains(",Ana,cashier,") && row.contains(",Marta,"),
        "{row}"
    );
    assert!(row.contains(TILL), "{row}");
}

/// The shop keeps an active owner: the last one can be neither demoted nor deactivated.
#[tokio::test]
async fn the_last_owner_is_kept() {
    let app = spawn_app().await;
    for change in [json!({ "role": "manager" }), json!({ "active": false })] {
        let refused = app.patch("/staff/1", change).await;
        assert_eq!((refused.status.as_u16(), refused.code()), (409, "last_owner"));
    }
    app.patch("/staff/1", json!({ "pin": "9999" })).await.expect_status(200);
    let second = app
        .post("/staff", json!({ "name": "Olga", "role": "owner", "pin": "3333" }))
        .await
        .expect_status(201);
    app.patch("/staff/1", json!({ "role": "manager" })).await.expect_status(200);
    let last = app.patch(&format!("/staff/{}", second.body["id"]), json!({ "active": false })).await;
    assert_eq!(last.code(), "last_owner");
}

/// The owner every shop starts with has no PIN and signs in without one while alone; once
/// the shop has other staff, not until a PIN is set.
#[tokio::test]
async fn the_pinless_owner_signs_in_without_a_pin_only_while_alone() {
    let app = spawn_app().await;
    let alone = app.post("/staff/sessions", json!({ "staffId": 1 })).await.expect_status(201);
    assert_eq!(alone.body["staff"]["hasPin"], false);
    let ana = json!({ "name": "Ana", "role": "cashier", "pin": "1111" });
    let refused = app.post("/staff", ana.clone()).await;
    assert_eq!((refused.status.as_u16(), refused.code()), (409, "pin_required"));
    assert!(
        refused.body["message"].as_str().unwrap().starts_with("set a PIN for Owner first"),
        "{:?}",
        refused.body
    );
    assert_eq!(app.get("/staff").await.body.as_array().map(Vec::len), Some(1), "nobody was added");
    app.patch("/staff/1", json!({ "pin": "7777" })).await.expect_status(200);
    app.post("/staff", ana).await.expect_status(201);
    let without_pin = app.post("/staff/sessions", json!({ "staffId": 1 })).await;
    assert_eq!((without_pin.status.as_u16(), without_pin.code()), (401, "wrong_pin"));
    app.post("/staff/sessions", json!({ "staffId": 1, "pin": "7777" })).await.expect_status(201);
}

/// The PIN hashes a till keeps to sign staff in offline: for a till's key and the
/// operator's, never for a `read` key, and never the proof keys.
#[tokio::test]
async fn a_till_reads_the_pin_hashes_and_no_other_key_does() {
    let shop = Shop::new().await;
    let listed = shop.app.send(shop.till(Method::GET, "/staff/credentials")).await.expect_status(200);
    let members = listed.body.as_array().unwrap();
    assert_eq!(members.len(), 4, "{members:?}");
    let ana = members.iter().find(|m| m["id"] == shop.cashier).unwrap();
    assert_eq!((ana["name"].as_str(), ana["role"].as_str()), (Some("Ana"), Some("cashier")));
    assert!(ana["pinHash"].as_str().unwrap().starts_with("$argon2id$"), "{ana}");
    assert!(members.iter().all(|m| m.as_object().unwrap().keys().all(|k| !k.contains("proof"))));
    shop.app.get("/staff/credentials").await.expect_status(200);

    let reader =
        shop.app.db.open().await.create_key(Name::parse("reader").unwrap(), Scope::Read).await.unwrap();
    let refused = shop
        .app
        .send(shop.app.anonymous(Method::GET, "/staff/credentials").bearer_auth(reader.secret.expose()))
        .await;
    assert_eq!((refused.status.as_u16(), refused.code()), (403, "forbidden"));
}

/// The proof a till sends with a write it took offline: made with the member's PIN over the
/// write's key, from the PIN hash the till keeps.
async fn proof(shop: &Shop, staff: i64, pin: &str, key: &str, at: &str, vouch: Vouch) -> String {
    let listed = shop.app.send(shop.till(Method::GET, "/staff/credentials")).await.expect_status(200);
    let member = listed.body.as_array().unwrap().iter().find(|m| m["id"] == staff).unwrap().clone();
    let pin = Pin::try_from(pin.to_owned()).unwrap();
    let proof_key = proof::proof_key(pin, member["pinHash"].as_str().unwrap().to_owned()).await.unwrap();
    let staff = StaffId::try_from(staff).unwrap();
    proof::Proof::make(&proof_key, staff, Timestamp::parse(at).unwrap(), key, vouch).header_value()
}

/// A write a till took offline reaches the server with a proof instead of a session: it is
/// the member's, the record says so, and a proof for another write, by another PIN or with
/// no key to hold it to is refused, naming the header.
#[tokio::test]
async fn a_write_taken_offline_is_proved_with_the_members_pin() {
    let shop = Shop::new().await;
    let at = "2026-11-27T10:00:00Z";
    let ana = proof(&shop, shop.cashier, "1111", "sale-1", at, Vouch::Made).await;
    let sell = |key: &str, proof: &str| {
        let request = shop
            .till(Method::POST, "/store/orders")
            .header("Idempotency-Key", key)
            .header("Petstore-Staff-Proof", proof)
            .json(&json!({ "petId": 1 }));
        shop.app.send(request)
    };
    let sold = sell("sale-1", &ana).await.expect_status(201);
    assert_eq!(sold.body["placedBy"]["staff"]["name"], "Ana");
    assert_eq!(sold.body["placedBy"]["key"], TILL);

    let other_write = sell("sale-2", &ana).await;
    assert_eq!((other_write.status.as_u16(), other_write.code()), (403, "staff_proof_invalid"));
    assert!(other_write.body["message"].as_str().unwrap().contains("Petstore-Staff-Proof"));
    let wrong_pin = proof(&shop, shop.cashier, "1112", "sale-3", at, Vouch::Made).await;
    assert_eq!(sell("sale-3", &wrong_pin).await.code(), "staff_proof_invalid");
    let no_key = shop
        .app
        .send(
            shop.till(Method::POST, "/store/orders")
                .header("Petstore-Staff-Proof", &ana)
                .json(&json!({ "petId": 1 })),
        )
        .await;
    assert_eq!((no_key.status.as_u16(), no_key.code()), (403, "staff_proof_invalid"));
    assert!(no_key.body["message"].as_str().unwrap().contains("Idempotency-Key"), "{:?}", no_key.body);
    let malformed = sell("sale-4", "staff=2;mac=00").await;
    assert_eq!((malformed.status.as_u16(), malformed.code()), (403, "staff_proof_invalid"));
    // An approval's proof alone vouches for no one: a till's key is refused at the key
    // check, the operator's key by the proof's check.
    let approval_alone = |request: reqwest::RequestBuilder| {
        shop.app.send(
            request
                .header("Idempotency-Key", "sale-5")
                .header("Petstore-Approval-Proof", &ana)
                .json(&json!({ "petId": 1 })),
        )
    };
    let till = approval_alone(shop.till(Method::POST, "/store/orders")).await;
    assert_eq!(till.code(), "staff_required");
    let operator = approval_alone(shop.app.request(Method::POST, "/store/orders")).await;
    assert_eq!((operator.status.as_u16(), operator.code()), (403, "staff_proof_invalid"));
    assert_eq!(shop.app.get("/store/inventory/1").await.body["quantity"], 19, "one sale only");
}

/// A manager approves a cashier's write offline with a second proof, which holds only for
/// that write of that cashier and only from a role that may override; a member deactivated
/// on the server keeps what the till made before, and nothing made after.
#[tokio::test]
async fn an_offline_approval_and_a_deactivation_are_checked_against_the_writes_time() {
    let shop = Shop::new().await;
    let at = "2026-11-27T10:00:00Z";
    let count = |key: String, made: String, approval: Option<String>| {
        let mut request = shop
            .till(Method::POST, "/store/inventory/1/adjustments")
            .header("Idempotency-Key", key)
            .header("Petstore-Staff-Proof", made);
        if let Some(approval) = approval {
            request = request.header("Petstore-Approval-Proof", approval);
        }
        shop.app.send(request.json(&json!({ "delta": -2, "reason": "broken" })))
    };
    let ana = |key: &'static str| proof(&shop, shop.cashier, "1111", key, at, Vouch::Made);
    let cashier = StaffId::try_from(shop.cashier).unwrap();
    let approve = Vouch::Approved { of: cashier };

    assert_eq!(count("c-1".into(), ana("c-1").await, None).await.code(), "permission_denied");
    let by_cashier = proof(&shop, shop.cashier, "1111", "c-2", at, approve).await;
    assert_eq!(count("c-2".into(), ana("c-2").await, Some(by_cashier)).await.code(), "permission_denied");
    let for_other = proof(
        &shop,
        shop.manager,
        "2222",
        "c-3",
        at,
        Vouch::Approved { of: StaffId::try_from(shop.owner).unwrap() },
    )
    .await;
    assert_eq!(count("c-3".into(), ana("c-3").await, Some(for_other)).await.code(), "staff_proof_invalid");
    let marta = proof(&shop, shop.manager, "2222", "c-4", at, approve).await;
    let approved = count("c-4".into(), ana("c-4").await, Some(marta)).await.expect_status(200);
    assert_eq!(approved.body["quantity"], 18);
    let trail = shop.app.get("/store/inventory/1/adjustments").await.expect_status(200);
    assert_eq!(
        (
            trail.body[0]["madeBy"]["staff"]["name"].as_str(),
            trail.body[0]["madeBy"]["approvedBy"]["name"].as_str()
        ),
        (Some("Ana"), Some("Marta"))
    );

    // Ana is deactivated now: a sale the till made an hour before is still hers; one it
    // says it made after is not.
    shop.app.patch(&format!("/staff/{}", shop.cashier), json!({ "active": false })).await.expect_status(200);
    let when = |hours: i64| {
        (chrono::Utc::now() + chrono::Duration::hours(hours)).format("%Y-%m-%dT%H:%M:%SZ").to_string()
    };
    let sell = |key: &'static str, proof: String| {
        shop.app.send(
            shop.till(Method::POST, "/store/orders")
                .header("Idempotency-Key", key)
                .header("Petstore-Staff-Proof", proof)
                .json(&json!({ "petId": 1 })),
        )
    };
    let before = proof(&shop, shop.cashier, "1111", "s-1", &when(-1), Vouch::Made).await;
    sell("s-1", before).await.expect_status(201);
    let after = proof(&shop, shop.cashier, "1111", "s-2", &when(1), Vouch::Made).await;
    let refused = sell("s-2", after).await;
    assert_eq!((refused.status.as_u16(), refused.code()), (403, "staff_inactive"));
}
