//! Backup and restore of the database file.
//!
//! A backup is `VACUUM INTO` a private (0600) file beside the destination, synced and then
//! renamed into place: an interrupted backup leaves at most an empty file (which restore
//! refuses) under the name the operator asked for, never a half-written one. A restore
//! checks the backup completely before it touches the live database, then swaps the file
//! in with one rename.

use std::fs::File;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, ErrorCode as SqliteCode, OpenFlags};

use super::engine::{self, SCHEMA_VERSION, with_suffix};
use crate::domain::Timestamp;
use crate::error::{Error, Result};
use crate::private;

/// The tables every Petstore schema since version 1 has.
const PETSTORE_TABLES: [&str; 4] = ["categories", "pets", "orders", "inventory_adjustments"];

/// Writes a consistent copy of the database `conn` reads to `to`, which must not exist.
pub(super) fn write(conn: &Connection, to: &Path) -> Result<()> {
    let cannot = |e: &dyn std::fmt::Display| {
        Error::validation(format!("cannot write the backup to {}: {e}", to.display()))
    };
    // Claiming the name first makes "never overwrite" atomic, whoever else writes there.
    private::create_file(to).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => {
            Error::validation(format!("{} already exists; not overwriting it", to.display()))
        }
        _ => cannot(&e),
    })?;
    let partial = sibling(to, "partial");
    let written = (|| -> std::io::Result<()> {
        // SQLite fills an existing empty file and keeps its mode, so the copy is private
        // from its first byte.
        private::create_file(&partial)?;
        conn.execute("VACUUM INTO ?1", [partial.to_string_lossy()]).map_err(std::io::Error::other)?;
        // VACUUM INTO does not sync its output; a backup must survive a power cut.
        File::open(&partial)?.sync_all()?;
        std::fs::rename(&partial, to)?;
        sync_dir(to)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        let _ = std::fs::remove_file(to);
        return Err(cannot(&e));
    }
    Ok(())
}

/// What [`restore`] did, for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The backup's schema version; the restored database is migrated to the latest.
    pub from_version: usize,
    pub pets: i64,
    pub orders: i64,
    /// Where the database that was replaced is kept, if there was one.
    pub kept: Option<PathBuf>,
}

/// Why a restore was refused; each a one-line message. In every case the database was
/// left as it was.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("the backup {0} does not exist or is not a file; nothing was restored")]
    Missing(PathBuf),
    #[error("{0} is the database itself, not a backup of it; nothing was restored")]
    SameFile(PathBuf),
    #[error("{path} is not a Petstore backup ({reason}); nothing was restored")]
    NotPetstore { path: PathBuf, reason: String },
    #[error("the backup {path} is damaged ({problem}); nothing was restored")]
    Damaged { path: PathBuf, problem: String },
    #[error(
        "the backup {path} has schema version {found}, newer than this Petstore understands \
         ({supported}); upgrade Petstore first; nothing was restored"
    )]
    NewerSchema { path: PathBuf, found: usize, supported: usize },
    #[error(
        "the database {0} is in use: stop the Petstore server and close the Petstore app, then \
         restore again; nothing was restored"
    )]
    InUse(PathBuf),
    #[error("cannot restore to {path}: {reason}; the database was left as it was")]
    Io { path: PathBuf, reason: String },
}

