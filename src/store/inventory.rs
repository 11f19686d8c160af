use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::counts;
use super::filter::{Filter, Source};
use super::paging::{self, KeptList};
use super::status_rules::{stock_row, write_stock};
use crate::domain::stock_plan::StockPlan;
use crate::domain::{
    Actor, AuditRecord, InventoryAdjustment, InventoryFilter, InventoryItem, InventoryUpdate, NewActivity,
    NewInventoryAdjustment, Page, Paged, PetId, StockEntry, Timestamp, activity, history_sql,
};
use crate::error::{Error, Result};

const COLUMNS: &str = "id, name, status, stock, stock_updated_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<InventoryItem> {
    Ok(InventoryItem {
        pet_id: r.get(0)?,
        pet_name: r.get(1)?,
        status: r.get(2)?,
        quantity: r.get(3)?,
        updated_at: r.get(4)?,
    })
}

/// Stock of every pet, lowest first (what staff reorder first).
pub(super) fn list(conn: &Connection, filter: &InventoryFilter, page: Page) -> Result<Paged<InventoryItem>> {
    filter.check()?;
    let mut w = Filter::default();
    // `+status`: not a column an index may look up, so SQLite walks the stock-order index
    // (which carries the status) instead of taking every pet of the status from a status
    // index and sorting them (seconds at a million pets).
    w.and_in("+status", filter.statuses.iter().map(|s| Value::Text(s.as_str().into())));
    if let Some(below) = filter.below_quantity {
        w.and("stock < ?", [Value::Integer(below)]);
    }
    let kept = |c: &Connection| counts::pets(c, &filter.statuses, None);
    // No bookmarks: the list is in stock order, which the kept version does not follow.
    let kept = filter.below_quantity.is_none().then_some(KeptList { count: &kept, bookmarks: None });
    paging::page(
        conn,
        &w,
        Source { columns: COLUMNS, from: "pets", key: "id" },
        "stock, id",
        page,
        kept,
        from_row,
    )
}

pub(super) fn get(conn: &Connection, pet: PetId) -> Result<InventoryItem> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM pets WHERE id = ?1"))?
        .query_row([pet], from_row)
        .optional()?
        .ok_or_else(|| Error::not_found(PetId::WHAT, pet.get()))
}

/// Sets the count as `by`'s; a change is recorded in the audit trail like an adjustment, so
/// the history explains every count staff made. Logged, a count that found the stock as it
/// was too (someone counted).
pub(super) fn set(
    conn: &Connection,
    pet: PetId,
    update: &InventoryUpdate,
    by: &Actor,
) -> Result<InventoryItem> {
    let row = stock_row(conn, pet)?;
    let now = Timestamp::now();
    let plan = StockPlan::count(pet, row.as_ref(), update, now)?;
    let before = row.map_or(0, |pet| pet.stock);
    let entry = activity::stock_counted(pet, before, update, by);
    carry_out(conn, &plan, &entry, by)
}

pub(super) fn adjust(
    conn: &Connection,
    pet: PetId,
    adjustment: &NewInventoryAdjustment,
    by: &Actor,
) -> Result<InventoryItem> {
    let plan = StockPlan::adjust(pet, stock_row(conn, pet)?.as_ref(), adjustment, Timestamp::now())?;
    carry_out(conn, &plan, &activity::stock_adjusted(pet, adjustment, by), by)
}

/// Writes staff's count as `domain::stock_plan` planned it, `by`'s, and its log `entry`;
/// answers the item as it now is.
fn carry_out(conn: &Connection, plan: &StockPlan, entry: &NewActivity, by: &Actor) -> Result<InventoryItem> {
    if let Some(audit) = &plan.audit {
        record(conn, audit, by)?;
    }
    write_stock(conn, &plan.stock)?;
    super::activity::record(conn, entry, plan.stock.at)?;
    get(conn, plan.stock.pet)
}

/// Writes `r` into the audit trail, made by `by`.
pub(super) fn record(conn: &Connection, r: &AuditRecord, by: &Actor) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO inventory_adjustments (pet_id, delta, reason, quantity_after, created_at, order_id, made_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![r.pet, r.delta, r.reason, r.after, Timestamp::now(), r.order, by])?;
    Ok(())
}

/// The audit record of stock a pet was imported with, by `by`.
pub(super) fn record_import(conn: &Connection, pet: PetId, stock: i64, by: &Actor) -> Result<()> {
    record(conn, &AuditRecord::counted(pet, stock, crate::domain::IMPORT_REASON, stock), by)
}

pub(super) fn adjustments(conn: &Connection, pet: PetId, page: Page) -> Result<Paged<InventoryAdjustment>> {
    get(conn, pet)?;
    let mut w = Filter::default();
    w.and("pet_id = ?", [Value::Integer(pet.get())]);
    // Counts and adjustments only, as ever; an order's quantity change is in the history.
    w.and("order_id IS NULL", []);
    let columns = "id, pet_id, delta, reason, quantity_after, created_at, made_by";
    let source = Source { columns, from: "inventory_adjustments", key: "id" };
    paging::page(conn, &w, source, "id DESC", page, None, |r| {
        Ok(InventoryAdjustment {
            id: r.get(0)?,
            pet_id: r.get(1)?,
            delta: r.get(2)?,
            reason: r.get(3)?,
            quantity_after: r.get(4)?,
            created_at: r.get(5)?,
            made_by: r.get(6)?,
        })
    })
}

/// Pet `pet`'s stock history, newest first (`domain::history_sql`).
pub(super) fn history(conn: &Connection, pet: PetId, page: Page) -> Result<Paged<StockEntry>> {
    get(conn, pet)?;
    let (count, page_sql) = history_sql("?1", "?2", "?3");
    let total: i64 = conn.prepare_cached(&count)?.query_row([pet], |r| r.get(0))?;
    let mut statement = conn.prepare_cached(&page_sql)?;
    let rows = statement.query_map(params![pet, page.limit(), page.offset()], |r| {
        let kind: String = r.get(0)?;
        Ok(StockEntry {
            kind: kind.parse().map_err(|e: String| {
                rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, e.into())
            })?,
            delta: r.get(1)?,
            at: r.get(2)?,
            reason: r.get(3)?,
            order_id: r.get(4)?,
            stock_after: r.get(5)?,
            by: r.get(6)?,
        })
    })?;
    let items = rows.collect::<rusqlite::Result<_>>()?;
    Ok(Paged { items, total: total as u64 })
}
