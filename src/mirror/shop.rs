//! The mirror as a [`Petstore`]: reads from the local copy; writes to the server, their
//! answers into the copy. Counter writes (placing, completing and cancelling orders, stock
//! deltas) go to the outbox instead when the server cannot be reached, or when writes
//! wait there already (they reach the server in the order they were made). Everything else
//! needs the server and says so.

use async_trait::async_trait;

use super::local::{Proofs, Put, Queued};
use super::staff::TillActor;
use super::status::SyncState;
use super::take::take_in;
use super::{Mirror, Shared, is_offline, new_key};
use crate::domain::*;
use crate::engine::Petstore;
use crate::error::{Error, ErrorCode, Result};

impl Shared {
    /// Whether counter writes go straight to the outbox.
    pub(super) fn queue_first(&self) -> bool {
        let status = self.status.borrow();
        matches!(status.state, SyncState::Offline { .. }) || status.outbox.pending > 0
    }

    /// The server could not be reached: say so from now (keeping when it began, and
    /// saying why as of the last try).
    pub(super) fn went_offline(&self, e: &Error) {
        self.status.send_if_modified(|s| match &mut s.state {
            SyncState::Offline { reason, .. } if *reason == e.message => false,
            SyncState::Offline { reason, .. } => {
                reason.clone_from(&e.message);
                true
            }
            _ => {
                s.state = SyncState::Offline { since: Timestamp::now(), reason: e.message.clone() };
                true
            }
        });
    }

    pub(super) fn set_state(&self, state: SyncState) {
        self.status.send_if_modified(|s| {
            let changed = s.state != state;
            s.state = state;
            changed
        });
    }

    /// Takes `command` offline and wakes the replay; `unsure` if it was sent and its
    /// answer never came (see [`Local::queue`](super::local::Local::queue)).
    async fn queue(&self, key: String, command: Command, unsure: bool, proofs: Proofs) -> Result<Queued> {
        let (queued, _) = self.local.queue(key, command, unsure, proofs).await?;
        self.queued().await;
        Ok(queued)
    }

    /// A server answer into the mirror; if that fails, the feed brings it.
    async fn took(&self, what: Put) {
        if let Err(e) = take_in(self, what, false).await {
            tracing::debug!(error = %e.message, "a server answer could not be put into the mirror; the feed brings it");
        }
    }

    /// Sends a counter write (`command`'s, with its key), or queues it when the server
    /// cannot be reached, and always when it is about an order the server has not numbered
    /// yet (it follows its order through the queue). `Ok(Err(queued))` when queued. It is
    /// `who`'s: sent with their sessions (their proofs when the sign-in could not reach the
    /// server), queued with their proofs.
    async fn counter(
        &self,
        key: String,
        command: Command,
        who: Option<&TillActor>,
    ) -> Result<std::result::Result<CounterAnswer, Queued>> {
        let mut unsure = false;
        let proofs = who.map(|who| who.proofs(&key, Timestamp::now())).unwrap_or_default();
        if !command.waits_on_provisional_order() && !self.queue_first() {
            let client = match who {
                Some(who) if who.session.is_some() => self.client.acting(&who.session_headers())?,
                _ => self.client.acting(&proofs.headers())?,
            };
            match client.once(&key, &command.write()).await {
                Ok(answer) => {
                    // Its key remembered, for the same write sent again while offline.
                    if let Err(e) = self.local.remember(key, command, answer.order_id()).await {
                        tracing::debug!(error = %e.message, "a sent write's key could not be remembered");
                    }
                    return Ok(Ok(answer));
                }
                // A time-out may have placed it: queued under the same key, the replay
                // finds out, and the server applies it once either way.
                Err(e) if is_offline(&e) => {
                    unsure = may_have_been_applied(&e);
                    self.went_offline(&e);
                }
                Err(e) => return Err(e),
            }
        }
        self.queue(key, command, unsure, proofs).await.map(Err)
    }
}

/// Whether a write that failed with `e` may have been applied all the same: the request
/// went out and no answer came back (a time-out, a cut connection, a broken or failed
/// answer). A refused connection never reached the server.
fn may_have_been_applied(e: &Error) -> bool {
    !matches!(e.code, ErrorCode::Unreachable | ErrorCode::Busy | ErrorCode::RequestTimeout)
}

/// The error for a write that needs the server while it cannot be reached.
fn needs_server(what: &str, e: Error) -> Error {
    if !is_offline(&e) {
        return e;
    }
    Error::new(
        e.code,
        format!(
            "{what} needs the server, which cannot be reached now ({}); sales, orders and stock changes still work and are sent later",
            e.message
        ),
    )
}

