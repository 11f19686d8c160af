//! Inventory on PostgreSQL: the same operations, messages and order as
//! `src/store/inventory.rs`, the audit trail included.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

use super::activity::{self, actor_json, actor_of};
use super::paging::{self, Filter, List, limit_offset};
use super::pg;
use super::stock::{stock_row, write_stock};
use super::types::col;
use crate::domain::activity as log;
use crate::domain::stock_plan::StockPlan;
use crate::domain::{
    Actor, AuditRecord, InventoryAdjustment, InventoryFilter, InventoryItem, InventoryUpdate, NewActivity,
    NewInventoryAdjustment, OrderId, Page, Paged, PetId, StockEntry, Timestamp, history_sql,
};
use crate::error::{Error, Result};

fn from_row(r: &Row, at: usize) -> Result<InventoryItem> {
    Ok(InventoryItem {
        pet_id: col(r, at)?,
        pet_name: col(r, at + 1)?,
        status: col(r, at + 2)?,
        quantity: col(r, at + 3)?,
        updated_at: col(r, at + 4)?,
    })
}

/// Stock of every pet, lowest first (what staff reorder first).
pub(super) async fn list(
    c: &impl GenericClient,
    filter: &InventoryFilter,
    page: Page,
) -> Result<Paged<InventoryItem>> {
    filter.check()?;
    // The stock order is `stock_order`'s (migrations/postgres/0007): `o` walks it in order,
    // `q` is each pet's row.
    let mut w = Filter::default();
    let mut counted = String::new();
    if let [status] = filter.statuses[..] {
        // `=`, not `= ANY`, as in pets.rs.
        w.and("q.status = $?", status.as_str());
        counted = format!("WHERE status = ${}", w.params.len());
    } else if !filter.statuses.is_empty() {
        let statuses: Vec<String> = filter.statuses.iter().map(|s| s.as_str().to_owned()).collect();
        w.and("q.status = ANY($?)", statuses);
        counted = format!("WHERE status = ANY(${})", w.params.len());
    }
    if let Some(below) = filter.below_quantity {
        w.and("o.level < $?", below);
    }
    let from = "stock_order o JOIN pets q ON q.id = o.pet";
    // Without "below" the count is the kept one, by status.
    let total = if filter.below_quantity.is_none() {
        format!("SELECT coalesce(sum(pets), 0) FROM pet_counts {counted}")
    } else {
        format!("SELECT count(*) FROM {from} {}", w.sql())
    };
    let where_sql = w.sql();
    let limit = limit_offset(&mut w, page);
    let list = List {
        columns: "p.id, p.name, p.status, p.stock, p.stock_updated_at",
        total,
        page: format!(
            "SELECT q.id, q.name, q.status, q.stock, q.stock_updated_at
             FROM {from} {where_sql} ORDER BY o.level, o.pet {limit}"
        ),
        order: "p.stock, p.id",
    };
    paging::page(c, list, &w, |r| from_row(r, 1)).await
}

pub(super) async fn get(c: &impl GenericClient, pet: PetId) -> Result<InventoryItem> {
    let sql = "SELECT id, name, status, stock, stock_updated_at FROM pets WHERE id = $1";
    c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[&pet.get()])
        .await
        .map_err(pg)?
        .map(|r| from_row(&r, 0))
        .transpose()?
        .ok_or_else(|| Error::not_found(PetId::WHAT, pet.get()))
}

/// Sets the count as `by`'s; a change is recorded in the audit trail like an adjustment, so
/// the history explains every count staff made. Logged, a count that found the stock as it
/// was too (someone counted).
pub(super) async fn set(
    c: &impl GenericClient,
    pet: PetId,
    update: &InventoryUpdate,
    by: &Actor,
) -> Result<InventoryItem> {
    let row = stock_row(c, pet).await?;
    let plan = StockPlan::count(pet, row.as_ref(), update, Timestamp::now())?;
    let before = row.map_or(0, |pet| pet.stock);
    carry_out(c, &plan, &log::stock_counted(pet, before, update, by), by).await
}

