//! The PostgreSQL store as a [`Petstore`] and a [`Database`] (its counter writes; its other
//! capabilities are in `capabilities.rs`): a read is one statement on a
//! pooled connection (in autocommit, so it sees everything committed on any replica); a
//! write is one transaction that also announces its change (see `changes.rs`), or, for
//! the common order, one statement (see `orders.rs`).

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use deadpool_postgres::GenericClient;

use super::{
    PgStore, activity, categories, changes, idempotency, inventory, orders, pets, pg, reports, settings,
};
use crate::admission::WriteAdmission;
use crate::domain::activity as log;
use crate::domain::*;
use crate::engine::{Change, Database, Petstore};
use crate::error::Result;
use crate::idempotency::{IdempotencyKey, Once};

/// Runs `$body` (an expression using `$tx`, the transaction) as one write: in a
/// transaction on a pooled connection that announces `$change` and commits, if its request
/// is still waited for. On an error the transaction is dropped, which rolls it back before
/// the connection serves anyone else.
macro_rules! write {
    ($store:expr, $change:expr, |$tx:ident| $body:expr) => {{
        let mut client = $store.client().await?;
        let $tx = client.transaction().await.map_err(pg)?;
        let value = $body.await?;
        changes::notify(&$tx, $change).await?;
        // Past this point the write may be applied (see `crate::admission`).
        WriteAdmission::begin_current()?;
        $tx.commit().await.map_err(pg)?;
        Ok(value)
    }};
}

/// `write` (a write's future in the transaction `c`), then the activity log's `entry` of
/// its answer, in the same transaction.
async fn logged<T>(
    c: &impl GenericClient,
    write: impl Future<Output = Result<T>>,
    entry: impl FnOnce(&T) -> NewActivity,
) -> Result<T> {
    let answer = write.await?;
    activity::record(c, &entry(&answer)).await?;
    Ok(answer)
}

/// Runs `$body` (an expression using `$c`, a pooled connection) as one read.
macro_rules! read {
    ($store:expr, |$c:ident| $body:expr) => {{
        let conn = $store.client().await?;
        let $c = &*conn;
        $body.await
    }};
}

#[async_trait]
impl Petstore for PgStore {
    async fn list_pets(&self, filter: PetFilter, page: Page) -> Result<Paged<Pet>> {
        read!(self, |c| pets::list(c, &filter, page))
    }
    async fn create_pet(&self, new: NewPet) -> Result<Pet> {
        let by = &*self.actor;
        write!(self, Change::Pets, |tx| logged(&tx, pets::create(&tx, &new), |pet| {
            log::pet_written(ActivityKind::PetCreated, pet.id, Some(&pet.name), by)
        }))
    }
    async fn get_pet(&self, id: PetId) -> Result<Pet> {
        self.readers().pet(id).await
    }
    async fn replace_pet(&self, id: PetId, new: NewPet) -> Result<Pet> {
        let by = &*self.actor;
        write!(self, Change::Pets, |tx| logged(&tx, pets::replace(&tx, id, &new), |pet| {
            log::pet_written(ActivityKind::PetUpdated, pet.id, Some(&pet.name), by)
        }))
    }
    async fn update_pet(&self, id: PetId, patch: PetPatch) -> Result<Pet> {
        let by = &*self.actor;
        write!(self, Change::Pets, |tx| logged(&tx, pets::update(&tx, id, &patch), |pet| {
            log::pet_written(ActivityKind::PetUpdated, pet.id, Some(&pet.name), by)
        }))
    }
    async fn delete_pet(&self, id: PetId) -> Result<()> {
        let by = &*self.actor;
        write!(self, Change::Pets, |tx| logged(&tx, pets::delete(&tx, id), |()| {
            log::pet_written(ActivityKind::PetDeleted, id, None, by)
        }))
    }

    async fn list_categories(&self, page: Page) -> Result<Paged<Category>> {
        read!(self, |c| categories::list(c, page))
    }
    async fn create_category(&self, new: NewCategory) -> Result<Category> {
        let by = &*self.actor;
        write!(self, Change::Categories, |tx| logged(&tx, categories::create(&tx, &new), |c| {
            log::category_written(ActivityKind::CategoryCreated, c.id, Some(&c.name), by)
        }))
    }
    async fn get_category(&self, id: CategoryId) -> Result<Category> {
        read!(self, |c| categories::get(c, id))
    }
    async fn replace_category(&self, id: CategoryId, new: NewCategory) -> Result<Category> {
        let by = &*self.actor;
        write!(self, Change::Categories, |tx| logged(&tx, categories::replace(&tx, id, &new), |c| {
            log::category_written(ActivityKind::CategoryUpdated, c.id, Some(&c.name), by)
        }))
    }
    async fn delete_category(&self, id: CategoryId) -> Result<()> {
        let by = &*self.actor;
        write!(self, Change::Categories, |tx| logged(&tx, categories::delete(&tx, id), |()| {
            log::category_written(ActivityKind::CategoryDeleted, id, None, by)
        }))
    }

