//! The outbox: the writes taken offline, each with its effect on the mirror in the same
//! write, through the shop's own rules ([`Transaction`]); sent in order by the replay, and
//! what the server made of each taken back into the mirror. A write sent again under a key
//! the outbox or the server has already answers what the first one did.

use rusqlite::{Connection, OptionalExtension, params};

use super::put::put_orders;
use super::{Local, provisional, sent};
use crate::domain::*;
use crate::engine::Change;
use crate::error::{Error, ErrorCode, Result};
use crate::idempotency::Request;
use crate::store::Transaction;

/// What a write taken offline answers, as its online twin would.
#[derive(Debug, Clone, PartialEq)]
#[expect(
    clippy::large_enum_variant,
    reason = "an order, the large variant, is the common answer: boxing it would add an allocation to most answers and save nothing"
)]
pub(in crate::mirror) enum Queued {
    Order(Order),
    Item(InventoryItem),
    Cancelled,
}

/// Who made a queued write, for the server: the proofs made with the PINs of the person
/// and the approving manager over its key (`crate::staff::proof`), as the headers carry
/// them. Empty for a write by a till with no one signed in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(in crate::mirror) struct Proofs {
    pub staff: Option<String>,
    pub approval: Option<String>,
}

/// How the server took a queued write.
#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "an order, the large variant, is the common answer: boxing it would add an allocation to most answers and save nothing"
)]
pub(in crate::mirror) enum Sent {
    /// An order placed: the provisional one becomes this.
    Placed(Order),
    /// Anything else, done.
    Done,
}

impl Local {
    /// Takes `command` offline: its effect on the mirror, as the server would make it, and
    /// its place in the outbox under `key`, in one transaction. A provisional order id is
    /// given here, whatever `command` says.
    ///
    /// `unsure`: it was sent and no answer came (a time-out), so the server may have applied
    /// it. Then it is queued even when the mirror would refuse it (the mirror may be behind
    /// the server), with no effect on the stock here: the replay finds out, and the server's
    /// answer, or its refusal, is what counts.
    pub(in crate::mirror) async fn queue(
        &self,
        key: String,
        command: Command,
        unsure: bool,
        proofs: Proofs,
    ) -> Result<(Queued, Command)> {
        self.store
            .transact(Some(Change::Orders), move |tx| {
                let queued = queue(tx, &key, command, None, unsure)?;
                keep_proofs(tx.sql(), &key, &proofs)?;
                Ok(queued)
            })
            .await
    }

    /// The server took `command` under `key` straight away (online): remembered as a
    /// replayed write is, so that the same key sent again while the server cannot be
    /// reached answers what the server did.
    pub(in crate::mirror) async fn remember(
        &self,
        key: String,
        command: Command,
        order_id: Option<OrderId>,
    ) -> Result<()> {
        self.store.transact(None, move |tx| sent::keep(tx.sql(), &key, &command, order_id)).await
    }

    /// The oldest write waiting for the server, and who made it.
    pub(in crate::mirror) async fn next_queued(&self) -> Result<Option<(OutboxEntry, Proofs)>> {
        self.store
            .read(|c| {
                let sql = format!(
                    "SELECT {ENTRY}, staff_proof, approval_proof FROM outbox WHERE state = 'pending' ORDER BY seq LIMIT 1"
                );
                let row = c.prepare_cached(&sql)?.query_row([], |r| {
                    Ok((entry(r)?, Proofs { staff: r.get(7)?, approval: r.get(8)? }))
                });
                Ok(row.optional()?)
            })
            .await
    }

    /// Every queued write, waiting or needing attention, in queue order.
    pub(in crate::mirror) async fn outbox(&self) -> Result<Vec<OutboxEntry>> {
        self.store
            .read(|c| {
                let mut statement = c.prepare_cached(&format!("SELECT {ENTRY} FROM outbox ORDER BY seq"))?;
                let entries = statement.query_map([], entry)?.collect::<rusqlite::Result<_>>()?;
                Ok(entries)
            })
            .await
    }

