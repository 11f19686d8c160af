//! The REST API the app serves on localhost while it runs, over the shop the window shows
//! (the app's own store, or in remote mode the remote's mirror), so a till or a script can
//! use the shop's data. A busy port is reported, not fatal, and tried again every few
//! seconds until it frees up (another program had it, or an old Petstore still shutting
//! down), so the API comes back without a restart. It is served by the headless
//! server's own code (`petstore::server::Application`), limits on idle and excess
//! connections included.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use petstore::Served;
use petstore::api::KeyRing;
use petstore::api_key;
use petstore::server::{Application, ServeError, ServerConfig};
use serde::Serialize;
use tokio::sync::oneshot;

/// The local API as the status bar shows it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalApiStatus {
    pub enabled: bool,
    /// `http://127.0.0.1:8787` while serving.
    pub address: Option<String>,
    /// Why it is not serving, e.g. the port is busy.
    pub error: Option<String>,
}

struct Running {
    address: SocketAddr,
    stop: oneshot::Sender<()>,
    served: tauri::async_runtime::JoinHandle<()>,
}

/// How long a stopping server may take to finish its requests before the port is reused.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// How often a busy port is tried again.
const RETRY: std::time::Duration = std::time::Duration::from_secs(2);

#[derive(Default)]
struct State {
    running: Option<Running>,
    enabled: bool,
    error: Option<String>,
    /// Trying a busy port again until it is free.
    waiting: Option<tauri::async_runtime::JoinHandle<()>>,
}

/// Why serving failed: a busy port is worth trying again, anything else is not.
enum Refused {
    Busy(String),
    Other(String),
}

struct Inner {
    key_file: PathBuf,
    state: Mutex<State>,
}

pub struct LocalApi {
    inner: Arc<Inner>,
}

impl LocalApi {
    /// The key lives in `local-api.key` in the data directory, readable only by the user.
    pub fn new(data_dir: &Path) -> Self {
        Self { inner: Arc::new(Inner { key_file: data_dir.join("local-api.key"), state: Mutex::default() }) }
    }

    pub fn key(&self) -> Result<String, api_key::KeyError> {
        self.inner.key()
    }

    /// Replaces the key with a new one; clients with the old key are refused from the
    /// next request on (the server is restarted with the new key). It is still the
    /// operator's key (the only one of its `KeyRing`), so the `Idempotency-Key`s of its
    /// clients keep their scope, and in remote mode are forwarded to the server as the same
    /// values: a client's retry after the change is not a second sale (`crate::idempotency`
    /// in the core; `mirror::tests`, `a_retry_through_the_local_api_after_its_key_was_made_anew_is_placed_once`).
    pub fn new_key(&self) -> Result<String, api_key::KeyError> {
        let key_file = &self.inner.key_file;
        match std::fs::remove_file(key_file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(api_key::KeyError::Write { path: key_file.clone(), source }),
        }
        self.key()
    }

    /// (Re)starts serving `shop` on 127.0.0.1:`port`, or stops when `enabled` is false.
    /// No shop: remote mode without its mirror, which the API does not serve. A busy port
    /// is tried again every [`RETRY`] until it is free or this is called again.
    pub async fn apply(&self, shop: Option<Served>, enabled: bool, port: u16) {
        self.stop().await;
        let mut outcome = State { enabled, ..State::default() };
        if enabled {
            let Some(shop) = shop else {
                outcome.error = Some(
                    "the remote shop's copy on this computer could not be opened (see the log)".to_owned(),
                );
                *self.lock() = outcome;
                return;
            };
            match self.inner.serve(shop.clone(), port).await {
                Ok(running) => outcome.running = Some(running),
                Err(Refused::Busy(message)) => {
                    tracing::warn!(%message, "the local API waits for its port");
                    outcome.error = Some(format!(
                        "{message}; Petstore tries again every {} s, or choose another port in Settings",
                        RETRY.as_secs()
                    ));
                    outcome.waiting =
                        Some(tauri::async_runtime::spawn(self.inner.clone().wait_for(shop, port)));
                }
                Err(Refused::Other(message)) => {
                    tracing::warn!(%message, "the local API is not serving");
                    outcome.error = Some(message);
                }
            }
        }
        *self.lock() = outcome;
    }

    /// Stops serving (or waiting for the port) and waits (briefly) until the port is free.
    pub async fn stop(&self) {
        let waiting = self.lock().waiting.take();
        if let Some(waiting) = waiting {
            waiting.abort();
            let _ = waiting.await;
        }
        // Taken after the wait ended: it may have started serving just before.
        let running = self.lock().running.take();
        if let Some(running) = running {
            let _ = running.stop.send(());
            let _ = tokio::time::timeout(STOP_GRACE, running.served).await;
        }
    }

    pub fn status(&self) -> LocalApiStatus {
        let state = self.lock();
        LocalApiStatus {
            enabled: state.enabled,
            address: state.running.as_ref().map(|r| format!("http://{}", r.address)),
            error: state.error.clone(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.lock()
    }
}

impl Inner {
    fn key(&self) -> Result<String, api_key::KeyError> {
        api_key::load_or_create(&self.key_file)
    }

    async fn serve(&self, shop: Served, port: u16) -> Result<Running, Refused> {
        let key = self.key().map_err(|e| Refused::Other(e.to_string()))?;
        let listen = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let app = Application::bind(shop, ServerConfig::new(listen, KeyRing::from_secrets([key.as_str()])))
            .await
            .map_err(|e| match e {
                ServeError::PortInUse { .. } => Refused::Busy(e.to_string()),
                e => Refused::Other(e.to_string()),
            })?;
        let address = app.local_addr();
        let (stop, stopped) = oneshot::channel();
        let served = tauri::async_runtime::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            app.run_until(shutdown).await;
        });
        Ok(Running { address, stop, served })
    }

    /// Tries the busy `port` every [`RETRY`] and serves `shop` on it once it is free.
    async fn wait_for(self: Arc<Self>, shop: Served, port: u16) {
        loop {
            tokio::time::sleep(RETRY).await;
            let served = self.serve(shop.clone(), port).await;
            let mut state = self.lock();
            match served {
                Ok(running) => {
                    tracing::info!(address = %running.address, "the local API's port is free again: serving");
                    state.running = Some(running);
                    state.error = None;
                }
                Err(Refused::Busy(_)) => continue,
                Err(Refused::Other(message)) => state.error = Some(message),
            }
            state.waiting = None;
            return;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}
