//! Petstore core: the domain, the SQLite store, the REST API and its HTTP client. Nothing
//! here knows about Tauri; the desktop app and `petstore-server` are both thin shells.

pub mod admission;
pub mod backend;
pub mod domain;
pub mod error;
pub mod store;

pub use admission::WriteAdmission;
pub use backend::{Database, Petstore};
pub use error::{Error, ErrorCode, Result};
pub use store::Store;
pub mod api;
pub mod api_key;
pub mod client;
pub mod clock;
pub mod demo;
pub mod exports;
pub mod idempotency;
pub mod mirror;
pub mod openapi;
pub mod postgres;
pub mod private;
pub mod server;
