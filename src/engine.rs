//! The interfaces the app, the server and the tests program against.
//!
//! [`Petstore`] is the shop: the SQLite [`Store`], the PostgreSQL [`PgStore`], the HTTP
//! [`Client`](crate::client::Client) and a till's [`Mirror`] all implement it, so local and
//! remote mode are the same code above this line. The API server needs more of a database,
//! one trait for each thing it is: [`Database`], the counter writes run once per
//! idempotency key; [`Keys`], the named API keys; [`Feed`], news of every commit and the
//! change feed; [`Exports`] and [`Imports`], the CSV files' pages and pets; [`Seeding`],
//! demo data; [`Staff`], the staff, their sessions and the activity log. Both engines have
//! all of them ([`ShopDatabase`]); the [`Mirror`], which the app's local API serves in
//! remote mode, has what a copy of a remote shop can have, and no imports, seeding or
//! staff, which belong on the server (staff sign in at the server the till follows). The server holds a [`Served`], each
//! capability apart, and never asks which engine is under it.
//!
//! [`Store`]: crate::store::Store
//! [`PgStore`]: crate::postgres::PgStore
//! [`Mirror`]: crate::mirror::Mirror

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Serialize;
use tokio::sync::broadcast;

use crate::api_key::{IssuedKey, KeyInfo, KeyMatch, Scope};
use crate::domain::*;
use crate::error::{Error, ErrorCode, Result};
use crate::idempotency::{IdempotencyKey, Once};

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
    /// Cancels an open order: its stock returns and the order is kept, stamped
    /// `cancelledAt`; answers it so.
    async fn cancel_order(&self, id: OrderId) -> Result<Order>;

    async fn list_inventory(&self, filter: InventoryFilter, page: Page) -> Result<Paged<InventoryItem>>;
    async fn get_inventory(&self, pet: PetId) -> Result<InventoryItem>;
    async fn set_inventory(&self, pet: PetId, update: InventoryUpdate) -> Result<InventoryItem>;
    async fn adjust_inventory(&self, pet: PetId, adjustment: NewInventoryAdjustment)
    -> Result<InventoryItem>;
    async fn list_adjustments(&self, pet: PetId, page: Page) -> Result<Paged<InventoryAdjustment>>;
    /// Everything that moved `pet`'s stock, newest first: the adjustments and its orders'
    /// entries, each with the stock after it (`domain::history`).
    async fn stock_history(&self, pet: PetId, page: Page) -> Result<Paged<StockEntry>>;

    /// The shop's settings: what was saved, or the defaults.
    async fn get_settings(&self) -> Result<ShopSettings>;
    /// Saves the shop's settings whole.
    async fn put_settings(&self, settings: ShopSettings) -> Result<ShopSettings>;

    /// Every day of `range` in the shop's time zone, with the orders completed on it.
    async fn sales_report(&self, range: DayRange) -> Result<Vec<SalesDay>>;
}

/// The shop's counter writes, as the API server runs them: once per idempotency key.
#[async_trait]
pub trait Database: Petstore {
    /// Runs the counter write `write` once per `key` (see `crate::idempotency`): the first
    /// time for real, later by answering the first outcome (the answer, or the shop's
    /// refusal) and changing nothing, whichever server process ran it. The same key with
    /// another write is refused with `idempotency_key_reused`.
    async fn once(
        &self,
        key: IdempotencyKey,
        write: CounterWrite,
        now: DateTime<Utc>,
    ) -> Result<Once<CounterAnswer>>;
    /// Deletes order `id` (`DELETE /store/orders/{id}`): an open order is cancelled first,
    /// a cancelled one taken as it is, a completed one refused (`order_completed`), as
    /// `domain::status_rules::deletion` decides. From then on the API answers `not_found`
    /// for it and the feed reports it `deleted`; the engines keep its row for the shop's
    /// records.
    async fn delete_order(&self, id: OrderId) -> Result<()>;

    /// Moves the idempotency records kept under each `(from, to)`'s `from` scope to its `to`
    /// scope, leaving a key that `to` holds already; answers how many moved. The server
    /// moves its operator keys' records from the scope of their secret to that of their
    /// identity as it starts (see `crate::idempotency`). A store that keeps no records (the
    /// app's mirror, whose server keeps them) moves none.
    async fn move_idempotency_scopes(&self, moves: Vec<([u8; 32], [u8; 32])>) -> Result<u64> {
        let _ = moves;
        Ok(0)
    }

