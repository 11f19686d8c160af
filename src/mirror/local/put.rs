//! Server state into the mirror, as the server gave it: the server applied the shop's rules
//! already. A page that refers to what the mirror does not have yet is put in as far as it
//! can be, and what it lacks is answered ([`Missing`]) for the caller to fetch.

use rusqlite::{Connection, params};

use super::Local;
use super::provisional::servers_order_id;
use crate::domain::*;
use crate::engine::Change;
use crate::error::{Error, Result};

/// Server state for the mirror, a page at a time.
#[derive(Debug, Clone)]
pub(in crate::mirror) enum Put {
    Categories(Vec<Category>),
    Pets(Vec<Pet>),
    /// Pets with their stock, as a copy reads them.
    StockedPets(Vec<(Pet, InventoryItem)>),
    Stock(Vec<InventoryItem>),
    Orders(Vec<Order>),
}

impl Put {
    pub fn is_empty(&self) -> bool {
        match self {
            Put::Categories(list) => list.is_empty(),
            Put::Pets(list) => list.is_empty(),
            Put::StockedPets(list) => list.is_empty(),
            Put::Stock(list) => list.is_empty(),
            Put::Orders(list) => list.is_empty(),
        }
    }
}

/// What a [`Put`] could not take yet because what it refers to is not in the mirror (a
/// pet in a category created after the categories were read): fetch those, then put again.
#[derive(Debug, Default, PartialEq, Eq)]
pub(in crate::mirror) struct Missing {
    pub categories: Vec<CategoryId>,
    pub pets: Vec<PetId>,
}

impl Missing {
    pub fn is_empty(&self) -> bool {
        self.categories.is_empty() && self.pets.is_empty()
    }
}

impl Local {
    /// Puts server state into the mirror; with `seen`, as part of a full sync.
    pub(in crate::mirror) async fn put(&self, put: Put, seen: bool) -> Result<Missing> {
        let change = match &put {
            Put::Categories(_) => Change::Categories,
            Put::Pets(_) | Put::StockedPets(_) => Change::Pets,
            Put::Stock(_) => Change::Inventory,
            Put::Orders(_) => Change::Orders,
        };
        self.store.transact(Some(change), move |tx| put_all(tx.sql(), &put, seen)).await
    }

    /// Removes what the server deleted; an order with a write still waiting stays.
    pub(in crate::mirror) async fn remove(&self, entity: Entity, id: i64) -> Result<()> {
        let change = match entity {
            Entity::Category => Change::Categories,
            Entity::Order => Change::Orders,
            _ => Change::Pets,
        };
        self.store.transact(Some(change), move |tx| remove(tx.sql(), entity, id)).await
    }
}

fn put_all(tx: &Connection, put: &Put, seen: bool) -> Result<Missing> {
    let mut missing = Missing::default();
    match put {
        Put::Categories(list) => {
            let mut upsert = tx.prepare_cached(
                "INSERT INTO categories (id, name, name_folded, description, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_folded = excluded.name_folded,
                    description = excluded.description",
            )?;
            for c in list {
                upsert.execute(params![c.id, c.name, fold(&c.name), c.description, c.created_at])?;
                mark(tx, seen, "category", c.id.get())?;
            }
        }
        Put::Pets(list) => {
            let stocked: Vec<(&Pet, Option<&InventoryItem>)> = list.iter().map(|p| (p, None)).collect();
            put_pets(tx, &stocked, seen, &mut missing)?;
        }
        Put::StockedPets(list) => {
            let stocked: Vec<(&Pet, Option<&InventoryItem>)> =
                list.iter().map(|(p, i)| (p, Some(i))).collect();
            put_pets(tx, &stocked, seen, &mut missing)?;
        }
        Put::Stock(list) => {
            // The server's stock, with the deltas this till still has to send on top.
            let mut update = tx.prepare_cached(
                "UPDATE pets SET status = ?2, stock_updated_at = ?4,
                    stock = max(0, min(?5, ?3 + (SELECT coalesce(sum(stock_delta), 0) FROM outbox
                                                 WHERE pet_id = ?1 AND state = 'pending')))
                 WHERE id = ?1",
            )?;
            for item in list {
                let changed = update.execute(params![
                    item.pet_id,
                    item.status,
                    item.quantity,
                    item.updated_at,
                    StockLevel::MAX
                ])?;
                if changed == 0 {
                    missing.pets.push(item.pet_id);
                } else {
                    mark(tx, seen, "inventory", item.pet_id.get())?;
                }
            }
        }
        Put::Orders(list) => {
            let mut kept = Vec::with_capacity(list.len());
            for order in list {
                if exists(tx, "SELECT 1 FROM pets WHERE id = ?1", order.pet_id.get())? {
                    kept.push(order.clone());
                } else {
                    missing.pets.push(order.pet_id);
                }
            }
            put_orders(tx, &kept, seen)?;
        }
    }
    missing.categories.dedup();
    missing.pets.dedup();
    Ok(missing)
}

