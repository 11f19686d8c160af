//! The store as a [`Petstore`] and a [`Database`] (its counter writes): each operation is
//! one read or one write transaction around the functions of the resource modules. Its
//! other capabilities are in `capabilities.rs`.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{Change, Store, activity, categories, idempotency, inventory, orders, pets, reports, settings};
use crate::domain::activity as log;
use crate::domain::*;
use crate::engine::{Database, Petstore};
use crate::error::Result;
use crate::idempotency::{IdempotencyKey, Once};

#[async_trait]
impl Petstore for Store {
    async fn list_pets(&self, filter: PetFilter, page: Page) -> Result<Paged<Pet>> {
        let bookmarks = self.bookmarks();
        if pets::is_bounded(&filter, page) {
            self.read_bounded(move |c| pets::list(c, &bookmarks, &filter, page)).await
        } else {
            self.read(move |c| pets::list(c, &bookmarks, &filter, page)).await
        }
    }
    async fn create_pet(&self, new: NewPet) -> Result<Pet> {
        self.write_logged(
            Change::Pets,
            move |tx| pets::create(tx, &new),
            |pet, by| log::pet_written(ActivityKind::PetCreated, pet.id, Some(&pet.name), by),
        )
        .await
    }
    async fn get_pet(&self, id: PetId) -> Result<Pet> {
        self.read_bounded(move |c| pets::get(c, id)).await
    }
    async fn replace_pet(&self, id: PetId, new: NewPet) -> Result<Pet> {
        self.write_logged(
            Change::Pets,
            move |tx| pets::replace(tx, id, &new),
            |pet, by| log::pet_written(ActivityKind::PetUpdated, pet.id, Some(&pet.name), by),
        )
        .await
    }
    async fn update_pet(&self, id: PetId, patch: PetPatch) -> Result<Pet> {
        self.write_logged(
            Change::Pets,
            move |tx| pets::update(tx, id, &patch),
            |pet, by| log::pet_written(ActivityKind::PetUpdated, pet.id, Some(&pet.name), by),
        )
        .await
    }
    async fn delete_pet(&self, id: PetId) -> Result<()> {
        self.write_logged(
            Change::Pets,
            move |tx| pets::delete(tx, id),
            move |(), by| log::pet_written(ActivityKind::PetDeleted, id, None, by),
        )
        .await
    }

    async fn list_categories(&self, page: Page) -> Result<Paged<Category>> {
        self.read(move |c| categories::list(c, page)).await
    }
    async fn create_category(&self, new: NewCategory) -> Result<Category> {
        self.write_logged(
            Change::Categories,
            move |tx| categories::create(tx, &new),
            |c, by| log::category_written(ActivityKind::CategoryCreated, c.id, Some(&c.name), by),
        )
        .await
    }
    async fn get_category(&self, id: CategoryId) -> Result<Category> {
        self.read_bounded(move |c| categories::get(c, id)).await
    }
    async fn replace_category(&self, id: CategoryId, new: NewCategory) -> Result<Category> {
        self.write_logged(
            Change::Categories,
            move |tx| categories::replace(tx, id, &new),
            |c, by| log::category_written(ActivityKind::CategoryUpdated, c.id, Some(&c.name), by),
        )
        .await
    }
    async fn delete_category(&self, id: CategoryId) -> Result<()> {
        self.write_logged(
            Change::Categories,
            move |tx| categories::delete(tx, id),
            move |(), by| log::category_written(ActivityKind::CategoryDeleted, id, None, by),
        )
        .await
    }