    pub(in crate::mirror) async fn outbox_counts(&self) -> Result<OutboxCounts> {
        self.store
            .read(|c| {
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
    pub(in crate::mirror) async fn sent(&self, seq: i64, sent: Sent) -> Result<()> {
        self.store
            .transact(Some(Change::Orders), move |tx| {
                let tx = tx.sql();
                let entry = find(tx, seq)?;
                if let Sent::Placed(order) = &sent {
                    provisional::servers_order_id(order.id)?;
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
    pub(in crate::mirror) async fn refused(&self, seq: i64, reason: String) -> Result<()> {
        self.store
            .transact(Some(Change::Orders), move |tx| {
                let tx = tx.sql();
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
    /// shows it cannot be done. `proofs` are made over the new key by whoever sends it
    /// again: it is theirs now.
    pub(in crate::mirror) async fn retry(&self, seq: i64, key: String, proofs: Proofs) -> Result<Queued> {
        self.store
            .transact(Some(Change::Orders), move |tx| {
                let entry = find(tx.sql(), seq)?;
                if entry.state != OutboxState::Attention {
                    return Err(Error::validation(format!("queued write {seq} does not need attention")));
                }
                tx.sql().execute("DELETE FROM outbox WHERE seq = ?1", [seq])?;
                let provisional = match entry.command {
                    Command::PlaceOrder { order_id, .. } => Some(order_id),
                    _ => None,
                };
                let (queued, _) = queue(tx, &key, entry.command, provisional, false)?;
                keep_proofs(tx.sql(), &key, &proofs)?;
                Ok(queued)
            })
            .await
    }

    /// Drops a write that needs attention: it will never reach the server.
    pub(in crate::mirror) async fn drop_queued(&self, seq: i64) -> Result<()> {
        self.store.transact(Some(Change::Orders), move |tx| {
            let tx = tx.sql();
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
    pub(in crate::mirror) async fn server_order_id(&self, provisional: OrderId) -> Result<Option<OrderId>> {
        self.store.read_bounded(move |c| provisional::server_order_id(c, provisional)).await
    }
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
    tx: &Transaction<'_>,
    key: &str,
    command: Command,
    provisional: Option<OrderId>,
    unsure: bool,
) -> Result<(Queued, Command)> {
    if let Some(earlier) = earlier_under(tx.sql(), key)? {
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
    tx: &Transaction<'_>,
    key: &str,
    command: Command,
    provisional: Option<OrderId>,
) -> Result<(Queued, Command)> {
    let (queued, command, pet, delta) = match command {
        Command::PlaceOrder { order, .. } => {
            let placed = tx.place_order(&order)?;
            let id = match provisional {
                Some(id) => id,
                None => provisional::next(tx.sql())?,
            };
            tx.sql().execute("UPDATE orders SET id = ?2 WHERE id = ?1", params![placed.id, id])?;
            let delta = -placed.quantity;
            let placed = Order { id, ..placed };
            let pet = order.pet_id;
            (Queued::Order(placed), Command::PlaceOrder { order_id: id, order }, pet, delta)
        }
        Command::CompleteOrder { order_id, completed_at } => {
            let patch = OrderPatch { complete: Some(true), completed_at, ..OrderPatch::default() };
            let order = tx.update_order(order_id, &patch)?;
            (Queued::Order(order.clone()), Command::CompleteOrder { order_id, completed_at }, order.pet_id, 0)
        }
        Command::CancelOrder { order_id } => {
            let order = tx.order(order_id)?;
            tx.cancel_order(order_id)?;
            (Queued::Cancelled, Command::CancelOrder { order_id }, order.pet_id, order.quantity)
        }
        Command::AdjustInventory { pet_id, adjustment } => {
            let item = tx.adjust_inventory(pet_id, &adjustment)?;
            let delta = adjustment.delta.get();
            (Queued::Item(item), Command::AdjustInventory { pet_id, adjustment }, pet_id, delta)
        }
    };
    insert_entry(tx.sql(), key, &command, Some(pet), delta)?;
    Ok((queued, command))
}

/// A write that may already be on the server but that the mirror would refuse (it shows
/// too little stock, or the pet no longer available, since the mirror is behind): queued
/// with no effect on the stock here. An order is shown as taken, so that it can be
/// followed; the replay puts the server's answer in its place, or takes it off.
fn queue_without_effect(
    tx: &Transaction<'_>,
    key: &str,
    command: Command,
    provisional: Option<OrderId>,
) -> Result<(Queued, Command)> {
    let (queued, command, pet) = match command {
        Command::PlaceOrder { order, .. } => {
            let id = match provisional {
                Some(id) => id,
                None => provisional::next(tx.sql())?,
            };
            let shown = tx.insert_order_as_is(id, &order)?;
            let pet = order.pet_id;
            (Queued::Order(shown), Command::PlaceOrder { order_id: id, order }, Some(pet))
        }
        Command::CompleteOrder { order_id, .. } => (Queued::Order(tx.order(order_id)?), command, None),
        Command::CancelOrder { .. } => (Queued::Cancelled, command, None),
        Command::AdjustInventory { pet_id, .. } => {
            (Queued::Item(tx.inventory_item(pet_id)?), command, Some(pet_id))
        }
    };
    insert_entry(tx.sql(), key, &command, pet, 0)?;
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

/// Who made the write just queued under `key`. A write queued before under the same key
/// (sent again) keeps the proofs it had.
fn keep_proofs(tx: &Connection, key: &str, proofs: &Proofs) -> Result<()> {
    if proofs.staff.is_none() {
        return Ok(());
    }
    tx.prepare_cached(
        "UPDATE outbox SET staff_proof = ?2, approval_proof = ?3 WHERE key = ?1 AND staff_proof IS NULL",
    )?
    .execute(params![key, proofs.staff, proofs.approval])?;
    Ok(())
}

/// A write taken under `key` before: still in the outbox, or sent and remembered.
fn earlier_under(tx: &Connection, key: &str) -> Result<Option<Earlier>> {
    let queued =
        tx.prepare_cached(&format!("SELECT {ENTRY} FROM outbox WHERE key = ?1"))?.query_row([key], entry);
    if let Some(entry) = queued.optional()? {
        return Ok(Some(Earlier::Queued(entry)));
    }
    Ok(sent::find(tx, key)?.map(|(command, order_id)| Earlier::Sent { command, order_id }))
}

enum Earlier {
    Queued(OutboxEntry),
    /// On the server; `order_id` is its id of the order placed or completed.
    Sent {
        command: Command,
        order_id: Option<OrderId>,
    },
}

/// The server took the queued write `entry`: its key is remembered (see [`sent::keep`]).
fn remember_sent(tx: &Connection, entry: &OutboxEntry, sent: &Sent) -> Result<()> {
    let order_id = match (sent, &entry.command) {
        (Sent::Placed(order), _) => Some(order.id),
        (_, Command::CompleteOrder { order_id, .. }) => Some(provisional::current_order_id(tx, *order_id)?),
        _ => None,
    };
    sent::keep(tx, &entry.key, &entry.command, order_id)
}

/// A write sent again under the key of one still in the outbox (a client of the local API
/// retrying): the same request answers what the first one did, as it stands now; another
/// request under that key is refused, as the server refuses it.
fn queued_again(tx: &Transaction<'_>, earlier: Earlier, command: &Command) -> Result<Queued> {
    let earlier = match earlier {
        Earlier::Queued(entry) => entry,
        Earlier::Sent { command: first, order_id } => return sent_again(tx, &first, order_id, command),
    };
    if !same_request(tx.sql(), &earlier.command, command)? {
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
            Queued::Order(tx.order(provisional::current_order_id(tx.sql(), order_id)?)?)
        }
        Command::CancelOrder { .. } => Queued::Cancelled,
        Command::AdjustInventory { pet_id, .. } => Queued::Item(tx.inventory_item(pet_id)?),
    })
}

/// Whether `command` is the request `first` was, by the rule the server keeps its keys
/// by (`idempotency::Request`: the moment the till stamped a write with is not part of
/// it). An order is named by the id it has now: an order placed offline may have become
/// the server's since its first request named it.
fn same_request(tx: &Connection, first: &Command, command: &Command) -> Result<bool> {
    let request = |command: &Command| {
        let write = command.write();
        let write = match write.order() {
            Some(id) => write.on_order(provisional::current_order_id(tx, id)?),
            None => write,
        };
        Request::of(&write)
    };
    Ok(request(command)?.is(request(first)?.fingerprint()))
}

/// A write sent again under the key of one the server has taken: the same request answers
/// what the server made of it (the order as the mirror has it now), and nothing is queued.
fn sent_again(
    tx: &Transaction<'_>,
    first: &Command,
    order_id: Option<OrderId>,
    command: &Command,
) -> Result<Queued> {
    if !same_request(tx.sql(), first, command)? {
        return Err(key_reused());
    }
    Ok(match (first, order_id) {
        (Command::PlaceOrder { .. } | Command::CompleteOrder { .. }, Some(id)) => match tx.order(id) {
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
        (Command::AdjustInventory { pet_id, .. }, _) => Queued::Item(tx.inventory_item(*pet_id)?),
        _ => Queued::Cancelled,
    })
}

fn key_reused() -> Error {
    Error::new(
        ErrorCode::IdempotencyKeyReused,
        "the Idempotency-Key was already used for a different request",
    )
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::Store;
    use crate::engine::Database;
    use crate::idempotency::IdempotencyKey;

    fn parse<T: serde::de::DeserializeOwned>(json: &str) -> T {
        serde_json::from_str(json).unwrap()
    }

    /// A key sent again with a write is taken by the till's outbox for the first request
    /// exactly when the server takes it so: otherwise a retry answered by the outbox while
    /// offline would be refused once online, or the other way round.
    #[tokio::test]
    async fn the_outbox_and_the_server_agree_on_which_write_a_key_was_for() {
        let (order, other) = (OrderId::try_from(7).unwrap(), OrderId::try_from(8).unwrap());
        let sale = |json: &str| Command::place(parse(json));
        let complete = |order_id, at: Option<&str>| Command::CompleteOrder {
            order_id,
            completed_at: at.map(|at| parse(&format!("\"{at}\""))),
        };
        let adjust = |json: &str| Command::AdjustInventory {
            pet_id: PetId::try_from(3).unwrap(),
            adjustment: parse(json),
        };
        let pairs = [
            // The till's own moment is not part of the request.
            (sale(r#"{"petId": 3, "placedAt": "2026-11-27T09:00:00Z"}"#), sale(r#"{"petId": 3}"#), true),
            (sale(r#"{"petId": 3}"#), sale(r#"{"petId": 3, "quantity": 2}"#), false),
            (complete(order, Some("2026-11-27T09:00:00Z")), complete(order, None), true),
            (complete(order, None), complete(other, None), false),
            (complete(order, None), Command::CancelOrder { order_id: order }, false),
            (Command::CancelOrder { order_id: order }, Command::CancelOrder { order_id: order }, true),
            (Command::CancelOrder { order_id: order }, Command::CancelOrder { order_id: other }, false),
            (
                adjust(r#"{"delta": -2, "reason": "broken"}"#),
                adjust(r#"{"reason": "broken", "delta": -2}"#),
                true,
            ),
            (
                adjust(r#"{"delta": -2, "reason": "broken"}"#),
                adjust(r#"{"delta": -2, "reason": "lost"}"#),
                false,
            ),
            (adjust(r#"{"delta": 1, "reason": "found"}"#), sale(r#"{"petId": 3}"#), false),
        ];
        let dir = tempfile::tempdir().unwrap();
        let server = Store::open(dir.path().join("server.db")).unwrap();
        let till = Connection::open_in_memory().unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 27, 10, 0, 0).unwrap();
        for (i, (first, again, same)) in pairs.iter().enumerate() {
            assert_eq!(same_request(&till, first, again).unwrap(), *same, "the outbox, {first:?} {again:?}");
            // The shop is empty: each first write is refused, and the refusal kept.
            let key = || IdempotencyKey::new("till", &format!("k{i}")).unwrap();
            server.once(key(), first.write(), now).await.unwrap();
            let taken = match server.once(key(), again.write(), now).await {
                Ok(replayed) => replayed.replayed,
                Err(e) if e.code == ErrorCode::IdempotencyKeyReused => false,
                Err(e) => panic!("{e:?}"),
            };
            assert_eq!(taken, *same, "the server, {first:?} {again:?}");
        }
    }
}
