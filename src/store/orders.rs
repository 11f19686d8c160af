use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::filter::{Filter, Source};
use super::paging;
use super::status_rules::{stock_row, write_stock};
use crate::domain::order_plan::{self, OrderChange, OrderPlan};
use crate::domain::{
    Actor, NewOrder, Order, OrderFilter, OrderId, OrderPatch, Page, Paged, Timestamp, activity, like_contains,
};
use crate::error::{Error, Result};

pub(super) const COLUMNS: &str =
    "id, pet_id, quantity, ship_date, complete, created_at, unit_price_cents, completed_at,
                       customer_name, customer_phone, note, cancelled_at, placed_at, placed_by, completed_by,
                       cancelled_by";

pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<Order> {
    let quantity = r.get(2)?;
    let unit_price = super::pets::price(r, 6)?;
    Ok(Order {
        id: r.get(0)?,
        pet_id: r.get(1)?,
        quantity,
        ship_date: r.get(3)?,
        complete: r.get(4)?,
        created_at: r.get(5)?,
        placed_at: r.get(12)?,
        unit_price,
        total: Order::total_of(unit_price, quantity),
        completed_at: r.get(7)?,
        customer_name: r.get(8)?,
        customer_phone: r.get(9)?,
        note: r.get(10)?,
        cancelled_at: r.get(11)?,
        placed_by: r.get(13)?,
        completed_by: r.get(14)?,
        cancelled_by: r.get(15)?,
    })
}

pub(super) fn list(conn: &Connection, filter: &OrderFilter, page: Page) -> Result<Paged<Order>> {
    let mut w = Filter::default();
    if let Some(pet) = filter.pet_id {
        w.and("pet_id = ?", [Value::Integer(pet.get())]);
    }
    if let Some(complete) = filter.complete {
        w.and("complete = ?", [Value::Integer(complete.into())]);
    }
    // The indexes it walks: migrations/sqlite/0010, 0012.
    w.and(filter.kept_sql(), []);
    if let Some(q) = &filter.q {
        let like = Value::Text(like_contains(&q.folded()));
        w.and(
            "(customer_name_folded LIKE ? ESCAPE '\\' OR pet_id IN (SELECT id FROM pets WHERE name_folded LIKE ? ESCAPE '\\'))",
            [like.clone(), like],
        );
    }
    paging::page(
        conn,
        &w,
        Source { columns: COLUMNS, from: "orders", key: "id" },
        "id DESC",
        page,
        None,
        from_row,
    )
}

/// The order, unless there is none or it was deleted (`DELETE /store/orders/{id}`): the
/// API answers `not_found` for both, while the row stays for the shop's records.
pub(super) fn get(conn: &Connection, id: OrderId) -> Result<Order> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM orders WHERE id = ?1 AND deleted_at IS NULL"))?
        .query_row([id], from_row)
        .optional()?
        .ok_or_else(|| Error::not_found(OrderId::WHAT, id.get()))
}

/// Places an order as `by`'s, taking its quantity from stock at once (a reservation). With
/// `complete` it is a counter sale, placed and completed in one step. Logged.
pub(super) fn place(conn: &Connection, new: &NewOrder, by: &Actor) -> Result<Order> {
    let placing = order_plan::place(new, stock_row(conn, new.pet_id)?.as_ref(), Timestamp::now())?;
    let id = insert(conn, None, new, placing.at, placing.unit_price, by)?;
    write_stock(conn, &placing.stock)?;
    let order = placing.order(new, id).placed_by(by);
    super::activity::record(conn, &activity::order_placed(&order, by), placing.at)?;
    Ok(order)
}

/// `new` stored as order `id` as it is, `by`'s: no rule checked, no stock taken, nothing
/// logged. A till's record of an order its server may have placed already
/// (`crate::mirror`), until the server says; the server's log has it.
pub(super) fn insert_as_is(conn: &Connection, id: OrderId, new: &NewOrder, by: &Actor) -> Result<Order> {
    let now = Timestamp::now();
    let price = stock_row(conn, new.pet_id)?.and_then(|pet| pet.price);
    insert(conn, Some(id), new, now, price, by)?;
    Ok(new.placed(id, now, price).placed_by(by))
}