/// Replaces the database at `target` with the backup `from`, after checking the backup is
/// a sound Petstore database this version can open, and that nothing has `target` open.
/// The replaced database is kept beside it as `<name>.before-restore-<time>`.
///
/// Why a file swap rather than SQLite's backup API into the target: a restore is most
/// needed when the target is damaged, and the backup API writes through the target's own
/// pager, which a damaged header or page stops. A rename is atomic: after a crash the
/// target is wholly the old or wholly the new file. What the rename does not replace are
/// the target's `-wal` and `-shm`; SQLite would replay an old WAL onto the restored file
/// and silently undo the restore, so the live database's WAL is first folded into it
/// (checkpoint, journal mode DELETE, which also proves no one has it open) and any file
/// beside it that SQLite would pick up is removed before the rename.
pub fn restore(from: &Path, target: &Path) -> Result<Restored, RestoreError> {
    if !from.is_file() {
        return Err(RestoreError::Missing(from.to_path_buf()));
    }
    if let (Ok(a), Ok(b)) = (from.canonicalize(), target.canonicalize())
        && a == b
    {
        return Err(RestoreError::SameFile(target.to_path_buf()));
    }
    let io =
        |e: &dyn std::fmt::Display| RestoreError::Io { path: target.to_path_buf(), reason: e.to_string() };
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
        return Err(io(&format!("the folder {} does not exist", dir.display())));
    }

    // Reading a WAL-mode backup (a copied petstore.db) makes SQLite create its -wal and
    // -shm, which a read-only connection cannot remove again; tidy up those it made.
    let made_beside: Vec<PathBuf> =
        ["-wal", "-shm"].iter().map(|s| with_suffix(from, s)).filter(|p| !p.exists()).collect();

    // The new file, checked and migrated beside the target, before anything is replaced.
    let staged = sibling(target, "restoring");
    let checked = check_backup(from).and_then(|counts| stage(from, &staged, target).map(|()| counts));
    let wal = with_suffix(from, "-wal");
    if std::fs::metadata(&wal).map_or(true, |m| m.len() == 0 || !made_beside.contains(&wal)) {
        for made in &made_beside {
            let _ = std::fs::remove_file(made);
        }
    }
    let restored = checked.and_then(|(from_version, pets, orders)| {
        let kept = swap_in(&staged, target)?;
        Ok(Restored { from_version, pets, orders, kept })
    });
    if restored.is_err() {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(with_suffix(&staged, suffix));
        }
    }
    restored
}

/// Opens the backup read-only and checks it is whole and a Petstore database this version
/// can open; answers its schema version and how many pets and orders it holds.
fn check_backup(from: &Path) -> Result<(usize, i64, i64), RestoreError> {
    let not_petstore =
        |reason: &str| RestoreError::NotPetstore { path: from.to_path_buf(), reason: reason.to_owned() };
    let damaged = |problem: String| RestoreError::Damaged { path: from.to_path_buf(), problem };
    let sqlite_error = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(SqliteCode::NotADatabase) => not_petstore("it is not an SQLite database"),
        _ => damaged(e.to_string()),
    };
    if std::fs::metadata(from).map(|m| m.len()).unwrap_or(0) == 0 {
        return Err(not_petstore("the file is empty"));
    }
    let conn =
        Connection::open_with_flags(from, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .map_err(sqlite_error)?;
    let version =
        conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0)).map_err(sqlite_error)?;
    let version = usize::try_from(version).unwrap_or(0);

    let problems: Vec<String> = conn
        .prepare("PRAGMA integrity_check(5)")
        .and_then(|mut s| s.query_map([], |r| r.get::<_, String>(0))?.collect())
        .map_err(sqlite_error)?;
    if problems != ["ok"] {
        // One line for the operator: SQLite's report spans several, headed by a banner.
        let lines: Vec<&str> =
            problems.iter().flat_map(|p| p.lines()).filter(|l| !l.starts_with("***")).take(3).collect();
        return Err(damaged(format!("integrity check: {}", lines.join("; "))));
    }
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table'")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(sqlite_error)?;
    let missing: Vec<&str> = PETSTORE_TABLES.into_iter().filter(|t| !tables.iter().any(|n| n == t)).collect();
    if !missing.is_empty() {
        return Err(not_petstore(&format!("it has no {} table", missing.join(", "))));
    }
    if version == 0 {
        return Err(not_petstore("it has no schema version"));
    }
    if version > SCHEMA_VERSION {
        return Err(RestoreError::NewerSchema {
            path: from.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    let broken = conn
        .prepare("PRAGMA foreign_key_check")
        .and_then(|mut s| Ok(s.query_map([], |_| Ok(()))?.count()))
        .map_err(sqlite_error)?;
    if broken > 0 {
        return Err(damaged(format!("{broken} rows refer to rows that do not exist")));
    }
    let count = |table: &str| conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0));
    Ok((version, count("pets").map_err(sqlite_error)?, count("orders").map_err(sqlite_error)?))
}

