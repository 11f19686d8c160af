//! The backend every command goes through: the local SQLite store or a remote Petstore,
//! switchable at run time without a restart. Both are [`Petstore`]s, so commands do not
//! know which one they talk to.
//!
//! In remote mode the backend is the remote's [`Mirror`]: a local copy that reads come
//! from, kept current from the remote's change feed, with an outbox for the sales taken
//! while the remote cannot be reached. A change the mirror takes in (from another till, or
//! from this one) refreshes the window as a local change does.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use petstore::client::Client;
use petstore::mirror::{Mirror, SyncStatus};
use petstore::{Petstore, Served, Store};
use tauri::async_runtime::JoinHandle;
use tokio::sync::{broadcast, watch};

use crate::changes::DataChanged;

/// Which backend is in use, as the status bar names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Local,
    Remote { base_url: String },
}

pub struct Backend {
    local: Store,
    /// Where the mirrors live: `mirrors/` beside the local database.
    mirrors: PathBuf,
    active: RwLock<Active>,
    /// The remote's changes, while in remote mode.
    remote_changes: broadcast::Sender<DataChanged>,
    /// The mirror's sync status, `None` in local mode.
    sync: watch::Sender<Option<SyncStatus>>,
    /// The task forwarding the mirror's changes to `remote_changes` and its status to `sync`.
    forwarding: Mutex<Option<JoinHandle<()>>>,
}

struct Active {
    target: Target,
    backend: Arc<dyn Petstore>,
    mirror: Option<Mirror>,
}

impl Backend {
    pub fn new(local: Store) -> Self {
        let mirrors =
            local.path().parent().map(|dir| dir.join("mirrors")).unwrap_or_else(|| "mirrors".into());
        let active = Active { target: Target::Local, backend: Arc::new(local.clone()), mirror: None };
        Self {
            local,
            mirrors,
            active: RwLock::new(active),
            remote_changes: broadcast::channel(256).0,
            sync: watch::channel(None).0,
            forwarding: Mutex::new(None),
        }
    }

    /// The backend for one command. A switch while a command runs does not affect it.
    pub fn current(&self) -> Arc<dyn Petstore> {
        self.read().backend.clone()
    }

    pub fn target(&self) -> Target {
        self.read().target.clone()
    }

    pub fn local(&self) -> &Store {
        &self.local
    }

    /// What the local API serves: the shop the window shows. In remote mode that is the
    /// remote's mirror; `None` when it could not be opened (the local API says so rather
    /// than serve another shop than the window's).
    pub fn served(&self) -> Option<Served> {
        let active = self.read();
        match (&active.target, &active.mirror) {
            (Target::Local, _) => Some(Served::all_of(Arc::new(self.local.clone()))),
            (Target::Remote { .. }, Some(mirror)) => Some(mirror.served()),
            (Target::Remote { .. }, None) => None,
        }
    }

    /// The remote's mirror, in remote mode.
    pub fn mirror(&self) -> Option<Mirror> {
        self.read().mirror.clone()
    }

    /// Where syncing with the remote stands, in remote mode.
    pub fn sync_status(&self) -> Option<SyncStatus> {
        self.read().mirror.as_ref().map(|m| m.status().borrow().clone())
    }

    /// [`Backend::sync_status`] as it changes, whatever the mode.
    pub fn sync_watch(&self) -> watch::Receiver<Option<SyncStatus>> {
        self.sync.subscribe()
    }

    /// Changes of the remote shop while in remote mode, for the window.
    pub fn remote_changes(&self) -> broadcast::Receiver<DataChanged> {
        self.remote_changes.subscribe()
    }

    pub fn use_local(&self) {
        self.switch(Active { target: Target::Local, backend: Arc::new(self.local.clone()), mirror: None });
    }

    /// Remote mode through the remote's mirror. A mirror that cannot be opened (its
    /// folder not writable) leaves remote mode without offline selling, and says so.
    pub fn use_remote(&self, client: Client) {
        let target = Target::Remote { base_url: client.base_url() };
        // The local API's named keys stay this computer's, whichever shop it serves.
        match Mirror::open_with_keys(&self.mirrors, client.clone(), Some(self.local.clone())) {
            Ok(mirror) => {
                self.switch(Active { target, backend: Arc::new(mirror.clone()), mirror: Some(mirror) })
            }
            Err(e) => {
                tracing::warn!(error = %e.message, "the remote's mirror cannot be opened; remote mode works online only");
                self.switch(Active { target, backend: Arc::new(client), mirror: None });
            }
        }
    }

    fn switch(&self, active: Active) {
        let mut forwarding = self.forwarding.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(task) = forwarding.take() {
            task.abort();
        }
        match &active.mirror {
            Some(mirror) => {
                let (changes, sync) = (self.remote_changes.clone(), self.sync.clone());
                *forwarding = Some(tauri::async_runtime::spawn(forward(mirror.clone(), changes, sync)));
            }
            None => drop(self.sync.send_replace(None)),
        }
        *self.active.write().unwrap_or_else(|p| p.into_inner()) = active;
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Active> {
        self.active.read().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Some(task) = self.forwarding.get_mut().unwrap_or_else(|p| p.into_inner()).take() {
            task.abort();
        }
    }
}

/// Passes the mirror's changes (read from its change feed) and its sync status on to the
/// window.
async fn forward(
    mirror: Mirror,
    to: broadcast::Sender<DataChanged>,
    sync: watch::Sender<Option<SyncStatus>>,
) {
    let mut status = mirror.status();
    let changes = crate::changes::follow(mirror, move |changed| drop(to.send(changed)));
    let status = async move {
        loop {
            sync.send_replace(Some(status.borrow_and_update().clone()));
            if status.changed().await.is_err() {
                return;
            }
        }
    };
    futures_util::future::join(changes, status).await;
}
