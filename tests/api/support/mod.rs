//! What the suites of `tests/api` share: [`app`] starts a real server on a free loopback
//! port and holds every reply against the OpenAPI document ([`openapi`]); [`engine`] says
//! which database engine the suite runs on (`PETSTORE_TEST_ENGINE`) and makes a test's
//! database on it, [`pg_server`] being the throwaway PostgreSQL behind it; [`database`]
//! reads a SQLite file directly. The items of `app` are re-exported here, so a suite writes
//! `use crate::support::{KEY, spawn_app};`.

pub mod app;
pub mod database;
pub mod engine;
pub mod openapi;
#[path = "../../support/pg_server.rs"]
pub mod pg_server;

pub use app::*;
pub use engine::{Engine, TestDb};

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use petstore::clock::Clock;

/// A clock at `start` that a test moves by setting the time it holds.
pub fn settable_clock(start: DateTime<Utc>) -> (Arc<Mutex<DateTime<Utc>>>, Clock) {
    let now = Arc::new(Mutex::new(start));
    let read = now.clone();
    (now, Clock::from_fn(move || *read.lock().unwrap()))
}
