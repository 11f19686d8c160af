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
//!
//! The scenarios reach the mirror either directly (as the till's window does) or through
//! the local API serving it (as a program on the till does in remote mode, the mirror
//! being its `Database`): an HTTP `Client` of the API bound on the mirror.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use petstore::api::KeyRing;
use petstore::client::Client;
use petstore::domain::*;
use petstore::mirror::Mirror;
use petstore::server::{Application, ServerConfig};
use petstore::{Petstore, Result};
use tokio::sync::oneshot;

use crate::support::{TestApp, TestDb};

/// The bound on one wait for the sync: far above what a loopback server takes (a few
/// milliseconds), so reaching it means the mirror never caught up, and the test fails.
const SETTLE: Duration = Duration::from_secs(30);

/// The key of the till's local API.
const LOCAL_KEY: &str = "test-key-local-api-of-the-till-0123456789";

/// A mirror of `app`'s shop in a folder of its own, which goes with it.
pub(super) struct SyncedMirror<'a> {
    mirror: Mirror,
    /// What the scenario's calls go to: the mirror, or a client of its local API.
    front: Arc<dyn Petstore>,
    /// Stops the local API, if one serves the mirror, when dropped.
    _local_api: Option<oneshot::Sender<()>>,
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
        let front = Arc::new(mirror.clone());
        let synced = Self { mirror, front, _local_api: None, app, pg, _dir: dir };
        synced.synced().await;
        synced
    }

    /// [`SyncedMirror::open`], with the scenario's calls sent to the till's local API
    /// serving the mirror, as remote mode serves it.
    pub(super) async fn through_local_api(app: &'a TestApp) -> Self {
        let mut synced = Self::open(app).await;
        let config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), KeyRing::from_secrets([LOCAL_KEY]));
        let local = Application::bind(synced.mirror.served(), config).await.unwrap();
        let url = format!("http://{}", local.local_addr());
        let (stop, stopped) = oneshot::channel();
        tokio::spawn(local.run_until(async {
            let _ = stopped.await;
        }));
        synced.front = Arc::new(Client::new(&url, LOCAL_KEY).unwrap());
        synced._local_api = Some(stop);
        synced
    }

    /// The mirror (or its local API), once it holds every change the server had
    /// committed when this was called.
    async fn synced(&self) -> &dyn Petstore {
        let caught_up =
            tokio::time::timeout(SETTLE, self.numbered()).await.is_ok() && self.mirror.settle(SETTLE).await;
        assert!(
            caught_up,
            "the mirror did not catch up with the server within {SETTLE:?}: {:?}",
            *self.mirror.status().borrow()
        );
        &*self.front
    }

    /// Until the server's change feed has numbered every committed change, so that its
    /// head, which [`Mirror::settle`] waits for the mirror to reach, covers the writes
    /// already answered. SQLite numbers a change in the transaction that makes it: nothing
    /// to wait for. PostgreSQL numbers them just after their commit (a sequencer task, see
    /// src/postgres/feed.rs, for why), so a write's changes may still be unnumbered when its
    /// answer arrives; each numbering is followed by a notice ([`Feed::feed_notices`]),
    /// which wakes the check. Nothing is left unnumbered for long: every commit sends a
    /// notice that makes the sequencer run after it.
    ///
    /// [`Feed::feed_notices`]: petstore::engine::Feed::feed_notices
    async fn numbered(&self) {
        let Some(pg) = &self.pg else { return };
        // Subscribed before the check, so that a numbering right after it is not missed.
        let mut notices = self.app.feed().feed().feed_notices();
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
        self.front.create_pet(new).await
    }
    async fn get_pet(&self, id: PetId) -> Result<Pet> {
        self.synced().await.get_pet(id).await
    }
    async fn replace_pet(&self, id: PetId, new: NewPet) -> Result<Pet> {
        self.front.replace_pet(id, new).await
    }
    async fn update_pet(&self, id: PetId, patch: PetPatch) -> Result<Pet> {
        self.front.update_pet(id, patch).await
    }
    async fn delete_pet(&self, id: PetId) -> Result<()> {
        self.front.delete_pet(id).await
    }

    async fn list_categories(&self, page: Page) -> Result<Paged<Category>> {
        self.synced().await.list_categories(page).await
    }
    async fn create_category(&self, new: NewCategory) -> Result<Category> {
        self.front.create_category(new).await
    }
    async fn get_category(&self, id: CategoryId) -> Result<Category> {
        self.synced().await.get_category(id).await
    }
    async fn replace_category(&self, id: CategoryId, new: NewCategory) -> Result<Category> {
        self.front.replace_category(id, new).await
    }
    async fn delete_category(&self, id: CategoryId) -> Result<()> {
        self.front.delete_category(id).await
    }

    async fn list_orders(&self, filter: OrderFilter, page: Page) -> Result<Paged<Order>> {
        self.synced().await.list_orders(filter, page).await
    }
    async fn place_order(&self, new: NewOrder) -> Result<Order> {
        self.front.place_order(new).await
    }
    async fn get_order(&self, id: OrderId) -> Result<Order> {
        self.synced().await.get_order(id).await
    }
    async fn update_order(&self, id: OrderId, patch: OrderPatch) -> Result<Order> {
        self.front.update_order(id, patch).await
    }
    async fn cancel_order(&self, id: OrderId) -> Result<Order> {
        self.front.cancel_order(id).await
    }

    async fn list_inventory(&self, filter: InventoryFilter, page: Page) -> Result<Paged<InventoryItem>> {
        self.synced().await.list_inventory(filter, page).await
    }
    async fn get_inventory(&self, pet: PetId) -> Result<InventoryItem> {
        self.synced().await.get_inventory(pet).await
    }
    async fn set_inventory(&self, pet: PetId, update: InventoryUpdate) -> Result<InventoryItem> {
        self.front.set_inventory(pet, update).await
    }
    async fn adjust_inventory(
        &self,
        pet: PetId,
        adjustment: NewInventoryAdjustment,
    ) -> Result<InventoryItem> {
        self.front.adjust_inventory(pet, adjustment).await
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
        self.front.put_settings(settings).await
    }
    async fn sales_report(&self, range: DayRange) -> Result<Vec<SalesDay>> {
        self.synced().await.sales_report(range).await
    }
}
