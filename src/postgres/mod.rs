//! The PostgreSQL store, for a chain's central server: the same shop as the SQLite store
//! behind the same [`Petstore`](crate::Petstore) and [`Database`](crate::engine::Database)
//! traits, safe with several `petstore-server` replicas on one database.
//!
//! Laid out like `src/store/`: one module per resource (`pets.rs`, `categories.rs`,
//! `orders.rs`, `inventory.rs`, `keys.rs`, `idempotency.rs`, `staff.rs`), the activity log
//! every write adds its entry to in its own transaction (`activity.rs`), the status rules applied in
//! `stock.rs` (the rules themselves are `crate::domain::status_rules`, shared), the paging
//! every list shares in `paging.rs`, `changes.rs` (LISTEN/NOTIFY), `readers.rs` (a pet by
//! id on shared, pipelined connections), `migrations.rs`,
//! `seed.rs`, and `shop.rs`, each trait operation as one statement or one transaction
//! around those functions.
//!
//! What replaces SQLite's one writer here is PostgreSQL's row locks: every write that
//! reads a row to decide what to write locks it first (`SELECT ... FOR UPDATE`), or is
//! one conditional `UPDATE`, so that any number of replicas never decide on stale rows.
//!
//! A request that times out (`crate::WriteAdmission`): the edge answers 408 and drops the
//! request's future. What PostgreSQL may still do for it is bounded three ways:
//! - every write marks the request's admission begun just before it sends the step that
//!   may apply it (a `COMMIT`, or the order's one statement in autocommit), and does not
//!   send it once the admission is closed; so a 408 that says `nothing was changed` is
//!   true, and one sent after that step says the change may have been applied;
//! - a connection dropped with its request abandoned may still have a query running (a
//!   statement waiting for a row lock, say): it is taken out of the pool, its query
//!   cancelled and the connection closed ([`Conn`]), never handed to the next request,
//!   which would wait behind that query; a transaction not committed is then rolled back;
//! - every session has limits below the edge's timeout ([`SessionLimits`]): a statement
//!   that nobody cancels (its replica was killed) ends by itself, and a backend whose
//!   client has gone notices within a second.

mod activity;
mod capabilities;
mod categories;
mod changes;
mod config;
mod exports;
mod feed;
mod idempotency;
mod imports;
mod inventory;
mod keys;
mod migrations;
mod orders;
mod paging;
mod pets;
mod readers;
mod reports;
mod seed;
mod settings;
mod shop;
mod staff;
mod stock;
mod types;

use std::sync::Arc;

use std::ops::{Deref, DerefMut};

use deadpool_postgres::{Object, Pool};
use tokio::sync::broadcast;

pub use config::{PgTarget, SessionLimits};
pub use migrations::PG_SCHEMA_VERSION;

use crate::admission::WriteAdmission;
use crate::domain::Actor;
use crate::engine::Change;
use crate::error::{Error, ErrorCode};

/// Connections in the pool of one replica. The server answers up to its connection cap at
/// once, and each request holds a connection only for its statement or transaction, so
/// requests beyond the pool wait for a connection here rather than for a core in
/// PostgreSQL. 16 keeps two cores' worth of PostgreSQL busy with requests in flight while
/// ten replicas stay at 160. Measured on the benchmarks' two cores, 64 client connections,
/// back to back: against 32, the filtered page at 1,000,000 pets went from 6,700-6,800 to
/// 7,300-7,550 req/s (p99 16 to 13 ms) and orders did not lose (6,850-8,100 requests per
/// second at both); 8 served the page 5-9 % faster again but orders 5-10 % slower.
pub const POOL_SIZE: usize = 16;