    async fn list_orders(&self, filter: OrderFilter, page: Page) -> Result<Paged<Order>> {
        self.read(move |c| orders::list(c, &filter, page)).await
    }
    async fn place_order(&self, new: NewOrder) -> Result<Order> {
        let by = self.actor.clone();
        self.write(Change::Orders, move |tx| orders::place(tx, &new, &by)).await
    }
    async fn get_order(&self, id: OrderId) -> Result<Order> {
        self.read_bounded(move |c| orders::get(c, id)).await
    }
    async fn update_order(&self, id: OrderId, patch: OrderPatch) -> Result<Order> {
        let by = self.actor.clone();
        self.write(Change::Orders, move |tx| orders::update(tx, id, &patch, &by)).await
    }
    async fn cancel_order(&self, id: OrderId) -> Result<Order> {
        let by = self.actor.clone();
        self.write(Change::Orders, move |tx| orders::cancel(tx, id, &by)).await
    }

    async fn list_inventory(&self, filter: InventoryFilter, page: Page) -> Result<Paged<InventoryItem>> {
        self.read(move |c| inventory::list(c, &filter, page)).await
    }
    async fn get_inventory(&self, pet: PetId) -> Result<InventoryItem> {
        self.read_bounded(move |c| inventory::get(c, pet)).await
    }
    async fn set_inventory(&self, pet: PetId, update: InventoryUpdate) -> Result<InventoryItem> {
        let by = self.actor.clone();
        self.write(Change::Inventory, move |tx| inventory::set(tx, pet, &update, &by)).await
    }
    async fn adjust_inventory(
        &self,
        pet: PetId,
        adjustment: NewInventoryAdjustment,
    ) -> Result<InventoryItem> {
        let by = self.actor.clone();
        self.write(Change::Inventory, move |tx| inventory::adjust(tx, pet, &adjustment, &by)).await
    }
    async fn list_adjustments(&self, pet: PetId, page: Page) -> Result<Paged<InventoryAdjustment>> {
        self.read(move |c| inventory::adjustments(c, pet, page)).await
    }
    async fn stock_history(&self, pet: PetId, page: Page) -> Result<Paged<StockEntry>> {
        self.read(move |c| inventory::history(c, pet, page)).await
    }

    async fn get_settings(&self) -> Result<ShopSettings> {
        self.read_bounded(settings::get).await
    }
    async fn put_settings(&self, new: ShopSettings) -> Result<ShopSettings> {
        self.write_logged(
            Change::Settings,
            move |tx| settings::put(tx, &new),
            |_, by| log::settings_changed(by),
        )
        .await
    }
    async fn sales_report(&self, range: DayRange) -> Result<Vec<SalesDay>> {
        self.read(move |c| reports::sales_report(c, range)).await
    }
}

impl Store {
    /// [`Store::write`] of `f`, with the activity log's entry `log` makes of its answer, as
    /// this handle's actor's, in the same transaction.
    async fn write_logged<T, F, L>(&self, change: Change, f: F, log: L) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T> + Send + 'static,
        L: FnOnce(&T, &Actor) -> NewActivity + Send + 'static,
    {
        let by = self.actor.clone();
        self.write(change, move |tx| {
            let answer = f(tx)?;
            activity::record(tx, &log(&answer, &by), Timestamp::now())?;
            Ok(answer)
        })
        .await
    }
}

#[async_trait]
impl Database for Store {
    async fn once(
        &self,
        key: IdempotencyKey,
        write: CounterWrite,
        now: DateTime<Utc>,
    ) -> Result<Once<CounterAnswer>> {
        idempotency::once(self, key, write, now).await
    }
    async fn delete_order(&self, id: OrderId) -> Result<()> {
        let by = self.actor.clone();
        self.write(Change::Orders, move |tx| orders::delete(tx, id, &by)).await
    }
    async fn move_idempotency_scopes(&self, moves: Vec<([u8; 32], [u8; 32])>) -> Result<u64> {
        self.write_quietly(move |tx| super::idempotency::move_scopes(tx, &moves)).await
    }
    fn acting(&self, actor: Actor) -> Arc<dyn Database> {
        Arc::new(Store { actor: Arc::new(actor), ..self.clone() })
    }
}
