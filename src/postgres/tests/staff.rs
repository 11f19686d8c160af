//! Staff on PostgreSQL: the schema's owner, the rows of `engine::Staff` (lockouts, the last
//! owner, sessions and approvals, also with two requests at once) and the actor every
//! write records, on its record and in the activity log.

use super::*;

/// Schema 12 upgrades a shop with data: its one owner is staff member 1, without a PIN,
/// the next member made is 2 (the identity's sequence moved past the row the migration
/// wrote), and what was made before staff names no one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_12_gives_an_upgraded_shop_its_owner_and_leaves_old_records_unnamed() {
    let Some(target) = database().await else { return };
    let (client, connection) = target.connect().await.unwrap();
    tokio::spawn(connection);
    client
        .batch_execute("CREATE TABLE schema_migrations (version bigint PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        .await
        .unwrap();
    for (version, sql) in (1_i64..).zip(super::super::migrations::up_to(11)) {
        client.batch_execute(sql).await.unwrap();
        client.execute("INSERT INTO schema_migrations (version) VALUES ($1)", &[&version]).await.unwrap();
    }
    client
        .batch_execute(
            "INSERT INTO pets (id, name, name_folded, status, stock, stock_updated_at, created_at, updated_at)
                 VALUES (1, 'Rex', 'rex', 'available', 5, '2026-11-01T09:00:00Z', '2026-11-01T09:00:00Z', '2026-11-01T09:00:00Z');
             INSERT INTO orders (id, pet_id, quantity, complete, created_at) VALUES (1, 1, 1, false, '2026-11-02T09:00:00Z');
             INSERT INTO inventory_adjustments (pet_id, delta, reason, quantity_after, created_at)
                 VALUES (1, 5, 'delivery', 5, '2026-11-01T09:00:00Z');",
        )
        .await
        .unwrap();

    PgStore::connect(&target).await.unwrap();
    let owner = client.query_one("SELECT id, name, role, pin_hash, active FROM staff", &[]).await.unwrap();
    let owner: (i64, String, String, Option<String>, bool) =
        (owner.get(0), owner.get(1), owner.get(2), owner.get(3), owner.get(4));
    assert_eq!(owner, (1, "Owner".to_owned(), "owner".to_owned(), None, true));
    let next: i64 = client
        .query_one(
            "INSERT INTO staff (name, name_lower, role, created_at, updated_at)
             VALUES ('Ana', 'ana', 'cashier', '', '') RETURNING id",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(next, 2, "the next member after the owner");
    let unnamed: (Option<String>, Option<String>, Option<String>, Option<String>) = {
        let r = client
            .query_one(
                "SELECT o.placed_by, o.completed_by, o.cancelled_by, a.made_by
                 FROM orders o, inventory_adjustments a",
                &[],
            )
            .await
            .unwrap();
        (r.get(0), r.get(1), r.get(2), r.get(3))
    };
    assert_eq!(unnamed, (None, None, None, None), "made before staff");
}

use crate::engine::{NewSession, NewStaffRow, SessionPurpose, Staff, StaffChange, StoredPin};

fn person(name: &str, role: Role) -> NewStaffRow {
    // Rows only: the engine keeps whatever hash `crate::staff` made.
    NewStaffRow {
        name: Name::parse(name).unwrap(),
        role,
        pin: StoredPin { hash: format!("$argon2id$v=19$hash-of-{name}"), proof_key: [1; 32] },
    }
}

fn as_ref(member: &StaffMember) -> StaffRef {
    StaffRef { id: member.id, name: member.name.clone(), role: member.role }
}

fn acting_as(member: &StaffMember) -> Actor {
    Actor { staff: Some(as_ref(member)), ..Actor::default() }
}

fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

fn session(token: u8, staff: StaffId, purpose: SessionPurpose, expires_at: Timestamp) -> NewSession {
    NewSession { token_hash: [token; 32], staff, purpose, expires_at }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_are_made_named_once_ignoring_case_and_listed_by_name() {
    let Some(target) = database().await else { return };
    let store = PgStore::connect(&target).await.unwrap();
    let owner = store.get_staff(id(1)).await.unwrap();
    assert_eq!(
        (owner.name.as_str(), owner.role, owner.has_pin, owner.active),
        ("Owner", Role::Owner, false, true)
    );
    let ana = store.create_staff(person("Ana", Role::Cashier), &Actor::operator()).await.unwrap();
    assert_eq!((ana.id.get(), ana.has_pin, ana.locked_until), (2, true, None));
    let taken = store.create_staff(person("ANA", Role::Manager), &Actor::operator()).await.unwrap_err();
    assert_eq!(
        (taken.code, taken.message.as_str()),
        (ErrorCode::DuplicateName, "a staff member named \"ANA\" already exists")
    );
    let bea = store.create_staff(person("bea", Role::Manager), &Actor::operator()).await.unwrap();
    assert_eq!(bea.id.get(), 3, "a name refused used up no id");
    // Case beyond ASCII too, as SQLite's store folds it (Rust's lowercasing).
    store.create_staff(person("Élodie", Role::Cashier), &Actor::operator()).await.unwrap();
    let accented = store.create_staff(person("éLODIE", Role::Cashier), &Actor::operator()).await.unwrap_err();
    assert_eq!(accented.code, ErrorCode::DuplicateName);
    let renamed = store
        .update_staff(
            bea.id,
            StaffChange { name: Some(Name::parse("aNa").unwrap()), ..StaffChange::default() },
            &Actor::operator(),
        )
        .await
        .unwrap_err();
    assert_eq!(renamed.code, ErrorCode::DuplicateName);
    let names: Vec<_> =
        store.list_staff().await.unwrap().into_iter().map(|m| m.name.as_str().to_owned()).collect();
    assert_eq!(names, ["Ana", "bea", "Owner", "Élodie"]);
    assert_eq!(store.get_staff(id(9)).await.unwrap_err().code, ErrorCode::NotFound);
}

/// Each wrong PIN counts, also two at once on two replicas; the lockout begins at the
/// domain's count and doubles; a new PIN, or a sign-in, ends the row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_pins_are_counted_atomically_and_lock_as_the_domain_says() {
    let Some(target) = database().await else { return };
    let replicas = [PgStore::connect(&target).await.unwrap(), PgStore::connect(&target).await.unwrap()];
    let ana = replicas[0].create_staff(person("Ana", Role::Cashier), &Actor::operator()).await.unwrap();
    let now = at("2026-11-27T10:00:00Z");
    let tries: Vec<_> = (0..PIN_TRIES - 1)
        .map(|n| {
            let store = replicas[n as usize % 2].clone();
            tokio::spawn(async move { store.pin_refused(ana.id, now, &Actor::key("till")).await.unwrap() })
        })
        .collect();
    for tried in tries {
        assert_eq!(tried.await.unwrap().member.locked_until, None);
    }
    let record = replicas[1].pin_record(ana.id).await.unwrap();
    assert_eq!(record.failures, PIN_TRIES - 1, "every wrong PIN counted, none lost to a race");
    let locked = replicas[0].pin_refused(ana.id, now, &Actor::key("till")).await.unwrap();
    assert_eq!(locked.failures, PIN_TRIES);
    assert_eq!(
        locked.member.locked_until,
        Some(Timestamp::from(now.as_datetime() + chrono::Duration::minutes(5)))
    );
    let doubled = replicas[1].pin_refused(ana.id, now, &Actor::key("till")).await.unwrap();
    assert_eq!(
        doubled.member.locked_until,
        Some(Timestamp::from(now.as_datetime() + chrono::Duration::minutes(10)))
    );

    let refused = replicas[0]
        .list_activity(
            ActivityFilter { kind: Some(ActivityKind::PinRefused), ..Default::default() },
            Page::default(),
        )
        .await
        .unwrap();
    assert_eq!(refused.total, u64::from(PIN_TRIES) + 1);
    let locked_out = ActivityFilter { kind: Some(ActivityKind::StaffLockedOut), ..Default::default() };
    assert_eq!(replicas[0].list_activity(locked_out, Page::default()).await.unwrap().total, 2);

    let new_pin = StaffChange {
        pin: Some(StoredPin { hash: "$argon2id$new".into(), proof_key: [2; 32] }),
        ..StaffChange::default()
    };
    let unlocked = replicas[0].update_staff(ana.id, new_pin, &Actor::operator()).await.unwrap();
    assert_eq!(unlocked.locked_until, None);
    assert_eq!(replicas[0].pin_record(ana.id).await.unwrap().failures, 0);
    replicas[0].pin_refused(ana.id, now, &Actor::key("till")).await.unwrap();
    let expires = Timestamp::from(chrono::Utc::now() + chrono::Duration::hours(12));
    replicas[1]
        .sign_in(session(1, ana.id, SessionPurpose::Shift, expires), &Actor::key("till"))
        .await
        .unwrap();
    assert_eq!(replicas[0].pin_record(ana.id).await.unwrap().failures, 0, "a right PIN ends the row");
}

/// The shop keeps an active owner: demoting or deactivating the last is refused, and of two
/// owners demoting each other at once on two replicas, exactly one succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_owner_stays_also_against_two_demotions_at_once() {
    let Some(target) = database().await else { return };
    let replicas = [PgStore::connect(&target).await.unwrap(), PgStore::connect(&target).await.unwrap()];
    let owner: StaffId = id(1);
    let demote = || StaffChange { role: Some(Role::Manager), ..StaffChange::default() };
    let refused = replicas[0].update_staff(owner, demote(), &Actor::operator()).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::LastOwner);
    let off = StaffChange { active: Some(false), ..StaffChange::default() };
    assert_eq!(
        replicas[1].update_staff(owner, off, &Actor::operator()).await.unwrap_err().code,
        ErrorCode::LastOwner
    );
    assert_eq!(replicas[0].get_staff(owner).await.unwrap().role, Role::Owner, "changed nothing");

    let bea = replicas[0].create_staff(person("Bea", Role::Owner), &Actor::operator()).await.unwrap();
    for round in 0..8 {
        let both: Vec<_> = [owner, bea.id]
            .into_iter()
            .enumerate()
            .map(|(n, member)| {
                let store = replicas[n].clone();
                tokio::spawn(async move { store.update_staff(member, demote(), &Actor::operator()).await })
            })
            .collect();
        let mut outcomes = Vec::new();
        for one in both {
            outcomes.push(one.await.unwrap());
        }
        let demoted: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
        assert_eq!(demoted.len(), 1, "round {round}: {outcomes:?}");
        assert!(outcomes.iter().any(|o| o.as_ref().is_err_and(|e| e.code == ErrorCode::LastOwner)));
        let owners =
            replicas[1].list_staff().await.unwrap().into_iter().filter(|m| m.role == Role::Owner).count();
        assert_eq!(owners, 1);
        // Both owners again for the next round.
        let promote = StaffChange { role: Some(Role::Owner), ..StaffChange::default() };
        replicas[0].update_staff(demoted[0].id, promote, &Actor::operator()).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ends_when_it_expires_when_signed_out_or_when_its_member_is_deactivated() {
    let Some(target) = database().await else { return };
    let store = PgStore::connect(&target).await.unwrap();
    let ana = store.create_staff(person("Ana", Role::Cashier), &Actor::operator()).await.unwrap();
    let expires = Timestamp::from(chrono::Utc::now() + chrono::Duration::hours(12));
    store.sign_in(session(1, ana.id, SessionPurpose::Shift, expires), &Actor::key("till")).await.unwrap();
    let before = Timestamp::from(expires.as_datetime() - chrono::Duration::seconds(1));
    assert_eq!(store.find_session([1; 32], before).await.unwrap(), Some(as_ref(&ana)));
    assert_eq!(
        store.find_session([1; 32], before).await.unwrap(),
        Some(as_ref(&ana)),
        "a shift is not used up"
    );
    assert_eq!(store.find_session([1; 32], expires).await.unwrap(), None, "expired");
    assert_eq!(store.find_session([2; 32], before).await.unwrap(), None, "no such token");

    // An expired session's row goes with the next sign-in.
    let past = Timestamp::from(chrono::Utc::now() - chrono::Duration::seconds(5));
    store.sign_in(session(3, ana.id, SessionPurpose::Shift, past), &Actor::key("till")).await.unwrap();
    store.sign_in(session(4, ana.id, SessionPurpose::Shift, expires), &Actor::key("till")).await.unwrap();
    let (client, connection) = target.connect().await.unwrap();
    tokio::spawn(connection);
    let kept: i64 = client.query_one("SELECT count(*) FROM staff_sessions", &[]).await.unwrap().get(0);
    assert_eq!(kept, 2, "tokens 1 and 4");

    store.end_session([4; 32]).await.unwrap();
    store.end_session([4; 32]).await.unwrap();
    assert_eq!(store.find_session([4; 32], before).await.unwrap(), None, "signed out");
    let off = StaffChange { active: Some(false), ..StaffChange::default() };
    store.update_staff(ana.id, off, &Actor::operator()).await.unwrap();
    assert_eq!(store.find_session([1; 32], before).await.unwrap(), None, "deactivated");
}

/// An approval lets one request through: found once, then gone, also when many requests
/// carry it at once on two replicas.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_used_once_even_by_requests_at_once() {
    let Some(target) = database().await else { return };
    let replicas = [PgStore::connect(&target).await.unwrap(), PgStore::connect(&target).await.unwrap()];
    let mia = replicas[0].create_staff(person("Mia", Role::Manager), &Actor::operator()).await.unwrap();
    let expires = Timestamp::from(chrono::Utc::now() + chrono::Duration::minutes(2));
    let now = Timestamp::now();
    replicas[0]
        .sign_in(session(7, mia.id, SessionPurpose::Approval, expires), &Actor::key("till"))
        .await
        .unwrap();
    assert_eq!(replicas[1].find_session([7; 32], now).await.unwrap(), Some(as_ref(&mia)));
    assert_eq!(replicas[0].find_session([7; 32], now).await.unwrap(), None, "used up");

    for token in 10..16 {
        replicas[1]
            .sign_in(session(token, mia.id, SessionPurpose::Approval, expires), &Actor::key("till"))
            .await
            .unwrap();
        let tries: Vec<_> = (0..8)
            .map(|n| {
                let store = replicas[n % 2].clone();
                tokio::spawn(async move { store.find_session([token; 32], now).await.unwrap() })
            })
            .collect();
        let mut found = 0;
        for one in tries {
            found += usize::from(one.await.unwrap().is_some());
        }
        assert_eq!(found, 1, "approval {token}");
    }
    // An expired approval lets nothing through.
    let past = Timestamp::from(chrono::Utc::now() - chrono::Duration::seconds(1));
    replicas[0]
        .sign_in(session(20, mia.id, SessionPurpose::Approval, past), &Actor::key("till"))
        .await
        .unwrap();
    assert_eq!(replicas[0].find_session([20; 32], now).await.unwrap(), None);
}