pub(super) async fn adjust(
    c: &impl GenericClient,
    pet: PetId,
    adjustment: &NewInventoryAdjustment,
    by: &Actor,
) -> Result<InventoryItem> {
    let plan = StockPlan::adjust(pet, stock_row(c, pet).await?.as_ref(), adjustment, Timestamp::now())?;
    carry_out(c, &plan, &log::stock_adjusted(pet, adjustment, by), by).await
}

/// Writes staff's count as `domain::stock_plan` planned it, `by`'s, and its log `entry`;
/// answers the item as it now is.
async fn carry_out(
    c: &impl GenericClient,
    plan: &StockPlan,
    entry: &NewActivity,
    by: &Actor,
) -> Result<InventoryItem> {
    if let Some(audit) = &plan.audit {
        record(c, audit, by).await?;
    }
    write_stock(c, &plan.stock).await?;
    activity::record(c, entry).await?;
    get(c, plan.stock.pet).await
}

/// Writes `r` into the audit trail, made by `by`.
pub(super) async fn record(c: &impl GenericClient, r: &AuditRecord, by: &Actor) -> Result<()> {
    let sql =
        "INSERT INTO inventory_adjustments (pet_id, delta, reason, quantity_after, created_at, order_id, made_by)
               VALUES ($1, $2, $3, $4, $5, $6, $7)";
    let values: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
        &r.pet.get(),
        &r.delta,
        &r.reason,
        &r.after,
        &Timestamp::now().to_string(),
        &r.order.map(OrderId::get),
        &actor_json(by)?,
    ];
    c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &values).await.map_err(pg)?;
    Ok(())
}

pub(super) async fn adjustments(
    c: &impl GenericClient,
    pet: PetId,
    page: Page,
) -> Result<Paged<InventoryAdjustment>> {
    get(c, pet).await?;
    let mut w = Filter::default();
    w.and("pet_id = $?", pet.get());
    // Counts and adjustments only, as ever; an order's quantity change is in the history.
    w.and_sql("order_id IS NULL");
    let where_sql = w.sql();
    let limit = limit_offset(&mut w, page);
    let list = List {
        columns: "p.id, p.pet_id, p.delta, p.reason, p.quantity_after, p.created_at, p.made_by",
        total: format!("SELECT count(*) FROM inventory_adjustments {where_sql}"),
        page: format!(
            "SELECT id, pet_id, delta, reason, quantity_after, created_at, made_by FROM inventory_adjustments
             {where_sql} ORDER BY id DESC {limit}"
        ),
        order: "p.id DESC",
    };
    paging::page(c, list, &w, |r| {
        Ok(InventoryAdjustment {
            id: col(r, 1)?,
            pet_id: col(r, 2)?,
            delta: col(r, 3)?,
            reason: col(r, 4)?,
            quantity_after: col(r, 5)?,
            created_at: col(r, 6)?,
            made_by: actor_of(col(r, 7)?)?,
        })
    })
    .await
}

/// Pet `pet`'s stock history, newest first (`domain::history_sql`).
pub(super) async fn history(c: &impl GenericClient, pet: PetId, page: Page) -> Result<Paged<StockEntry>> {
    get(c, pet).await?;
    let (count, page_sql) = history_sql("$1", "$2", "$3");
    let total: i64 =
        col(&c.query_one(&c.prepare_cached(&count).await.map_err(pg)?, &[&pet.get()]).await.map_err(pg)?, 0)?;
    let (limit, offset) = (i64::from(page.limit()), i64::from(page.offset()));
    let rows = c
        .query(&c.prepare_cached(&page_sql).await.map_err(pg)?, &[&pet.get(), &limit, &offset])
        .await
        .map_err(pg)?;
    let items = rows
        .iter()
        .map(|r| {
            let kind: String = col(r, 0)?;
            Ok(StockEntry {
                kind: kind.parse().map_err(Error::internal)?,
                delta: col(r, 1)?,
                at: col(r, 2)?,
                reason: col(r, 3)?,
                order_id: col(r, 4)?,
                stock_after: col(r, 5)?,
                by: actor_of(col(r, 6)?)?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Paged { items, total: total as u64 })
}
