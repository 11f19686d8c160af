//! The backend every command goes through: the local SQLite store or a remote Petstore,
//! switchable at run time without a restart. Both are [`Petstore`]s, so commands do not
//! know which one they talk to.

use std::sync::{Arc, RwLock};

use petstore::client::Client;
use petstore::{Petstore, Store};

/// Which backend is in use, as the status bar names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Local,
    Remote { base_url: String },
}

pub struct Backend {
    local: Store,
    active: RwLock<(Target, Arc<dyn Petstore>)>,
}

impl Backend {
    pub fn new(local: Store) -> Self {
        let active: Arc<dyn Petstore> = Arc::new(local.clone());
        Self { local, active: RwLock::new((Target::Local, active)) }
    }

    /// The backend for one command. A switch while a command runs does not affect it.
    pub fn current(&self) -> Arc<dyn Petstore> {
        self.active.read().unwrap_or_else(|p| p.into_inner()).1.clone()
    }

    pub fn target(&self) -> Target {
        self.active.read().unwrap_or_else(|p| p.into_inner()).0.clone()
    }

    pub fn local(&self) -> &Store {
        &self.local
    }

    pub fn use_local(&self) {
        *self.active.write().unwrap_or_else(|p| p.into_inner()) =
            (Target::Local, Arc::new(self.local.clone()));
    }

    pub fn use_remote(&self, client: Client) {
        let target = Target::Remote { base_url: client.base_url() };
        *self.active.write().unwrap_or_else(|p| p.into_inner()) = (target, Arc::new(client));
    }
}
