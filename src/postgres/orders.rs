//! Orders on PostgreSQL: the same operations, messages and order as `src/store/orders.rs`.
//!
//! Placing an order is the shop's hot write, and most orders leave stock behind: then the
//! status rules keep the pet `available` (`next_status(Available, Taken, stock > 0, _)`,
//! held by a unit test), and the whole order is ONE statement in autocommit ([`place_fast`]):
//! a conditional `UPDATE` that takes the stock only if the pet is available and keeps some,
//! and the `INSERT` of the order from what it returned. The row lock of
//! that `UPDATE` is what keeps two replicas from selling the same stock: the second waits
//! for the first to commit, and its condition is then checked against the new stock. When
//! the statement changes nothing, the same statement reads the pet as its snapshot saw it:
//! no such pet, not available or too little stock is refused at once (most refusals, then,
//! cost one statement and no transaction); the last of the stock, or a pet another order
//! changed meanwhile, goes to the general path [`place`], in a transaction with the pet's
//! row locked, which gives the exact answer or moves the status.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::activity::{self, actor_json, actor_of};
use super::paging::{self, Filter, List, limit_offset};
use super::pg;
use super::stock::{stock_row, write_stock};
use super::types::col;
use crate::domain::activity as log;
use crate::domain::order_plan::{self, OrderChange, OrderPlan};
use crate::domain::status_rules::NamedPet;
use crate::domain::{
    Actor, NewOrder, Order, OrderFilter, OrderId, OrderPatch, Page, Paged, PetStatus, Price, Timestamp,
    like_contains,
};
use crate::error::{Error, Result};

pub(super) const COLUMNS: &str =
    "id, pet_id, quantity, ship_date, complete, created_at, unit_price_cents, completed_at,
                       customer_name, customer_phone, note, cancelled_at, placed_at, placed_by, completed_by,
                       cancelled_by";

/// An order from `r`, whose columns from `at` on are [`COLUMNS`].
pub(super) fn from_row(r: &Row, at: usize) -> Result<Order> {
    let quantity = col(r, at + 2)?;
    let unit_price: Option<Price> = col(r, at + 6)?;
    Ok(Order {
        id: col(r, at)?,
        pet_id: col(r, at + 1)?,
        quantity,
        ship_date: col(r, at + 3)?,
        complete: col(r, at + 4)?,
        created_at: col(r, at + 5)?,
        placed_at: col(r, at + 12)?,
        unit_price,
        total: Order::total_of(unit_price, quantity),
        completed_at: col(r, at + 7)?,
        customer_name: col(r, at + 8)?,
        customer_phone: col(r, at + 9)?,
        note: col(r, at + 10)?,
        cancelled_at: col(r, at + 11)?,
        placed_by: actor_of(col(r, at + 13)?)?,
        completed_by: actor_of(col(r, at + 14)?)?,
        cancelled_by: actor_of(col(r, at + 15)?)?,
    })
}

pub(super) async fn list(c: &impl GenericClient, filter: &OrderFilter, page: Page) -> Result<Paged<Order>> {
    let mut w = Filter::default();
    if let Some(pet) = filter.pet_id {
        w.and("pet_id = $?", pet.get());
    }
    if let Some(complete) = filter.complete {
        w.and("complete = $?", complete);
    }
    // The indexes it walks: migrations/postgres/0006, 0008.
    w.and_sql(filter.kept_sql());
    if let Some(q) = &filter.q {
        w.and(
            "(customer_name_folded LIKE $? ESCAPE '\\' OR pet_id IN (SELECT id FROM pets WHERE name_folded LIKE $? ESCAPE '\\'))",
            like_contains(&q.folded()),
        );
    }
    let where_sql = w.sql();
    let limit = limit_offset(&mut w, page);
    let columns = COLUMNS.split(", ").map(|c| format!("p.{}", c.trim())).collect::<Vec<_>>().join(", ");
    let list = List {
        columns: &columns,
        total: format!("SELECT count(*) FROM orders {where_sql}"),
        page: format!("SELECT {COLUMNS} FROM orders {where_sql} ORDER BY id DESC {limit}"),
        order: "p.id DESC",
    };
    paging::page(c, list, &w, |r| from_row(r, 1)).await
}