/// Why the store could not be opened, in one line.
#[derive(Debug, thiserror::Error)]
pub enum PgOpenError {
    /// The server could not be reached, refused the login, or has no such database.
    #[error("{0}")]
    Connect(String),
    /// The schema is from a newer Petstore; nothing was changed.
    #[error(
        "the database {database} has schema version {found}, newer than this Petstore's {known}; upgrade Petstore"
    )]
    Newer { database: String, found: i64, known: i64 },
    /// A migration failed and was rolled back.
    #[error("cannot migrate the database {database}: {detail}")]
    Migrate { database: String, detail: String },
}

/// The PostgreSQL store. Clones share the pool and the change listener.
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
    /// Whose writes this handle makes (`Database::acting`); the operator's until told.
    actor: Arc<Actor>,
}

struct Inner {
    pool: Pool,
    /// The shared, pipelined connections for a pet by id.
    readers: readers::Readers,
    target: PgTarget,
    changes: broadcast::Sender<Change>,
    notifier: changes::Notifier,
    /// Commit notices passed on once the change feed is numbered (see `feed.rs`).
    feed: broadcast::Sender<Change>,
    /// Whether idempotency records scoped by a secret may be left (schema 8): learnt at
    /// connect and again after each hourly purge, so that once they have expired a
    /// command's key costs no statement more.
    by_secret: std::sync::atomic::AtomicBool,
    listener: tokio::task::JoinHandle<()>,
    notifying: tokio::task::JoinHandle<()>,
    sequencer: tokio::task::JoinHandle<()>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.listener.abort();
        self.notifying.abort();
        self.sequencer.abort();
    }
}

impl PgStore {
    /// Connects to `target`, migrates its schema (refusing one newer than this Petstore's)
    /// and starts listening for the changes every replica commits.
    pub async fn connect(target: &PgTarget) -> Result<PgStore, PgOpenError> {
        let pool = target.pool(POOL_SIZE).map_err(PgOpenError::Connect)?;
        let mut client = pool.get().await.map_err(|e| PgOpenError::Connect(describe_pool(target, e)))?;
        migrations::run(&mut client, target).await?;
        let by_secret =
            idempotency::any_by_secret(&client).await.map_err(|e| PgOpenError::Connect(e.to_string()))?;
        drop(client);
        let (changes, _) = broadcast::channel(256);
        let listener = changes::listen(target.clone(), changes.clone()).await?;
        let (notifier, notifying) = changes::Notifier::start(pool.clone());
        let (feed, _) = broadcast::channel(256);
        let sequencer = feed::start(pool.clone(), changes.subscribe(), feed.clone());
        Ok(PgStore {
            inner: Arc::new(Inner {
                pool,
                readers: readers::Readers::new(target.clone()),
                target: target.clone(),
                changes,
                by_secret: by_secret.into(),
                notifier,
                feed,
                listener,
                notifying,
                sequencer,
            }),
            actor: Arc::default(),
        })
    }

    fn readers(&self) -> &readers::Readers {
        &self.inner.readers
    }

    /// Where this store keeps its data (the URL without its password).
    pub fn target(&self) -> &PgTarget {
        &self.inner.target
    }

    /// Committed changes of every replica, for whoever shows the data.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.inner.changes.subscribe()
    }

    /// Commit notices, each sent once the feed has numbered what it may of that commit.
    pub fn feed_notices(&self) -> broadcast::Receiver<Change> {
        self.inner.feed.subscribe()
    }

    /// A pooled connection, for the current request (if the task serves one).
    async fn client(&self) -> crate::Result<Conn> {
        let object = self.inner.pool.get().await.map_err(no_connection)?;
        Ok(Conn {
            object: Some(object),
            admission: WriteAdmission::current(),
            target: self.inner.target.clone(),
        })
    }
}

/// A pooled connection held by a request. Dropped while its request is over (the edge
/// timed it out and dropped the request's future), it may still have a query in flight,
/// whose answer nobody reads: such a connection is taken out of the pool, its query
/// cancelled and the connection closed, in the background. Handed back as it was, the next
/// request would queue behind that query (a lock wait of minutes, on the pet of an
/// operator's `psql` session) and time out in turn, whatever it asked for.
pub(crate) struct Conn {
    object: Option<Object>,
    admission: Option<WriteAdmission>,
    target: PgTarget,
}

