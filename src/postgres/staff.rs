//! The staff on PostgreSQL (`engine::Staff`): the rows only. `crate::staff` checks PINs and
//! `domain::staff` decides who may do what, how long a lockout lasts and that an owner
//! stays; each call here stores what they decided in one transaction (or one statement),
//! with its entry in the activity log.
//!
//! Two replicas at once decide on no stale row: a change that could take the shop's last
//! active owner locks every active owner's row first (in id order, so two such changes
//! never wait for each other in a circle); a wrong PIN is counted by the `UPDATE` itself;
//! and an approval is used up by the `DELETE` that finds it, which only one request wins.

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;

use super::types::col;
use super::{PgStore, activity, pg, violates};
use crate::admission::WriteAdmission;
use crate::domain::activity as log;
use crate::domain::{
    ActivityEntry, ActivityFilter, Actor, Page, Paged, Role, StaffCredential, StaffId, StaffMember, StaffRef,
    Timestamp, duplicate_staff_name, keep_an_owner, lock_after, staff_name_key,
};
use crate::engine::{NewSession, NewStaffRow, PinRecord, SessionPurpose, Staff, StaffChange};
use crate::error::{Error, Result};

const COLUMNS: &str = "id, name, role, active, pin_hash IS NOT NULL, locked_until, created_at, updated_at, pin_hash, failed_pins, proof_key";

fn member(r: &Row) -> Result<StaffMember> {
    Ok(StaffMember {
        id: col(r, 0)?,
        name: col(r, 1)?,
        role: col(r, 2)?,
        active: col(r, 3)?,
        has_pin: col(r, 4)?,
        locked_until: col(r, 5)?,
        created_at: col(r, 6)?,
        updated_at: col(r, 7)?,
    })
}

fn pin_record(r: &Row) -> Result<PinRecord> {
    Ok(PinRecord {
        member: member(r)?,
        pin_hash: col(r, 8)?,
        failures: u32::try_from(col::<i32>(r, 9)?).map_err(Error::internal)?,
        proof_key: col::<Option<Vec<u8>>>(r, 10)?.and_then(|key| key.try_into().ok()),
    })
}

fn no_such_member(id: StaffId) -> Error {
    Error::not_found(StaffId::WHAT, id.get())
}

fn purpose_name(purpose: SessionPurpose) -> &'static str {
    match purpose {
        SessionPurpose::Shift => "shift",
        SessionPurpose::Approval => "approval",
    }
}

async fn get(c: &impl GenericClient, id: StaffId, lock: &str) -> Result<PinRecord> {
    let sql = format!("SELECT {COLUMNS} FROM staff WHERE id = $1 {lock}");
    c.query_opt(&c.prepare_cached(&sql).await.map_err(pg)?, &[&id.get()])
        .await
        .map_err(pg)?
        .map(|r| pin_record(&r))
        .transpose()?
        .ok_or_else(|| no_such_member(id))
}

/// Commits `tx` if its request is still waited for (see `crate::admission`).
async fn commit(tx: deadpool_postgres::Transaction<'_>) -> Result<()> {
    WriteAdmission::begin_current()?;
    tx.commit().await.map_err(pg)
}

#[async_trait]
impl Staff for PgStore {
    async fn list_staff(&self) -> Result<Vec<StaffMember>> {
        let conn = self.client().await?;
        let sql = format!("SELECT {COLUMNS} FROM staff ORDER BY name_lower, id");
        let rows = conn.query(&conn.prepare_cached(&sql).await.map_err(pg)?, &[]).await.map_err(pg)?;
        rows.iter().map(member).collect()
    }

    async fn get_staff(&self, id: StaffId) -> Result<StaffMember> {
        Ok(get(&*self.client().await?, id, "").await?.member)
    }

