//! The shop's staff on SQLite, rows only (`engine::Staff`): the members, their PINs' hashes
//! and the wrong PINs in a row, their sessions (only each token's SHA-256), and the
//! activity log's list. Who may do what, how long a lockout lasts and that the shop keeps
//! an owner are `domain::staff`'s decisions; `crate::staff` checks PINs. Each call is one
//! transaction, so a refusal (the last owner) writes nothing.

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{Snapshot, Store, activity};
use crate::domain::activity as log;
use crate::domain::{
    ActivityEntry, ActivityFilter, Actor, Name, Page, Paged, Role, StaffCredential, StaffId, StaffMember,
    StaffRef, Timestamp, duplicate_staff_name, keep_an_owner, lock_after, staff_name_key,
};
use crate::engine::{NewSession, NewStaffRow, PinRecord, SessionPurpose, Staff, StaffChange};
use crate::error::{Error, Result};

#[async_trait]
impl Staff for Store {
    async fn list_staff(&self) -> Result<Vec<StaffMember>> {
        self.read(|conn| {
            let now = Timestamp::now();
            let mut stmt =
                conn.prepare_cached(&format!("SELECT {COLUMNS} FROM staff ORDER BY name_lower, id"))?;
            let members = stmt.query_map([], |r| member(r, now))?.collect::<rusqlite::Result<_>>()?;
            Ok(members)
        })
        .await
    }

    async fn get_staff(&self, id: StaffId) -> Result<StaffMember> {
        self.read_bounded(move |conn| get(conn, id, Timestamp::now())).await
    }

    async fn create_staff(&self, new: NewStaffRow, by: &Actor) -> Result<StaffMember> {
        let by = by.clone();
        self.write_quietly(move |tx| {
            let now = Timestamp::now();
            tx.prepare_cached(
                "INSERT INTO staff (name, name_lower, role, pin_hash, proof_key, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
            )?
            .execute(params![
                new.name.as_str(),
                staff_name_key(&new.name),
                new.role.as_str(),
                new.pin.hash,
                &new.pin.proof_key[..],
                now
            ])
            .map_err(|e| on_duplicate_name(e, &new.name))?;
            let id = StaffId::try_from(tx.last_insert_rowid()).map_err(Error::internal)?;
            let member = get(tx, id, now)?;
            activity::record(tx, &log::staff_created(&member, &by), now)?;
            Ok(member)
        })
        .await
    }

    async fn update_staff(&self, id: StaffId, change: StaffChange, by: &Actor) -> Result<StaffMember> {
        let by = by.clone();
        self.write_quietly(move |tx| {
            let now = Timestamp::now();
            let before = get(tx, id, now)?;
            let name = change.name.as_ref().unwrap_or(&before.name);
            tx.prepare_cached(
                "UPDATE staff SET name = ?2, name_lower = ?3, role = ?4, active = ?5, updated_at = ?6 WHERE id = ?1",
            )?
            .execute(params![
                id,
                name.as_str(),
                staff_name_key(name),
                change.role.unwrap_or(before.role).as_str(),
                change.active.unwrap_or(before.active),
                now
            ])
            .map_err(|e| on_duplicate_name(e, name))?;
            if let Some(pin) = &change.pin {
                // A new PIN ends a lockout: the one who manages staff set it.
                tx.prepare_cached(
                    "UPDATE staff SET pin_hash = ?2, proof_key = ?3, failed_pins = 0, locked_until = NULL
                     WHERE id = ?1",
                )?
                .execute(params![id, pin.hash, &pin.proof_key[..]])?;
            }
            // Asked here, inside the write, so two changes at once cannot both leave the
            // other's owner the last one and then remove them too.
            let owners: i64 = tx
                .prepare_cached("SELECT count(*) FROM staff WHERE role = 'owner' AND active")?
                .query_row([], |r| r.get(0))?;
            keep_an_owner(owners as u64)?;
            let after = get(tx, id, now)?;
            activity::record(tx, &log::staff_updated(&before, &after, change.pin.is_some(), &by), now)?;
            Ok(after)
        })
        .await
    }

    async fn pin_record(&self, id: StaffId) -> Result<PinRecord> {
        // The latest snapshot: a lockout another process (a second server) counted counts.
        self.inner
            .engine
            .read_bounded(Snapshot::Latest, move |conn| pin_record(conn, id, Timestamp::now()))
            .await
    }

