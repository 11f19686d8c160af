//! Reading a Petstore database file directly, for the tests that check what is on disk
//! (backups, restores, upgraded fixtures) rather than what the API answers; and
//! [`assert_pet_counts_kept_in`], the same check on a database of either engine.

use rusqlite::Connection;

use super::engine::TestDb;

/// The single value `sql` selects.
pub fn one<T: rusqlite::types::FromSql>(conn: &Connection, sql: &str) -> T {
    conn.query_row(sql, [], |r| r.get(0)).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Per pet, stock plus the quantities of its orders (open and completed; a cancelled one
/// gave its units back). Orders only move
/// units between the two, so only stock counts and adjustments change it (nothing is ever
/// oversold): it must equal what was stocked.
pub fn stocked(conn: &Connection) -> Vec<(i64, i64)> {
    conn.prepare(
        "SELECT p.id, p.stock + coalesce(sum(o.quantity), 0) FROM pets p
         LEFT JOIN orders o ON o.pet_id = p.id AND o.cancelled_at IS NULL GROUP BY p.id ORDER BY p.id",
    )
    .unwrap()
    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

/// The kept pet counts (migration 0004) against a real count of the pets, per category
/// (0 for none) and status; rows the triggers left at zero do not count.
pub fn assert_pet_counts_kept(conn: &Connection) {
    let rows = |sql: &str| -> Vec<(i64, String, i64)> {
        conn.prepare(sql)
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    let kept = rows("SELECT category_id, status, pets FROM pet_counts WHERE pets > 0 ORDER BY 1, 2");
    let real =
        rows("SELECT coalesce(category_id, 0), status, count(*) FROM pets GROUP BY 1, 2 ORDER BY 1, 2");
    assert_eq!(kept, real, "pet_counts disagrees with the pets");
}

/// [`assert_pet_counts_kept`] on a database of either engine (both keep `pet_counts`).
pub fn assert_pet_counts_kept_in(db: &TestDb) {
    let kept = db.query("SELECT category_id, status, pets FROM pet_counts WHERE pets > 0 ORDER BY 1, 2");
    let real =
        db.query("SELECT coalesce(category_id, 0), status, count(*) FROM pets GROUP BY 1, 2 ORDER BY 1, 2");
    assert_eq!(kept, real, "pet_counts disagrees with the pets");
}