/// Pets as the server has them; with their stock, a pet new to the mirror is written once
/// rather than inserted and then updated (half the time of a copy).
fn put_pets(
    tx: &Connection,
    list: &[(&Pet, Option<&InventoryItem>)],
    seen: bool,
    missing: &mut Missing,
) -> Result<()> {
    let mut upsert = tx.prepare_cached(
        "INSERT INTO pets (id, name, name_folded, category_id, status, description, price_cents, sku, sku_folded,
                           stock, stock_updated_at, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?9, ?10, ?11, 0, ?7, ?7, ?8)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_folded = excluded.name_folded,
            category_id = excluded.category_id, status = excluded.status,
            description = excluded.description, price_cents = excluded.price_cents, sku = excluded.sku,
            sku_folded = excluded.sku_folded, updated_at = excluded.updated_at",
    )?;
    let mut upsert_stocked = tx.prepare_cached(
        "INSERT INTO pets (id, name, name_folded, category_id, status, description, price_cents, sku, sku_folded,
                           stock, stock_updated_at, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?9, ?10, ?11,
                 max(0, min(?14, ?12 + (SELECT coalesce(sum(stock_delta), 0) FROM outbox
                                        WHERE pet_id = ?1 AND state = 'pending'))),
                 ?13, ?7, ?8)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_folded = excluded.name_folded,
            category_id = excluded.category_id, status = excluded.status,
            description = excluded.description, price_cents = excluded.price_cents, sku = excluded.sku,
            sku_folded = excluded.sku_folded, updated_at = excluded.updated_at,
            stock = excluded.stock, stock_updated_at = excluded.stock_updated_at",
    )?;
    // A barcode the server moved from one pet to another: the pet that had it here loses
    // it now (its own change comes with the feed), so the mirror's unique index holds.
    let mut release_sku = tx
        .prepare_cached("UPDATE pets SET sku = NULL, sku_folded = NULL WHERE sku_folded = ?1 AND id <> ?2")?;
    for &(p, item) in list {
        if let Some(category) = p.category_id
            && !exists(tx, "SELECT 1 FROM categories WHERE id = ?1", category.get())?
        {
            missing.categories.push(category);
            continue;
        }
        let (name, folded, description) = (&p.name, fold(&p.name), &p.description);
        let sku_folded = p.sku.as_deref().map(fold_sku);
        if let Some(sku) = &sku_folded {
            release_sku.execute(params![sku, p.id])?;
        }
        let price = p.price.map(Price::cents);
        match item {
            None => upsert.execute(params![
                p.id,
                name,
                folded,
                p.category_id,
                p.status,
                description,
                p.created_at,
                p.updated_at,
                price,
                p.sku,
                sku_folded
            ])?,
            Some(item) => upsert_stocked.execute(params![
                p.id,
                name,
                folded,
                p.category_id,
                item.status,
                description,
                p.created_at,
                p.updated_at,
                price,
                p.sku,
                sku_folded,
                item.quantity,
                item.updated_at,
                StockLevel::MAX
            ])?,
        };
        mark(tx, seen, "pet", p.id.get())?;
        if item.is_some() {
            mark(tx, seen, "inventory", p.id.get())?;
        }
    }
    Ok(())
}