/// The order, unless there is none or it was deleted (`DELETE /store/orders/{id}`): the
/// API answers `not_found` for both, while the row stays for the shop's records.
pub(super) async fn get(c: &impl GenericClient, id: OrderId) -> Result<Order> {
    read(c, id, "").await
}

/// The order's row locked until the transaction `c` ends.
async fn get_locked(c: &impl GenericClient, id: OrderId) -> Result<Order> {
    read(c, id, "FOR UPDATE").await
}

async fn read(c: &impl GenericClient, id: OrderId, lock: &str) -> Result<Order> {
    let sql = format!("SELECT {COLUMNS} FROM orders WHERE id = $1 AND deleted_at IS NULL {lock}");
    c.query_opt(&c.prepare_cached(&sql).await.map_err(pg)?, &[&id.get()])
        .await
        .map_err(pg)?
        .map(|r| from_row(&r, 0))
        .transpose()?
        .ok_or_else(|| Error::not_found(OrderId::WHAT, id.get()))
}

/// A new order's row as bound parameters, the same for both ways of placing it: $1 the
/// pet, $2 the quantity, $3 when (created, and the stock's change), $4 complete, then ship
/// date, completed at, customer name (and folded), phone, note, placed at ($5 to $11), and
/// who placed it ($12, the actor's JSON; who completed it too when `complete`).
struct NewRow {
    pet: i64,
    quantity: i64,
    at: String,
    complete: bool,
    own: [Option<String>; 7],
    by: String,
}

impl NewRow {
    fn of(new: &NewOrder, at: Timestamp, by: &Actor) -> Result<Self> {
        let own = [
            new.ship_date_at(at).map(|t| t.to_string()),
            new.completed_at(at).map(|t| t.to_string()),
            new.customer_name.as_ref().map(|n| n.as_str().to_owned()),
            new.customer_name.as_ref().map(|n| n.folded()),
            new.customer_phone.as_ref().map(|p| p.as_str().to_owned()),
            new.note.as_ref().map(|n| n.as_str().to_owned()),
            new.placed_at.map(|t| t.to_string()),
        ];
        Ok(Self {
            pet: new.pet_id.get(),
            quantity: new.quantity.get(),
            at: at.to_string(),
            complete: new.complete,
            own,
            by: actor_json(by)?,
        })
    }

    /// On the stack: the one-statement order is the hot write.
    fn params(&self) -> [&(dyn ToSql + Sync); 12] {
        let [ship, completed, name, folded, phone, note, placed] = &self.own;
        [
            &self.pet,
            &self.quantity,
            &self.at,
            &self.complete,
            ship,
            completed,
            name,
            folded,
            phone,
            note,
            placed,
            &self.by,
        ]
    }
}

/// What the one-statement order came to.
#[expect(
    clippy::large_enum_variant,
    reason = "an order, the large variant, is the common answer: boxing it would add an allocation to most answers and save nothing"
)]
pub(super) enum Fast {
    Placed(Order),
    /// Refused as of the statement's snapshot: no such pet, not available, or too little
    /// stock. A refusal is as good then as a moment later (the order simply came first).
    Refused(Error),
    /// Neither: the last of the stock (the status may move), or a change by another order
    /// while this one waited for the row. The general path [`place`] decides.
    Undecided,
}