    async fn create_staff(&self, new: NewStaffRow, by: &Actor) -> Result<StaffMember> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg)?;
        // Looked for first, so that a name taken does not use up an id (as keys.rs); the
        // unique index still decides between two replicas at once.
        let sql = "SELECT 1 FROM staff WHERE name_lower = $1";
        if tx
            .query_opt(&tx.prepare_cached(sql).await.map_err(pg)?, &[&staff_name_key(&new.name)])
            .await
            .map_err(pg)?
            .is_some()
        {
            return Err(duplicate_staff_name(&new.name));
        }
        let sql = format!(
            "INSERT INTO staff (name, name_lower, role, pin_hash, proof_key, created_at, updated_at)
             VALUES ($1, $5, $2, $3, $6, $4, $4)
             RETURNING {COLUMNS}"
        );
        let row = tx
            .query_one(
                &tx.prepare_cached(&sql).await.map_err(pg)?,
                &[
                    &new.name.as_str(),
                    &new.role.as_str(),
                    &new.pin.hash,
                    &Timestamp::now().to_string(),
                    &staff_name_key(&new.name),
                    &&new.pin.proof_key[..],
                ],
            )
            .await
            .map_err(|e| {
                if violates(&e, &SqlState::UNIQUE_VIOLATION, "staff_name_lower_key") {
                    duplicate_staff_name(&new.name)
                } else {
                    pg(e)
                }
            })?;
        let made = member(&row)?;
        activity::record(&tx, &log::staff_created(&made, by)).await?;
        commit(tx).await?;
        Ok(made)
    }

    async fn update_staff(&self, id: StaffId, change: StaffChange, by: &Actor) -> Result<StaffMember> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg)?;
        // A change that could leave the shop without an active owner locks every active
        // owner first, in id order: of two such changes at once (two owners demoting each
        // other) the second waits, then counts the owners the first left it.
        let may_demote = change.role.is_some_and(|role| role != Role::Owner) || change.active == Some(false);
        let owners: Vec<i64> = if may_demote {
            let sql = "SELECT id FROM staff WHERE role = 'owner' AND active ORDER BY id FOR UPDATE";
            let rows = tx.query(&tx.prepare_cached(sql).await.map_err(pg)?, &[]).await.map_err(pg)?;
            rows.iter().map(|r| col(r, 0)).collect::<Result<_>>()?
        } else {
            Vec::new()
        };
        let before = get(&tx, id, "FOR UPDATE").await?.member;
        let owner_after =
            change.role.unwrap_or(before.role) == Role::Owner && change.active.unwrap_or(before.active);
        if before.role == Role::Owner && before.active && !owner_after {
            keep_an_owner(owners.iter().filter(|&&owner| owner != id.get()).count() as u64)?;
        }
        // A new PIN also ends the row of wrong ones and the lockout they earned.
        let sql = format!(
            "UPDATE staff SET name = coalesce($2, name), name_lower = coalesce($7, name_lower), role = coalesce($3, role), pin_hash = coalesce($4, pin_hash),
                              proof_key = coalesce($8, proof_key),
                              active = coalesce($5, active),
                              failed_pins = CASE WHEN $4::text IS NULL THEN failed_pins ELSE 0 END,
                              locked_until = CASE WHEN $4::text IS NULL THEN locked_until END,
                              updated_at = $6
             WHERE id = $1 RETURNING {COLUMNS}"
        );
        let row = tx
            .query_one(
                &tx.prepare_cached(&sql).await.map_err(pg)?,
                &[
                    &id.get(),
                    &change.name.as_ref().map(|n| n.as_str()),
                    &change.role.map(Role::as_str),
                    &change.pin.as_ref().map(|pin| pin.hash.as_str()),
                    &change.active,
                    &Timestamp::now().to_string(),
                    &change.name.as_ref().map(staff_name_key),
                    &change.pin.as_ref().map(|pin| &pin.proof_key[..]),
                ],
            )
            .await
            .map_err(|e| match &change.name {
                Some(name) if violates(&e, &SqlState::UNIQUE_VIOLATION, "staff_name_lower_key") => {
                    duplicate_staff_name(name)
                }
                _ => pg(e),
            })?;
        let after = member(&row)?;
        activity::record(&tx, &log::staff_updated(&before, &after, change.pin.is_some(), by)).await?;
        commit(tx).await?;
        Ok(after)
    }

    async fn pin_record(&self, id: StaffId) -> Result<PinRecord> {
        get(&*self.client().await?, id, "").await
    }

    async fn pin_refused(&self, id: StaffId, now: Timestamp, by: &Actor) -> Result<PinRecord> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg)?;
        // Counted by the UPDATE itself: two wrong PINs at once are two, whichever replica.
        let sql = "UPDATE staff SET failed_pins = failed_pins + 1 WHERE id = $1 RETURNING failed_pins";
        let row = tx.query_opt(&tx.prepare_cached(sql).await.map_err(pg)?, &[&id.get()]).await.map_err(pg)?;
        let failures = u32::try_from(col::<i32>(&row.ok_or_else(|| no_such_member(id))?, 0)?)
            .map_err(Error::internal)?;
        let until = lock_after(failures)
            .map(|lock| chrono::Duration::from_std(lock).map_err(Error::internal))
            .transpose()?
            .map(|lock| Timestamp::from(now.as_datetime() + lock));
        if let Some(until) = until {
            let sql = "UPDATE staff SET locked_until = $2 WHERE id = $1";
            tx.execute(&tx.prepare_cached(sql).await.map_err(pg)?, &[&id.get(), &until.to_string()])
                .await
                .map_err(pg)?;
        }
        let record = get(&tx, id, "").await?;
        for entry in log::pin_refused(id, failures, until, by) {
            activity::record(&tx, &entry).await?;
        }
        commit(tx).await?;
        Ok(record)
    }

    async fn sign_in(&self, session: NewSession, by: &Actor) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg)?;
        let now = Timestamp::now().to_string();
        let sql = "DELETE FROM staff_sessions WHERE expires_at <= $1";
        tx.execute(&tx.prepare_cached(sql).await.map_err(pg)?, &[&now]).await.map_err(pg)?;
        // A right PIN ends the row of wrong ones.
        let sql = "UPDATE staff SET failed_pins = 0, locked_until = NULL WHERE id = $1";
        if tx
            .execute(&tx.prepare_cached(sql).await.map_err(pg)?, &[&session.staff.get()])
            .await
            .map_err(pg)?
            == 0
        {
            return Err(no_such_member(session.staff));
        }
        let purpose = purpose_name(session.purpose);
        let sql = "INSERT INTO staff_sessions (token_hash, staff_id, purpose, expires_at, created_at)
                   VALUES ($1, $2, $3, $4, $5)";
        tx.execute(
            &tx.prepare_cached(sql).await.map_err(pg)?,
            &[
                &&session.token_hash[..],
                &session.staff.get(),
                &purpose,
                &session.expires_at.to_string(),
                &now,
            ],
        )
        .await
        .map_err(pg)?;
        activity::record(&tx, &log::signed_in(session.staff, purpose, by)).await?;
        commit(tx).await
    }

    /// One statement: an approval is deleted as it is found, so of two requests carrying it
    /// at once the second waits on the row and then finds it gone; a shift is only read.
    async fn find_session(&self, token_hash: [u8; 32], now: Timestamp) -> Result<Option<StaffRef>> {
        let conn = self.client().await?;
        let sql = "WITH used AS (
                       DELETE FROM staff_sessions WHERE token_hash = $1 AND purpose = 'approval'
                       RETURNING staff_id, expires_at),
                   found AS (
                       SELECT staff_id, expires_at FROM used
                       UNION ALL
                       SELECT staff_id, expires_at FROM staff_sessions WHERE token_hash = $1 AND purpose = 'shift')
                   SELECT m.id, m.name, m.role FROM found f JOIN staff m ON m.id = f.staff_id
                   WHERE f.expires_at > $2 AND m.active";
        // Not marked as a write begun (`crate::admission`): the edge resolves the headers
        // before the request's write, and an approval a timed-out request used up is only
        // asked for again.
        let row = conn
            .query_opt(&conn.prepare_cached(sql).await.map_err(pg)?, &[&&token_hash[..], &now.to_string()])
            .await
            .map_err(pg)?;
        row.map(|r| Ok(StaffRef { id: col(&r, 0)?, name: col(&r, 1)?, role: col(&r, 2)? })).transpose()
    }

    async fn end_session(&self, token_hash: [u8; 32]) -> Result<()> {
        let conn = self.client().await?;
        let sql = "DELETE FROM staff_sessions WHERE token_hash = $1";
        WriteAdmission::begin_current()?;
        conn.execute(&conn.prepare_cached(sql).await.map_err(pg)?, &[&&token_hash[..]]).await.map_err(pg)?;
        Ok(())
    }

    async fn list_activity(&self, filter: ActivityFilter, page: Page) -> Result<Paged<ActivityEntry>> {
        activity::list(&*self.client().await?, &filter, page).await
    }

    async fn keep_proof_key(&self, id: StaffId, pin_hash: String, proof_key: [u8; 32]) -> Result<()> {
        let conn = self.client().await?;
        let sql = "UPDATE staff SET proof_key = $3 WHERE id = $1 AND pin_hash = $2";
        WriteAdmission::begin_current()?;
        conn.execute(&conn.prepare_cached(sql).await.map_err(pg)?, &[&id.get(), &pin_hash, &&proof_key[..]])
            .await
            .map_err(pg)?;
        Ok(())
    }

    async fn staff_credentials(&self) -> Result<Vec<StaffCredential>> {
        let conn = self.client().await?;
        let sql = format!("SELECT {COLUMNS} FROM staff ORDER BY id");
        let rows = conn.query(&conn.prepare_cached(&sql).await.map_err(pg)?, &[]).await.map_err(pg)?;
        rows.iter().map(|r| Ok(StaffCredential { member: member(r)?, pin_hash: col(r, 8)? })).collect()
    }
}
