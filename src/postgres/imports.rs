//! Importing pets on PostgreSQL, in the caller's transaction: as `src/store/imports.rs`, but
//! every step a statement for the whole file, since each round trip costs what a thousand
//! in-process lookups do (one by one, 100,000 lines took a minute).

use std::collections::{HashMap, HashSet};

use deadpool_postgres::GenericClient;
use tokio_postgres::error::SqlState;

use super::activity::{self, actor_json};
use super::types::col;
use super::{categories, pg, violates};
use crate::domain::activity as log;
use crate::domain::{
    Actor, CategoryId, IMPORT_REASON, ImportPlan, ImportReport, ImportRow, NewCategory, Price, Sku, Timestamp,
};
use crate::error::{Error, ErrorCode, Result};

/// Pets per INSERT: big enough that round trips do not count, small enough that one
/// statement's arrays stay a few megabytes.
const BATCH: usize = 10_000;

/// The import as `by`'s: the stock's audit records name them, and the log has one entry
/// for the whole file.
pub(super) async fn import(
    c: &impl GenericClient,
    rows: &[ImportRow],
    create_categories: bool,
    by: &Actor,
) -> Result<ImportReport> {
    let names = ImportPlan::category_names(rows);
    let sql = "SELECT name_folded, id FROM categories WHERE name_folded = ANY($1)";
    let mut existing = HashMap::new();
    for row in c.query(&c.prepare_cached(sql).await.map_err(pg)?, &[&names]).await.map_err(pg)? {
        existing.insert(
            col::<String>(&row, 0)?,
            CategoryId::try_from(col::<i64>(&row, 1)?).map_err(Error::internal)?,
        );
    }
    let skus = ImportPlan::skus(rows);
    let sql = "SELECT sku_folded FROM pets WHERE sku_folded = ANY($1)";
    let taken = c
        .query(&c.prepare_cached(sql).await.map_err(pg)?, &[&skus])
        .await
        .map_err(pg)?
        .iter()
        .map(|row| col::<String>(row, 0))
        .collect::<Result<HashSet<_>>>()?;
    let plan = ImportPlan::check(rows, &existing, &taken, create_categories)?;

    let mut made = Vec::with_capacity(plan.new_categories().len());
    for name in plan.new_categories() {
        made.push(categories::create(c, &NewCategory { name: name.clone(), description: None }).await?.id);
    }
    // The pets and, for those with stock, its audit record, in one statement per batch. A pet
    // made with stock is also a change of stock for the feed (its trigger sees one only in an
    // UPDATE), so that a till's mirror reads the stock of the pets it copies.
    let sql = "WITH made AS (
                   INSERT INTO pets (name, name_folded, category_id, status, description, price_cents,
                                     sku, sku_folded, stock, stock_updated_at, created_at, updated_at)
                   SELECT *, $10, $10, $10
                   FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[],
                               $7::text[], $8::text[], $9::bigint[])
                   RETURNING id, stock),
               audited AS (
                   INSERT INTO inventory_adjustments (pet_id, delta, reason, quantity_after, created_at, made_by)
                   SELECT id, stock, $11, stock, $10, $12 FROM made WHERE stock > 0)
               INSERT INTO changes (entity, entity_id, action)
               SELECT 'inventory', id, 'updated' FROM made WHERE stock > 0";
    let insert = c.prepare_cached(sql).await.map_err(pg)?;
    let now = Timestamp::now().to_string();
    let made_by = actor_json(by)?;
    let pets: Vec<_> = plan.pets(&made).collect();
    for batch in pets.chunks(BATCH) {
        let mut columns = Columns::default();
        for (row, pet) in batch {
            columns.name.push(pet.name.as_str());
            columns.name_folded.push(pet.name.folded());
            columns.category.push(pet.category_id.map(CategoryId::get));
            columns.status.push(pet.status.as_str());
            columns.description.push(pet.description.as_ref().map(|d| d.as_str()));
            columns.price.push(pet.price.map(Price::cents));
            columns.sku.push(pet.sku.as_ref().map(Sku::as_str));
            columns.sku_folded.push(pet.sku.as_ref().map(Sku::folded));
            columns.stock.push(row.stock.map_or(0, |s| s.get()));
        }
        let Columns { name, name_folded, category, status, description, price, sku, sku_folded, stock } =
            &columns;
        c.execute(
            &insert,
            &[
                name,
                name_folded,
                category,
                status,
                description,
                price,
                sku,
                sku_folded,
                stock,
                &now,
                &IMPORT_REASON,
                &made_by,
            ],
        )
        .await
        .map_err(refused_meanwhile)?;
    }
    let report = plan.report(false);
    activity::record(c, &log::pets_imported(report.pets, report.categories_created.len(), by)).await?;
    Ok(report)
}

/// The pets of a batch, a column at a time (`unnest` makes rows of them again).
#[derive(Default)]
struct Columns<'p> {
    name: Vec<&'p str>,
    name_folded: Vec<String>,
    category: Vec<Option<i64>>,
    status: Vec<&'static str>,
    description: Vec<Option<&'p str>>,
    price: Vec<Option<i64>>,
    sku: Vec<Option<&'p str>>,
    sku_folded: Vec<Option<String>>,
    stock: Vec<i64>,
}

/// The file was checked in this transaction, so a constraint that refuses it now is another
/// replica's write in between: a barcode taken or a category deleted meanwhile.
fn refused_meanwhile(e: tokio_postgres::Error) -> Error {
    if violates(&e, &SqlState::UNIQUE_VIOLATION, "pets_by_sku") {
        Error::conflict(
            ErrorCode::DuplicateSku,
            "another pet took one of the file's barcodes while it was being imported; nothing was imported",
        )
    } else if violates(&e, &SqlState::FOREIGN_KEY_VIOLATION, "pets_category_id_fkey") {
        Error::new(
            ErrorCode::InvalidReference,
            "one of the file's categories was deleted while it was being imported; nothing was imported",
        )
    } else {
        pg(e)
    }
}