/// The row of order `new` placed at `now` at `unit_price` by `by` (as `id`, or numbered
/// here).
fn insert(
    conn: &Connection,
    id: Option<OrderId>,
    new: &NewOrder,
    now: Timestamp,
    unit_price: Option<crate::domain::Price>,
    by: &Actor,
) -> Result<OrderId> {
    conn.prepare_cached(
        "INSERT INTO orders (id, pet_id, quantity, ship_date, complete, created_at, unit_price_cents, completed_at,
                             customer_name, customer_name_folded, customer_phone, note, placed_at, placed_by,
                             completed_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?
    .execute(params![
        id,
        new.pet_id,
        new.quantity.get(),
        new.ship_date_at(now),
        new.complete,
        now,
        unit_price.map(|p| p.cents()),
        new.completed_at(now),
        new.customer_name.as_ref().map(|n| n.as_str()),
        new.customer_name.as_ref().map(|n| n.folded()),
        new.customer_phone.as_ref().map(|p| p.as_str()),
        new.note.as_ref().map(|n| n.as_str()),
        new.placed_at,
        by,
        new.complete.then_some(by),
    ])?;
    OrderId::try_from(conn.last_insert_rowid()).map_err(Error::internal)
}

/// Changes an open order's quantity or ship date, or completes it; or reopens a
/// completed one (`complete: false`), if `by` may (`domain::order_plan::plan_by`).
pub(super) fn update(conn: &Connection, id: OrderId, patch: &OrderPatch, by: &Actor) -> Result<Order> {
    order_plan::refuse_empty(patch)?;
    Ok(change(conn, id, OrderChange::Update(patch), by)?.order)
}

/// Cancels an open order; its quantity returns to stock, and the order is kept, stamped
/// when and by whom. Answers the cancelled order.
pub(super) fn cancel(conn: &Connection, id: OrderId, by: &Actor) -> Result<Order> {
    Ok(change(conn, id, OrderChange::Cancel, by)?.order)
}

/// Deletes an order as `domain::status_rules::deletion` says: an open one is cancelled
/// first. The row stays, stamped `deleted_at`, for the shop's records; the API no longer
/// finds it, and the feed reports it `deleted` (migrations/sqlite/0012).
pub(super) fn delete(conn: &Connection, id: OrderId, by: &Actor) -> Result<()> {
    change(conn, id, OrderChange::Delete, by).map(drop)
}

/// Reads order `id` (and its pet, when the change needs it), and writes what
/// `domain::order_plan` plans as `by`'s, in the plan's order, and its log entry.
fn change(conn: &Connection, id: OrderId, change: OrderChange<'_>, by: &Actor) -> Result<OrderPlan> {
    let order = get(conn, id)?;
    let pet = if order_plan::reads_pet(&order, change) { stock_row(conn, order.pet_id)? } else { None };
    let now = Timestamp::now();
    let plan = order_plan::plan_by(order, change, pet.as_ref(), now, by)?;
    let o = &plan.order;
    if plan.writes_order {
        conn.prepare_cached(
            "UPDATE orders SET quantity = ?2, ship_date = ?3, complete = ?4, completed_at = ?5, customer_name = ?6,
                               customer_name_folded = ?7, customer_phone = ?8, note = ?9, cancelled_at = ?10,
                               completed_by = ?11, cancelled_by = ?12
             WHERE id = ?1",
        )?
        .execute(params![
            o.id,
            o.quantity,
            o.ship_date,
            o.complete,
            o.completed_at,
            o.customer_name,
            plan.customer_name_folded(),
            o.customer_phone,
            o.note,
            o.cancelled_at,
            o.completed_by,
            o.cancelled_by,
        ])?;
    }
    if let Some(audit) = &plan.audit {
        super::inventory::record(conn, audit, by)?;
    }
    if let Some(stock) = &plan.stock {
        write_stock(conn, stock)?;
    }
    if let Some(at) = plan.deleted_at {
        conn.execute("UPDATE orders SET deleted_at = ?2 WHERE id = ?1", params![o.id, at])?;
    }
    if let Some(entry) = &plan.activity {
        super::activity::record(conn, entry, now)?;
    }
    Ok(plan)
}