    /// The same database, whose writes are `actor`'s: each keeps them on its record (an
    /// order's `placedBy`, an adjustment's `madeBy`) and in the activity log, in the
    /// write's own transaction. The API server takes one per request that writes; the
    /// database itself, unacted, writes as the operator ([`Actor::operator`]).
    fn acting(&self, actor: Actor) -> Arc<dyn Database>;
}

/// The named API keys.
#[async_trait]
pub trait Keys: Send + Sync {
    /// The named key whose secret hashes to `hash`, read afresh for every request, so a key
    /// revoked or rotated by any process is refused from its next request on.
    async fn find_key(&self, hash: [u8; 32]) -> Result<KeyMatch>;
    /// Makes a new key named `name` with a fresh 256-bit secret.
    async fn create_key(&self, name: Name, scope: Scope) -> Result<IssuedKey>;
    /// Every key, active and revoked, by name.
    async fn list_keys(&self) -> Result<Vec<KeyInfo>>;
    /// Revokes the key named `name`: from now on no request carrying it is accepted.
    async fn revoke_key(&self, name: &str) -> Result<KeyInfo>;
    /// Gives the key named `name` a new secret; the old one stops working at once.
    async fn rotate_key(&self, name: &str) -> Result<IssuedKey>;
    /// The same keys, whose writes are `actor`'s: logged as theirs in the activity log, in
    /// the write's own transaction. (`Database::acting` gives a `Database`, which has no
    /// keys; the API takes this one for the key writes of a request.)
    fn keys_acting(&self, actor: Actor) -> Arc<dyn Keys>;
}

/// News of every commit, and the change feed: the numbered changes followers read.
#[async_trait]
pub trait Feed: Send + Sync {
    /// Committed changes, for whoever shows the data. On PostgreSQL every replica hears of
    /// every commit (LISTEN/NOTIFY); on SQLite, of this process's commits (the desktop app
    /// is the one process that writes there).
    fn subscribe(&self) -> broadcast::Receiver<Change>;

    /// Notices for feed followers: something was committed and numbered in the feed. A
    /// feed that numbers each change as it commits (SQLite's, the till's mirror's) gives
    /// the same notices as `subscribe`; PostgreSQL numbers changes just after their commit.
    fn feed_notices(&self) -> broadcast::Receiver<Change> {
        self.subscribe()
    }
    /// Where the change feed begins (past what was purged) and ends (its last change).
    async fn feed_bounds(&self) -> Result<FeedBounds>;
    /// The feed's position now for a reader in `scope`: the last change it is given (the
    /// horizon when none is kept). A reader of the data alone that starts there, or waits
    /// to get there, does not wait for the activity log's entries it is never given.
    async fn feed_head(&self, scope: FeedScope) -> Result<u64>;
    /// Up to `limit` changes of the feed after `since` in `scope`, in order; `410 gone` if
    /// `since` is behind what the feed still keeps or ahead of it (see [`FeedBounds::check`]).
    async fn changes_since(&self, since: u64, limit: u32, scope: FeedScope) -> Result<FeedPage>;
    /// Removes the feed's changes made before `before`, oldest first, and moves its horizon
    /// past them; answers how many it removed.
    async fn purge_changes(&self, before: DateTime<Utc>) -> Result<u64>;
}

