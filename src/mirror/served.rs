//! What the till's local API serves in remote mode ([`Mirror::served`]): the mirror as a
//! [`Database`] with the capabilities it has. Reads come from the mirror, writes go the
//! window's way (to the server, or into the outbox while it cannot be reached). A client's
//! `Idempotency-Key` goes with its write, to the server or into the outbox, so its retry is
//! applied once either way. The change feed is the mirror's own (its triggers number what
//! it takes in); the named API keys are the computer's. It has no imports: pets are made
//! on the server.
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tokio::sync::broadcast;

use super::{Mirror, new_key};
use crate::Store;
use crate::api_key::{IssuedKey, KeyInfo, KeyMatch, Scope};
use crate::domain::*;
use crate::engine::{Capability, Change, Database, Exports, Feed, Keys, Served};
use crate::error::Result;
use crate::idempotency::{IdempotencyKey, Once};

impl Mirror {
    fn keys(&self) -> &Store {
        self.inner.keys.as_ref().unwrap_or(self.store())
    }
}

#[async_trait]
impl Database for Mirror {
    /// Forwarded under the client's key, to the server or into the outbox: the outcome,
    /// whatever it is, is the first one's (the server's or the outbox's), so a refusal is
    /// an outcome and not a failure.
    async fn once(
        &self,
        key: IdempotencyKey,
        write: CounterWrite,
        _: DateTime<Utc>,
    ) -> Result<Once<CounterAnswer>> {
        Ok(Once { outcome: Mirror::once(self, key.forwarded(), write).await, replayed: false })
    }
    async fn delete_order(&self, id: OrderId) -> Result<()> {
        Mirror::once(self, new_key(), CounterWrite::Delete(id)).await.map(drop)
    }
    /// The writes of the member signed in at the local API go with their proofs, sent or
    /// queued (`served_staff.rs`); the server attributes the rest to the till's key.
    fn acting(&self, actor: Actor) -> Arc<dyn Database> {
        match self.local_api_actor(&actor) {
            Some(who) => Arc::new(Mirror::acting(self, who)),
            None => Arc::new(self.clone()),
        }
    }
}

#[async_trait]
impl Keys for Mirror {
    async fn find_key(&self, hash: [u8; 32]) -> Result<KeyMatch> {
        self.keys().find_key(hash).await
    }
    async fn create_key(&self, name: Name, scope: Scope) -> Result<IssuedKey> {
        self.keys().create_key(name, scope).await
    }
    async fn list_keys(&self) -> Result<Vec<KeyInfo>> {
        self.keys().list_keys().await
    }
    async fn revoke_key(&self, name: &str) -> Result<KeyInfo> {
        self.keys().revoke_key(name).await
    }
    async fn rotate_key(&self, name: &str) -> Result<IssuedKey> {
        self.keys().rotate_key(name).await
    }
    /// The computer's own keys (its local API's), kept in its own store, as `actor`'s.
    fn keys_acting(&self, actor: Actor) -> Arc<dyn Keys> {
        self.keys().keys_acting(actor)
    }
}

#[async_trait]
impl Feed for Mirror {
    fn subscribe(&self) -> broadcast::Receiver<Change> {
        Mirror::subscribe(self)
    }
    async fn feed_bounds(&self) -> Result<FeedBounds> {
        self.store().feed_bounds().await
    }
    async fn feed_head(&self, scope: FeedScope) -> Result<u64> {
        self.store().feed_head(scope).await
    }
    async fn changes_since(&self, since: u64, limit: u32, scope: FeedScope) -> Result<FeedPage> {
        self.store().changes_since(since, limit, scope).await
    }
    async fn purge_changes(&self, before: DateTime<Utc>) -> Result<u64> {
        self.store().purge_changes(before).await
    }
}

#[async_trait]
impl Exports for Mirror {
    async fn export_pets(&self, after: i64, limit: u32) -> Result<Vec<PetExport>> {
        self.store().export_pets(after, limit).await
    }
    async fn export_orders(
        &self,
        created: Option<(Timestamp, Timestamp)>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<OrderExport>> {
        self.store().export_orders(created, after, limit).await
    }
}

impl Mirror {
    /// What the app's local API serves in remote mode: the mirror, with every capability it
    /// has. It has no imports (nor demo data, which no caller asks of a till): pets are
    /// made on the server, and a till that made them would only hold copies.
    pub fn served(&self) -> Served {
        let mirror = Arc::new(self.clone());
        Served {
            shop: mirror.clone(),
            keys: mirror.clone(),
            feed: mirror.clone(),
            exports: mirror,
            imports: Capability::Lacks(
                "a till in remote mode does not import pets; import them on the server (its API, POST /imports/pets)",
            ),
            staff: Capability::Has(Arc::new(super::served_staff::TillStaff(self.clone()))),
        }
    }
}
