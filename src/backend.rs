//! The one interface the app and the tests program against. The SQLite [`Store`] and the
//! HTTP [`Client`](crate::client::Client) both implement it, so local and remote mode are
//! the same code above this line.
//!
//! [`Store`]: crate::store::Store

use async_trait::async_trait;

use crate::domain::*;
use crate::error::Result;

#[async_trait]
pub trait Petstore: Send + Sync {
    async fn list_pets(&self, filter: PetFilter, page: Page) -> Result<Paged<Pet>>;
    async fn create_pet(&self, new: NewPet) -> Result<Pet>;
    async fn get_pet(&self, id: PetId) -> Result<Pet>;
    async fn replace_pet(&self, id: PetId, new: NewPet) -> Result<Pet>;
    async fn update_pet(&self, id: PetId, patch: PetPatch) -> Result<Pet>;
    async fn delete_pet(&self, id: PetId) -> Result<()>;

    async fn list_categories(&self, page: Page) -> Result<Paged<Category>>;
    async fn create_category(&self, new: NewCategory) -> Result<Category>;
    async fn get_category(&self, id: CategoryId) -> Result<Category>;
    async fn replace_category(&self, id: CategoryId, new: NewCategory) -> Result<Category>;
    async fn delete_category(&self, id: CategoryId) -> Result<()>;

    async fn list_orders(&self, filter: OrderFilter, page: Page) -> Result<Paged<Order>>;
    async fn place_order(&self, new: NewOrder) -> Result<Order>;
    async fn get_order(&self, id: OrderId) -> Result<Order>;
    async fn update_order(&self, id: OrderId, patch: OrderPatch) -> Result<Order>;
    async fn cancel_order(&self, id: OrderId) -> Result<()>;

    async fn list_inventory(&self, filter: InventoryFilter, page: Page) -> Result<Paged<InventoryItem>>;
    async fn get_inventory(&self, pet: PetId) -> Result<InventoryItem>;
    async fn set_inventory(&self, pet: PetId, update: InventoryUpdate) -> Result<InventoryItem>;
    async fn adjust_inventory(&self, pet: PetId, adjustment: NewInventoryAdjustment)
    -> Result<InventoryItem>;
    async fn list_adjustments(&self, pet: PetId, page: Page) -> Result<Paged<InventoryAdjustment>>;
}