    async fn list_orders(&self, filter: OrderFilter, page: Page) -> Result<Paged<Order>> {
        read!(self, |c| orders::list(c, &filter, page))
    }
    async fn place_order(&self, new: NewOrder) -> Result<Order> {
        let mut client = self.client().await?;
        // One statement in autocommit for most orders; the general path otherwise. Either
        // is announced after its commit (see `changes.rs` for why not inside it). The one
        // statement commits as it ends, so the write is marked begun before it is sent.
        WriteAdmission::begin_current()?;
        let by = &*self.actor;
        let order = match orders::place_fast(&*client, &new, by).await? {
            orders::Fast::Placed(order) => order,
            orders::Fast::Refused(refused) => return Err(refused),
            orders::Fast::Undecided => {
                let tx = client.transaction().await.map_err(pg)?;
                let order = orders::place(&tx, &new, by).await?;
                WriteAdmission::begin_current()?;
                tx.commit().await.map_err(pg)?;
                order
            }
        };
        self.inner.notifier.announce(Change::Orders);
        Ok(order)
    }
    async fn get_order(&self, id: OrderId) -> Result<Order> {
        read!(self, |c| orders::get(c, id))
    }
    async fn update_order(&self, id: OrderId, patch: OrderPatch) -> Result<Order> {
        write!(self, Change::Orders, |tx| orders::update(&tx, id, &patch, &self.actor))
    }
    async fn cancel_order(&self, id: OrderId) -> Result<Order> {
        write!(self, Change::Orders, |tx| orders::cancel(&tx, id, &self.actor))
    }

    async fn list_inventory(&self, filter: InventoryFilter, page: Page) -> Result<Paged<InventoryItem>> {
        read!(self, |c| inventory::list(c, &filter, page))
    }
    async fn get_inventory(&self, pet: PetId) -> Result<InventoryItem> {
        read!(self, |c| inventory::get(c, pet))
    }
    async fn set_inventory(&self, pet: PetId, update: InventoryUpdate) -> Result<InventoryItem> {
        write!(self, Change::Inventory, |tx| inventory::set(&tx, pet, &update, &self.actor))
    }
    async fn adjust_inventory(
        &self,
        pet: PetId,
        adjustment: NewInventoryAdjustment,
    ) -> Result<InventoryItem> {
        write!(self, Change::Inventory, |tx| inventory::adjust(&tx, pet, &adjustment, &self.actor))
    }
    async fn list_adjustments(&self, pet: PetId, page: Page) -> Result<Paged<InventoryAdjustment>> {
        read!(self, |c| inventory::adjustments(c, pet, page))
    }
    async fn stock_history(&self, pet: PetId, page: Page) -> Result<Paged<StockEntry>> {
        read!(self, |c| inventory::history(c, pet, page))
    }

    async fn get_settings(&self) -> Result<ShopSettings> {
        read!(self, |c| settings::get(c))
    }
    async fn put_settings(&self, new: ShopSettings) -> Result<ShopSettings> {
        let by = &*self.actor;
        write!(self, Change::Settings, |tx| logged(&tx, settings::put(&tx, &new), |_| log::settings_changed(
            by
        )))
    }
    async fn sales_report(&self, range: DayRange) -> Result<Vec<SalesDay>> {
        read!(self, |c| reports::sales_report(c, range))
    }
}

#[async_trait]
impl Database for PgStore {
    async fn once(
        &self,
        key: IdempotencyKey,
        write: CounterWrite,
        now: DateTime<Utc>,
    ) -> Result<Once<CounterAnswer>> {
        idempotency::once(self, key, write, now).await
    }
    async fn delete_order(&self, id: OrderId) -> Result<()> {
        write!(self, Change::Orders, |tx| orders::delete(&tx, id, &self.actor))
    }
    async fn move_idempotency_scopes(&self, moves: Vec<([u8; 32], [u8; 32])>) -> Result<u64> {
        let client = self.client().await?;
        let mut moved = 0;
        for (from, to) in &moves {
            moved += super::idempotency::move_scope(&*client, from, to).await?;
        }
        Ok(moved)
    }
    fn acting(&self, actor: Actor) -> Arc<dyn Database> {
        Arc::new(PgStore { actor: Arc::new(actor), ..self.clone() })
    }
}