/// Writes the backup's data to `staged` (a fresh, compact file that also holds anything in
/// the backup's own WAL), migrates it to this version's schema, checks it again and
/// syncs it.
fn stage(from: &Path, staged: &Path, target: &Path) -> Result<(), RestoreError> {
    let io =
        |e: &dyn std::fmt::Display| RestoreError::Io { path: target.to_path_buf(), reason: e.to_string() };
    let damaged = |problem: String| RestoreError::Damaged { path: from.to_path_buf(), problem };
    private::create_file(staged).map_err(|e| io(&e))?;
    let source = Connection::open_with_flags(from, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(|e| io(&e))?;
    source.execute("VACUUM INTO ?1", [staged.to_string_lossy()]).map_err(|e| damaged(e.to_string()))?;
    drop(source);
    {
        // The same opening the store does: a backup the migrations cannot bring up to
        // date is refused here, not on the next start of the shop.
        let conn = engine::open_writer(staged).map_err(|e| damaged(e.to_string()))?;
        let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(|e| io(&e))?;
        if check != "ok" {
            return Err(damaged(format!("the restored copy fails its check: {check}")));
        }
        // Leave it as one self-contained file.
        conn.pragma_update(None, "journal_mode", "DELETE").map_err(|e| io(&e))?;
    }
    File::open(staged).and_then(|f| f.sync_all()).map_err(|e| io(&e))
}

/// Puts `staged` in place of `target`; answers where the replaced database is kept.
fn swap_in(staged: &Path, target: &Path) -> Result<Option<PathBuf>, RestoreError> {
    let io =
        |e: &dyn std::fmt::Display| RestoreError::Io { path: target.to_path_buf(), reason: e.to_string() };
    let kept = if target.exists() {
        quiesce(target)?;
        let kept = with_suffix(target, &format!(".before-restore-{}", stamp()));
        copy_private(target, &kept).map_err(|e| io(&e))?;
        // A damaged target could not fold its WAL in; keep that with it, unread.
        let wal = with_suffix(target, "-wal");
        if wal.exists() {
            copy_private(&wal, &with_suffix(&kept, "-wal")).map_err(|e| io(&e))?;
        }
        Some(kept)
    } else {
        None
    };
    for suffix in ["-wal", "-shm", "-journal"] {
        match std::fs::remove_file(with_suffix(target, suffix)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&e)),
            _ => {}
        }
    }
    std::fs::rename(staged, target).map_err(|e| io(&e))?;
    sync_dir(target).map_err(|e| io(&e))?;
    Ok(kept)
}

/// Folds the live database's WAL into its file and leaves WAL mode. Leaving WAL mode needs
/// every other connection closed, so a server or app that has the database open (even
/// idle) makes this fail at once: the cheap, cross-process "in use" check. A target that
/// is not a readable database is left for the swap to replace.
fn quiesce(target: &Path) -> Result<(), RestoreError> {
    let Ok(conn) = Connection::open_with_flags(target, OpenFlags::SQLITE_OPEN_READ_WRITE) else {
        return Ok(());
    };
    let busy = |e: &rusqlite::Error| {
        matches!(e.sqlite_error_code(), Some(SqliteCode::DatabaseBusy | SqliteCode::DatabaseLocked))
    };
    let _ = conn.busy_timeout(std::time::Duration::ZERO);
    let folded =
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get::<_, i64>(0)).and_then(|_| {
            conn.pragma_update_and_check(None, "journal_mode", "DELETE", |r| r.get::<_, String>(0))
        });
    match folded {
        Ok(mode) if mode.eq_ignore_ascii_case("delete") => Ok(()),
        Ok(_) => Err(RestoreError::InUse(target.to_path_buf())),
        Err(e) if busy(&e) => Err(RestoreError::InUse(target.to_path_buf())),
        // Damaged or not a database: nothing to fold in; the swap replaces it.
        Err(_) => Ok(()),
    }
}

fn copy_private(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut out = private::create_file(to)?;
    std::io::copy(&mut File::open(from)?, &mut out)?;
    out.sync_all()
}

/// A temporary name beside `path`, so the final rename stays on one file system.
fn sibling(path: &Path, what: &str) -> PathBuf {
    with_suffix(path, &format!(".{what}-{:08x}", fastrand::u32(..)))
}

fn stamp() -> String {
    Timestamp::now().as_datetime().format("%Y%m%dT%H%M%SZ").to_string()
}

/// Makes a rename in `path`'s folder durable.
fn sync_dir(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}
