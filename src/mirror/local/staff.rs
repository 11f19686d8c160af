//! The server's staff in the mirror, with their PIN hashes: what the till signs its staff
//! in against while it cannot reach the server (`crate::staff::sign_in` over the mirror's
//! rows, as over a shop's). The wrong PINs typed at this till and the lockout they earned
//! are the till's own and stay; a new PIN from the server ends them, as it does there.

use rusqlite::params;

use super::Local;
use crate::domain::{StaffCredential, Timestamp, staff_name_key};
use crate::error::Result;

impl Local {
    /// Puts the server's staff in, as the server has them now. Members are never deleted
    /// on the server, so none is here either.
    pub(in crate::mirror) async fn put_staff(&self, staff: Vec<StaffCredential>) -> Result<()> {
        self.store
            .transact(None, move |tx| {
                let tx = tx.sql();
                // Names are unique (folded): two members who swapped names would collide
                // row by row, so every name the list brings is made unique first.
                let mut free = tx.prepare_cached("UPDATE staff SET name_lower = '#' || id WHERE id = ?1")?;
                for credential in &staff {
                    free.execute([credential.member.id])?;
                }
                let mut upsert = tx.prepare_cached(
                    "INSERT INTO staff (id, name, name_lower, role, pin_hash, active, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                     ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_lower = excluded.name_lower,
                        role = excluded.role, active = excluded.active, created_at = excluded.created_at,
                        updated_at = excluded.updated_at,
                        failed_pins = CASE WHEN pin_hash IS excluded.pin_hash THEN failed_pins ELSE 0 END,
                        locked_until = CASE WHEN pin_hash IS excluded.pin_hash THEN locked_until END,
                        pin_hash = excluded.pin_hash",
                )?;
                tx.execute("UPDATE mirror_state SET staff_read_at = ?1", [Timestamp::now()])?;
                for StaffCredential { member, pin_hash } in &staff {
                    upsert.execute(params![
                        member.id,
                        member.name.as_str(),
                        staff_name_key(&member.name),
                        member.role.as_str(),
                        pin_hash,
                        member.active,
                        member.created_at,
                        member.updated_at,
                    ])?;
                }
                Ok(())
            })
            .await
    }

    /// Whether the server's staff were ever read here: until then (and for a key that may
    /// not read them) the till writes as its key, with no one signed in.
    pub(in crate::mirror) async fn staff_known(&self) -> Result<bool> {
        self.store
            .read(|c| {
                // Asked before the sync task has opened the mirror (made or upgraded its
                // tables), the answer is no.
                let upgraded =
                    "SELECT count(*) > 0 FROM pragma_table_info('mirror_state') WHERE name = 'staff_read_at'";
                if !c.query_row(upgraded, [], |r| r.get::<_, bool>(0))? {
                    return Ok(false);
                }
                let sql = "SELECT count(*) > 0 FROM mirror_state WHERE staff_read_at IS NOT NULL";
                Ok(c.query_row(sql, [], |r| r.get(0))?)
            })
            .await
    }
}