/// The shop's data read out in pages, for the CSV exports (`crate::exports`).
#[async_trait]
pub trait Exports: Send + Sync {
    /// Up to `limit` pets with ids above `after`, in id order: a page of an export.
    async fn export_pets(&self, after: i64, limit: u32) -> Result<Vec<PetExport>>;
    /// Up to `limit` orders with ids above `after`, in id order, created between `from` and
    /// `to` (any time when `None`): a page of an export. Cancelled orders are left out: the
    /// export is what the shop sold and reserved.
    async fn export_orders(
        &self,
        created: Option<(Timestamp, Timestamp)>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<OrderExport>>;
}

/// Pets made from a CSV file.
#[async_trait]
pub trait Imports: Send + Sync {
    /// Creates the pets of `rows` (a CSV file, parsed), all or none; with
    /// `create_categories`, the categories they name that do not exist yet too; with
    /// `dry_run`, only says what it would do.
    async fn import_pets(
        &self,
        rows: Vec<ImportRow>,
        create_categories: bool,
        dry_run: bool,
    ) -> Result<ImportReport>;
    /// The same imports, made as `actor`'s: the pets' entry in the activity log names them.
    /// (The API takes this one for an import, as it takes `Keys::keys_acting` for keys.)
    fn imports_acting(&self, actor: Actor) -> Arc<dyn Imports>;
}

/// The shop's staff: the members, their PINs' hashes and lockouts, their sessions, and the
/// activity log. Rows only: `crate::staff` checks PINs (argon2, in constant time) and
/// `domain::staff` decides who may do what, how long a lockout lasts and that an owner
/// stays; each engine stores what they decided, in one transaction per call.
#[async_trait]
pub trait Staff: Send + Sync {
    /// Every staff member, active or not, by name.
    async fn list_staff(&self) -> Result<Vec<StaffMember>>;
    async fn get_staff(&self, id: StaffId) -> Result<StaffMember>;
    /// Adds a member; recorded in the activity log as `by`'s.
    async fn create_staff(&self, new: NewStaffRow, by: &Actor) -> Result<StaffMember>;
    /// Changes a member; refuses with `last_owner` (`domain::keep_an_owner`, asked inside
    /// the transaction) a change that would leave the shop no active owner. A new PIN hash
    /// also ends a lockout.
    async fn update_staff(&self, id: StaffId, change: StaffChange, by: &Actor) -> Result<StaffMember>;
    /// The member with their PIN's hash and wrong PINs in a row, for a sign-in.
    async fn pin_record(&self, id: StaffId) -> Result<PinRecord>;
    /// Counts a wrong PIN typed at `now` and locks the member for `domain::lock_after` of
    /// the new count, in one transaction; logs `pin_refused` (and `staff_locked_out`).
    async fn pin_refused(&self, id: StaffId, now: Timestamp, by: &Actor) -> Result<PinRecord>;
    /// A right PIN: ends the row of wrong ones, keeps `session` (its token's hash only),
    /// and logs `signed_in`.
    async fn sign_in(&self, session: NewSession, by: &Actor) -> Result<()>;
    /// The session whose token hashes to `token_hash`, if it is still good at `now` and its
    /// member still active. An approval is used up by the finding: it lets one write through.
    async fn find_session(&self, token_hash: [u8; 32], now: Timestamp) -> Result<Option<StaffRef>>;
    /// Ends the session (signing out); ending one that is gone is no error.
    async fn end_session(&self, token_hash: [u8; 32]) -> Result<()>;
    /// The log, newest first.
    async fn list_activity(&self, filter: ActivityFilter, page: Page) -> Result<Paged<ActivityEntry>>;
    /// Keeps `proof_key` as member `id`'s, made from the PIN whose hash is `pin_hash`; kept
    /// only while that is still their PIN (a new one set meanwhile brought its own key).
    /// For members whose PIN was set before the server kept proof keys: it learns the key
    /// at their next sign-in with the PIN.
    async fn keep_proof_key(&self, id: StaffId, pin_hash: String, proof_key: [u8; 32]) -> Result<()>;
    /// Every member with their PIN's hash, by id: what a till keeps to sign staff in while
    /// it cannot reach the server (never the proof keys).
    async fn staff_credentials(&self) -> Result<Vec<StaffCredential>>;
    /// After `pin` signed member `id` in for `purpose` here: where the staff are another's
    /// (the local API of a till in remote mode, `mirror/served_staff.rs`), signs them in
    /// there too, while it answers. Nothing for an engine, whose staff are its own.
    async fn sign_in_upstream(&self, _id: StaffId, _pin: Pin, _purpose: SessionPurpose) -> Result<()> {
        Ok(())
    }
}

/// A PIN as an engine keeps it: its argon2id hash (a PHC string, salt and parameters in
/// it) and the proof key made from the PIN (`crate::staff::proof`), which only the server
/// keeps.
#[derive(Debug, Clone)]
pub struct StoredPin {
    pub hash: String,
    pub proof_key: [u8; 32],
}

/// A new staff member as an engine stores it: the PIN already hashed.
#[derive(Debug, Clone)]
pub struct NewStaffRow {
    pub name: Name,
    pub role: Role,
    pub pin: StoredPin,
}

/// A change to a staff member as an engine stores it: `None` leaves a field.
#[derive(Debug, Clone, Default)]
pub struct StaffChange {
    pub name: Option<Name>,
    pub role: Option<Role>,
    pub pin: Option<StoredPin>,
    pub active: Option<bool>,
}

/// What a sign-in (or a proof's check) needs to know of a member.
#[derive(Debug, Clone)]
pub struct PinRecord {
    pub member: StaffMember,
    /// `None` for the owner an upgrade made, until they set a PIN.
    pub pin_hash: Option<String>,
    /// `None` until the server has seen the PIN (set, or typed at a sign-in), and always
    /// in a till's mirror.
    pub proof_key: Option<[u8; 32]>,
    pub failures: u32,
}

/// What a session is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionPurpose {
    /// The member serving at a till, until they sign out or it expires.
    Shift,
    /// A manager's approval of one action: used up by the first request that carries it.
    Approval,
}

