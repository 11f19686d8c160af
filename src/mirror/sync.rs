//! The mirror's task: a full copy when the mirror has none (or the server's feed no longer
//! reaches back to it), the outbox replayed, then the server's change feed applied as it
//! comes. `GET /events` only wakes the task; what changed is read with `GET /changes`
//! from the mirror's own position, a page at a time, so a burst of changes costs one read
//! of each thing changed, and nothing is applied twice or missed after a disconnect.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt};

use super::backoff::{self, Backoff, COPY_SPREAD};
use super::local::Put;
use super::staff::{self, STAFF_READ_EVERY};
use super::status::SyncState;
use super::take::{PETS_PER_READ, Stop, read_pets, take_in};
use super::{RETRY_MOST, Shared, replay};
use crate::Petstore;
use crate::client::Follower;
use crate::domain::*;
use crate::error::{Error, ErrorCode, Result};

/// How many changes one read of the feed takes.
const FEED_PAGE: u32 = 500;
/// Reads of the copy in flight at once, and pages put into the mirror in one write.
const READS_IN_FLIGHT: usize = 4;
const PAGES_PER_WRITE: usize = 50;
/// The most room made ahead from a count the server announces (`X-Total-Count`): a
/// hint for the memory to reserve, never a promise; a real shop's pets fit, a lie of a
/// trillion does not take the till down.
const CAPACITY_HINT_MOST: u64 = 1 << 20;
/// How many orders each page of the copy shares with the one before.
const ORDER_PAGE_OVERLAP: u32 = 10;

pub(super) async fn run(shared: Shared, origin: String) {
    let mut position = loop {
        match shared.local.open(&origin).await {
            Ok(position) => break position,
            Err(e) => {
                tracing::error!(error = %e.message, "the mirror cannot be opened; trying again in 5 s");
                tokio::time::sleep(RETRY_MOST).await;
            }
        }
    };
    shared.status.send_modify(|s| s.position = position);
    shared.counts_changed().await;
    let mut follower: Option<Follower> = None;
    let mut backoff = Backoff::new();
    // When the server's staff were last read: read again at each connection.
    let mut staff_read: Option<Instant> = None;
    loop {
        match step(&shared, &mut position, &mut follower, &mut staff_read).await {
            Ok(()) => backoff.reset(),
            Err(Stop::Recopy) => {
                position = None;
                // Every till is sent to copy anew at once: each starts at its own moment.
                tokio::time::sleep(backoff::random_up_to(COPY_SPREAD)).await;
            }
            Err(Stop::Offline(e)) => {
                shared.went_offline(&e);
                follower = None;
                staff_read = None;
                back_off(&shared, &mut backoff).await;
            }
            Err(Stop::KeyRefused(e)) => {
                tracing::warn!(error = %e.message, "the server refused the API key; the mirror waits for a new one");
                shared.set_state(SyncState::KeyRefused { reason: e.message });
                follower = None;
                shared.wake.notified().await;
            }
            Err(Stop::FeedCut(e)) => {
                tracing::debug!(error = %e.message, "the change feed's stream ended; reading the feed again");
                follower = None;
                back_off(&shared, &mut backoff).await;
            }
            Err(Stop::Failed(e)) => {
                tracing::warn!(error = %e.message, "syncing the mirror failed; trying again");
                back_off(&shared, &mut backoff).await;
            }
        }
    }
}

/// The pause after a failure: what the server asked for (`Retry-After`) whatever happens,
/// then the random rest, which a queued write cuts short.
async fn back_off(shared: &Shared, backoff: &mut Backoff) {
    let asked = shared.client.asked_to_wait();
    let pause = backoff.next(asked);
    if let Some(asked) = asked {
        tokio::time::sleep(asked).await;
    }
    wait(shared, pause.saturating_sub(asked.unwrap_or_default())).await;
}

/// Until `pause` ends or a write is queued.
async fn wait(shared: &Shared, pause: std::time::Duration) {
    tokio::select! {
        () = tokio::time::sleep(pause) => {}
        () = shared.wake.notified() => {}
    }
}

/// One round: copy if needed, replay, catch up, read the staff when due, then wait for
/// news (or the next reading of the staff).
async fn step(
    shared: &Shared,
    position: &mut Option<u64>,
    follower: &mut Option<Follower>,
    staff_read: &mut Option<Instant>,
) -> Result<(), Stop> {
    let at = match *position {
        Some(at) => at,
        None => {
            let at = copy(shared).await?;
            *position = Some(at);
            at
        }
    };
    if replay::drain(shared).await? {
        shared.set_state(SyncState::CatchingUp);
    }
    let at = catch_up(shared, at).await?;
    *position = Some(at);
    if staff_read.is_none_or(|read| read.elapsed() >= STAFF_READ_EVERY) {
        staff::read_staff(shared).await;
        *staff_read = Some(Instant::now());
    }
    shared.set_state(SyncState::Synced);
    let staff_due = staff_read.map_or(Duration::ZERO, |read| STAFF_READ_EVERY.saturating_sub(read.elapsed()));
    // Wait for news: a change past the mirror's position, or a write to send.
    let follower = follower.get_or_insert_with(|| shared.client.follow(Some(at)));
    let staff_due = tokio::time::sleep(staff_due);
    tokio::pin!(staff_due);
    loop {
        tokio::select! {
            () = &mut staff_due => return Ok(()),
            change = follower.next() => match change {
                Ok(change) if change.seq <= at => continue,
                Ok(_) => return Ok(()),
                // Behind the feed's horizon: the follower starts from now; the catch-up
                // that comes next finds out whether the mirror is, too.
                Err(e) if e.code == ErrorCode::Gone => {
                    *follower = shared.client.follow(None);
                    return Ok(());
                }
                Err(e) if e.code == ErrorCode::Unreachable => return Err(Stop::FeedCut(e)),
                Err(e) => return Err(Stop::from(e)),
            },
            () = shared.wake.notified() => return Ok(()),
        }
    }
}

