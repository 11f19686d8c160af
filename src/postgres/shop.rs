//! The PostgreSQL store as a [`Petstore`] and a [`Database`] (its counter writes; its other
//! capabilities are in `capabilities.rs`): a read is one statement on a
//! pooled connection (in autocommit, so it sees everything committed on any replica); a
//! write is one transaction that also announces its change (see `changes.rs`), or, for
//! the common order, one statement (see `orders.rs`).

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{PgStore, categories, changes, idempotency, inventory, orders, pets, pg, reports, settings};
use crate::admission::WriteAdmission;
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
        write!(self, Change::Pets, |tx| pets::create(&tx, &new))
    }
    async fn get_pet(&self, id: PetId) -> Result<Pet> {
        self.readers().pet(id).await
    }
    async fn replace_pet(&self, id: PetId, new: NewPet) -> Result<Pet> {
        write!(self, Change::Pets, |tx| pets::replace(&tx, id, &new))
    }
    async fn update_pet(&self, id: PetId, patch: PetPatch) -> Result<Pet> {
        write!(self, Change::Pets, |tx| pets::update(&tx, id, &patch))
    }
    async fn delete_pet(&self, id: PetId) -> Result<()> {
        write!(self, Change::Pets, |tx| pets::delete(&tx, id))
    }

    async fn list_categories(&self, page: Page) -> Result<Paged<Category>> {
        read!(self, |c| categories::list(c, page))
    }
    async fn create_category(&self, new: NewCategory) -> Result<Category> {
        write!(self, Change::Categories, |tx| categories::create(&tx, &new))
    }
    async fn get_category(&self, id: CategoryId) -> Result<Category> {
        read!(self, |c| categories::get(c, id))
    }
    async fn replace_category(&self, id: CategoryId, new: NewCategory) -> Result<Category> {
        write!(self, Change::Categories, |tx| categories::replace(&tx, id, &new))
    }
    async fn delete_category(&self, id: CategoryId) -> Result<()> {
        write!(self, Change::Categories, |tx| categories::delete(&tx, id))
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
        let order = match orders::place_fast(&*client, &new).await? {
            orders::Fast::Placed(order) => order,
            orders::Fast::Refused(refused) => return Err(refused),
            orders::Fast::Undecided => {
                let tx = client.transaction().await.map_err(pg)?;
                let order = orders::place(&tx, &new).await?;
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
        write!(self, Change::Orders, |tx| orders::update(&tx, id, &patch))
    }
    async fn cancel_order(&self, id: OrderId) -> Result<Order> {
        write!(self, Change::Orders, |tx| orders::cancel(&tx, id))
    }

    async fn list_inventory(&self, filter: InventoryFilter, page: Page) -> Result<Paged<InventoryItem>> {
        read!(self, |c| inventory::list(c, &filter, page))
    }
    async fn get_inventory(&self, pet: PetId) -> Result<InventoryItem> {
        read!(self, |c| inventory::get(c, pet))
    }
    async fn set_inventory(&self, pet: PetId, update: InventoryUpdate) -> Result<InventoryItem> {
        write!(self, Change::Inventory, |tx| inventory::set(&tx, pet, update.quantity))
    }
    async fn adjust_inventory(
        &self,
        pet: PetId,
        adjustment: NewInventoryAdjustment,
    ) -> Result<InventoryItem> {
        write!(self, Change::Inventory, |tx| inventory::adjust(&tx, pet, &adjustment))
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
        write!(self, Change::Settings, |tx| settings::put(&tx, &new))
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
        write!(self, Change::Orders, |tx| orders::delete(&tx, id))
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
