//! What the suites of `tests/api` share: [`app`] starts a real server on a free loopback
//! port and holds every reply against the OpenAPI document ([`openapi`]); [`database`] reads
//! a database file directly. The items of `app` are re-exported here, so a suite writes
//! `use crate::support::{KEY, spawn_app};`.

pub mod app;
pub mod database;
pub mod openapi;

pub use app::*;
