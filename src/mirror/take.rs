//! Taking server state into the mirror (`take_in`): what the feed, the copy and the replay share. A
//! put that refers to what the mirror does not have yet (a pet in a category created since)
//! fetches that first; and [`Stop`], what an error means for the mirror's task.

use super::local::{Missing, Put};
use super::{Shared, is_key_refused, is_offline};
use crate::Petstore;
use crate::domain::*;
use crate::error::{Error, ErrorCode, Result};

/// Pets asked for in one `GET /pets?id=...`.
pub(super) const PETS_PER_READ: i64 = Page::MAX_LIMIT as i64;

/// Why the task stopped what it was doing.
pub(super) enum Stop {
    /// The server cannot be reached (or answers 5xx): try again after a pause.
    Offline(Error),
    /// The server refused the key: wait until woken (a new mirror comes with a new key).
    KeyRefused(Error),
    /// The feed no longer has the mirror's position, or the shop was reloaded: copy anew.
    Recopy,
    /// Something else failed (the mirror's own file): log, pause, try again.
    Failed(Error),
    /// The change feed's stream ended or broke while the mirror was synced: the server
    /// may well be there (a stream has a lifetime, a proxy cuts long answers). Not offline
    /// until a request says so: pause, then read the feed again.
    FeedCut(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        if e.code == ErrorCode::Gone {
            Stop::Recopy
        } else if is_offline(&e) {
            Stop::Offline(e)
        } else if is_key_refused(&e) {
            Stop::KeyRefused(e)
        } else {
            Stop::Failed(e)
        }
    }
}

/// The pets of `ids` the server has.
pub(super) async fn read_pets(shared: &Shared, ids: &[i64]) -> Result<Vec<Pet>> {
    let ids = ids.iter().map(|&id| PetId::try_from(id).map_err(Error::internal)).collect::<Result<_>>()?;
    let filter = PetFilter { ids, ..PetFilter::default() };
    Ok(shared.client.list_pets(filter, Page::new(Page::MAX_LIMIT, 0)?).await?.items)
}

/// Takes server state into the mirror, first fetching what it refers to and the mirror
/// does not have yet (created on the server after the mirror last looked).
pub(super) async fn take_in(shared: &Shared, what: Put, seen: bool) -> Result<()> {
    if what.is_empty() {
        return Ok(());
    }
    let missing = shared.local.put(what.clone(), seen).await?;
    if missing.is_empty() {
        return Ok(());
    }
    fetch_missing(shared, missing).await?;
    // Whatever is still missing now was deleted on the server meanwhile; the feed says so.
    shared.local.put(what, seen).await?;
    Ok(())
}

async fn fetch_missing(shared: &Shared, missing: Missing) -> Result<()> {
    let mut categories = missing.categories;
    let ids: Vec<i64> = missing.pets.iter().map(|p| p.get()).collect();
    let mut pets = Vec::new();
    for chunk in ids.chunks(PETS_PER_READ as usize) {
        pets.extend(read_pets(shared, chunk).await?);
    }
    categories.extend(pets.iter().filter_map(|p| p.category_id));
    categories.sort();
    categories.dedup();
    let mut found = Vec::new();
    for id in categories {
        match shared.client.get_category(id).await {
            Ok(category) => found.push(category),
            Err(e) if e.code == ErrorCode::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    shared.local.put(Put::Categories(found), false).await?;
    if !pets.is_empty() {
        let items = pets.iter().map(|p| p.id).collect::<Vec<_>>();
        shared.local.put(Put::Pets(pets), false).await?;
        for pet in items {
            if let Ok(item) = shared.client.get_inventory(pet).await {
                shared.local.put(Put::Stock(vec![item]), false).await?;
            }
        }
    }
    Ok(())
}
