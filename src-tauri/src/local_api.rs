//! The REST API the app serves on localhost while it runs, over the shop the window shows
//! (the app's own store, or in remote mode the remote's mirror), so a till or a script can
//! use the shop's data. A busy port is reported, not fatal. It is served by the headless
//! server's own code (`petstore::server::Application`), limits on idle and excess
//! connections included.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use petstore::Database;
use petstore::api::KeyRing;
use petstore::api_key;
use petstore::server::{Application, ServerConfig};
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

#[derive(Default)]
struct State {
    running: Option<Running>,
    enabled: bool,
    error: Option<String>,
}

pub struct LocalApi {
    key_file: PathBuf,
    state: Mutex<State>,
}

impl LocalApi {
    /// The key lives in `local-api.key` in the data directory, readable only by the user.
    pub fn new(data_dir: &Path) -> Self {
        Self { key_file: data_dir.join("local-api.key"), state: Mutex::new(State::default()) }
    }

    pub fn key(&self) -> Result<String, api_key::KeyError> {
        api_key::load_or_create(&self.key_file)
    }

    /// Replaces the key with a new one; clients with the old key are refused from the
    /// next request on (the server is restarted with the new key).
    pub fn new_key(&self) -> Result<String, api_key::KeyError> {
        match std::fs::remove_file(&self.key_file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(api_key::KeyError::Write { path: self.key_file.clone(), source }),
        }
        self.key()
    }

    /// (Re)starts serving `shop` on 127.0.0.1:`port`, or stops when `enabled` is false.
    /// No shop: remote mode without its mirror, which the API does not serve.
    pub async fn apply(&self, shop: Option<Arc<dyn Database>>, enabled: bool, port: u16) {
        self.stop().await;
        let mut outcome = State { enabled, ..State::default() };
        if enabled {
            let served =
                match shop {
                    Some(shop) => self.serve(shop, port).await,
                    None => Err("the remote shop's copy on this computer could not be opened (see the log)"
                        .to_owned()),
                };
            match served {
                Ok(running) => outcome.running = Some(running),
                Err(message) => {
                    tracing::warn!(%message, "the local API is not serving");
                    outcome.error = Some(message);
                }
            }
        }
        *self.lock() = outcome;
    }

    async fn serve(&self, shop: Arc<dyn Database>, port: u16) -> Result<Running, String> {
        let key = self.key().map_err(|e| e.to_string())?;
        let listen = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let app = Application::bind(shop, ServerConfig::new(listen, KeyRing::from_secrets([key.as_str()])))
            .await
            .map_err(|e| e.to_string())?;
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

    /// Stops serving and waits (briefly) until the port is free again.
    pub async fn stop(&self) {
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
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}