    async fn pin_refused(&self, id: StaffId, now: Timestamp, by: &Actor) -> Result<PinRecord> {
        let by = by.clone();
        self.write_quietly(move |tx| {
            let failures = pin_record(tx, id, now)?.failures.saturating_add(1);
            let locked_until = lock_after(failures)
                .map(|lock| {
                    chrono::Duration::from_std(lock).map(|lock| Timestamp::from(now.as_datetime() + lock))
                })
                .transpose()
                .map_err(Error::internal)?;
            tx.prepare_cached("UPDATE staff SET failed_pins = ?2, locked_until = ?3 WHERE id = ?1")?
                .execute(params![id, failures, locked_until])?;
            activity::record_all(tx, &log::pin_refused(id, failures, locked_until, &by), now)?;
            pin_record(tx, id, now)
        })
        .await
    }

    async fn sign_in(&self, session: NewSession, by: &Actor) -> Result<()> {
        let by = by.clone();
        self.write_quietly(move |tx| {
            let now = Timestamp::now();
            tx.prepare_cached("DELETE FROM staff_sessions WHERE expires_at <= ?1")?.execute([now])?;
            let member = tx
                .prepare_cached("UPDATE staff SET failed_pins = 0, locked_until = NULL WHERE id = ?1")?
                .execute([session.staff])?;
            if member == 0 {
                return Err(Error::not_found(StaffId::WHAT, session.staff.get()));
            }
            tx.prepare_cached(
                "INSERT INTO staff_sessions (token_hash, staff_id, purpose, expires_at, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                &session.token_hash[..],
                session.staff,
                purpose_name(session.purpose),
                session.expires_at,
                now
            ])?;
            let entry = log::signed_in(session.staff, purpose_name(session.purpose), &by);
            activity::record(tx, &entry, now)
        })
        .await
    }

    async fn find_session(&self, token_hash: [u8; 32], now: Timestamp) -> Result<Option<StaffRef>> {
        let found = self
            .inner
            .engine
            .read_bounded(Snapshot::Latest, move |conn| session(conn, &token_hash, now))
            .await?;
        match found {
            None => Ok(None),
            Some((SessionPurpose::Shift, staff)) => Ok(Some(staff)),
            // Used up by this finding: the one delete that removes it lets one write through,
            // however many requests carry it at once.
            Some((SessionPurpose::Approval, _)) => {
                self.write_quietly(move |tx| {
                    let Some((_, staff)) = session(tx, &token_hash, now)? else { return Ok(None) };
                    tx.prepare_cached("DELETE FROM staff_sessions WHERE token_hash = ?1")?
                        .execute([&token_hash[..]])?;
                    Ok(Some(staff))
                })
                .await
            }
        }
    }

    async fn end_session(&self, token_hash: [u8; 32]) -> Result<()> {
        self.write_quietly(move |tx| {
            tx.prepare_cached("DELETE FROM staff_sessions WHERE token_hash = ?1")?
                .execute([&token_hash[..]])?;
            Ok(())
        })
        .await
    }

    async fn list_activity(&self, filter: ActivityFilter, page: Page) -> Result<Paged<ActivityEntry>> {
        self.read(move |conn| activity::list(conn, &filter, page)).await
    }

    async fn keep_proof_key(&self, id: StaffId, pin_hash: String, proof_key: [u8; 32]) -> Result<()> {
        self.write_quietly(move |tx| {
            tx.prepare_cached("UPDATE staff SET proof_key = ?3 WHERE id = ?1 AND pin_hash = ?2")?
                .execute(params![id, pin_hash, &proof_key[..]])?;
            Ok(())
        })
        .await
    }

    async fn staff_credentials(&self) -> Result<Vec<StaffCredential>> {
        self.read(|conn| {
            let now = Timestamp::now();
            let mut stmt =
                conn.prepare_cached(&format!("SELECT {COLUMNS}, pin_hash FROM staff ORDER BY id"))?;
            let members = stmt
                .query_map([], |r| Ok(StaffCredential { member: member(r, now)?, pin_hash: r.get(8)? }))?
                .collect::<rusqlite::Result<_>>()?;
            Ok(members)
        })
        .await
    }
}

const COLUMNS: &str = "id, name, role, active, pin_hash IS NOT NULL, locked_until, created_at, updated_at";

/// A member as the API shows them at `now`: a lockout that has ended is no longer shown.
fn member(r: &Row<'_>, now: Timestamp) -> rusqlite::Result<StaffMember> {
    let name: String = r.get(1)?;
    let role: String = r.get(2)?;
    let locked_until: Option<Timestamp> = r.get(5)?;
    Ok(StaffMember {
        id: r.get(0)?,
        name: Name::parse(&name).map_err(|e| conversion(1, e))?,
        role: role.parse::<Role>().map_err(|e| conversion(2, e.message))?,
        active: r.get(3)?,
        has_pin: r.get(4)?,
        locked_until: locked_until.filter(|until| *until > now),
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
    })
}