fn unexpected(queued: Queued) -> Error {
    Error::internal(format!("a queued write answered {queued:?}"))
}

impl Mirror {
    fn shared(&self) -> &Shared {
        &self.inner.shared
    }

    /// The client for a write that needs the server: with the sessions of whose write it is,
    /// if the server signed them in (otherwise the server refuses a till's key that writes
    /// for no one, and says to sign in again).
    fn writer(&self) -> Result<crate::client::Client> {
        match &self.who {
            Some(who) => self.client().acting(&who.session_headers()),
            None => Ok(self.client().clone()),
        }
    }

    /// A counter write's answer as an order: the server's, put into the mirror, or the one
    /// queued.
    async fn order_answer(&self, outcome: std::result::Result<CounterAnswer, Queued>) -> Result<Order> {
        match outcome {
            Ok(answer) => {
                let order = answer.into_order()?;
                self.shared().took(Put::Orders(vec![order.clone()])).await;
                Ok(order)
            }
            Err(Queued::Order(order)) => Ok(order),
            Err(other) => Err(unexpected(other)),
        }
    }

    /// The answer to a stock write the server took, `item` being its answer: put into the
    /// mirror, and answered as it is, unless writes wait in the outbox, whose deltas the
    /// mirror adds on top (`Put::Stock`): then the mirror's. Not read back from the mirror
    /// otherwise: the sync task may just have put an older read of the server over it, or
    /// it may not have gone in (a pet the mirror cannot read yet), and the till would
    /// answer the stock before the write, or "not found".
    async fn stock_answer(&self, item: InventoryItem) -> Result<InventoryItem> {
        self.shared().took(Put::Stock(vec![item.clone()])).await;
        if self.shared().local.outbox_counts().await?.pending == 0 {
            return Ok(item);
        }
        self.source().get_inventory(item.pet_id).await
    }

    /// Where reads come from: the mirror once it holds a whole copy; until then the server
    /// itself, so that a till that never reached it says so rather than show an empty shop.
    fn source(&self) -> &dyn Petstore {
        if self.shared().status.borrow().position.is_some() { self.store() } else { self.client() }
    }

    /// An order's id as the mirror has it: the server's, once an order placed offline has
    /// reached it.
    async fn current_id(&self, id: OrderId) -> Result<OrderId> {
        if id.is_provisional()
            && let Some(server) = self.shared().local.server_order_id(id).await?
        {
            return Ok(server);
        }
        Ok(id)
    }
}

#[async_trait]
impl Petstore for Mirror {
    async fn list_pets(&self, filter: PetFilter, page: Page) -> Result<Paged<Pet>> {
        self.source().list_pets(filter, page).await
    }
    async fn create_pet(&self, new: NewPet) -> Result<Pet> {
        let pet = self.writer()?.create_pet(new).await.map_err(|e| needs_server("Adding a pet", e))?;
        self.shared().took(Put::Pets(vec![pet.clone()])).await;
        Ok(pet)
    }
    async fn get_pet(&self, id: PetId) -> Result<Pet> {
        self.source().get_pet(id).await
    }
    async fn replace_pet(&self, id: PetId, new: NewPet) -> Result<Pet> {
        let pet = self.writer()?.replace_pet(id, new).await.map_err(|e| needs_server("Editing a pet", e))?;
        self.shared().took(Put::Pets(vec![pet.clone()])).await;
        Ok(pet)
    }
    async fn update_pet(&self, id: PetId, patch: PetPatch) -> Result<Pet> {
        let pet = self.writer()?.update_pet(id, patch).await.map_err(|e| needs_server("Editing a pet", e))?;
        self.shared().took(Put::Pets(vec![pet.clone()])).await;
        Ok(pet)
    }
    async fn delete_pet(&self, id: PetId) -> Result<()> {
        self.writer()?.delete_pet(id).await.map_err(|e| needs_server("Deleting a pet", e))?;
        self.shared().local.remove(Entity::Pet, id.get()).await
    }

