//! The PostgreSQL store's capabilities besides the shop (`shop.rs`) and its named keys
//! (`keys.rs`): its change feed, the exports' pages, the pet import and the demo data, each
//! a statement or a transaction on a pooled connection around the functions of its
//! resource module.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tokio::sync::broadcast;

use super::{PgStore, changes, exports, feed, imports, pg, seed};
use crate::admission::WriteAdmission;
use crate::domain::*;
use crate::engine::{Change, Exports, Feed, Imports, SeedReport, Seeding};
use crate::error::Result;

#[async_trait]
impl Feed for PgStore {
    fn subscribe(&self) -> broadcast::Receiver<Change> {
        PgStore::subscribe(self)
    }
    fn feed_notices(&self) -> broadcast::Receiver<Change> {
        PgStore::feed_notices(self)
    }
    async fn feed_bounds(&self) -> Result<FeedBounds> {
        feed::bounds(&*self.client().await?).await
    }
    async fn feed_head(&self, scope: FeedScope) -> Result<u64> {
        feed::head(&*self.client().await?, scope).await
    }
    async fn changes_since(&self, since: u64, limit: u32, scope: FeedScope) -> Result<FeedPage> {
        feed::since(&*self.client().await?, since, limit, scope).await
    }
    async fn purge_changes(&self, before: DateTime<Utc>) -> Result<u64> {
        let before = Timestamp::from(before);
        let mut client = self.client().await?;
        let mut removed = 0;
        loop {
            let batch = feed::purge(&mut client, before).await?;
            removed += batch;
            if batch < feed::BATCH as u64 {
                break;
            }
        }
        // The hourly housekeeping also learns whether records scoped by a secret are left.
        let by_secret = super::idempotency::any_by_secret(&*client).await?;
        self.inner.by_secret.store(by_secret, std::sync::atomic::Ordering::Relaxed);
        Ok(removed)
    }
}

#[async_trait]
impl Exports for PgStore {
    async fn export_pets(&self, after: i64, limit: u32) -> Result<Vec<PetExport>> {
        exports::pets_after(&*self.client().await?, after, limit).await
    }
    async fn export_orders(
        &self,
        created: Option<(Timestamp, Timestamp)>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<OrderExport>> {
        exports::orders_after(&*self.client().await?, created, after, limit).await
    }
}

#[async_trait]
impl Imports for PgStore {
    /// One transaction that announces what it made; a dry run's is always rolled back.
    async fn import_pets(
        &self,
        rows: Vec<ImportRow>,
        create_categories: bool,
        dry_run: bool,
    ) -> Result<ImportReport> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg)?;
        let report = imports::import(&tx, &rows, create_categories, &self.actor).await?;
        if dry_run {
            tx.rollback().await.map_err(pg)?;
            return Ok(ImportReport { dry_run: true, ..report });
        }
        for change in [Change::Pets, Change::Categories, Change::Inventory] {
            changes::notify(&tx, change).await?;
        }
        WriteAdmission::begin_current()?;
        tx.commit().await.map_err(pg)?;
        Ok(report)
    }
    fn imports_acting(&self, actor: Actor) -> Arc<dyn Imports> {
        Arc::new(PgStore { actor: Arc::new(actor), ..self.clone() })
    }
}

#[async_trait]
impl Seeding for PgStore {
    async fn seed(&self, pets: u64, progress: Box<dyn Fn(u64) + Send + Sync>) -> Result<SeedReport> {
        let mut client = self.client().await?;
        seed::seed(&mut client, pets, &*progress).await
    }
}