/// A session as an engine keeps it: the hash of its token, never the token.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub token_hash: [u8; 32],
    pub staff: StaffId,
    pub purpose: SessionPurpose,
    pub expires_at: Timestamp,
}

/// Demo data.
#[async_trait]
pub trait Seeding: Send + Sync {
    /// Adds `pets` realistic demo pets (and their categories), calling `progress` with the
    /// number added so far.
    async fn seed(&self, pets: u64, progress: Box<dyn Fn(u64) + Send + Sync>) -> Result<SeedReport>;
}

/// A database that keeps the shop itself, and so can do all of it: SQLite's `Store` and
/// PostgreSQL's `PgStore`. A till's `Mirror` is not one: it copies a shop kept on a server.
pub trait ShopDatabase: Database + Keys + Feed + Exports + Imports + Seeding + Staff {}

impl<T: Database + Keys + Feed + Exports + Imports + Seeding + Staff + ?Sized> ShopDatabase for T {}

/// What the API server serves: the shop with its counter writes, and each capability the
/// engine under it has. An engine without one (the till's `Mirror`, which imports no pets)
/// says why, and the server answers that instead.
#[derive(Clone)]
pub struct Served {
    pub shop: Arc<dyn Database>,
    pub keys: Arc<dyn Keys>,
    pub feed: Arc<dyn Feed>,
    pub exports: Arc<dyn Exports>,
    pub imports: Capability<dyn Imports>,
    /// The shop's staff, their sessions and the activity log: kept where the shop is.
    pub staff: Capability<dyn Staff>,
}

impl Served {
    /// All of `db`: a database that keeps the shop itself has every capability.
    pub fn all_of(db: Arc<dyn ShopDatabase>) -> Self {
        Self {
            shop: db.clone(),
            keys: db.clone(),
            feed: db.clone(),
            exports: db.clone(),
            imports: Capability::Has(db.clone()),
            staff: Capability::Has(db),
        }
    }
}

/// A capability an engine has, or the reason it has not.
pub enum Capability<T: ?Sized> {
    Has(Arc<T>),
    /// Why not, answered as `403 forbidden`: the request is understood, and this engine
    /// will never do it.
    Lacks(&'static str),
}

impl<T: ?Sized> Capability<T> {
    /// The capability, or the engine's refusal.
    pub fn get(&self) -> Result<&T> {
        match self {
            Self::Has(it) => Ok(it),
            Self::Lacks(why) => Err(Error::new(ErrorCode::Forbidden, *why)),
        }
    }

    /// The capability to keep (a stream that outlives the request), or the refusal.
    pub fn shared(&self) -> Result<Arc<T>> {
        match self {
            Self::Has(it) => Ok(it.clone()),
            Self::Lacks(why) => Err(Error::new(ErrorCode::Forbidden, *why)),
        }
    }
}

impl<T: ?Sized> Clone for Capability<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Has(it) => Self::Has(it.clone()),
            Self::Lacks(why) => Self::Lacks(why),
        }
    }
}

/// What [`Seeding::seed`] added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedReport {
    pub pets: u64,
    pub categories: u64,
}

/// Which kind of data a committed write changed; the desktop app turns it into an event so
/// an open window refreshes what it shows.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Pets,
    Categories,
    Orders,
    Inventory,
    Settings,
}

impl CounterWrite {
    /// The kind of data it changes.
    pub fn change(&self) -> Change {
        match self {
            Self::Adjust { .. } => Change::Inventory,
            Self::Place(_) | Self::Update { .. } | Self::Cancel(_) | Self::Delete(_) => Change::Orders,
        }
    }
}

impl Change {
    /// Every kind, for a listener that missed some and must refresh everything.
    pub const ALL: [Change; 5] =
        [Change::Pets, Change::Categories, Change::Orders, Change::Inventory, Change::Settings];
}