/// The log's entries of `kind`, newest first.
async fn entries(store: &PgStore, kind: ActivityKind) -> Vec<ActivityEntry> {
    let filter = ActivityFilter { kind: Some(kind), ..ActivityFilter::default() };
    store.list_activity(filter, Page::new(100, 0).unwrap()).await.unwrap().items
}

/// An order placed through `acting` names its actor, on both ways of placing it (the one
/// statement, and the transaction for the last of the stock) and through an idempotency
/// key, whose retry records nothing new; each has its one entry in the log, the domain's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_placed_through_acting_names_its_actor_and_is_logged_once() {
    let Some(target) = database().await else { return };
    let store = PgStore::connect(&target).await.unwrap();
    let ana = store.create_staff(person("Ana", Role::Cashier), &Actor::operator()).await.unwrap();
    let pet = store.create_pet(body(r#"{"name": "Rex"}"#)).await.unwrap();
    store.set_inventory(pet.id, body(r#"{"quantity": 5}"#)).await.unwrap();
    let by = Actor { key: Some("till-1".into()), ..acting_as(&ana) };
    let shop = store.acting(by.clone());

    // Leaves stock: the one statement.
    let fast = shop.place_order(body(&format!(r#"{{"petId": {}}}"#, pet.id))).await.unwrap();
    assert_eq!((fast.placed_by.as_ref(), fast.completed_by.as_ref()), (Some(&by), None));
    // The last of it, a counter sale: the transaction.
    let last = shop
        .place_order(body(&format!(r#"{{"petId": {}, "quantity": 4, "complete": true}}"#, pet.id)))
        .await
        .unwrap();
    assert_eq!((last.placed_by.as_ref(), last.completed_by.as_ref()), (Some(&by), Some(&by)));
    for order in [&fast, &last] {
        assert_eq!(&store.get_order(order.id).await.unwrap(), order, "read back as answered");
    }

    let placed = entries(&store, ActivityKind::OrderPlaced).await;
    assert_eq!(placed.len(), 2);
    for (entry, order) in placed.iter().zip([&last, &fast]) {
        let expected = crate::domain::activity::order_placed(order, &by);
        assert_eq!(
            (entry.kind, &entry.subject, &entry.detail),
            (expected.kind, &expected.subject, &expected.detail)
        );
        assert_eq!(entry.actor.as_ref(), Some(&by));
    }

    // Through a key: placed once, logged once; the retry is answered from the record.
    store.set_inventory(pet.id, body(r#"{"quantity": 5}"#)).await.unwrap();
    let key = || IdempotencyKey::new("till-1", "order-1").unwrap();
    let order: NewOrder = body(&format!(r#"{{"petId": {}}}"#, pet.id));
    let first = shop.once(key(), CounterWrite::Place(order.clone()), chrono::Utc::now()).await.unwrap();
    let again = shop.once(key(), CounterWrite::Place(order), chrono::Utc::now()).await.unwrap();
    assert!(again.replayed);
    assert_eq!(first.outcome.unwrap().into_order().unwrap().placed_by, Some(by.clone()));
    assert_eq!(entries(&store, ActivityKind::OrderPlaced).await.len(), 3, "the retry logged nothing");

    // The operator's own writes name the operator; what came before staff names no one.
    let operators = store.place_order(body(&format!(r#"{{"petId": {}}}"#, pet.id))).await.unwrap();
    assert_eq!(operators.placed_by, Some(Actor::operator()));
}

/// Cancelling, adjusting and counting name their actor on the record and in the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancels_adjustments_and_counts_name_their_actor() {
    let Some(target) = database().await else { return };
    let store = PgStore::connect(&target).await.unwrap();
    let mia = store.create_staff(person("Mia", Role::Manager), &Actor::operator()).await.unwrap();
    let by = acting_as(&mia);
    let shop = store.acting(by.clone());
    let pet = shop.create_pet(body(r#"{"name": "Rex"}"#)).await.unwrap();
    shop.set_inventory(pet.id, body(r#"{"quantity": 5}"#)).await.unwrap();
    shop.adjust_inventory(pet.id, body(r#"{"delta": 3, "reason": "delivery"}"#)).await.unwrap();
    let order = shop.place_order(body(&format!(r#"{{"petId": {}}}"#, pet.id))).await.unwrap();
    let cancelled = shop.cancel_order(order.id).await.unwrap();
    assert_eq!(cancelled.cancelled_by.as_ref(), Some(&by));

    let made: Vec<_> = store.list_adjustments(pet.id, Page::default()).await.unwrap().items;
    assert_eq!(made.len(), 2);
    assert!(made.iter().all(|a| a.made_by.as_ref() == Some(&by)), "{made:?}");
    let history = store.stock_history(pet.id, Page::default()).await.unwrap().items;
    assert!(history.iter().all(|e| e.by.as_ref() == Some(&by)), "{history:?}");

    let adjusted = entries(&store, ActivityKind::StockAdjusted).await;
    assert_eq!(adjusted[0].detail.as_deref(), Some("+3 delivery"));
    assert_eq!(entries(&store, ActivityKind::StockCounted).await[0].detail.as_deref(), Some("5 (was 0)"));
    assert_eq!(entries(&store, ActivityKind::OrderCancelled).await.len(), 1);
    assert_eq!(entries(&store, ActivityKind::PetCreated).await[0].actor.as_ref(), Some(&by));
}

/// Reopening a completed order needs reopen_orders: a cashier's is refused, inside the
/// write, and changes nothing; a manager's reopens it, completed by nobody again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cashiers_reopen_is_refused_and_changes_nothing() {
    let Some(target) = database().await else { return };
    let store = PgStore::connect(&target).await.unwrap();
    let ana = store.create_staff(person("Ana", Role::Cashier), &Actor::operator()).await.unwrap();
    let mia = store.create_staff(person("Mia", Role::Manager), &Actor::operator()).await.unwrap();
    let pet = store.create_pet(body(r#"{"name": "Rex"}"#)).await.unwrap();
    store.set_inventory(pet.id, body(r#"{"quantity": 5}"#)).await.unwrap();
    let cashier = store.acting(acting_as(&ana));
    let order = cashier.place_order(body(&format!(r#"{{"petId": {}}}"#, pet.id))).await.unwrap();
    let completed = cashier.update_order(order.id, body(r#"{"complete": true}"#)).await.unwrap();
    assert_eq!(completed.completed_by, Some(acting_as(&ana)));
    assert_eq!(entries(&store, ActivityKind::OrderCompleted).await.len(), 1);

    let refused = cashier.update_order(order.id, body(r#"{"complete": false}"#)).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::PermissionDenied);
    assert!(refused.message.contains("cashier Ana may not reopen completed orders"), "{}", refused.message);
    let key = IdempotencyKey::new("till-1", "reopen").unwrap();
    let write = CounterWrite::Update { order: order.id, patch: body(r#"{"complete": false}"#) };
    let kept = cashier.once(key, write, chrono::Utc::now()).await.unwrap();
    assert_eq!(kept.outcome.unwrap_err().code, ErrorCode::PermissionDenied, "through a key too");
    assert_eq!(store.get_order(order.id).await.unwrap(), completed, "changed nothing");
    assert_eq!(store.get_inventory(pet.id).await.unwrap().quantity, 4);
    assert!(entries(&store, ActivityKind::OrderReopened).await.is_empty());

    let approved = Actor { approved_by: Some(as_ref(&mia)), ..acting_as(&ana) };
    let reopened =
        store.acting(approved.clone()).update_order(order.id, body(r#"{"complete": false}"#)).await.unwrap();
    assert_eq!((reopened.complete, reopened.completed_by), (false, None));
    let logged = entries(&store, ActivityKind::OrderReopened).await;
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].actor, Some(approved));
}

/// The log by person (who acted, or who approved), by kind and by time, newest first, a
/// page at a time with the total.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_activity_log_filters_by_person_kind_and_time_and_pages_newest_first() {
    let Some(target) = database().await else { return };
    let store = PgStore::connect(&target).await.unwrap();
    let ana = store.create_staff(person("Ana", Role::Cashier), &Actor::operator()).await.unwrap();
    let mia = store.create_staff(person("Mia", Role::Manager), &Actor::operator()).await.unwrap();
    for name in ["Dogs", "Cats", "Birds"] {
        store
            .acting(acting_as(&mia))
            .create_category(body(&format!(r#"{{"name": "{name}"}}"#)))
            .await
            .unwrap();
    }
    let approved = Actor { approved_by: Some(as_ref(&mia)), ..acting_as(&ana) };
    store.acting(approved.clone()).create_category(body(r#"{"name": "Fish"}"#)).await.unwrap();
    store.acting(acting_as(&ana)).put_settings(ShopSettings::defaults()).await.unwrap();

    let all = store.list_activity(ActivityFilter::default(), Page::default()).await.unwrap();
    assert_eq!(all.total, 7, "two members made, four categories, the settings");
    assert!(all.items.windows(2).all(|w| w[0].id > w[1].id), "newest first");
    assert_eq!(all.items[0].kind, ActivityKind::SettingsChanged);

    let by_mia = ActivityFilter { staff: Some(mia.id), ..ActivityFilter::default() };
    let page = store.list_activity(by_mia.clone(), Page::new(2, 0).unwrap()).await.unwrap();
    assert_eq!(page.total, 4, "three of her own, one she approved");
    let names: Vec<_> = page.items.iter().map(|e| e.detail.clone().unwrap()).collect();
    assert_eq!(names, ["Fish", "Birds"]);
    assert_eq!(page.items[0].actor, Some(approved));
    let next = store.list_activity(by_mia, Page::new(2, 2).unwrap()).await.unwrap();
    let names: Vec<_> = next.items.iter().map(|e| e.detail.clone().unwrap()).collect();
    assert_eq!((next.total, names), (4, vec!["Cats".to_owned(), "Dogs".to_owned()]));

    let by_ana = ActivityFilter { staff: Some(ana.id), ..ActivityFilter::default() };
    assert_eq!(store.list_activity(by_ana, Page::default()).await.unwrap().total, 2);
    let made = ActivityFilter { kind: Some(ActivityKind::StaffCreated), ..ActivityFilter::default() };
    let made = store.list_activity(made, Page::default()).await.unwrap();
    assert_eq!(made.total, 2);
    assert_eq!(made.items[0].actor, Some(Actor::operator()));
    assert!(
        made.items.iter().all(|e| !e.detail.as_deref().unwrap_or("").contains("argon2")),
        "never the hash"
    );

    // From inclusive, to exclusive: compared with the entries' own times (whole seconds, so
    // several may share one).
    let (first, last) = (all.items.last().unwrap().at, all.items[0].at);
    let one_second = chrono::Duration::seconds(1);
    for (from, to) in
        [(first, last), (last, Timestamp::from(last.as_datetime() + one_second)), (first, first)]
    {
        let filter = ActivityFilter { from: Some(from), to: Some(to), ..ActivityFilter::default() };
        let expected = all.items.iter().filter(|e| e.at >= from && e.at < to).count();
        assert_eq!(store.list_activity(filter, Page::default()).await.unwrap().total, expected as u64);
    }
    let everything = ActivityFilter { from: Some(first), ..ActivityFilter::default() };
    assert_eq!(store.list_activity(everything, Page::default()).await.unwrap().total, 7);
    let before_start = ActivityFilter { to: Some(at("2000-01-01T00:00:00Z")), ..ActivityFilter::default() };
    let none = store.list_activity(before_start, Page::default()).await.unwrap();
    assert_eq!((none.total, none.items.len()), (0, 0));
}

/// A key's writes through `keys_acting` are logged as the actor's (its name and scope,
/// never its secret); a refused one logs nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_writes_through_keys_acting_are_logged_as_the_actors() {
    let Some(target) = database().await else { return };
    let store = PgStore::connect(&target).await.unwrap();
    let owner = store.get_staff(id(1)).await.unwrap();
    let by = acting_as(&owner);
    let keys = store.keys_acting(by.clone());
    let issued = keys.create_key(Name::parse("Till").unwrap(), Scope::Read).await.unwrap();
    let taken = keys.create_key(Name::parse("TILL").unwrap(), Scope::Write).await.unwrap_err();
    assert_eq!(taken.code, ErrorCode::DuplicateName);
    let rotated = keys.rotate_key("till").await.unwrap();
    keys.revoke_key("TILL").await.unwrap();
    assert_eq!(keys.revoke_key("till").await.unwrap_err().code, ErrorCode::Gone);
    let revoked = keys.create_key(Name::parse("till").unwrap(), Scope::Read).await.unwrap_err();
    assert!(revoked.message.ends_with("(revoked; names are not reused)"), "{}", revoked.message);

    let log = store.list_activity(ActivityFilter::default(), Page::default()).await.unwrap();
    let kinds: Vec<_> = log.items.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [ActivityKind::KeyRevoked, ActivityKind::KeyRotated, ActivityKind::KeyCreated]);
    for entry in &log.items {
        assert_eq!(entry.actor.as_ref(), Some(&by));
        assert_eq!(entry.subject.as_ref().map(|s| s.id.as_str()), Some("Till"));
        assert_eq!(entry.detail.as_deref(), Some("scope read"));
        for secret in [issued.secret.expose(), rotated.secret.expose()] {
            assert!(!format!("{entry:?}").contains(secret), "never the secret");
        }
    }
}

/// Every write of the scenario logs on PostgreSQL what it logs on SQLite, entry for entry
/// (kind, subject, detail and actor), a refusal nothing; an import one entry, a dry run none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_write_logs_what_it_logs_on_sqlite() {
    let Some(target) = database().await else { return };
    let pg = PgStore::connect(&target).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Store::open(dir.path().join("shop.db")).unwrap();
    let csv = "name,category,stock\nAda,Imported,3\nBo,Imported,0\n";
    let rows = crate::domain::parse_pets_csv(csv.as_bytes()).unwrap();
    async fn log_of(shop: &dyn Staff) -> Vec<String> {
        let mut all = Vec::new();
        loop {
            let page = Page::new(Page::MAX_LIMIT, all.len() as u32).unwrap();
            let items = shop.list_activity(ActivityFilter::default(), page).await.unwrap().items;
            if items.is_empty() {
                return all;
            }
            all.extend(
                items
                    .into_iter()
                    .map(|e| format!("{:?} {:?} {:?} {:?}", e.kind, e.subject, e.detail, e.actor)),
            );
        }
    }
    let by = Actor::key("till-1");
    super::scenario(&*sqlite.acting(by.clone())).await;
    super::scenario(&*pg.acting(by.clone())).await;
    for dry_run in [true, false] {
        sqlite.import_pets(rows.clone(), true, dry_run).await.unwrap();
        pg.import_pets(rows.clone(), true, dry_run).await.unwrap();
    }
    let (expected, got) = (log_of(&sqlite).await, log_of(&pg).await);
    assert!(expected.len() > 20, "{expected:?}");
    assert_eq!(got, expected);
    assert_eq!(got.iter().filter(|e| e.starts_with("PetsImported")).count(), 1, "the dry run logged nothing");
}
