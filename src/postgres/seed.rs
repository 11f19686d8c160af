//! Demo data (`crate::demo`'s, the same pets as on SQLite) loaded into PostgreSQL.
//!
//! A large load is one transaction: the pets' secondary indexes and the count triggers are
//! dropped, the pets streamed in by binary `COPY`, the counts taken once, and the indexes
//! rebuilt, sorted, from the rows. Other replicas wait for the commit (the dropped indexes
//! lock the table), and a failure leaves the database as it was, never half-seeded and
//! never without its indexes.

use std::pin::pin;

use deadpool_postgres::{GenericClient, Object};
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};

use super::types::col;
use super::{changes, pg};
use crate::demo::{self, CATEGORIES, PROGRESS_EVERY};
use crate::domain::{Name, Timestamp};
use crate::engine::{Change, SeedReport};
use crate::error::Result;

/// From this many pets on, the indexes are rebuilt after the load instead of updated row by
/// row, and the counts and the stock order taken once instead of by triggers.
const REBUILD_INDEXES_FROM: u64 = 100_000;

pub(super) async fn seed(
    client: &mut Object,
    pets: u64,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<SeedReport> {
    let now = Timestamp::now().to_string();
    let tx = client.transaction().await.map_err(pg)?;
    // A seed of millions of pets runs for longer than any request may (`SessionLimits`).
    tx.batch_execute(super::migrations::UNLIMITED).await.map_err(pg)?;
    let category_ids = ensure_categories(&tx, &now).await?;
    let rebuild = pets >= REBUILD_INDEXES_FROM;
    let indexes = if rebuild { drop_indexes_and_triggers(&tx).await? } else { Vec::new() };

    let sink = tx
        .copy_in(
            "COPY pets (name, name_folded, category_id, status, description, stock,
                        stock_updated_at, created_at, updated_at) FROM STDIN (FORMAT binary)",
        )
        .await
        .map_err(pg)?;
    let types = [
        Type::TEXT,
        Type::TEXT,
        Type::INT8,
        Type::TEXT,
        Type::TEXT,
        Type::INT8,
        Type::TEXT,
        Type::TEXT,
        Type::TEXT,
    ];
    let mut writer = pin!(BinaryCopyInWriter::new(sink, &types));
    let description: Option<&str> = None;
    for (done, pet) in (1..=pets).zip(demo::pets()) {
        let folded = pet.name.folded();
        let row: [&(dyn ToSql + Sync); 9] = [
            &pet.name.as_str(),
            &folded,
            &category_ids[pet.category],
            &pet.status.as_str(),
            &description,
            &pet.stock,
            &now,
            &now,
            &now,
        ];
        writer.as_mut().write(&row).await.map_err(pg)?;
        if done % PROGRESS_EVERY == 0 || done == pets {
            progress(done);
        }
    }
    writer.finish().await.map_err(pg)?;

    if rebuild {
        // Every count and the stock order taken anew, as the triggers would have kept them
        // row by row.
        tx.batch_execute(
            "DELETE FROM pet_counts;
             INSERT INTO pet_counts (category_id, status, pets)
             SELECT coalesce(category_id, 0), status, count(*) FROM pets GROUP BY 1, 2;
             DELETE FROM stock_order;
             INSERT INTO stock_order (level, pet) SELECT stock, id FROM pets ORDER BY stock, id;
             SET LOCAL maintenance_work_mem = '256MB';",
        )
        .await
        .map_err(pg)?;
        for sql in indexes {
            tx.batch_execute(&sql).await.map_err(pg)?;
        }
    }
    // One change for the whole load, whether or not the triggers wrote one per pet: a
    // client following the feed reads the shop again (see migration 0002).
    tx.execute("INSERT INTO changes (entity, action) VALUES ('shop', 'reset')", &[]).await.map_err(pg)?;
    changes::notify(&tx, Change::Pets).await?;
    changes::notify(&tx, Change::Categories).await?;
    tx.commit().await.map_err(pg)?;
    if rebuild {
        // Statistics for the planner, and the visibility map that lets a page of a list
        // be read from its index alone; outside the transaction, as VACUUM must be.
        client.batch_execute("VACUUM (ANALYZE) pets, pet_counts, stock_order").await.map_err(pg)?;
    }
    Ok(SeedReport { categories: category_ids.len() as u64, pets })
}

/// Drops the secondary indexes and the row triggers of `pets` and returns the SQL that
/// recreates them, as PostgreSQL itself writes it.
async fn drop_indexes_and_triggers(c: &impl GenericClient) -> Result<Vec<String>> {
    let rows = c
        .query(
            "SELECT 'DROP INDEX ' || i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
             FROM pg_index i
             WHERE i.indrelid = 'pets'::regclass AND NOT i.indisprimary
             UNION ALL
             SELECT 'DROP TRIGGER ' || quote_ident(t.tgname) || ' ON pets', pg_get_triggerdef(t.oid)
             FROM pg_trigger t
             WHERE t.tgrelid = 'pets'::regclass AND NOT t.tgisinternal",
            &[],
        )
        .await
        .map_err(pg)?;
    let mut recreate = Vec::with_capacity(rows.len());
    for row in &rows {
        c.batch_execute(col::<&str>(row, 0)?).await.map_err(pg)?;
        recreate.push(col::<String>(row, 1)?);
    }
    Ok(recreate)
}

async fn ensure_categories(c: &impl GenericClient, now: &str) -> Result<Vec<i64>> {
    let mut ids = Vec::with_capacity(CATEGORIES.len());
    for (name, description, _) in CATEGORIES {
        let name = Name::parse(name).expect("demo names are valid");
        c.execute(
            "INSERT INTO categories (name, name_folded, description, created_at)
             VALUES ($1, $2, $3, $4) ON CONFLICT (name_folded) DO NOTHING",
            &[&name.as_str(), &name.folded(), description, &now],
        )
        .await
        .map_err(pg)?;
        let row = c
            .query_one("SELECT id FROM categories WHERE name_folded = $1", &[&name.folded()])
            .await
            .map_err(pg)?;
        ids.push(col(&row, 0)?);
    }
    Ok(ids)
}
