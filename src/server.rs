//! The API server as a value (zero-to-production's `Application`): bind first, so the
//! caller learns the real port (tests bind port 0) and a busy port is a clear error, then
//! serve until a shutdown signal, finishing the requests in flight. The headless server and
//! the desktop app's local API both serve this way, with the limits on connections of
//! `connections.rs`.

mod connections;
mod open_files;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::api::{
    self, AppState, FailedAuth, FailureLimit, FeedHub, HostPolicy, KeyRing, Shared, StreamLimits, Streams,
};
use crate::clock::Clock;
use crate::engine::{Feed, Served};

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";

/// How long the edge waits for a request's answer before it answers 408. PostgreSQL's
/// session limits are set below it (`postgres::SessionLimits`).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

pub struct ServerConfig {
    pub listen: SocketAddr,
    pub keys: KeyRing,
    /// Host names besides loopback that clients may use to reach the server.
    pub allowed_hosts: Vec<String>,
    pub clock: Clock,
    pub request_timeout: Duration,
    /// How many wrong keys a client may send before it is slowed down.
    pub failed_auth: FailureLimit,
    /// How long the change feed keeps its changes; a client further behind resyncs (410).
    pub change_retention: Duration,
    /// How long an `Idempotency-Key` is kept: a retry within it is answered, not placed.
    pub idempotency_window: Duration,
    /// How many change-feed streams may be open, and for how long (`api/streams.rs`).
    pub streams: StreamLimits,
}

/// The change feed's retention and the idempotency window unless configured: a week, so a
/// till that was offline over a long weekend catches up from the feed and replays its
/// queued sales without placing any twice.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// How often the server removes the feed's changes older than the retention.
const PURGE_EVERY: Duration = Duration::from_secs(60 * 60);

impl ServerConfig {
    pub fn new(listen: SocketAddr, keys: KeyRing) -> Self {
        Self {
            listen,
            keys,
            allowed_hosts: Vec::new(),
            clock: Clock::system(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            failed_auth: FailureLimit::default(),
            change_retention: DEFAULT_WINDOW,
            idempotency_window: DEFAULT_WINDOW,
            streams: StreamLimits::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: the port is already in use (is another Petstore running?)")]
    PortInUse { addr: SocketAddr },
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("{0}")]
    Config(String),
}

pub struct Application {
    listener: TcpListener,
    service: api::ApiService,
    addr: SocketAddr,
    /// How many connections may be open at once (see `open_files.rs`).
    max_connections: usize,
    /// The change feed, purged past its retention while the server runs.
    changes: Arc<dyn Feed>,
    change_retention: Duration,
    feed: Arc<FeedHub>,
    /// Set at shutdown (see [`Shared::stopping`]).
    stopping: watch::Sender<bool>,
}

impl Application {
    pub async fn bind(served: Served, config: ServerConfig) -> Result<Self, ServeError> {
        let max_connections = open_files::max_connections();
        let listener = TcpListener::bind(config.listen).await.map_err(|source| match source.kind() {
            std::io::ErrorKind::AddrInUse => ServeError::PortInUse { addr: config.listen },
            _ => ServeError::Bind { addr: config.listen, source },
        })?;
        let addr =
            listener.local_addr().map_err(|source| ServeError::Bind { addr: config.listen, source })?;
        if !addr.ip().is_loopback() {
            tracing::warn!(%addr, "listening beyond this machine: anyone who can reach it and holds a key can use the API");
        }
        let mut hosts = config.allowed_hosts.clone();
        if !addr.ip().is_unspecified() && !addr.ip().is_loopback() {
            hosts.push(addr.ip().to_string());
        }
        // Records the operator's keys kept before idempotency keys were scoped by identity,
        // moved while their secrets are known (a key rotated later would lose them).
        match served.shop.move_idempotency_scopes(config.keys.idempotency_moves()).await {
            Ok(0) => {}
            Ok(moved) => {
                tracing::info!(moved, "idempotency records of the operator's key now scoped by its identity")
            }
            Err(e) => return Err(ServeError::Config(format!("cannot upgrade the idempotency records: {e}"))),
        }
        let (stopping, stopping_seen) = watch::channel(false);
        // Streams hold their connections: at most half of them, so that everything else
        // (the operator's `/health`, the tills' sales) always finds room.
        let mut limits = config.streams;
        limits.overall = limits.overall.min(max_connections / 2).max(1);
        let streams = Arc::new(Streams::new(limits));
        let Served { shop, keys: named_keys, feed: changes, exports, imports, staff } = served;
        let feed = Arc::new(FeedHub::new(changes.clone(), named_keys.clone(), streams.clone()));
        let idempotency_window = chrono::TimeDelta::from_std(config.idempotency_window)
            .map_err(|_| ServeError::Config("the idempotency window is too long".into()))?;
        let state = AppState::new(Shared {
            engine: shop,
            named_keys,
            changes: changes.clone(),
            exports,
            imports,
            staff,
            keys: config.keys,
            hosts: Arc::new(HostPolicy::new(addr.port(), &hosts)),
            clock: config.clock,
            failures: Arc::new(FailedAuth::new(config.failed_auth)),
            stopping: stopping_seen,
            feed: feed.clone(),
            streams,
            idempotency_window,
            reports: Default::default(),
        });
        Ok(Self {
            listener,
            service: api::service(state, config.request_timeout),
            addr,
            max_connections,
            changes,
            change_retention: config.change_retention,
            feed,
            stopping,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The change feed's reader, whose count of database reads tests and benches compare.
    pub fn feed(&self) -> Arc<FeedHub> {
        self.feed.clone()
    }

    /// Serves until `shutdown` resolves, then finishes the requests under way. Once bound it
    /// cannot fail: a connection that cannot be accepted is retried (see `connections.rs`).
    pub async fn run_until(self, shutdown: impl Future<Output = ()> + Send + 'static) {
        tracing::info!(addr = %self.addr, max_connections = self.max_connections, "serving the Petstore API");
        let purging = tokio::spawn(purge_changes(
            self.changes.clone(),
            self.change_retention,
            self.stopping.subscribe(),
        ));
        let reading = tokio::spawn(self.feed.clone().run(self.stopping.subscribe()));
        let stopping = self.stopping;
        let shutdown = async move {
            shutdown.await;
            // Event streams end, and with them their connections, which the server then
            // waits for like any other.
            stopping.send_replace(true);
        };
        connections::serve(self.listener, self.service, self.max_connections, shutdown).await;
        purging.abort();
        reading.abort();
        tracing::info!(reads = self.feed.reads(), "the change feed's database reads for event streams");
    }
}

/// Removes the feed's changes older than `retention`, at start and then every
/// [`PURGE_EVERY`], until the server stops. Each replica of a PostgreSQL server does it too:
/// a purge finds nothing left by another is cheap.
async fn purge_changes(feed: Arc<dyn Feed>, retention: Duration, mut stopping: watch::Receiver<bool>) {
    let mut every = tokio::time::interval(PURGE_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stopping.wait_for(|stopping| *stopping) => return,
        }
        let Ok(retention) = chrono::TimeDelta::from_std(retention) else { return };
        match feed.purge_changes(chrono::Utc::now() - retention).await {
            Ok(0) => {}
            Ok(removed) => tracing::info!(removed, "removed changes older than the feed's retention"),
            Err(error) => {
                tracing::warn!(%error, "removing old changes of the feed failed; the next hour tries again")
            }
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM, whichever comes first.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down; finishing requests in flight");
}