/// The order placed in one statement, as `by`'s, if the pet is available and keeps stock
/// after it; otherwise, in the same statement and with nothing changed, the pet as the
/// statement's snapshot saw it, so that most refusals need no transaction either.
///
/// The activity log's entry is written by the same statement (`logged`), so that logging
/// costs the hot write no round trip: the entry is `domain::activity::order_placed`'s for
/// the order as it will be placed, bound before the statement knows the order's id, which
/// the statement puts in as the subject (the entry's text does not depend on it; a test
/// compares the row with the domain's entry of the order answered).
pub(super) async fn place_fast(c: &impl GenericClient, new: &NewOrder, by: &Actor) -> Result<Fast> {
    let sql = "WITH taken AS (
                   UPDATE pets SET stock = stock - $2, stock_updated_at = $3
                   WHERE id = $1 AND status = 'available' AND stock > $2
                   RETURNING id, price_cents),
               placed AS (
                   INSERT INTO orders (pet_id, quantity, complete, created_at, unit_price_cents, ship_date,
                                       completed_at, customer_name, customer_name_folded, customer_phone, note,
                                       placed_at, placed_by, completed_by)
                   SELECT id, $2, $4, $3, price_cents, $5, $6, $7, $8, $9, $10, $11, $12,
                          CASE WHEN $4 THEN $12 END
                   FROM taken
                   RETURNING id, unit_price_cents),
               logged AS (
                   INSERT INTO activity (at, kind, subject_entity, subject_id, staff_id, approver_id, actor, detail)
                   SELECT $3, $13, $14, id::text, $15, $16, $12, $17 FROM placed)
               SELECT id, unit_price_cents, NULL::text, NULL::bigint, NULL::text FROM placed
               UNION ALL
               SELECT NULL, NULL, status, stock, name FROM pets
               WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM taken)";
    let now = Timestamp::now();
    let bound = NewRow::of(new, now, by)?;
    // Any id: the statement binds the order's own (see above).
    let entry = log::order_placed(&new.placed(OrderId::try_from(1).map_err(Error::internal)?, now, None), by);
    let entry = activity::Values::of(&entry, now)?;
    let [p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12] = bound.params();
    let [p13, p14, p15, p16, p17] = entry.for_the_order();
    let params = [p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17];
    let row = c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &params).await.map_err(pg)?;
    let Some(row) = row else { return Ok(Fast::Refused(order_plan::no_such_pet(new.pet_id))) };
    if let Some(id) = col::<Option<OrderId>>(&row, 0)? {
        return Ok(Fast::Placed(new.placed(id, now, col(&row, 1)?).placed_by(by)));
    }
    let (status, stock, name): (PetStatus, i64, String) = (col(&row, 2)?, col(&row, 3)?, col(&row, 4)?);
    let pet = NamedPet { id: new.pet_id, name: &name };
    let quantity = new.quantity.get();
    Ok(match order_plan::ensure_orderable(pet, status, stock, quantity) {
        Err(refused) => Fast::Refused(refused),
        // Enough stock and available, yet not taken: the last of it, or changed meanwhile.
        Ok(()) => Fast::Undecided,
    })
}

/// Places an order as `by`'s, taking its quantity from stock at once (a reservation), in
/// the transaction `c`, with the pet's row locked. With `complete` it is a counter sale,
/// placed and completed in one step. Every refusal comes before any write. Logged.
pub(super) async fn place(c: &impl GenericClient, new: &NewOrder, by: &Actor) -> Result<Order> {
    let placing = order_plan::place(new, stock_row(c, new.pet_id).await?.as_ref(), Timestamp::now())?;
    let sql =
        "INSERT INTO orders (pet_id, quantity, created_at, complete, ship_date, completed_at, customer_name,
                                   customer_name_folded, customer_phone, note, placed_at, placed_by, completed_by,
                                   unit_price_cents)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, CASE WHEN $4 THEN $12 END, $13)
               RETURNING id";
    let bound = NewRow::of(new, placing.at, by)?;
    let price = placing.unit_price.map(Price::cents);
    let params: Vec<&(dyn ToSql + Sync)> = bound.params().into_iter().chain([&price as _]).collect();
    let row = c.query_one(&c.prepare_cached(sql).await.map_err(pg)?, &params).await.map_err(pg)?;
    write_stock(c, &placing.stock).await?;
    let order = placing.order(new, col(&row, 0)?).placed_by(by);
    activity::record(c, &log::order_placed(&order, by)).await?;
    Ok(order)
}

