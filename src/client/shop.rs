//! The client as a [`Petstore`] backend: each operation is its REST call in openapi.yaml,
//! and answers as the SQLite store would (the contract suite, `tests/api/contract/`,
//! compares the two).

use async_trait::async_trait;
use reqwest::Method;

use super::Client;
use super::transport::paging;
use crate::domain::*;
use crate::engine::Petstore;
use crate::error::{Error, Result};

type Query = Vec<(&'static str, String)>;

#[async_trait]
impl Petstore for Client {
    async fn list_pets(&self, filter: PetFilter, page: Page) -> Result<Paged<Pet>> {
        self.send(Method::GET, &["pets"], &pet_query(&filter, page)).await?.paged()
    }
    async fn create_pet(&self, new: NewPet) -> Result<Pet> {
        self.send_json(Method::POST, &["pets"], &new).await?.json()
    }
    /// Uses the successor `GET /pets?id=` of the deprecated `GET /pets/{petId}`, and
    /// answers an empty list with the store's own "does not exist".
    async fn get_pet(&self, id: PetId) -> Result<Pet> {
        let answer = self.send(Method::GET, &["pets"], &[("id", id.to_string())]).await?;
        let pets: Vec<Pet> = answer.json()?;
        match pets.into_iter().find(|pet| pet.id == id) {
            Some(pet) => Ok(pet),
            None => Err(Error::not_found(PetId::WHAT, id.get())),
        }
    }
    async fn replace_pet(&self, id: PetId, new: NewPet) -> Result<Pet> {
        self.send_json(Method::PUT, &["pets", &id.to_string()], &new).await?.json()
    }
    async fn update_pet(&self, id: PetId, patch: PetPatch) -> Result<Pet> {
        self.send_json(Method::PATCH, &["pets", &id.to_string()], &patch).await?.json()
    }
    async fn delete_pet(&self, id: PetId) -> Result<()> {
        self.send(Method::DELETE, &["pets", &id.to_string()], &[]).await.map(drop)
    }

    async fn list_categories(&self, page: Page) -> Result<Paged<Category>> {
        let mut query = Query::new();
        paging(&mut query, page);
        self.send(Method::GET, &["categories"], &query).await?.paged()
    }
    async fn create_category(&self, new: NewCategory) -> Result<Category> {
        self.send_json(Method::POST, &["categories"], &new).await?.json()
    }
    async fn get_category(&self, id: CategoryId) -> Result<Category> {
        self.send(Method::GET, &["categories", &id.to_string()], &[]).await?.json()
    }
    async fn replace_category(&self, id: CategoryId, new: NewCategory) -> Result<Category> {
        self.send_json(Method::PUT, &["categories", &id.to_string()], &new).await?.json()
    }
    async fn delete_category(&self, id: CategoryId) -> Result<()> {
        self.send(Method::DELETE, &["categories", &id.to_string()], &[]).await.map(drop)
    }

    async fn list_orders(&self, filter: OrderFilter, page: Page) -> Result<Paged<Order>> {
        let mut query = Query::new();
        if let Some(pet) = filter.pet_id {
            query.push(("petId", pet.to_string()));
        }
        if let Some(complete) = filter.complete {
            query.push(("complete", complete.to_string()));
        }
        if filter.cancelled {
            query.push(("cancelled", "true".to_owned()));
        }
        if let Some(q) = &filter.q {
            query.push(("q", q.to_string()));
        }
        paging(&mut query, page);
        self.send(Method::GET, &["store", "orders"], &query).await?.paged()
    }
    async fn place_order(&self, new: NewOrder) -> Result<Order> {
        self.send_json(Method::POST, &["store", "orders"], &new).await?.json()
    }
    async fn get_order(&self, id: OrderId) -> Result<Order> {
        self.send(Method::GET, &["store", "orders", &id.to_string()], &[]).await?.json()
    }
    async fn update_order(&self, id: OrderId, patch: OrderPatch) -> Result<Order> {
        self.send_json(Method::PATCH, &["store", "orders", &id.to_string()], &patch).await?.json()
    }
    async fn cancel_order(&self, id: OrderId) -> Result<Order> {
        self.send(Method::POST, &["store", "orders", &id.to_string(), "cancel"], &[]).await?.json()
    }

    async fn list_inventory(&self, filter: InventoryFilter, page: Page) -> Result<Paged<InventoryItem>> {
        let mut query: Query = filter.statuses.iter().map(|s| ("status", s.to_string())).collect();
        if let Some(below) = filter.below_quantity {
            query.push(("belowQuantity", below.to_string()));
        }
        paging(&mut query, page);
        self.send(Method::GET, &["store", "inventory"], &query).await?.paged()
    }
    async fn get_inventory(&self, pet: PetId) -> Result<InventoryItem> {
        self.send(Method::GET, &["store", "inventory", &pet.to_string()], &[]).await?.json()
    }
    async fn set_inventory(&self, pet: PetId, update: InventoryUpdate) -> Result<InventoryItem> {
        self.send_json(Method::PUT, &["store", "inventory", &pet.to_string()], &update).await?.json()
    }
    async fn adjust_inventory(
        &self,
        pet: PetId,
        adjustment: NewInventoryAdjustment,
    ) -> Result<InventoryItem> {
        let path = ["store", "inventory", &pet.to_string(), "adjustments"];
        self.send_json(Method::POST, &path, &adjustment).await?.json()
    }
    async fn list_adjustments(&self, pet: PetId, page: Page) -> Result<Paged<InventoryAdjustment>> {
        let mut query = Query::new();
        paging(&mut query, page);
        let path = ["store", "inventory", &pet.to_string(), "adjustments"];
        self.send(Method::GET, &path, &query).await?.paged()
    }
    async fn stock_history(&self, pet: PetId, page: Page) -> Result<Paged<StockEntry>> {
        let mut query = Query::new();
        paging(&mut query, page);
        self.send(Method::GET, &["store", "inventory", &pet.to_string(), "history"], &query).await?.paged()
    }

    async fn get_settings(&self) -> Result<ShopSettings> {
        self.send(Method::GET, &["store", "settings"], &[]).await?.json()
    }
    async fn put_settings(&self, settings: ShopSettings) -> Result<ShopSettings> {
        self.send_json(Method::PUT, &["store", "settings"], &settings).await?.json()
    }
    async fn sales_report(&self, range: DayRange) -> Result<Vec<SalesDay>> {
        let query: Query = vec![("from", range.from().to_string()), ("to", range.to().to_string())];
        self.send(Method::GET, &["store", "reports", "sales"], &query).await?.json()
    }
}

/// The filters of `GET /pets` as query parameters; `status` and `id` repeat.
fn pet_query(filter: &PetFilter, page: Page) -> Query {
    let mut query: Query = filter.statuses.iter().map(|s| ("status", s.to_string())).collect();
    if let Some(category) = filter.category_id {
        query.push(("categoryId", category.to_string()));
    }
    if let Some(q) = &filter.name_contains {
        query.push(("q", q.to_string()));
    }
    if let Some(search) = &filter.search {
        query.push(("search", search.to_string()));
    }
    query.extend(filter.ids.iter().map(|id| ("id", id.to_string())));
    if let Some(sku) = &filter.sku {
        query.push(("sku", sku.to_string()));
    }
    query.push(("sort", filter.sort.as_str().to_owned()));
    paging(&mut query, page);
    query
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pet_filters_become_repeatable_query_parameters() {
        let filter = PetFilter {
            statuses: vec![PetStatus::Available, PetStatus::Sold],
            category_id: Some(CategoryId::try_from(2).unwrap()),
            name_contains: Some(Name::parse("Élise & co").unwrap()),
            search: Some(Name::parse("bela 50%").unwrap()),
            ids: vec![PetId::try_from(1).unwrap(), PetId::try_from(3).unwrap()],
            sku: Some(Sku::parse("4006381333931").unwrap()),
            sort: PetSort::NameDesc,
        };
        let query = pet_query(&filter, Page::new(5, 10).unwrap());
        let pairs: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(
            pairs,
            [
                ("status", "available"),
                ("status", "sold"),
                ("categoryId", "2"),
                ("q", "Élise & co"),
                ("search", "bela 50%"),
                ("id", "1"),
                ("id", "3"),
                ("sku", "4006381333931"),
                ("sort", "-name"),
                ("limit", "5"),
                ("offset", "10"),
            ]
        );
    }
}
