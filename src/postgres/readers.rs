//! A pet by id, the API's most frequent read, on a few connections every request shares,
//! with the statement prepared once per connection. tokio-postgres pipelines the queries
//! of concurrent requests on one connection, so PostgreSQL answers a batch of them per
//! wake-up of one backend instead of one query per wake-up of each of the pool's sixteen:
//! on two cores shared with PostgreSQL, the context switches saved are most of the cost of
//! a read this small. Writes and longer reads keep the pool (a transaction needs its
//! connection to itself, and a slow query would hold up those pipelined behind it).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio_postgres::{Client, Statement};

use super::{PgTarget, pets};
use crate::domain::{Pet, PetId};
use crate::error::{Error, Result};

/// Connections shared for point reads: one per core of a typical server.
const READERS: usize = 2;

pub(super) struct Readers {
    target: PgTarget,
    slots: [Slot; READERS],
    next: AtomicUsize,
}

#[derive(Default)]
struct Slot {
    /// The connection in use, while it is open.
    reader: Mutex<Option<Arc<Reader>>>,
    /// Held while (re)connecting, so that requests arriving meanwhile wait for that one
    /// connection instead of each making its own.
    connecting: tokio::sync::Mutex<()>,
}

struct Reader {
    client: Client,
    pet: Statement,
    driver: tokio::task::JoinHandle<()>,
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

impl Readers {
    pub(super) fn new(target: PgTarget) -> Self {
        Self { target, slots: Default::default(), next: AtomicUsize::new(0) }
    }

    pub(super) async fn pet(&self, id: PetId) -> Result<Pet> {
        let slot = &self.slots[self.next.fetch_add(1, Ordering::Relaxed) % READERS];
        let reader = self.reader(slot).await?;
        let row = match reader.client.query_opt(&reader.pet, &[&id.get()]).await {
            Ok(row) => row,
            // The connection was cut (PostgreSQL restarted, an administrator ended the
            // session) and the client may not know it yet: a read by key is safe to send
            // again, once, on a new connection, so a cut costs a reconnect, not an error.
            Err(e) => {
                tracing::warn!(error = %e, "a point read failed; reading again on a new connection");
                slot.forget(&reader);
                let reader = self.reader(slot).await?;
                reader.client.query_opt(&reader.pet, &[&id.get()]).await.map_err(super::pg)?
            }
        };
        row.map(|r| pets::from_row(&r, 0)).transpose()?.ok_or_else(|| Error::not_found(PetId::WHAT, id.get()))
    }

    /// `slot`'s connection, made (again) if it is not open.
    async fn reader(&self, slot: &Slot) -> Result<Arc<Reader>> {
        if let Some(reader) = slot.open() {
            return Ok(reader);
        }
        let _connecting = slot.connecting.lock().await;
        if let Some(reader) = slot.open() {
            return Ok(reader);
        }
        let (client, connection) =
            self.target.connect().await.map_err(|e| Error::internal(self.target.describe(&e)))?;
        let driver = tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(error = %e, "a PostgreSQL connection for point reads closed");
            }
        });
        let pet = client.prepare(pets::FIND).await.map_err(super::pg)?;
        let reader = Arc::new(Reader { client, pet, driver });
        *slot.reader.lock().unwrap_or_else(|p| p.into_inner()) = Some(reader.clone());
        Ok(reader)
    }
}

impl Slot {
    fn open(&self) -> Option<Arc<Reader>> {
        let reader = self.reader.lock().unwrap_or_else(|p| p.into_inner());
        reader.as_ref().filter(|r| !r.client.is_closed()).cloned()
    }

    /// Drops `dead` from the slot, unless another request already put a new one there.
    fn forget(&self, dead: &Arc<Reader>) {
        let mut reader = self.reader.lock().unwrap_or_else(|p| p.into_inner());
        if reader.as_ref().is_some_and(|r| Arc::ptr_eq(r, dead)) {
            *reader = None;
        }
    }
}
