//! Opening connections: pragmas, migrations and the newer-schema refusal.

use std::ffi::c_int;
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use rusqlite_migration::{M, Migrations};

use super::files;
use crate::error::{Error, Result};

const MIGRATIONS: &[M<'static>] = &[
    M::up(include_str!("../../../migrations/sqlite/0001_initial.sql")),
    M::up(include_str!("../../../migrations/sqlite/0002_api_keys.sql")),
    M::up(include_str!("../../../migrations/sqlite/0003_idempotency_keys.sql")),
    M::up(include_str!("../../../migrations/sqlite/0004_pet_counts.sql")),
    M::up(include_str!("../../../migrations/sqlite/0005_one_stock_index.sql")),
    M::up(include_str!("../../../migrations/sqlite/0006_pets_list_covering_index.sql")),
    M::up(include_str!("../../../migrations/sqlite/0007_pet_counts_version.sql")),
    M::up(include_str!("../../../migrations/sqlite/0008_change_feed.sql")),
    M::up(include_str!("../../../migrations/sqlite/0009_the_counter.sql")),
    M::up(include_str!("../../../migrations/sqlite/0010_orders_kept.sql")),
    M::up(include_str!("../../../migrations/sqlite/0011_change_checks_without_lists.sql")),
    M::up(include_str!("../../../migrations/sqlite/0012_orders_deleted.sql")),
    M::up(include_str!("../../../migrations/sqlite/0013_orders_placed_at.sql")),
    M::up(include_str!("../../../migrations/sqlite/0014_reports_scope.sql")),
    M::up(include_str!("../../../migrations/sqlite/0015_idempotency_scoped_by_identity.sql")),
    M::up(include_str!("../../../migrations/sqlite/0016_staff.sql")),
    M::up(include_str!("../../../migrations/sqlite/0017_till_scope.sql")),
    M::up(include_str!("../../../migrations/sqlite/0018_staff_proof_keys.sql")),
    M::up(include_str!("../../../migrations/sqlite/0019_activity_by_kind_without_orders.sql")),
    M::up(include_str!("../../../migrations/sqlite/0020_activity_in_the_feed.sql")),
];

/// The schema version this binary writes (SQLite `user_version`).
pub const SCHEMA_VERSION: usize = MIGRATIONS.len();

pub fn migrations() -> Migrations<'static> {
    Migrations::from_slice(MIGRATIONS)
}

/// Why a database could not be opened, each a one-line message an operator can act on.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cannot open the database {path}: {reason}")]
    Unusable { path: PathBuf, reason: String },
    #[error("{path} is not a Petstore database (it is not SQLite, or is damaged)")]
    NotADatabase { path: PathBuf },
    #[error(
        "the database {path} has schema version {found}, newer than this Petstore \
         understands ({supported}); upgrade Petstore. The file was left untouched."
    )]
    NewerSchema { path: PathBuf, found: usize, supported: usize },
    #[error(
        "{path} is an SQLite database of another program (it has no Petstore tables); \
         the file was left untouched"
    )]
    Foreign { path: PathBuf },
    #[error("cannot migrate the database {path}: {reason}")]
    Migration { path: PathBuf, reason: String },
}

pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The page size of a new database, half SQLite's default. An order changes a few small
/// rows on pages far apart (its pet, the pet's entry in the stock index, its entry in
/// `orders_by_pet`), and the WAL holds whole pages, so with 4 KB pages each order wrote
/// 17 KB to the WAL and every group's sync had that much to flush. With 2 KB pages it is
/// 9 KB: at 100,000 pets, orders per second rose by 27-35 % in paired runs, and their p99
/// under the disk's stalls fell from 80-950 ms to 30-150 ms. Reads by key and the pages at
/// 1,000,000 pets were unchanged. 1 KB pages gained orders little more and looked slower
/// for reads by key.
const PAGE_SIZE: i64 = 2048;

/// Cached statements per connection (a few KB each).
const STATEMENT_CACHE: usize = 128;

/// How much of the database file a read connection reads through a memory map rather than
/// `pread` into its own page cache. Each reader's cache holds 2 MB, a fiftieth of the pets
/// at 100,000 of them, so nearly every read by id copied its leaf page out of the kernel's
/// cache with a system call (`pread` and SQLite's cache look-ups were a tenth of a busy
/// server's time). Mapped, the page is read where the kernel already holds it, once for
/// every connection. The bound is memory: the pages a process touches through the map count
/// in its resident size (they are the kernel's file cache, shared and reclaimable, but
/// `VmHWM` counts them). At 1,000,000 pets, after the filtered pages of `make bench`, the
/// server's `VmHWM` went from 31 to 41 MB with 256 MB mapped (44 MB with all 350 MB); at
/// 100,000 pets, after reads by id over all of them, from 30 to 51 MB (the anonymous part
/// fell from 17 to 13 MB: the readers' own caches hold less). A workload that reads the
/// whole of a large file shows up to this bound more, all of it file cache the kernel can
/// take back, none of it the process's own. Pages past the bound are read with `pread`.
pub(super) const READ_MAP_BYTES: i64 = 256 * 1024 * 1024;