    async fn list_categories(&self, page: Page) -> Result<Paged<Category>> {
        self.source().list_categories(page).await
    }
    async fn create_category(&self, new: NewCategory) -> Result<Category> {
        let category =
            self.writer()?.create_category(new).await.map_err(|e| needs_server("Adding a category", e))?;
        self.shared().took(Put::Categories(vec![category.clone()])).await;
        Ok(category)
    }
    async fn get_category(&self, id: CategoryId) -> Result<Category> {
        self.source().get_category(id).await
    }
    async fn replace_category(&self, id: CategoryId, new: NewCategory) -> Result<Category> {
        let category = self
            .writer()?
            .replace_category(id, new)
            .await
            .map_err(|e| needs_server("Editing a category", e))?;
        self.shared().took(Put::Categories(vec![category.clone()])).await;
        Ok(category)
    }
    async fn delete_category(&self, id: CategoryId) -> Result<()> {
        self.writer()?.delete_category(id).await.map_err(|e| needs_server("Deleting a category", e))?;
        self.shared().local.remove(Entity::Category, id.get()).await
    }

    async fn list_orders(&self, filter: OrderFilter, page: Page) -> Result<Paged<Order>> {
        self.source().list_orders(filter, page).await
    }
    async fn place_order(&self, new: NewOrder) -> Result<Order> {
        self.once(new_key(), CounterWrite::Place(new)).await?.into_order()
    }
    async fn get_order(&self, id: OrderId) -> Result<Order> {
        let id = self.current_id(id).await?;
        self.source().get_order(id).await
    }
    async fn update_order(&self, id: OrderId, patch: OrderPatch) -> Result<Order> {
        self.once(new_key(), CounterWrite::Update { order: id, patch }).await?.into_order()
    }
    async fn cancel_order(&self, id: OrderId) -> Result<Order> {
        self.once(new_key(), CounterWrite::Cancel(id)).await?.into_order()
    }

    async fn list_inventory(&self, filter: InventoryFilter, page: Page) -> Result<Paged<InventoryItem>> {
        self.source().list_inventory(filter, page).await
    }
    async fn get_inventory(&self, pet: PetId) -> Result<InventoryItem> {
        self.source().get_inventory(pet).await
    }
    async fn set_inventory(&self, pet: PetId, update: InventoryUpdate) -> Result<InventoryItem> {
        let item =
            self.writer()?.set_inventory(pet, update).await.map_err(|e| {
                needs_server("Setting a stock count (an adjustment by + or - works offline)", e)
            })?;
        self.stock_answer(item).await
    }
    async fn adjust_inventory(
        &self,
        pet: PetId,
        adjustment: NewInventoryAdjustment,
    ) -> Result<InventoryItem> {
        self.once(new_key(), CounterWrite::Adjust { pet, adjustment }).await?.into_item()
    }
    /// The history is the server's: the mirror keeps stock, not every adjustment.
    async fn list_adjustments(&self, pet: PetId, page: Page) -> Result<Paged<InventoryAdjustment>> {
        self.client().list_adjustments(pet, page).await.map_err(|e| needs_server("The stock history", e))
    }
    /// The server's too: its orders' entries are counted from its live stock.
    async fn stock_history(&self, pet: PetId, page: Page) -> Result<Paged<StockEntry>> {
        self.client().stock_history(pet, page).await.map_err(|e| needs_server("The stock history", e))
    }

    /// The server's settings, kept in the mirror for when it cannot be reached (and read
    /// from there at once while it is known not to be).
    async fn get_settings(&self) -> Result<ShopSettings> {
        if matches!(self.shared().status.borrow().state, SyncState::Offline { .. }) {
            return self.store().get_settings().await;
        }
        match self.client().get_settings().await {
            Ok(settings) => self.store().put_settings(settings).await,
            Err(e) if is_offline(&e) => self.store().get_settings().await,
            Err(e) => Err(e),
        }
    }
    /// From the mirror's orders, its days counted in the server's time zone.
    async fn sales_report(&self, range: DayRange) -> Result<Vec<SalesDay>> {
        if self.shared().status.borrow().position.is_none() {
            return self.client().sales_report(range).await;
        }
        self.get_settings().await?;
        self.store().sales_report(range).await
    }
    async fn put_settings(&self, settings: ShopSettings) -> Result<ShopSettings> {
        let saved = self
            .writer()?
            .put_settings(settings)
            .await
            .map_err(|e| needs_server("Changing the shop's settings", e))?;
        self.store().put_settings(saved).await
    }
}