fn conversion(column: usize, message: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, message.into())
}

fn get(conn: &Connection, id: StaffId, now: Timestamp) -> Result<StaffMember> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM staff WHERE id = ?1"))?
        .query_row([id], |r| member(r, now))
        .optional()?
        .ok_or_else(|| Error::not_found(StaffId::WHAT, id.get()))
}

fn pin_record(conn: &Connection, id: StaffId, now: Timestamp) -> Result<PinRecord> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS}, pin_hash, failed_pins, proof_key FROM staff WHERE id = ?1"
    ))?
    .query_row([id], |r| {
        let proof_key: Option<Vec<u8>> = r.get(10)?;
        Ok(PinRecord {
            member: member(r, now)?,
            pin_hash: r.get(8)?,
            failures: r.get(9)?,
            proof_key: proof_key.and_then(|key| key.try_into().ok()),
        })
    })
    .optional()?
    .ok_or_else(|| Error::not_found(StaffId::WHAT, id.get()))
}

/// The session of `token_hash` if it is still good at `now` and its member still active.
fn session(
    conn: &Connection,
    token_hash: &[u8; 32],
    now: Timestamp,
) -> Result<Option<(SessionPurpose, StaffRef)>> {
    let row = conn
        .prepare_cached(
            "SELECT s.purpose, m.id, m.name, m.role FROM staff_sessions s JOIN staff m ON m.id = s.staff_id
             WHERE s.token_hash = ?1 AND s.expires_at > ?2 AND m.active",
        )?
        .query_row(params![&token_hash[..], now], |r| {
            let (purpose, name, role): (String, String, String) = (r.get(0)?, r.get(2)?, r.get(3)?);
            let purpose = match purpose.as_str() {
                "approval" => SessionPurpose::Approval,
                _ => SessionPurpose::Shift,
            };
            let staff = StaffRef {
                id: r.get(1)?,
                name: Name::parse(&name).map_err(|e| conversion(2, e))?,
                role: role.parse::<Role>().map_err(|e| conversion(3, e.message))?,
            };
            Ok((purpose, staff))
        })
        .optional()?;
    Ok(row)
}

fn purpose_name(purpose: SessionPurpose) -> &'static str {
    match purpose {
        SessionPurpose::Shift => "shift",
        SessionPurpose::Approval => "approval",
    }
}

/// The unique folded name is the source of truth for "one member per name".
fn on_duplicate_name(e: rusqlite::Error, name: &Name) -> Error {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation)
        && e.to_string().contains("name_lower")
    {
        return duplicate_staff_name(name);
    }
    Error::from(e)
}

