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

use crate::engine::{NewSession, NewStaffRow, SessionPurpose, Staff, StaffChange};

fn person(name: &str, role: Role) -> NewStaffRow {
    // Rows only: the engine keeps whatever hash `crate::staff` made.
    NewStaffRow { name: Name::parse(name).unwrap(), role, pin_hash: format!("$argon2id$v=19$hash-of-{name}") }
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

    let new_pin = StaffChange { pin_hash: Some("$argon2id$new".into()), ..StaffChange::default() };
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