impl Deref for Conn {
    type Target = Object;
    fn deref(&self) -> &Object {
        self.object.as_ref().expect("a connection is held until it drops")
    }
}

impl DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut Object {
        self.object.as_mut().expect("a connection is held until it drops")
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if !self.admission.as_ref().is_some_and(WriteAdmission::is_closed) {
            return;
        }
        let (Some(object), Ok(runtime)) = (self.object.take(), tokio::runtime::Handle::try_current()) else {
            return;
        };
        // Out of the pool at once, so that no request is given it meanwhile.
        let client = Object::take(object);
        let cancel = client.cancel_token();
        let tls = self.target.tls();
        runtime.spawn(async move {
            // A query that ended meanwhile makes this a no-op; the connection closes anyway.
            if let Err(e) = cancel.cancel_query(tls).await {
                tracing::warn!(error = %e, "could not cancel the query of an abandoned request");
            }
            drop(client);
        });
    }
}

/// A request's failure to get a connection. Nothing was sent, so nothing was changed: a
/// pool whose every connection stayed busy past its wait, or a database with no room for
/// another session, is load the server sheds (`503 busy` with `Retry-After`, as the
/// contract says), not an internal error; the client sends the same request again.
fn no_connection(e: deadpool_postgres::PoolError) -> Error {
    match e {
        deadpool_postgres::PoolError::Backend(e) => pg(e),
        deadpool_postgres::PoolError::Timeout(_) => Error::new(
            ErrorCode::Busy,
            "every connection to the database stayed in use; nothing was changed, and the same request may be sent again",
        ),
        other => Error::internal(format!("no PostgreSQL connection: {other}")),
    }
}

/// One line for a failure to get a first connection.
fn describe_pool(target: &PgTarget, e: deadpool_postgres::PoolError) -> String {
    match e {
        deadpool_postgres::PoolError::Backend(e) => target.describe(&e),
        deadpool_postgres::PoolError::Timeout(_) => {
            format!(
                "cannot reach PostgreSQL at {} (database {}): timed out",
                target.address(),
                target.database()
            )
        }
        other => format!("cannot reach PostgreSQL at {}: {other}", target.address()),
    }
}

/// An unexpected database failure: the details to the log, `internal` to the caller. The
/// failures the shop expects (a name taken, a row gone) are mapped where they can happen;
/// a session limit reached (see [`SessionLimits`]) is `busy`: the statement failed, its
/// transaction is rolled back, nothing was changed and the request may be sent again.
fn pg(e: tokio_postgres::Error) -> Error {
    use tokio_postgres::error::SqlState;
    match e.code() {
        Some(code) if *code == SqlState::LOCK_NOT_AVAILABLE => Error::new(
            ErrorCode::Busy,
            "another session held what this request needed to change for too long; nothing was changed, and the same request may be sent again",
        ),
        Some(code) if *code == SqlState::QUERY_CANCELED => Error::new(
            ErrorCode::Busy,
            "the database took too long over this request and stopped it; nothing was changed, and the same request may be sent again",
        ),
        // Only a new session is refused so: it had sent nothing yet.
        Some(code) if *code == SqlState::TOO_MANY_CONNECTIONS || *code == SqlState::CANNOT_CONNECT_NOW => {
            Error::new(
                ErrorCode::Busy,
                "the database has no room for another connection now; nothing was changed, and the same request may be sent again",
            )
        }
        _ => Error::internal(format!("PostgreSQL: {e}")),
    }
}

/// Whether `e` is a violation of the unique constraint or index named `constraint`.
fn violates(e: &tokio_postgres::Error, code: &tokio_postgres::error::SqlState, constraint: &str) -> bool {
    e.as_db_error().is_some_and(|db| db.code() == code && db.constraint() == Some(constraint))
}

#[cfg(test)]
mod tests;