#[cfg(test)]
pub(super) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::domain::{ActivityKind, PIN_LOCK, PIN_TRIES};
    use crate::engine::StoredPin;
    use crate::error::ErrorCode;

    pub(in crate::store) fn shop() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("shop.db")).unwrap();
        (dir, store)
    }

    pub(in crate::store) async fn add(store: &Store, name: &str, role: Role) -> StaffRef {
        let new = NewStaffRow {
            name: Name::parse(name).unwrap(),
            role,
            pin: StoredPin { hash: format!("$argon2id$fake${name}"), proof_key: [1; 32] },
        };
        let member = store.create_staff(new, &Actor::operator()).await.unwrap();
        StaffRef { id: member.id, name: member.name, role: member.role }
    }

    pub(in crate::store) fn as_staff(staff: &StaffRef) -> Actor {
        Actor { staff: Some(staff.clone()), ..Actor::default() }
    }

    pub(in crate::store) async fn kinds(store: &Store) -> Vec<ActivityKind> {
        let log = store.list_activity(ActivityFilter::default(), Page::new(100, 0).unwrap()).await.unwrap();
        log.items.into_iter().rev().map(|entry| entry.kind).collect()
    }

    fn at(minutes: i64) -> Timestamp {
        Timestamp::from(Timestamp::now().as_datetime() + chrono::Duration::minutes(minutes))
    }

    fn id(n: i64) -> StaffId {
        StaffId::try_from(n).unwrap()
    }

    #[tokio::test]
    async fn wrong_pins_count_and_lock_by_the_domains_doubling_and_a_sign_in_ends_the_row() {
        let (_dir, store) = shop();
        let ana = add(&store, "Ana", Role::Cashier).await;
        let now = Timestamp::now();
        for n in 1..PIN_TRIES {
            let record = store.pin_refused(ana.id, now, &Actor::operator()).await.unwrap();
            assert_eq!((record.failures, record.member.locked_until), (n, None), "wrong PIN {n}");
        }
        let locked = store.pin_refused(ana.id, now, &Actor::operator()).await.unwrap();
        let until =
            |lock: Duration| Timestamp::from(now.as_datetime() + chrono::Duration::from_std(lock).unwrap());
        assert_eq!((locked.failures, locked.member.locked_until), (PIN_TRIES, Some(until(PIN_LOCK))));
        let doubled = store.pin_refused(ana.id, now, &Actor::operator()).await.unwrap();
        assert_eq!(doubled.member.locked_until, Some(until(PIN_LOCK * 2)));
        assert_eq!(store.get_staff(ana.id).await.unwrap().locked_until, Some(until(PIN_LOCK * 2)));
        assert_eq!(store.pin_record(ana.id).await.unwrap().failures, PIN_TRIES + 1);

        let refused = kinds(&store).await.into_iter().filter(|k| *k != ActivityKind::StaffCreated);
        let mut expected = vec![ActivityKind::PinRefused; PIN_TRIES as usize];
        expected.extend([
            ActivityKind::StaffLockedOut,
            ActivityKind::PinRefused,
            ActivityKind::StaffLockedOut,
        ]);
        assert_eq!(refused.collect::<Vec<_>>(), expected);

        let session = NewSession {
            token_hash: [1; 32],
            staff: ana.id,
            purpose: SessionPurpose::Shift,
            expires_at: at(60),
        };
        store.sign_in(session, &Actor::operator()).await.unwrap();
        let record = store.pin_record(ana.id).await.unwrap();
        assert_eq!((record.failures, record.member.locked_until), (0, None), "a right PIN ends the row");
        assert_eq!(record.pin_hash.as_deref(), Some("$argon2id$fake$Ana"));
        assert_eq!(
            store.pin_refused(id(99), now, &Actor::operator()).await.unwrap_err().code,
            ErrorCode::NotFound
        );
    }

    #[tokio::test]
    async fn the_shop_keeps_an_active_owner_and_a_refused_change_writes_nothing() {
        let (_dir, store) = shop();
        let owner = store.get_staff(id(1)).await.unwrap();
        assert_eq!(
            (owner.name.as_str(), owner.role, owner.has_pin, owner.active),
            ("Owner", Role::Owner, false, true)
        );
        for change in [
            StaffChange { role: Some(Role::Manager), ..StaffChange::default() },
            StaffChange { active: Some(false), ..StaffChange::default() },
            StaffChange {
                name: Some(Name::parse("Boss").unwrap()),
                active: Some(false),
                ..StaffChange::default()
            },
        ] {
            let refused = store.update_staff(id(1), change, &Actor::operator()).await.unwrap_err();
            assert_eq!(refused.code, ErrorCode::LastOwner);
        }
        assert_eq!(store.get_staff(id(1)).await.unwrap(), owner, "nothing changed");
        assert!(kinds(&store).await.is_empty(), "nothing logged");

        let bea = add(&store, "Bea", Role::Manager).await;
        let promoted = StaffChange { role: Some(Role::Owner), ..StaffChange::default() };
        store.update_staff(bea.id, promoted, &Actor::operator()).await.unwrap();
        let stepped_down = StaffChange { role: Some(Role::Manager), ..StaffChange::default() };
        let changed = store.update_staff(id(1), stepped_down, &Actor::operator()).await.unwrap();
        assert_eq!(changed.role, Role::Manager, "another owner remains");
        let log = store.list_activity(ActivityFilter::default(), Page::new(1, 0).unwrap()).await.unwrap();
        assert_eq!(log.items[0].detail.as_deref(), Some("role owner → manager"));
    }

    #[tokio::test]
    async fn names_are_unique_ignoring_case_and_a_new_pin_ends_a_lockout_logged_without_the_hash() {
        let (_dir, store) = shop();
        let ana = add(&store, "Ana", Role::Cashier).await;
        let new = NewStaffRow {
            name: Name::parse("ANA").unwrap(),
            role: Role::Cashier,
            pin: StoredPin { hash: "h".into(), proof_key: [2; 32] },
        };
        let refused = store.create_staff(new, &Actor::operator()).await.unwrap_err();
        assert_eq!(
            (refused.code, refused.message.as_str()),
            (ErrorCode::DuplicateName, "a staff member named \"ANA\" already exists")
        );
        let rename = StaffChange { name: Some(Name::parse("owner").unwrap()), ..StaffChange::default() };
        assert_eq!(
            store.update_staff(ana.id, rename, &Actor::operator()).await.unwrap_err().code,
            ErrorCode::DuplicateName
        );

        for _ in 0..PIN_TRIES {
            store.pin_refused(ana.id, Timestamp::now(), &Actor::operator()).await.unwrap();
        }
        let pin = StaffChange {
            pin: Some(StoredPin { hash: "$argon2id$new".into(), proof_key: [3; 32] }),
            ..StaffChange::default()
        };
        let member = store.update_staff(ana.id, pin, &Actor::operator()).await.unwrap();
        assert_eq!(member.locked_until, None);
        let record = store.pin_record(ana.id).await.unwrap();
        assert_eq!((record.failures, record.pin_hash.as_deref()), (0, Some("$argon2id$new")));
        let log = store.list_activity(ActivityFilter::default(), Page::new(1, 0).unwrap()).await.unwrap();
        let detail = log.items[0].detail.clone().unwrap();
        assert_eq!(detail, "PIN changed");
        let all = store.list_activity(ActivityFilter::default(), Page::new(100, 0).unwrap()).await.unwrap();
        assert!(
            all.items.iter().all(|e| !e.detail.as_deref().unwrap_or("").contains("argon2")),
            "never the hash"
        );
    }

    #[tokio::test]
    async fn a_session_lasts_until_it_expires_or_its_member_is_deactivated_and_expired_ones_go() {
        let (_dir, store) = shop();
        let ana = add(&store, "Ana", Role::Cashier).await;
        let shift = NewSession {
            token_hash: [7; 32],
            staff: ana.id,
            purpose: SessionPurpose::Shift,
            expires_at: at(60),
        };
        store.sign_in(shift, &Actor::operator()).await.unwrap();
        assert_eq!(store.find_session([7; 32], Timestamp::now()).await.unwrap(), Some(ana.clone()));
        assert_eq!(
            store.find_session([7; 32], Timestamp::now()).await.unwrap(),
            Some(ana.clone()),
            "a shift stays"
        );
        assert_eq!(store.find_session([7; 32], at(61)).await.unwrap(), None, "expired");
        assert_eq!(store.find_session([8; 32], Timestamp::now()).await.unwrap(), None, "unknown");

        let gone = NewSession {
            token_hash: [9; 32],
            staff: ana.id,
            purpose: SessionPurpose::Shift,
            expires_at: at(-1),
        };
        store.sign_in(gone, &Actor::operator()).await.unwrap();
        let again = NewSession {
            token_hash: [10; 32],
            staff: ana.id,
            purpose: SessionPurpose::Shift,
            expires_at: at(60),
        };
        store.sign_in(again, &Actor::operator()).await.unwrap();
        let kept: Vec<Vec<u8>> = store
            .read(|c| {
                let mut stmt = c.prepare("SELECT token_hash FROM staff_sessions ORDER BY token_hash")?;
                Ok(stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?)
            })
            .await
            .unwrap();
        assert_eq!(kept, [vec![7; 32], vec![10; 32]], "the expired session was deleted by the next sign-in");

        let off = StaffChange { active: Some(false), ..StaffChange::default() };
        store.update_staff(ana.id, off, &Actor::operator()).await.unwrap();
        assert_eq!(store.find_session([7; 32], Timestamp::now()).await.unwrap(), None, "deactivated");
        store.end_session([10; 32]).await.unwrap();
        store.end_session([10; 32]).await.unwrap();
    }

    #[tokio::test]
    async fn an_approval_is_used_up_by_the_first_request_that_carries_it() {
        let (_dir, store) = shop();
        let bea = add(&store, "Bea", Role::Manager).await;
        let approval = NewSession {
            token_hash: [3; 32],
            staff: bea.id,
            purpose: SessionPurpose::Approval,
            expires_at: at(2),
        };
        store.sign_in(approval, &as_staff(&bea)).await.unwrap();
        let (first, second) = tokio::join!(
            store.find_session([3; 32], Timestamp::now()),
            store.find_session([3; 32], Timestamp::now())
        );
        let found: Vec<_> = [first.unwrap(), second.unwrap()].into_iter().flatten().collect();
        assert_eq!(found, [bea], "one of two requests at once gets it");
        assert_eq!(store.find_session([3; 32], Timestamp::now()).await.unwrap(), None);
        let log = store.list_activity(ActivityFilter::default(), Page::new(1, 0).unwrap()).await.unwrap();
        assert_eq!(
            (log.items[0].kind, log.items[0].detail.as_deref()),
            (ActivityKind::SignedIn, Some("approval"))
        );
    }
}
