//! Realistic demo data (`crate::demo`'s) loaded into SQLite. Bulk inserts run in large transactions on one prepared statement, which is what makes
//! a million pets take seconds rather than hours.

use rusqlite::{Connection, params};

use crate::demo::{self, CATEGORIES, PROGRESS_EVERY};
use crate::domain::{Name, Timestamp};
pub use crate::engine::SeedReport;
use crate::error::Result;

/// From this many pets on, the pet indexes are rebuilt after the load instead of updated
/// row by row.
const REBUILD_INDEXES_FROM: u64 = 100_000;

/// Adds `pets` demo pets (and the demo categories, if missing) to the database, calling
/// `progress` with the number of pets inserted so far.
pub fn seed(conn: &mut Connection, pets: u64, mut progress: impl FnMut(u64)) -> Result<SeedReport> {
    let now = Timestamp::now();
    let category_ids = ensure_categories(conn, now)?;

    // Bulk loading only: a large page cache keeps the B-trees being built in memory
    // instead of spilling and re-reading them. Restored afterwards.
    conn.pragma_update(None, "cache_size", -256 * 1024)?;
    let inserted = insert_pets(conn, pets, &category_ids, now, &mut progress);
    conn.pragma_update(None, "cache_size", -2000)?;
    inserted?;
    Ok(SeedReport { categories: category_ids.len() as u64, pets })
}

fn insert_pets(
    conn: &mut Connection,
    pets: u64,
    category_ids: &[i64],
    now: Timestamp,
    progress: &mut impl FnMut(u64),
) -> Result<()> {
    // One transaction: a crash leaves the database as it was, never half-seeded and never
    // without its indexes.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // A large load builds the pet indexes once, sorted, after the rows are in: several
    // times faster than updating six B-trees on random keys row by row. The count
    // triggers go too, and the counts are taken once at the end (they doubled the load).
    let rebuilt = if pets >= REBUILD_INDEXES_FROM { drop_pet_indexes_and_triggers(&tx)? } else { Vec::new() };
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO pets (name, name_folded, category_id, status, description, stock,
                               stock_updated_at, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6, ?6, ?6)",
        )?;
        for (done, pet) in (1..=pets).zip(demo::pets()) {
            let name = &pet.name;
            let category = category_ids[pet.category];
            insert.execute(params![name.as_str(), name.folded(), category, pet.status, pet.stock, now])?;
            if done % PROGRESS_EVERY == 0 || done == pets {
                progress(done);
            }
        }
    }
    if !rebuilt.is_empty() {
        tx.execute_batch(
            // Every count is taken anew, and every version moves on (never back: see
            // migration 0007), as the triggers would have done row by row.
            "UPDATE pet_counts SET pets = 0, version = version + 1;
             INSERT INTO pet_counts (category_id, status, pets)
             SELECT coalesce(category_id, 0), status, count(*) FROM pets WHERE true GROUP BY 1, 2
                 ON CONFLICT (category_id, status) DO UPDATE SET pets = excluded.pets;",
        )?;
    }
    for sql in rebuilt {
        tx.execute_batch(&sql)?;
    }
    // One change for the whole load, whether or not the triggers wrote one per pet: a
    // client following the feed reads the shop again (see migration 0008).
    tx.execute(
        "INSERT INTO changes (entity, entity_id, action, at) VALUES ('shop', NULL, 'reset', ?1)",
        [now],
    )?;
    tx.commit()?;
    Ok(())
}

/// Drops the secondary indexes and the triggers of `pets` and returns the SQL that
/// recreates them.
fn drop_pet_indexes_and_triggers(conn: &Connection) -> Result<Vec<String>> {
    let objects: Vec<(String, String, String)> = conn
        .prepare(
            "SELECT type, name, sql FROM sqlite_schema
             WHERE type IN ('index', 'trigger') AND tbl_name = 'pets' AND sql IS NOT NULL",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (kind, name, _) in &objects {
        conn.execute_batch(&format!("DROP {} \"{name}\"", kind.to_uppercase()))?;
    }
    Ok(objects.into_iter().map(|(_, _, sql)| sql).collect())
}

fn ensure_categories(conn: &Connection, now: Timestamp) -> Result<Vec<i64>> {
    CATEGORIES
        .iter()
        .map(|(name, description, _)| {
            let name = Name::parse(name).expect("demo names are valid");
            conn.execute(
                "INSERT INTO categories (name, name_folded, description, created_at)
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name_folded) DO NOTHING",
                params![name.as_str(), name.folded(), description, now],
            )?;
            Ok(conn.query_row("SELECT id FROM categories WHERE name_folded = ?1", [name.folded()], |r| {
                r.get(0)
            })?)
        })
        .collect()
}
