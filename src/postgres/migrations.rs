//! The schema: numbered SQL files under `migrations/postgres/`, embedded, applied at start
//! in one transaction. The transaction first takes a transaction-scoped advisory lock, so
//! of ten replicas starting at once one migrates and the others, waiting on the lock, then
//! find the work done. A schema newer than this Petstore knows is refused before anything
//! is written: the transaction that found it is rolled back.

use deadpool_postgres::Object;

use super::{PgOpenError, PgTarget};

/// The migrations, in order: the version of each is its place in this list, counted from 1.
const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/postgres/0001_initial.sql"),
    include_str!("../../migrations/postgres/0002_change_feed.sql"),
    include_str!("../../migrations/postgres/0003_the_counter.sql"),
    include_str!("../../migrations/postgres/0004_pet_counts_per_statement.sql"),
    include_str!("../../migrations/postgres/0005_lighter_orders.sql"),
    include_str!("../../migrations/postgres/0006_orders_kept.sql"),
    include_str!("../../migrations/postgres/0007_stock_order.sql"),
    include_str!("../../migrations/postgres/0008_orders_deleted.sql"),
    include_str!("../../migrations/postgres/0009_orders_placed_at.sql"),
    include_str!("../../migrations/postgres/0010_reports_scope.sql"),
    include_str!("../../migrations/postgres/0011_idempotency_scoped_by_identity.sql"),
    include_str!("../../migrations/postgres/0012_staff.sql"),
    include_str!("../../migrations/postgres/0013_till_scope.sql"),
    include_str!("../../migrations/postgres/0014_staff_proof_keys.sql"),
    include_str!("../../migrations/postgres/0015_activity_by_kind_without_orders.sql"),
    include_str!("../../migrations/postgres/0016_activity_in_the_feed.sql"),
];

/// The schema version this Petstore makes and understands.
pub const PG_SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The first `version` migrations, for a test that makes a database of an earlier schema.
#[cfg(test)]
pub(super) fn up_to(version: usize) -> &'static [&'static str] {
    &MIGRATIONS[..version]
}

/// The advisory lock that migrations hold: any fixed number, the same in every Petstore
/// ("petstore" in ASCII, as hex).
const MIGRATION_LOCK: i64 = 0x7065_7473_746f_7265;

/// Lifts the session limits for the rest of the transaction.
pub(super) const UNLIMITED: &str = "SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0";

pub(super) async fn run(client: &mut Object, target: &PgTarget) -> Result<(), PgOpenError> {
    let database = || target.database().to_owned();
    let failed = |e: tokio_postgres::Error| PgOpenError::Migrate {
        database: database(),
        detail: e.as_db_error().map(|db| db.message().to_owned()).unwrap_or_else(|| e.to_string()),
    };
    let tx = client.transaction().await.map_err(failed)?;
    // The session limits bound requests (see `SessionLimits`); a migration is no request:
    // it may rebuild a large table, and waits for another replica's migration to end.
    tx.batch_execute(UNLIMITED).await.map_err(failed)?;
    tx.execute("SELECT pg_advisory_xact_lock($1::bigint)", &[&MIGRATION_LOCK]).await.map_err(failed)?;
    let found: i64 = if tx
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
        .await
        .map_err(failed)?
        .get(0)
    {
        tx.query_one("SELECT coalesce(max(version), 0) FROM schema_migrations", &[])
            .await
            .map_err(failed)?
            .get(0)
    } else {
        0
    };
    if found > PG_SCHEMA_VERSION {
        // Dropping the transaction rolls it back: nothing was written anyway.
        return Err(PgOpenError::Newer { database: database(), found, known: PG_SCHEMA_VERSION });
    }
    if found == PG_SCHEMA_VERSION {
        return tx.commit().await.map_err(failed);
    }
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version    bigint PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now()
         )",
    )
    .await
    .map_err(failed)?;
    for (version, sql) in (1_i64..).zip(MIGRATIONS).skip(found as usize) {
        tx.batch_execute(sql).await.map_err(failed)?;
        tx.execute("INSERT INTO schema_migrations (version) VALUES ($1)", &[&version])
            .await
            .map_err(failed)?;
        tracing::info!(version, database = target.database(), "applied PostgreSQL migration");
    }
    tx.commit().await.map_err(failed)
}
