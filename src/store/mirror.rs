//! The SQL of a mirror: a till's local copy of a remote shop (the sync logic is
//! `crate::mirror`). A mirror is an ordinary store (same schema, same reads, so browsing
//! offline is as fast as local mode) plus three tables of its own:
//!
//! - `mirror_state`: which remote it copies and how far into the remote's change feed it is;
//! - `mirror_seen`: what a full sync has received so far, so that what it did not receive
//!   (deleted on the server meanwhile) can be removed at its end;
//! - `outbox`: the writes taken offline, each in the same transaction as its effect here
//!   (stock reserved, the order shown), and `provisional_orders`: which server order an
//!   order placed offline became;
//! - `outbox_sent`: the keys of writes the server has taken, for as long as it keeps them,
//!   so that a client of the local API sending one again while the server cannot be
//!   reached gets what the server would answer, not a second sale.
//!
//! Server state comes in as the server gave it ("put"), never through the shop's rules:
//! the server applied them already. One rule of the mirror's own: a pet's stock is the
//! server's plus the deltas still waiting in the outbox, so that a sale taken offline stays
//! reserved whatever the server says meanwhile, and an order with a write still waiting is
//! shown as the till left it.
//!
//! The tables are made on opening a mirror (`IF NOT EXISTS`), not by the store's numbered
//! migrations: only mirror files have them, and a local or server database never does.

use rusqlite::{Connection, OptionalExtension, params};

