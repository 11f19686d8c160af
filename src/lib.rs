//! Petstore core: the domain, the two engines (the SQLite store and PostgreSQL), the REST
//! API and its HTTP client, and a till's mirror of a remote shop (remote mode that keeps
//! selling offline). Nothing here knows about Tauri; the desktop app and `petstore-server`
//! are both thin shells. Which module may import which: docs/ARCHITECTURE.md's module map,
//! kept true by tests/architecture.rs.

pub mod admission;
pub mod domain;
pub mod engine;
pub mod error;
pub mod store;

pub use admission::WriteAdmission;
pub use engine::{
    Capability, Database, Exports, Feed, Imports, Keys, Petstore, Seeding, Served, ShopDatabase,
};
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
pub mod staff;
