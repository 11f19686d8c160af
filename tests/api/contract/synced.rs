//! The till's remote backend, the [`Mirror`], as the scenarios see it: online, so its
//! writes go to the server and its reads come from its own copy of the shop.
//!
//! The copy follows the server through its change feed, so a write's effects elsewhere
//! (placing an order takes stock; completing the last one sells the pet) reach it a moment
//! after the write's answer. That lag is the mirror's nature, not a difference of answers:
//! a till shows "synced" once it has caught up. So before every read the harness waits
//! until the copy holds every change the server has committed, and only then reads from
//! it; no fixed pause, each wait ends on the event it waits for. Writes are passed straight
//! through: their answers are the mirror's own, as a till gives them.

use std::time::Duration;

use async_trait::async_trait;
use petstore::client::Client;
use petstore::domain::*;
use petstore::mirror::Mirror;
use petstore::{Petstore, Result};

use crate::support::{TestApp, TestDb};

/// The bound on one wait for the sync: far above what a loopback server takes (a few
/// milliseconds), so reaching it means the mirror never caught up, and the test fails.
const SETTLE: Duration = Duration::from_secs(30);

/// A mirror of `app`'s shop in a folder of its own, which goes with it.
pub(super) struct SyncedMirror<'a> {
    mirror: Mirror,
    app: &'a TestApp,
    /// A session on the server's database when it is PostgreSQL (see [`Self::numbered`]).
    pg: Option<tokio_postgres::Client>,
    _dir: tempfile::TempDir,
}

impl<'a> SyncedMirror<'a> {
    /// Opens the mirror of `app` and waits for its first copy of the shop.
    pub(super) async fn open(app: &'a TestApp) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let client = Client::new(&app.base_url, crate::support::KEY).unwrap();
        let mirror = Mirror::open(&dir.path().join("mirrors"), client).unwrap();
        let pg = match &app.db {
            TestDb::Sqlite { .. } => None,
            TestDb::Postgres(db) => {
                let (session, connection) =
                    tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
                tokio::spawn(connection);
                Some(session)
            }
        };
        let synced = Self { mirror, app, pg, _dir: dir };
        synced.synced().await;
        synced
    }

    /// The mirror, once it holds every change the server had committed when this was called.
    async fn synced(&self) -> &Mirror {
        let caught_up =
            tokio::time::timeout(SETTLE, self.numbered()).await.is_ok() && self.mirror.settle(SETTLE).await;
        assert!(
            caught_up,
            "the mirror did not catch up with the server within {SETTLE:?}: {:?}",
            *self.mirror.status().borrow()
        );
        &self.mirror
    }

    /// Until the server's change feed has numbered every committed change, so that its
    /// head, which [`Mirror::settle`] waits for the mirror to reach, covers the writes
    /// already answered. SQLite numbers a change in the transaction that makes it: nothing
    /// to wait for. PostgreSQL numbers them just after their commit (a sequencer task, see
    /// src/postgres/feed.rs, for why), so a write's changes may still be unnumbered when its
    /// answer arrives; each numbering is followed by a notice ([`Database::feed_notices`]),
    /// which wakes the check. Nothing is left unnumbered for long: every commit sends a
    /// notice that makes the sequencer run after it.
    ///
    /// [`Database::feed_notices`]: petstore::Database::feed_notices
    async fn numbered(&self) {
        let Some(pg) = &self.pg else { return };
        // Subscribed before the check, so that a numbering right after it is not missed.
        let mut notices = self.app.feed().store().feed_notices();
        loop {
            let row =
                pg.query_one("SELECT EXISTS (SELECT 1 FROM changes WHERE seq IS NULL)", &[]).await.unwrap();
            if !row.get::<_, bool>(0) {
                return;
            }
            match notices.recv().await {
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => panic!("the server's store closed"),
            }
        }
    }
}

#[async_trait]
impl Petstore for SyncedMirror<'_> {
    async fn list_pets(&self, filter: PetFilter, page: Page) -> Result<Paged<Pet>> {
        self.synced().await.list_pets(filter, page).await
    }
    async fn create_pet(&self, new: NewPet) -> Result<Pet> {
        self.mirror.create_pet(new).await
    }
    async fn get_pet(&self, id: PetId) -> Result<Pet> {
        self.synced().await.get_pet(id).await
    }
    async fn replace_pet(&self, id: PetId, new: NewPet) -> Result<Pet> {
        self.mirror.replace_pet(id, new).await
    }
    async fn update_pet(&self, id: PetId, patch: PetPatch) -> Result<Pet> {
        self.mirror.update_pet(id, patch).await
    }
    async fn delete_pet(&self, id: PetId) -> Result<()> {
        self.mirror.delete_pet(id).await
    }

    async fn list_categories(&self, page: Page) -> Result<Paged<Category>> {
        self.synced().await.list_categories(page).await
    }
    async fn create_category(&self, new: NewCategory) -> Result<Category> {
        self.mirror.create_category(new).await
    }
    async fn get_category(&self, id: CategoryId) -> Result<Category> {
        self.synced().await.get_category(id).await
    }
    async fn replace_category(&self, id: CategoryId, new: NewCategory) -> Result<Category> {
        self.mirror.replace_category(id, new).await
    }
    async fn delete_category(&self, id: CategoryId) -> Result<()> {
        self.mirror.delete_category(id).await
    }

    async fn list_orders(&self, filter: OrderFilter, page: Page) -> Result<Paged<Order>> {
        self.synced().await.list_orders(filter, page).await
    }
    async fn place_order(&self, new: NewOrder) -> Result<Order> {
        self.mirror.place_order(new).await
    }
    async fn get_order(&self, id: OrderId) -> Result<Order> {
        self.synced().await.get_order(id).await
    }
    async fn update_order(&self, id: OrderId, patch: OrderPatch) -> Result<Order> {
        self.mirror.update_order(id, patch).await
    }
    async fn cancel_order(&self, id: OrderId) -> Result<Order> {
        self.mirror.cancel_order(id).await
    }

    async fn list_inventory(&self, filter: InventoryFilter, page: Page) -> Result<Paged<InventoryItem>> {
        self.synced().await.list_inventory(filter, page).await
    }
    async fn get_inventory(&self, pet: PetId) -> Result<InventoryItem> {
        self.synced().await.get_inventory(pet).await
    }
    async fn set_inventory(&self, pet: PetId, update: InventoryUpdate) -> Result<InventoryItem> {
        self.mirror.set_inventory(pet, update).await
    }
    async fn adjust_inventory(
        &self,
        pet: PetId,
        adjustment: NewInventoryAdjustment,
    ) -> Result<InventoryItem> {
        self.mirror.adjust_inventory(pet, adjustment).await
    }
    async fn list_adjustments(&self, pet: PetId, page: Page) -> Result<Paged<InventoryAdjustment>> {
        self.synced().await.list_adjustments(pet, page).await
    }
    async fn stock_history(&self, pet: PetId, page: Page) -> Result<Paged<StockEntry>> {
        self.synced().await.stock_history(pet, page).await
    }

    async fn get_settings(&self) -> Result<ShopSettings> {
        self.synced().await.get_settings().await
    }
    async fn put_settings(&self, settings: ShopSettings) -> Result<ShopSettings> {
        self.mirror.put_settings(settings).await
    }
    async fn sales_report(&self, range: DayRange) -> Result<Vec<SalesDay>> {
        self.synced().await.sales_report(range).await
    }
}