use super::{Change, Store, inventory, orders};
use crate::domain::*;
use crate::error::{Error, ErrorCode, Result};

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS mirror_state (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    -- The remote's origin (scheme, host, port): one mirror file per remote.
    origin          TEXT NOT NULL,
    -- Every change of the remote's feed up to here is in the mirror; NULL until the first
    -- full sync has ended.
    position        INTEGER,
    synced_at       TEXT,
    -- The next id for an order placed offline (see PROVISIONAL_ORDER_IDS).
    next_provisional INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS mirror_seen (
    entity TEXT NOT NULL,
    id     INTEGER NOT NULL,
    PRIMARY KEY (entity, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS outbox (
    -- AUTOINCREMENT: a place in the queue is never given twice, even once the queue was empty.
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    -- The Idempotency-Key it is sent with.
    key         TEXT NOT NULL UNIQUE,
    command     TEXT NOT NULL,
    pet_id      INTEGER,
    order_id    INTEGER,
    -- What it did to the pet's stock here, kept on top of the server's stock while pending.
    stock_delta INTEGER NOT NULL DEFAULT 0,
    state       TEXT NOT NULL CHECK (state IN ('pending', 'attention')),
    reason      TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_pending_by_pet ON outbox (pet_id) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS outbox_pending_by_order ON outbox (order_id) WHERE state = 'pending';
CREATE TABLE IF NOT EXISTS provisional_orders (
    provisional INTEGER PRIMARY KEY,
    server      INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox_sent (
    key      TEXT PRIMARY KEY,
    command  TEXT NOT NULL,
    -- The server's id of the order it placed or completed.
    order_id INTEGER,
    sent_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_sent_by_time ON outbox_sent (sent_at);
";

/// How long a sent write's key is remembered: the server's default idempotency window.
const SENT_KEPT_DAYS: i64 = 7;

/// The writer's page cache during a full sync, and SQLite's default, in KiB (negative, as
/// `PRAGMA cache_size` takes a size in KiB).
const COPY_CACHE_KIB: i64 = -128 * 1024;
const DEFAULT_CACHE_KIB: i64 = -2000;

/// Server state for the mirror, a page at a time.
#[derive(Debug, Clone)]
pub enum Put {
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
pub struct Missing {
    pub categories: Vec<CategoryId>,
    pub pets: Vec<PetId>,
}

impl Missing {
    pub fn is_empty(&self) -> bool {
        self.categories.is_empty() && self.pets.is_empty()
    }
}

/// What a write taken offline answers, as its online twin would.
#[derive(Debug, Clone, PartialEq)]
pub enum Queued {
    Order(Order),
    Item(InventoryItem),
    Cancelled,
}

/// How the server took a queued write.
#[derive(Debug, Clone)]
pub enum Sent {
    /// An order placed: the provisional one becomes this.
    Placed(Order),
    /// Anything else, done.
    Done,
}

impl Store {
    /// Makes this store a mirror of the remote at `origin` (its tables, if new) and answers
    /// its feed position: `None` until a first full sync has ended. A file that mirrors
    /// another remote is refused.
    pub async fn mirror_open(&self, origin: &str) -> Result<Option<u64>> {
        let origin = origin.to_owned();
        self.exclusive(move |conn| {
            let tx = conn.transaction()?;
            tx.execute_batch(TABLES)?;
            tx.execute(
                "INSERT INTO mirror_state (id, origin, next_provisional) VALUES (1, ?1, ?2)
                 ON CONFLICT (id) DO NOTHING",
                params![origin, PROVISIONAL_ORDER_IDS],
            )?;
            let (mirrored, position): (String, Option<i64>) =
                tx.query_row("SELECT origin, position FROM mirror_state", [], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
            if mirrored != origin {
                return Err(Error::validation(format!(
                    "{} mirrors {mirrored}, not {origin}",
                    tx.path().unwrap_or("this database")
                )));
            }
            tx.commit()?;
            Ok(position.map(|p| p as u64))
        })
        .await
    }

    /// Starts a full sync: nothing received yet. Until [`Store::mirror_finish`] the writer
    /// keeps a large page cache: a copy writes every index of every table on random keys,
    /// and with SQLite's default 2 MB it wrote and re-read the same pages many times over
    /// (100,000 pets took 15 s instead of a few).
    pub async fn mirror_begin(&self) -> Result<()> {
        self.write_quietly(|tx| {
            tx.pragma_update(None, "cache_size", COPY_CACHE_KIB)?;
            Ok(tx.execute("DELETE FROM mirror_seen", []).map(drop)?)
        })
        .await
    }

    /// Puts server state into the mirror; with `seen`, as part of a full sync.
    pub async fn mirror_put(&self, put: Put, seen: bool) -> Result<Missing> {
        let change = match &put {
            Put::Categories(_) => Change::Categories,
            Put::Pets(_) | Put::StockedPets(_) => Change::Pets,
            Put::Stock(_) => Change::Inventory,
            Put::Orders(_) => Change::Orders,
        };
        self.write(change, move |tx| put_all(tx, &put, seen)).await
    }

    /// Removes what the server deleted; an order with a write still waiting stays.
    pub async fn mirror_remove(&self, entity: Entity, id: i64) -> Result<()> {
        let change = match entity {
            Entity::Category => Change::Categories,
            Entity::Order => Change::Orders,
            _ => Change::Pets,
        };
        self.write(change, move |tx| remove(tx, entity, id)).await
    }

    /// Ends a full sync that began at feed `position`: what the server no longer has goes
    /// (but never an order or pet a waiting write needs), and the feed is followed from
    /// `position`.
    pub async fn mirror_finish(&self, position: u64) -> Result<()> {
        self.write(Change::Pets, move |tx| {
            tx.execute_batch(&format!(
                "DELETE FROM orders WHERE id < {PROVISIONAL_ORDER_IDS}
                    AND id NOT IN (SELECT id FROM mirror_seen WHERE entity = 'order')
                    AND id NOT IN (SELECT order_id FROM outbox WHERE state = 'pending' AND order_id IS NOT NULL);
                 DELETE FROM pets WHERE id NOT IN (SELECT id FROM mirror_seen WHERE entity = 'pet')
                    AND id NOT IN (SELECT pet_id FROM orders);
                 DELETE FROM categories WHERE id NOT IN (SELECT id FROM mirror_seen WHERE entity = 'category')
                    AND id NOT IN (SELECT category_id FROM pets WHERE category_id IS NOT NULL);
                 DELETE FROM mirror_seen;"
            ))?;
            tx.pragma_update(None, "cache_size", DEFAULT_CACHE_KIB)?;
            advance(tx, position)
        })
        .await
    }

    /// Pets whose stock a full sync has not received: a page of the stock list, which is in
    /// stock order, misses a pet whose stock moved while the pages were read.
    pub async fn mirror_unseen_stock(&self) -> Result<Vec<PetId>> {
        self.read(|c| {
            let mut statement = c.prepare(
                "SELECT id FROM pets WHERE id NOT IN (SELECT id FROM mirror_seen WHERE entity = 'inventory')",
            )?;
            let ids = statement.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
            Ok(ids)
        })
        .await
    }

    /// Every change of the feed up to `position` is in the mirror.
    pub async fn mirror_advance(&self, position: u64) -> Result<()> {
        self.write_quietly(move |tx| advance(tx, position)).await
    }

    /// Takes `command` offline: its effect on the mirror, as the server would make it, and
    /// its place in the outbox under `key`, in one transaction. A provisional order id is
    /// given here, whatever `command` says.
    ///
    /// `unsure`: it was sent and no answer came (a time-out), so the server may have applied
    /// it. Then it is queued even when the mirror would refuse it (the mirror may be behind
    /// the server), with no effect on the stock here: the replay finds out, and the server's
    /// answer, or its refusal, is what counts.
    pub async fn queue(&self, key: String, command: Command, unsure: bool) -> Result<(Queued, Command)> {
        self.write(Change::Orders, move |tx| queue(tx, &key, command, None, unsure)).await
    }

    /// The server took `command` under `key` straight away (online): remembered as a
    /// replayed write is, so that the same key sent again while the server cannot be
    /// reached answers what the server did.
    pub async fn outbox_remember(
        &self,
        key: String,
        command: Command,
        order_id: Option<OrderId>,
    ) -> Result<()> {
        self.write_quietly(move |tx| keep_sent(tx, &key, &command, order_id)).await
    }

    /// The oldest write waiting for the server.
    pub async fn outbox_next(&self) -> Result<Option<OutboxEntry>> {
        self.read(|c| {
            let sql = format!("SELECT {ENTRY} FROM outbox WHERE state = 'pending' ORDER BY seq LIMIT 1");
            Ok(c.prepare_cached(&sql)?.query_row([], entry).optional()?)
        })
        .await
    }

    /// Every queued write, waiting or needing attention, in queue order.
    pub async fn outbox(&self) -> Result<Vec<OutboxEntry>> {
        self.read(|c| {
            let mut statement = c.prepare_cached(&format!("SELECT {ENTRY} FROM outbox ORDER BY seq"))?;
            let entries = statement.query_map([], entry)?.collect::<rusqlite::Result<_>>()?;
            Ok(entries)
        })
        .await
    }

    pub async fn outbox_counts(&self) -> Result<OutboxCounts> {
        self.read(|c| {
            Ok(c.query_row(
                "SELECT count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state = 'attention')
                 FROM outbox",
                [],
                |r| Ok(OutboxCounts { pending: r.get(0)?, attention: r.get(1)? }),
            )?)
        })
        .await
    }

    /// The server has the queued write `seq`: it leaves the queue, and an order placed
    /// offline becomes the server's (the provisional one is remembered as its alias).
    pub async fn outbox_sent(&self, seq: i64, sent: Sent) -> Result<()> {
        self.write(Change::Orders, move |tx| {
            let entry = find(tx, seq)?;
            if let Sent::Placed(order) = &sent {
                servers_order_id(order.id)?;
            }
            remember_sent(tx, &entry, &sent)?;
            if let (Sent::Placed(order), Command::PlaceOrder { order_id: provisional, .. }) =
                (&sent, &entry.command)
            {
                tx.execute(
                    "INSERT OR REPLACE INTO provisional_orders (provisional, server) VALUES (?1, ?2)",
                    params![provisional, order.id],
                )?;
                tx.execute("DELETE FROM outbox WHERE seq = ?1", [seq])?;
                // Later writes about it wait on the server's id now.
                tx.execute(
                    "UPDATE outbox SET order_id = ?2 WHERE order_id = ?1 AND state = 'pending'",
                    params![provisional, order.id],
                )?;
                // The order as the till has it (completed offline, say) under the server's
                // id; the stock it reserved is the server's now, so no stock moves here.
                tx.execute("DELETE FROM orders WHERE id = ?1", [order.id])?;
                tx.execute("UPDATE orders SET id = ?2 WHERE id = ?1", params![provisional, order.id])?;
                put_orders(tx, std::slice::from_ref(order), false)?;
            } else {
                tx.execute("DELETE FROM outbox WHERE seq = ?1", [seq])?;
            }
            Ok(())
        })
        .await
    }

    /// The server refused the queued write `seq` for `reason`: it needs attention, and its
    /// effect no longer counts (an order placed offline is taken off the mirror; its stock
    /// comes back when the pet's stock is next put).
    pub async fn outbox_refused(&self, seq: i64, reason: String) -> Result<()> {
        self.write(Change::Orders, move |tx| {
            let entry = find(tx, seq)?;
            tx.execute(
                "UPDATE outbox SET state = 'attention', reason = ?2 WHERE seq = ?1",
                params![seq, reason],
            )?;
            if let Command::PlaceOrder { order_id, .. } = entry.command {
                tx.execute("DELETE FROM orders WHERE id = ?1", [order_id])?;
            }
            // What the clerk sees until the server's stock is put again.
            tx.execute(
                "UPDATE pets SET stock = max(0, stock - o.stock_delta)
                 FROM (SELECT pet_id, stock_delta FROM outbox WHERE seq = ?1) o WHERE pets.id = o.pet_id",
                [seq],
            )?;
            Ok(())
        })
        .await
    }

    /// Sends a write that needs attention again, under a new `key`, at the end of the
    /// queue: its effect is made again here first, so it is refused at once if the mirror
    /// shows it cannot be done.
    pub async fn outbox_retry(&self, seq: i64, key: String) -> Result<Queued> {
        self.write(Change::Orders, move |tx| {
            let entry = find(tx, seq)?;
            if entry.state != OutboxState::Attention {
                return Err(Error::validation(format!("queued write {seq} does not need attention")));
            }
            tx.execute("DELETE FROM outbox WHERE seq = ?1", [seq])?;
            let provisional = match entry.command {
                Command::PlaceOrder { order_id, .. } => Some(order_id),
                _ => None,
            };
            queue(tx, &key, entry.command, provisional, false).map(|(queued, _)| queued)
        })
        .await
    }

    /// Drops a write that needs attention: it will never reach the server.
    pub async fn outbox_drop(&self, seq: i64) -> Result<()> {
        self.write(Change::Orders, move |tx| {
            let entry = find(tx, seq)?;
            if entry.state != OutboxState::Attention {
                return Err(Error::validation(format!(
                    "queued write {seq} is still waiting for the server; only one that needs attention can be dropped"
                )));
            }
            tx.execute("DELETE FROM outbox WHERE seq = ?1", [seq])?;
            Ok(())
        })
        .await
    }

    /// The server's id of an order placed offline as `provisional`, once replayed.
    pub async fn server_order_id(&self, provisional: OrderId) -> Result<Option<OrderId>> {
        self.read_bounded(move |c| server_order_id(c, provisional)).await
    }
}

fn server_order_id(c: &Connection, provisional: OrderId) -> Result<Option<OrderId>> {
    Ok(c.prepare_cached("SELECT server FROM provisional_orders WHERE provisional = ?1")?
        .query_row([provisional], |r| r.get(0))
        .optional()?)
}

/// `id`, or the server's id of the order placed offline as `id` once it has one.
fn current_order_id(c: &Connection, id: OrderId) -> Result<OrderId> {
    Ok(if id.is_provisional() { server_order_id(c, id)?.unwrap_or(id) } else { id })
}

fn advance(tx: &Connection, position: u64) -> Result<()> {
    let position = i64::try_from(position).map_err(Error::internal)?;
    tx.execute("UPDATE mirror_state SET position = ?1, synced_at = ?2", params![position, Timestamp::now()])?;
    Ok(())
}

/// An outbox entry's columns, and the name of the pet it is about as the mirror has it
/// now (through its order for a completion or a cancellation), so staff read names.
const ENTRY: &str = "seq, key, command, state, reason, created_at,
    (SELECT name FROM pets WHERE id = coalesce(outbox.pet_id,
        (SELECT pet_id FROM orders WHERE orders.id = outbox.order_id)))";

fn entry(r: &rusqlite::Row<'_>) -> rusqlite::Result<OutboxEntry> {
    let command: String = r.get(2)?;
    let state: String = r.get(3)?;
    let unreadable =
        |what: String| rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, what.into());
    Ok(OutboxEntry {
        seq: r.get(0)?,
        key: r.get(1)?,
        command: serde_json::from_str(&command)
            .map_err(|e| unreadable(format!("an unreadable queued write: {e}")))?,
        state: OutboxState::parse(&state)
            .ok_or_else(|| unreadable(format!("an unknown outbox state {state:?}")))?,
        reason: r.get(4)?,
        created_at: r.get(5)?,
        pet_name: r.get(6)?,
    })
}

fn find(tx: &Connection, seq: i64) -> Result<OutboxEntry> {
    tx.prepare_cached(&format!("SELECT {ENTRY} FROM outbox WHERE seq = ?1"))?
        .query_row([seq], entry)
        .optional()?
        .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("queued write {seq} does not exist")))
}

/// The effect of `command` on the mirror and its outbox entry. An order placed offline is
/// placed as the store places one, then numbered in the provisional range (`provisional`,
/// or the next one free).
fn queue(
    tx: &Connection,
    key: &str,
    command: Command,
    provisional: Option<OrderId>,
    unsure: bool,
) -> Result<(Queued, Command)> {
    if let Some(earlier) = earlier_under(tx, key)? {
        return queued_again(tx, earlier, &command).map(|queued| (queued, command));
    }
    // A sale taken offline keeps the moment it was made, whenever it reaches the server;
    // one that was sent and may have been applied goes again exactly as it was sent.
    let command = match command {
        Command::PlaceOrder { order_id, mut order } if !unsure => {
            order.placed_at.get_or_insert_with(Timestamp::now);
            Command::PlaceOrder { order_id, order }
        }
        Command::CompleteOrder { order_id, completed_at } if !unsure => {
            Command::CompleteOrder { order_id, completed_at: completed_at.or_else(|| Some(Timestamp::now())) }
        }
        command => command,
    };
    match queue_with_effect(tx, key, command.clone(), provisional) {
        Err(e) if unsure && e.code.status() == 409 => queue_without_effect(tx, key, command, provisional),
        queued => queued,
    }
}

fn queue_with_effect(
    tx: &Connection,
    key: &str,
    command: Command,
    provisional: Option<OrderId>,
) -> Result<(Queued, Command)> {
    let (queued, command, pet, delta) = match command {
        Command::PlaceOrder { order, .. } => {
            let placed = orders::place(tx, &order)?;
            let id = match provisional {
                Some(id) => id,
                None => next_provisional(tx)?,
            };
            tx.execute("UPDATE orders SET id = ?2 WHERE id = ?1", params![placed.id, id])?;
            let delta = -placed.quantity;
            let placed = Order { id, ..placed };
            let pet = order.pet_id;
            (Queued::Order(placed), Command::PlaceOrder { order_id: id, order }, pet, delta)
        }
        Command::CompleteOrder { order_id, completed_at } => {
            let patch = OrderPatch { complete: Some(true), completed_at, ..OrderPatch::default() };
            let order = orders::update(tx, order_id, &patch)?;
            (Queued::Order(order.clone()), Command::CompleteOrder { order_id, completed_at }, order.pet_id, 0)
        }
        Command::CancelOrder { order_id } => {
            let order = orders::get(tx, order_id)?;
            orders::cancel(tx, order_id)?;
            (Queued::Cancelled, Command::CancelOrder { order_id }, order.pet_id, order.quantity)
        }
        Command::AdjustInventory { pet_id, adjustment } => {
            let item = inventory::adjust(tx, pet_id, &adjustment)?;
            let delta = adjustment.delta.get();
            (Queued::Item(item), Command::AdjustInventory { pet_id, adjustment }, pet_id, delta)
        }
    };
    insert_entry(tx, key, &command, Some(pet), delta)?;
    Ok((queued, command))
}

/// A write that may already be on the server but that the mirror would refuse (it shows
/// too little stock, or the pet no longer available, since the mirror is behind): queued
/// with no effect on the stock here. An order is shown as taken, so that it can be
/// followed; the replay puts the server's answer in its place, or takes it off.
fn queue_without_effect(
    tx: &Connection,
    key: &str,
    command: Command,
    provisional: Option<OrderId>,
) -> Result<(Queued, Command)> {
    let (queued, command, pet) = match command {
        Command::PlaceOrder { order, .. } => {
            let id = match provisional {
                Some(id) => id,
                None => next_provisional(tx)?,
            };
            let shown = orders::insert_as_is(tx, id, &order)?;
            let pet = order.pet_id;
            (Queued::Order(shown), Command::PlaceOrder { order_id: id, order }, Some(pet))
        }
        Command::CompleteOrder { order_id, .. } => (Queued::Order(orders::get(tx, order_id)?), command, None),
        Command::CancelOrder { .. } => (Queued::Cancelled, command, None),
        Command::AdjustInventory { pet_id, .. } => {
            (Queued::Item(inventory::get(tx, pet_id)?), command, Some(pet_id))
        }
    };
    insert_entry(tx, key, &command, pet, 0)?;
    Ok((queued, command))
}

fn insert_entry(tx: &Connection, key: &str, command: &Command, pet: Option<PetId>, delta: i64) -> Result<()> {
    let json = serde_json::to_string(command).map_err(Error::internal)?;
    tx.prepare_cached(
        "INSERT INTO outbox (key, command, pet_id, order_id, stock_delta, state, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6)",
    )?
    .execute(params![key, json, pet, command.order_id(), delta, Timestamp::now()])?;
    Ok(())
}

/// A write taken under `key` before: still in the outbox, or sent and remembered.
fn earlier_under(tx: &Connection, key: &str) -> Result<Option<Earlier>> {
    let queued =
        tx.prepare_cached(&format!("SELECT {ENTRY} FROM outbox WHERE key = ?1"))?.query_row([key], entry);
    if let Some(entry) = queued.optional()? {
        return Ok(Some(Earlier::Queued(entry)));
    }
    let sent = tx
        .prepare_cached("SELECT command, order_id FROM outbox_sent WHERE key = ?1")?
        .query_row([key], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<OrderId>>(1)?)))
        .optional()?;
    let Some((command, order_id)) = sent else { return Ok(None) };
    let command = serde_json::from_str(&command).map_err(Error::internal)?;
    Ok(Some(Earlier::Sent { command, order_id }))
}

enum Earlier {
    Queued(OutboxEntry),
    /// On the server; `order_id` is its id of the order placed or completed.
    Sent {
        command: Command,
        order_id: Option<OrderId>,
    },
}

/// The server took the queued write `entry`: see [`keep_sent`].
fn remember_sent(tx: &Connection, entry: &OutboxEntry, sent: &Sent) -> Result<()> {
    let order_id = match (sent, &entry.command) {
        (Sent::Placed(order), _) => Some(order.id),
        (_, Command::CompleteOrder { order_id, .. }) => Some(current_order_id(tx, *order_id)?),
        _ => None,
    };
    keep_sent(tx, &entry.key, &entry.command, order_id)
}

/// The server took `command` under `key`: the key is remembered for as long as the server
/// keeps it, with the order it placed or completed, and keys older than that go.
fn keep_sent(tx: &Connection, key: &str, command: &Command, order_id: Option<OrderId>) -> Result<()> {
    let json = serde_json::to_string(command).map_err(Error::internal)?;
    let now = chrono::Utc::now();
    tx.prepare_cached(
        "INSERT OR REPLACE INTO outbox_sent (key, command, order_id, sent_at) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![key, json, order_id, Timestamp::from(now)])?;
    let horizon = Timestamp::from(now - chrono::TimeDelta::days(SENT_KEPT_DAYS));
    tx.prepare_cached("DELETE FROM outbox_sent WHERE sent_at < ?1")?.execute([horizon])?;
    Ok(())
}

/// A write sent again under the key of one still in the outbox (a client of the local API
/// retrying): the same request answers what the first one did, as it stands now; another
/// request under that key is refused, as the server refuses it.
fn queued_again(tx: &Connection, earlier: Earlier, command: &Command) -> Result<Queued> {
    let earlier = match earlier {
        Earlier::Queued(entry) => entry,
        Earlier::Sent { command: first, order_id } => return sent_again(tx, &first, order_id, command),
    };
    if !same_request(tx, &earlier.command, command)? {
        return Err(key_reused());
    }
    if earlier.state == OutboxState::Attention {
        return Err(Error::validation(format!(
            "the server refused this write ({}): it waits under \"needs attention\" in the till's outbox",
            earlier.reason.unwrap_or_default()
        )));
    }
    Ok(match earlier.command {
        Command::PlaceOrder { order_id, .. } | Command::CompleteOrder { order_id, .. } => {
            Queued::Order(orders::get(tx, current_order_id(tx, order_id)?)?)
        }
        Command::CancelOrder { .. } => Queued::Cancelled,
        Command::AdjustInventory { pet_id, .. } => Queued::Item(inventory::get(tx, pet_id)?),
    })
}

/// Whether `command` is the request `first` was. An order is named by the id it has now:
/// an order placed offline may have become the server's since its first request named it.
fn same_request(tx: &Connection, first: &Command, command: &Command) -> Result<bool> {
    Ok(match (first, command) {
        // The moment the till stamped when it queued the first is not part of the request.
        (Command::PlaceOrder { order: first, .. }, Command::PlaceOrder { order, .. }) => {
            NewOrder { placed_at: None, ..first.clone() } == NewOrder { placed_at: None, ..order.clone() }
        }
        (Command::CompleteOrder { order_id: first, .. }, Command::CompleteOrder { order_id, .. })
        | (Command::CancelOrder { order_id: first }, Command::CancelOrder { order_id }) => {
            current_order_id(tx, *first)? == current_order_id(tx, *order_id)?
        }
        (first, command) => first == command,
    })
}

/// A write sent again under the key of one the server has taken: the same request answers
/// what the server made of it (the order as the mirror has it now), and nothing is queued.
fn sent_again(
    tx: &Connection,
    first: &Command,
    order_id: Option<OrderId>,
    command: &Command,
) -> Result<Queued> {
    if !same_request(tx, first, command)? {
        return Err(key_reused());
    }
    Ok(match (first, order_id) {
        (Command::PlaceOrder { .. } | Command::CompleteOrder { .. }, Some(id)) => match orders::get(tx, id) {
            Ok(order) => Queued::Order(order),
            // Taken by the server, but not in the mirror yet (the till stopped before the
            // answer was put in): nothing more is queued; the client is told to ask again.
            Err(e) if e.code == ErrorCode::NotFound => {
                return Err(Error::new(
                    ErrorCode::Unreachable,
                    format!(
                        "the server has this request already (order {id}); this till cannot show it \
                         until the server answers again: send the request again then"
                    ),
                ));
            }
            Err(e) => return Err(e),
        },
        (Command::AdjustInventory { pet_id, .. }, _) => Queued::Item(inventory::get(tx, *pet_id)?),
        _ => Queued::Cancelled,
    })
}

fn key_reused() -> Error {
    Error::new(
        ErrorCode::IdempotencyKeyReused,
        "the Idempotency-Key was already used for a different request",
    )
}

fn next_provisional(tx: &Connection) -> Result<OrderId> {
    let id: i64 = tx.query_row(
        "UPDATE mirror_state SET next_provisional = next_provisional + 1 RETURNING next_provisional - 1",
        [],
        |r| r.get(0),
    )?;
    OrderId::try_from(id).map_err(Error::internal)
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
fn put_orders(tx: &Connection, list: &[Order], seen: bool) -> Result<()> {
    let mut upsert = tx.prepare_cached(
        "INSERT INTO orders (id, pet_id, quantity, ship_date, complete, created_at, unit_price_cents, completed_at,
                             customer_name, customer_name_folded, customer_phone, note, cancelled_at, placed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
         ON CONFLICT (id) DO UPDATE SET pet_id = excluded.pet_id, quantity = excluded.quantity,
            ship_date = excluded.ship_date, complete = excluded.complete, created_at = excluded.created_at,
            unit_price_cents = excluded.unit_price_cents, completed_at = excluded.completed_at,
            customer_name = excluded.customer_name, customer_name_folded = excluded.customer_name_folded,
            customer_phone = excluded.customer_phone, note = excluded.note, cancelled_at = excluded.cancelled_at,
            placed_at = excluded.placed_at",
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
            o.placed_at
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

/// `id` as the server numbered it, or `bad_response` if it lies in the range this till
/// numbers its offline orders in: taken as the server's, it would overwrite or delete an
/// order the till placed offline and has not sent yet.
fn servers_order_id(id: OrderId) -> Result<OrderId> {
    if id.is_provisional() {
        return Err(Error::new(
            ErrorCode::BadResponse,
            format!(
                "the server named an order {id}, in the range this till numbers the orders it takes offline in (from {PROVISIONAL_ORDER_IDS}); nothing of it was taken"
            ),
        ));
    }
    Ok(id)
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
        Entity::Inventory | Entity::Shop => {}
    }
    Ok(())
}