/// Changes an open order's quantity or ship date, or completes it; or reopens a completed
/// one (`complete: false`), if `by` may (`domain::order_plan::plan_by`, asked inside the
/// transaction, before anything is written).
pub(super) async fn update(
    c: &impl GenericClient,
    id: OrderId,
    patch: &OrderPatch,
    by: &Actor,
) -> Result<Order> {
    order_plan::refuse_empty(patch)?;
    Ok(change(c, id, OrderChange::Update(patch), by).await?.order)
}

/// Cancels an open order; its quantity returns to stock, and the order is kept, stamped
/// when and by whom. Answers the cancelled order.
pub(super) async fn cancel(c: &impl GenericClient, id: OrderId, by: &Actor) -> Result<Order> {
    Ok(change(c, id, OrderChange::Cancel, by).await?.order)
}

/// Deletes an order as `domain::status_rules::deletion` says: an open one is cancelled
/// first. The row stays, stamped `deleted_at`, for the shop's records; the API no longer
/// finds it, and the feed reports it `deleted` (migrations/postgres/0008).
pub(super) async fn delete(c: &impl GenericClient, id: OrderId, by: &Actor) -> Result<()> {
    change(c, id, OrderChange::Delete, by).await.map(drop)
}

/// Reads order `id` (and its pet, when the change needs it), and writes what
/// `domain::order_plan` plans as `by`'s, and its log entry, in the plan's order, in the
/// transaction `c`. The order's row
/// is locked first, then its pet's (always in that order, so two such writes never wait
/// for each other in a circle).
async fn change(
    c: &impl GenericClient,
    id: OrderId,
    change: OrderChange<'_>,
    by: &Actor,
) -> Result<OrderPlan> {
    let order = get_locked(c, id).await?;
    let pet = if order_plan::reads_pet(&order, change) { stock_row(c, order.pet_id).await? } else { None };
    let plan = order_plan::plan_by(order, change, pet.as_ref(), Timestamp::now(), by)?;
    let o = &plan.order;
    if plan.writes_order {
        let sql = "UPDATE orders SET quantity = $2, ship_date = $3, complete = $4, completed_at = $5, customer_name = $6,
                                     customer_name_folded = $7, customer_phone = $8, note = $9, cancelled_at = $10,
                                     completed_by = $11, cancelled_by = $12
                   WHERE id = $1";
        let text = |t: Option<Timestamp>| t.map(|t| t.to_string());
        let json = |a: &Option<Actor>| a.as_ref().map(actor_json).transpose();
        c.execute(
            &c.prepare_cached(sql).await.map_err(pg)?,
            &[
                &o.id.get(),
                &o.quantity,
                &text(o.ship_date),
                &o.complete,
                &text(o.completed_at),
                &o.customer_name,
                &plan.customer_name_folded(),
                &o.customer_phone,
                &o.note,
                &text(o.cancelled_at),
                &json(&o.completed_by)?,
                &json(&o.cancelled_by)?,
            ],
        )
        .await
        .map_err(pg)?;
    }
    if let Some(audit) = &plan.audit {
        super::inventory::record(c, audit, by).await?;
    }
    if let Some(stock) = &plan.stock {
        write_stock(c, stock).await?;
    }
    if let Some(at) = plan.deleted_at {
        let sql = "UPDATE orders SET deleted_at = $2 WHERE id = $1";
        c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&o.id.get(), &at.to_string()])
            .await
            .map_err(pg)?;
    }
    if let Some(entry) = &plan.activity {
        activity::record(c, entry).await?;
    }
    Ok(plan)
}
#[cfg(test)]
mod tests {
    use crate::domain::PetStatus::*;
    use crate::domain::status_rules::{StockEvent, next_status};

    /// The fast path moves no status: it is right only while the rules agree that an
    /// available pet that keeps stock after an order stays available, open orders or not.
    #[test]
    fn an_order_that_leaves_stock_keeps_an_available_pet_available() {
        for stock_after in [1, 2, 999_999] {
            for open_orders in [0, 1, 50] {
                assert_eq!(next_status(Available, StockEvent::Taken, stock_after, open_orders), Available);
            }
        }
    }
}
