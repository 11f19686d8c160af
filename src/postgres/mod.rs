//! The PostgreSQL store, for a chain's central server: the same shop as the SQLite store
//! behind the same [`Petstore`](crate::Petstore) and [`Database`](crate::backend::Database)
//! traits, safe with several `petstore-server` replicas on one database.

mod config;

pub use config::PgTarget;