/// The counter writes under a key of the caller's: a new UUID for the window's, the local
/// API client's own (as [`IdempotencyKey::forwarded`](crate::idempotency::IdempotencyKey::forwarded))
/// for its. The key goes to the server with the write, or into the outbox with it; sent
/// again while the write waits there, it answers the queued write again.
impl Mirror {
    /// Runs `write` under `key`: on the server, or queued while it cannot be reached.
    pub(super) async fn once(&self, key: String, write: CounterWrite) -> Result<CounterAnswer> {
        match write {
            CounterWrite::Place(new) => {
                let outcome = self.shared().counter(key, Command::place(new), self.who.as_deref()).await?;
                self.order_answer(outcome).await.map(CounterAnswer::Order)
            }
            CounterWrite::Update { order, patch } => {
                self.send_update(key, order, patch).await.map(CounterAnswer::Order)
            }
            CounterWrite::Cancel(order) => self.send_cancel(key, order).await.map(CounterAnswer::Order),
            CounterWrite::Delete(order) => self.send_delete(key, order).await.map(|()| CounterAnswer::Done),
            CounterWrite::Adjust { pet, adjustment } => {
                self.send_adjustment(key, pet, adjustment).await.map(CounterAnswer::Item)
            }
        }
    }

    async fn send_update(&self, key: String, id: OrderId, patch: OrderPatch) -> Result<Order> {
        let id = self.current_id(id).await?;
        let completes = patch == OrderPatch { complete: Some(true), ..OrderPatch::default() };
        if !completes && (id.is_provisional() || self.shared().queue_first()) {
            // Only completing is a counter write; anything else is checked by the server
            // against the order as it has it.
            self.store().get_order(id).await?;
            return Err(Error::new(
                ErrorCode::Unreachable,
                format!(
                    "order {id} can be completed or cancelled now, but changing it needs the server, {}",
                    if id.is_provisional() {
                        "which has not received it yet"
                    } else {
                        "and writes are waiting to reach it"
                    }
                ),
            ));
        }
        if !completes {
            let order = self
                .writer()?
                .once(&key, &CounterWrite::Update { order: id, patch })
                .await
                .and_then(CounterAnswer::into_order)
                .map_err(|e| needs_server("Changing an order", e))?;
            self.shared().took(Put::Orders(vec![order.clone()])).await;
            return Ok(order);
        }
        let command = Command::CompleteOrder { order_id: id, completed_at: None };
        let outcome = self.shared().counter(key, command, self.who.as_deref()).await?;
        self.order_answer(outcome).await
    }

    /// Cancels with `POST .../cancel`: the server keeps the cancelled order and answers it,
    /// and so the mirror shows it (the Cancelled tab). Queued, it is the order as the
    /// mirror has it until the server answers.
    async fn send_cancel(&self, key: String, id: OrderId) -> Result<Order> {
        let id = self.current_id(id).await?;
        let command = Command::CancelOrder { order_id: id };
        match self.shared().counter(key, command, self.who.as_deref()).await? {
            Err(Queued::Cancelled) => self.store().get_order(id).await,
            outcome => self.order_answer(outcome).await,
        }
    }

    /// Deletes on the server, never offline: a deletion is no counter write, and a till
    /// that queued one would show the order gone while the server still has it. So it is
    /// refused with nothing changed while the server cannot be reached or writes wait for
    /// it (the order can still be cancelled then), and forwarded otherwise, with the
    /// caller's key; the mirror then drops the order, as the feed's `deleted` would.
    async fn send_delete(&self, key: String, id: OrderId) -> Result<()> {
        let id = self.current_id(id).await?;
        if id.is_provisional() || self.shared().queue_first() {
            self.store().get_order(id).await?;
            return Err(Error::new(
                ErrorCode::Unreachable,
                format!(
                    "deleting order {id} needs the server, {}; it can be cancelled now",
                    if id.is_provisional() {
                        "which has not received it yet"
                    } else {
                        "and writes are waiting to reach it"
                    }
                ),
            ));
        }
        self.writer()?
            .once(&key, &CounterWrite::Delete(id))
            .await
            .map_err(|e| needs_server("Deleting an order", e))?;
        self.shared().local.remove(Entity::Order, id.get()).await
    }

    async fn send_adjustment(
        &self,
        key: String,
        pet: PetId,
        adjustment: NewInventoryAdjustment,
    ) -> Result<InventoryItem> {
        let command = Command::AdjustInventory { pet_id: pet, adjustment };
        match self.shared().counter(key, command, self.who.as_deref()).await? {
            Ok(answer) => self.stock_answer(answer.into_item()?).await,
            Err(Queued::Item(item)) => Ok(item),
            Err(other) => Err(unexpected(other)),
        }
    }
}