/// Orders as the server has them, except one with a write still waiting here: that one
/// stays as the till left it until the write is replayed.
pub(super) fn put_orders(tx: &Connection, list: &[Order], seen: bool) -> Result<()> {
    let mut upsert = tx.prepare_cached(
        "INSERT INTO orders (id, pet_id, quantity, ship_date, complete, created_at, unit_price_cents, completed_at,
                             customer_name, customer_name_folded, customer_phone, note, cancelled_at, placed_at,
                             placed_by, completed_by, cancelled_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
         ON CONFLICT (id) DO UPDATE SET pet_id = excluded.pet_id, quantity = excluded.quantity,
            ship_date = excluded.ship_date, complete = excluded.complete, created_at = excluded.created_at,
            unit_price_cents = excluded.unit_price_cents, completed_at = excluded.completed_at,
            customer_name = excluded.customer_name, customer_name_folded = excluded.customer_name_folded,
            customer_phone = excluded.customer_phone, note = excluded.note, cancelled_at = excluded.cancelled_at,
            placed_at = excluded.placed_at, placed_by = excluded.placed_by, completed_by = excluded.completed_by,
            cancelled_by = excluded.cancelled_by",
    )?;
    for o in list {
        servers_order_id(o.id)?;
        mark(tx, seen, "order", o.id.get())?;
        if waiting_on_order(tx, o.id)? {
            continue;
        }
        upsert.execute(params![
            o.id,
            o.pet_id,
            o.quantity,
            o.ship_date,
            o.complete,
            o.created_at,
            o.unit_price.map(Price::cents),
            o.completed_at,
            o.customer_name,
            o.customer_name.as_deref().map(fold),
            o.customer_phone,
            o.note,
            o.cancelled_at,
            o.placed_at,
            o.placed_by,
            o.completed_by,
            o.cancelled_by
        ])?;
    }
    Ok(())
}

fn waiting_on_order(tx: &Connection, id: OrderId) -> Result<bool> {
    exists(tx, "SELECT 1 FROM outbox WHERE order_id = ?1 AND state = 'pending'", id.get())
}

fn exists(tx: &Connection, sql: &str, id: i64) -> Result<bool> {
    Ok(tx.prepare_cached(sql)?.exists([id])?)
}

fn mark(tx: &Connection, seen: bool, entity: &str, id: i64) -> Result<()> {
    if seen {
        tx.prepare_cached("INSERT OR IGNORE INTO mirror_seen (entity, id) VALUES (?1, ?2)")?
            .execute(params![entity, id])?;
    }
    Ok(())
}

fn remove(tx: &Connection, entity: Entity, id: i64) -> Result<()> {
    match entity {
        Entity::Order => {
            let id = servers_order_id(OrderId::try_from(id).map_err(Error::internal)?)?;
            if !waiting_on_order(tx, id)? {
                tx.execute("DELETE FROM orders WHERE id = ?1", [id])?;
            }
        }
        Entity::Pet => {
            // Its server orders went with it there; one placed offline keeps it here until
            // the replay hears that it is gone.
            tx.execute(
                &format!("DELETE FROM orders WHERE pet_id = ?1 AND id < {PROVISIONAL_ORDER_IDS}"),
                [id],
            )?;
            let needed = exists(tx, "SELECT 1 FROM orders WHERE pet_id = ?1", id)?;
            if !needed {
                tx.execute("DELETE FROM pets WHERE id = ?1", [id])?;
            }
        }
        Entity::Category => {
            if !exists(tx, "SELECT 1 FROM pets WHERE category_id = ?1", id)? {
                tx.execute("DELETE FROM categories WHERE id = ?1", [id])?;
            }
        }
        Entity::Inventory | Entity::Shop | Entity::Activity => {}
    }
    Ok(())
}
