//! The store's capabilities besides the shop (`shop.rs`) and its named keys (`keys.rs`):
//! its change feed, the exports' pages, the pet import and the demo data, each one read or
//! write transaction around the functions of its resource module.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tokio::sync::broadcast;

use super::{Change, Store, exports, feed, imports, seed};
use crate::domain::*;
use crate::engine::{Exports, Feed, Imports, SeedReport, Seeding};
use crate::error::Result;

#[async_trait]
impl Feed for Store {
    fn subscribe(&self) -> broadcast::Receiver<Change> {
        Store::subscribe(self)
    }
    async fn feed_bounds(&self) -> Result<FeedBounds> {
        self.read_bounded(feed::bounds).await
    }
    async fn feed_head(&self, scope: FeedScope) -> Result<u64> {
        self.read_bounded(move |c| feed::head(c, scope)).await
    }
    async fn changes_since(&self, since: u64, limit: u32, scope: FeedScope) -> Result<FeedPage> {
        self.read(move |c| feed::since(c, since, limit, scope)).await
    }
    async fn purge_changes(&self, before: DateTime<Utc>) -> Result<u64> {
        let before = Timestamp::from(before);
        let mut removed = 0;
        // A batch per group transaction, so orders placed meanwhile wait for one batch only.
        loop {
            let batch = self.write_quietly(move |tx| feed::purge(tx, before)).await?;
            removed += batch;
            if batch < u64::from(feed::PURGE_BATCH) {
                return Ok(removed);
            }
        }
    }
}

#[async_trait]
impl Exports for Store {
    async fn export_pets(&self, after: i64, limit: u32) -> Result<Vec<PetExport>> {
        self.read(move |c| exports::pets_after(c, after, limit)).await
    }
    async fn export_orders(
        &self,
        created: Option<(Timestamp, Timestamp)>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<OrderExport>> {
        self.read(move |c| exports::orders_after(c, created, after, limit)).await
    }
}

#[async_trait]
impl Imports for Store {
    /// One write (its own savepoint: a refusal rolls all of it back); a dry run in a
    /// transaction of its own that is always rolled back.
    async fn import_pets(
        &self,
        rows: Vec<ImportRow>,
        create_categories: bool,
        dry_run: bool,
    ) -> Result<ImportReport> {
        let by = self.actor.clone();
        if dry_run {
            return self
                .exclusive(move |conn| {
                    let tx = conn.transaction()?;
                    let report = imports::import(&tx, &rows, create_categories, &by)?;
                    tx.rollback()?;
                    Ok(ImportReport { dry_run: true, ..report })
                })
                .await;
        }
        let report =
            self.write(Change::Pets, move |tx| imports::import(tx, &rows, create_categories, &by)).await?;
        for change in [Change::Categories, Change::Inventory] {
            self.announce(change);
        }
        Ok(report)
    }
    fn imports_acting(&self, actor: Actor) -> Arc<dyn Imports> {
        Arc::new(Store { actor: Arc::new(actor), ..self.clone() })
    }
}

#[async_trait]
impl Seeding for Store {
    async fn seed(&self, pets: u64, progress: Box<dyn Fn(u64) + Send + Sync>) -> Result<SeedReport> {
        self.exclusive(move |conn| seed::seed(conn, pets, progress)).await
    }
}