/// Applies the feed after `since`, a page at a time, and answers the new position.
async fn catch_up(shared: &Shared, since: u64) -> Result<u64, Stop> {
    let mut at = since;
    loop {
        let page = shared.client.changes(Some(at), FEED_PAGE).await?;
        if page.changes.is_empty() {
            return Ok(at);
        }
        if page.next <= at {
            // Read again from the same place, the same page would come back, as fast as
            // the server answers: a server fault, which the task backs off from.
            return Err(Stop::Offline(Error::new(
                ErrorCode::BadResponse,
                format!(
                    "the server's change feed did not move on: after change {at} it gave {} changes and the next place {}",
                    page.changes.len(),
                    page.next
                ),
            )));
        }
        if page.changes.len() as u32 == FEED_PAGE {
            shared.set_state(SyncState::CatchingUp);
        }
        apply(shared, &page.changes).await?;
        shared.local.advance(page.next).await?;
        at = page.next;
        shared.status.send_modify(|s| s.position = Some(at));
    }
}

/// Reads what `changes` touched from the server and puts it into the mirror: each thing
/// once, whatever number of changes it had.
async fn apply(shared: &Shared, changes: &[FeedChange]) -> Result<(), Stop> {
    let (mut categories, mut pets, mut stock, mut orders) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    let mut deleted = Vec::new();
    for change in changes {
        let Some(id) = change.id else {
            // Only the shop's own changes have no id: a bulk load. Copy anew.
            return Err(Stop::Recopy);
        };
        match (change.entity, change.action) {
            (Entity::Shop, _) | (_, Action::Reset) => return Err(Stop::Recopy),
            // The log is the server's (the till reads it there); its reads ask for none.
            (Entity::Activity, _) => {}
            (entity, Action::Deleted) => deleted.push((entity, id)),
            (Entity::Category, _) => drop(categories.insert(id)),
            (Entity::Pet, _) => drop(pets.insert(id)),
            (Entity::Inventory, _) => drop(stock.insert(id)),
            (Entity::Order, _) => drop(orders.insert(id)),
        }
    }
    for id in categories {
        let id = CategoryId::try_from(id).map_err(Error::internal)?;
        let read = shared.client.get_category(id).await.map(|c| Put::Categories(vec![c]));
        reread(shared, (Entity::Category, id.get()), read).await?;
    }
    let pets: Vec<i64> = pets.into_iter().collect();
    for chunk in pets.chunks(PETS_PER_READ as usize) {
        let found = read_pets(shared, chunk).await?;
        for &id in chunk {
            if !found.iter().any(|p| p.id.get() == id) {
                shared.local.remove(Entity::Pet, id).await?;
            }
        }
        take_in(shared, Put::Pets(found), false).await?;
    }
    for id in stock {
        let pet = PetId::try_from(id).map_err(Error::internal)?;
        let read = shared.client.get_inventory(pet).await.map(|item| Put::Stock(vec![item]));
        reread(shared, (Entity::Pet, id), read).await?;
    }
    for id in orders {
        let id = OrderId::try_from(id).map_err(Error::internal)?;
        let read = shared.client.get_order(id).await.map(|order| Put::Orders(vec![order]));
        reread(shared, (Entity::Order, id.get()), read).await?;
    }
    for (entity, id) in deleted {
        shared.local.remove(entity, id).await?;
    }
    Ok(())
}

