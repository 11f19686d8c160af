//! Sending the outbox. The rules:
//!
//! 1. In the order the writes were made, one at a time: a completion never overtakes the
//!    sale it completes.
//! 2. Each write with its own `Idempotency-Key` (a UUID kept with it): sent again after a
//!    lost answer, a kill or a restart, the server applies it once and answers as the
//!    first time.
//! 3. An order placed offline has a provisional id until the server's answer; a later
//!    write about it is sent with the server's id. If the order never reached the server
//!    (it was refused), the write about it is refused here too.
//! 4. A refusal (a 4xx: another till sold the last one) is not retried: the write needs
//!    attention, its effect on the mirror is taken back, and the queue goes on.
//! 5. The server unreachable or failing (5xx, a time-out): the queue stops where it is and
//!    is sent again, from the same write, once the server answers.
//! 6. The key refused (401, 403): the queue stops until the key is changed.

use std::time::Duration;

use super::local::{Proofs, Put, Sent};
use super::take::{Stop, take_in};
use super::{Shared, is_key_refused, is_offline};
use crate::Petstore;
use crate::domain::*;
use crate::error::{Error, ErrorCode, Result};

/// Sends every waiting write; answers whether there were any. Then reads again the stock
/// of every pet a sent or refused write was about: a write the server had applied before
/// (its answer was lost) is answered from its key, and a refused one changes nothing, so
/// in neither case would a change of the feed bring the server's stock, and the mirror
/// would keep a reservation, or the one it gave back, that the server does not have.
pub(super) async fn drain(shared: &Shared) -> Result<bool, Stop> {
    let mut sent_any = false;
    let mut touched = std::collections::BTreeSet::new();
    let drained = drain_from(shared, &mut sent_any, &mut touched).await;
    for pet in touched {
        if let Ok(item) = shared.client.get_inventory(pet).await {
            put_quietly(shared, Put::Stock(vec![item])).await;
        }
    }
    drained.map(|()| sent_any)
}

async fn drain_from(
    shared: &Shared,
    sent_any: &mut bool,
    touched: &mut std::collections::BTreeSet<PetId>,
) -> Result<(), Stop> {
    let mut window = None;
    while let Some((entry, proofs)) = shared.local.next_queued().await? {
        *sent_any = true;
        // Asked once a drain, and only when there is something to send.
        let window = match window {
            Some(window) => window,
            None => *window.insert(shared.client.idempotency_window().await?),
        };
        if let Some(reason) = too_old(&entry, window, Timestamp::now()) {
            tracing::info!(write = %entry.command.describe(), "a write taken offline is older than the server keeps keys; it needs attention");
            shared.local.refused(entry.seq, reason).await?;
            touched.extend(entry.command.pet_id());
            shared.counts_changed().await;
            continue;
        }
        match send(shared, &entry, &proofs).await {
            Ok(sent) => {
                touched.extend(entry.command.pet_id());
                shared.local.sent(entry.seq, sent).await?
            }
            Err(e) if is_offline(&e) || is_key_refused(&e) => return Err(e.into()),
            Err(e) => {
                tracing::info!(write = %entry.command.describe(), reason = %e.message, "the server refused a write taken offline; it needs attention");
                shared.local.refused(entry.seq, e.message).await?;
                // Its reservation was given back here; what the server has is read again
                // below, since a refusal moves nothing there that the feed would bring.
                touched.extend(entry.command.pet_id());
                refresh_order(shared, &entry.command).await;
            }
        }
        shared.counts_changed().await;
    }
    Ok(())
}

/// Why `entry` must not be sent now, if it was queued longer ago than the server's
/// idempotency `window`: a try of it that reached the server (its answer lost) is no
/// longer known there, so sending it again could sell twice. Staff check and decide.
fn too_old(entry: &OutboxEntry, window: Duration, now: Timestamp) -> Option<String> {
    let age = (now.as_datetime() - entry.created_at.as_datetime()).to_std().ok()?;
    (age >= window).then(|| {
        format!(
            "taken offline {} ago, longer than the server remembers a write ({}): if it reached the server before, sending it again would make it twice. Check the server's orders, then send it again or drop it",
            human(age),
            human(window)
        )
    })
}

/// A duration in the largest whole unit: "8 days", "3 h", "45 min", "20 s".
fn human(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        s if s >= 2 * 86_400 => format!("{} days", s / 86_400),
        s if s >= 3_600 => format!("{} h", s / 3_600),
        s if s >= 60 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

/// Sends `entry` with the proofs of who made it (none: as the till's key's).
async fn send(shared: &Shared, entry: &OutboxEntry, proofs: &Proofs) -> Result<Sent> {
    let mut write = entry.command.write();
    if let Some(order) = write.order() {
        write = write.on_order(server_id(shared, order).await?);
    }
    let answer = shared.client.acting(&proofs.headers())?.once(&entry.key, &write).await?;
    match write {
        CounterWrite::Place(_) => answer.into_order().map(Sent::Placed),
        _ => Ok(Sent::Done),
    }
}

/// The server's id of `order`: itself, or the one the order placed offline became.
async fn server_id(shared: &Shared, order: OrderId) -> Result<OrderId> {
    if !order.is_provisional() {
        return Ok(order);
    }
    shared.local.server_order_id(order).await?.ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidReference,
            format!("order {order} was taken offline and never reached the server (see its own entry)"),
        )
    })
}

/// A write about an order was refused: the order, which the mirror kept as the till left
/// it, is read again as the server has it.
async fn refresh_order(shared: &Shared, command: &Command) {
    let (Command::CompleteOrder { order_id, .. } | Command::CancelOrder { order_id }) = command else {
        return;
    };
    let Ok(id) = server_id(shared, *order_id).await else { return };
    match shared.client.get_order(id).await {
        Ok(order) => {
            let pet = order.pet_id;
            put_quietly(shared, Put::Orders(vec![order])).await;
            if let Ok(item) = shared.client.get_inventory(pet).await {
                put_quietly(shared, Put::Stock(vec![item])).await;
            }
        }
        Err(e) if e.code == ErrorCode::NotFound => {
            let _ = shared.local.remove(Entity::Order, id.get()).await;
        }
        // The feed brings it later.
        Err(_) => {}
    }
}

/// Puts an answer into the mirror; the feed brings the same later if this fails.
async fn put_quietly(shared: &Shared, what: Put) {
    if let Err(e) = take_in(shared, what, false).await {
        tracing::debug!(error = %e.message, "an answer could not be put into the mirror; the feed brings it");
    }
}