pub(in crate::store) fn open_writer(path: &Path) -> Result<Connection, OpenError> {
    let unusable =
        |e: &dyn std::fmt::Display| OpenError::Unusable { path: path.to_path_buf(), reason: e.to_string() };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
        return Err(unusable(&format!("the folder {} does not exist", dir.display())));
    }
    files::create_if_new(path).map_err(|e| unusable(&e))?;
    let mut conn = open_file(path, OpenFlags::default()).map_err(|e| unusable(&e))?;

    // Look before writing anything: even `journal_mode = WAL` changes the file.
    let found: usize =
        conn.pragma_query_value(None, "user_version", |row| row.get::<_, i64>(0)).map_err(|e| {
            match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::NotADatabase) => {
                    OpenError::NotADatabase { path: path.to_path_buf() }
                }
                _ => unusable(&e),
            }
        })? as usize;
    if found > SCHEMA_VERSION {
        return Err(OpenError::NewerSchema { path: path.to_path_buf(), found, supported: SCHEMA_VERSION });
    }
    // Every Petstore schema has a `pets` table, and a new file has no tables until the
    // first migration makes them in one transaction. Anything else belongs to another
    // program: migrating it would add our tables to its file, and serving it would answer
    // every request with an internal error.
    let pets = |conn: &Connection| -> rusqlite::Result<(bool, bool)> {
        conn.query_row(
            "SELECT count(*) > 0, count(*) FILTER (WHERE type = 'table' AND name = 'pets') > 0 FROM sqlite_schema",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
    };
    let (has_objects, has_pets) = pets(&conn).map_err(|e| unusable(&e))?;
    if (found == 0 && has_objects) || (found > 0 && !has_pets) {
        return Err(OpenError::Foreign { path: path.to_path_buf() });
    }

    files::tighten(path);

    if found == 0 {
        // Only a new database takes it: the page size is fixed when the file is first
        // written (and in WAL mode for good).
        conn.pragma_update(None, "page_size", PAGE_SIZE).map_err(|e| unusable(&e))?;
    }
    conn.pragma_update(None, "journal_mode", "WAL").map_err(|e| unusable(&e))?;
    apply_pragmas(&conn).map_err(|e| unusable(&e))?;
    migrations()
        .to_latest(&mut conn)
        .map_err(|e| OpenError::Migration { path: path.to_path_buf(), reason: e.to_string() })?;
    Ok(conn)
}

/// A read-only connection that waits up to `busy` for a lock (setting `synchronous`
/// reads the schema, which may find the database locked already).
pub(super) fn open_reader(path: &Path, busy: Duration) -> rusqlite::Result<Connection> {
    let flags =
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    let conn = open_file(path, flags)?;
    conn.busy_timeout(busy)?;
    set_up(&conn)?;
    conn.pragma_update(None, "mmap_size", READ_MAP_BYTES)?;
    Ok(conn)
}

/// The checkpointer's connection (see `writer.rs`): it writes to the database file, but
/// only what the WAL already holds.
pub(super) fn open_checkpointer(path: &Path) -> Result<Connection> {
    let flags =
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    let conn = open_file(path, flags).map_err(Error::internal)?;
    apply_pragmas(&conn)?;
    Ok(conn)
}

fn open_file(path: &Path, flags: OpenFlags) -> rusqlite::Result<Connection> {
    without_memory_statistics();
    Connection::open_with_flags(path, flags)
}

/// Turns SQLite's memory statistics off before its first connection. With them on (its
/// default, and nothing here reads them), every allocation SQLite makes takes one mutex of
/// the whole process, which the readers on both Tokio workers, the writer and the
/// checkpointer all contend for; SQLite's own recommended options turn them off.
fn without_memory_statistics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: SQLITE_CONFIG_MEMSTATUS takes one int. SQLite refuses any configuration
        // (SQLITE_MISUSE) once it is initialized, and is then left as it is: something else
        // in the process opened a connection first.
        unsafe { rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int) };
    });
}

/// Settings every connection needs; `synchronous = FULL` because orders are money and a
/// power cut must not lose an acknowledged one.
fn apply_pragmas(conn: &Connection) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(set_up(conn)?)
}

fn set_up(conn: &Connection) -> rusqlite::Result<()> {
    // Plans must not depend on bound values. Without this SQLite (3.47 on) reads the value
    // bound to `LIMIT ?`/`OFFSET ?` while planning and re-prepares the cached statement
    // whenever it changes: 16 % of a busy server's time went to parsing list queries again
    // for every page. None of our plans gains from the values (no `ANALYZE` statistics, no
    // prefix `LIKE`).
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    // Every list shape (filters, sort, direction, paging plan, number of ids) is its own
    // statement; rusqlite's default of 16 made busy connections parse some of them again.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}