/// Copies the whole shop and answers the feed position the copy is current from. The feed
/// position is read first: whatever changes while the pages are read is in the feed after
/// it, and applied afterwards.
async fn copy(shared: &Shared) -> Result<u64, Stop> {
    let client = &shared.client;
    let head = client.changes(None, 1).await?.next;
    shared.local.begin().await?;

    let mut offset = 0;
    loop {
        let page = client.list_categories(Page::new(Page::MAX_LIMIT, offset)?).await?;
        let full = page.items.len() as u32 == Page::MAX_LIMIT;
        take_in(shared, Put::Categories(page.items), true).await?;
        if !full {
            break;
        }
        offset += Page::MAX_LIMIT;
    }

    // The stock first, held in memory (some 80 bytes a pet), so that each pet is written
    // once, with its stock. Pages by offset, as many as there are pets (a page past the
    // end is empty), several reads in flight: the copy waits on neither the network nor
    // the disk.
    let newest = PetFilter { sort: PetSort::IdDesc, ..PetFilter::default() };
    let last = client.list_pets(newest, Page::new(1, 0)?).await?;
    let total = last.total;
    let last = last.items.first().map_or(0, |p| p.id.get());
    shared.set_state(SyncState::Copying { done: 0, total: Some(total) });
    // The pages are read until one is not full: `X-Total-Count` only sizes the map, and
    // only up to what a shop can hold, since a server could announce anything.
    let filter = InventoryFilter::default();
    let offsets = (0..=Page::MAX_OFFSET / Page::MAX_LIMIT).map(|n| {
        let filter = filter.clone();
        async move { client.list_inventory(filter, Page::new(Page::MAX_LIMIT, n * Page::MAX_LIMIT)?).await }
    });
    let mut stock = HashMap::with_capacity(total.min(CAPACITY_HINT_MOST) as usize);
    let mut pages = stream::iter(offsets).buffered(READS_IN_FLIGHT);
    while let Some(page) = pages.next().await {
        let page = page?;
        let full = page.items.len() as u32 == Page::MAX_LIMIT;
        stock.extend(page.items.into_iter().map(|item| (item.pet_id, item)));
        if !full {
            break;
        }
    }
    drop(pages);

    // Pets by ranges of ids: each read is an index lookup on either engine, where a deep
    // OFFSET would cost more the further it goes.
    let ranges = (0..).map(|n| 1 + n * PETS_PER_READ).take_while(|from| *from <= last).map(|from| {
        let ids: Vec<i64> = (from..(from + PETS_PER_READ).min(last + 1)).collect();
        async move { read_pets(shared, &ids).await }
    });
    let mut pages = stream::iter(ranges).buffered(READS_IN_FLIGHT).chunks(PAGES_PER_WRITE);
    let mut done = 0;
    while let Some(batch) = pages.next().await {
        let pets: Vec<Pet> = batch.into_iter().collect::<Result<Vec<_>>>()?.into_iter().flatten().collect();
        done += pets.len() as u64;
        let (stocked, unstocked): (Vec<_>, Vec<_>) =
            pets.into_iter().map(|pet| (stock.remove(&pet.id), pet)).partition(|(item, _)| item.is_some());
        let stocked = stocked.into_iter().filter_map(|(item, pet)| Some((pet, item?))).collect();
        take_in(shared, Put::StockedPets(stocked), true).await?;
        take_in(shared, Put::Pets(unstocked.into_iter().map(|(_, pet)| pet).collect()), true).await?;
        shared.set_state(SyncState::Copying { done, total: Some(total) });
    }
    drop(stock);
    // The stock list is in stock order: a pet whose stock moved while it was read may
    // have been on no page. Those few are read one by one.
    for pet in shared.local.unseen_stock().await? {
        match client.get_inventory(pet).await {
            Ok(item) => drop(shared.local.put(Put::Stock(vec![item]), true).await?),
            Err(e) if e.code == ErrorCode::NotFound => {}
            Err(e) => return Err(e.into()),
        }
    }

    // The orders not cancelled, then the cancelled ones (the server lists them apart).
    for cancelled in [false, true] {
        copy_orders(shared, OrderFilter { cancelled, ..OrderFilter::default() }).await?;
    }

    shared.local.finish(head).await?;
    shared.status.send_modify(|s| s.position = Some(head));
    Ok(head)
}

/// Copies the orders of `filter`, newest first, each page overlapping the one before: an
/// order cancelled meanwhile moves the later pages up by one, and a page that does not
/// reach back to the last order read is read again from further up, so that none is
/// skipped. (One that moved to the other list meanwhile comes with the feed.)
async fn copy_orders(shared: &Shared, filter: OrderFilter) -> Result<(), Stop> {
    let mut offset = 0;
    let mut last_read: Option<OrderId> = None;
    loop {
        let page = shared.client.list_orders(filter.clone(), Page::new(Page::MAX_LIMIT, offset)?).await?;
        let full = page.items.len() as u32 == Page::MAX_LIMIT;
        if let (Some(last), Some(first)) = (last_read, page.items.first())
            && first.id < last
            && offset > 0
        {
            offset = offset.saturating_sub(ORDER_PAGE_OVERLAP);
            continue;
        }
        last_read = page.items.last().map(|o| o.id);
        // An order of a pet created after the pets were read comes with the feed.
        shared.local.put(Put::Orders(page.items), true).await?;
        if !full {
            return Ok(());
        }
        offset += Page::MAX_LIMIT - ORDER_PAGE_OVERLAP;
    }
}

/// Puts what the server answered for one thing, or removes `gone` from the mirror if the
/// server no longer has it.
async fn reread(shared: &Shared, gone: (Entity, i64), read: Result<Put>) -> Result<(), Stop> {
    match read {
        Ok(what) => Ok(take_in(shared, what, false).await?),
        Err(e) if e.code == ErrorCode::NotFound => Ok(shared.local.remove(gone.0, gone.1).await?),
        Err(e) => Err(e.into()),
    }
}
