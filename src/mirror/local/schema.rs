//! The mirror's own tables, made and upgraded by numbered migrations of their own
//! (`migrations/mirror/`), with a version of their own in `mirror_schema`: the file's
//! `user_version` is the shop schema's (the store's migrations), which a mirror file has
//! like any other.

use rusqlite::Connection;

use crate::error::{Error, ErrorCode, Result};

const MIGRATIONS: &[&str] = &[
    include_str!("../../../migrations/mirror/0001_mirror_tables.sql"),
    include_str!("../../../migrations/mirror/0002_outbox_proofs.sql"),
];

/// The mirror schema version this binary writes.
pub(crate) const MIRROR_SCHEMA_VERSION: usize = MIGRATIONS.len();

/// Brings the mirror's tables to [`MIRROR_SCHEMA_VERSION`], in the caller's transaction:
/// a failed step leaves the file as it was. A file from a newer Petstore is refused
/// untouched, as the store refuses a newer shop schema.
pub(super) fn migrate(conn: &Connection) -> Result<()> {
    let found = version(conn)?;
    if found > MIRROR_SCHEMA_VERSION {
        return Err(Error::new(
            ErrorCode::Internal,
            format!(
                "{} has mirror schema version {found}, newer than this Petstore understands \
                 ({MIRROR_SCHEMA_VERSION}); upgrade Petstore. The file was left untouched.",
                conn.path().unwrap_or("the mirror")
            ),
        ));
    }
    for (done, sql) in MIGRATIONS.iter().enumerate().skip(found) {
        conn.execute_batch(sql)?;
        conn.execute(
            "INSERT INTO mirror_schema (id, version) VALUES (1, ?1)
             ON CONFLICT (id) DO UPDATE SET version = excluded.version",
            [done as i64 + 1],
        )?;
    }
    Ok(())
}

/// The mirror schema version of the file: 0 before its first migration, whether it is new
/// or a mirror made before the mirror had migrations (its tables, but no version).
pub(super) fn version(conn: &Connection) -> Result<usize> {
    let versioned: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table' AND name = 'mirror_schema'",
        [],
        |r| r.get(0),
    )?;
    if !versioned {
        return Ok(0);
    }
    let version: i64 = conn.query_row("SELECT version FROM mirror_schema WHERE id = 1", [], |r| r.get(0))?;
    usize::try_from(version).map_err(Error::internal)
}
