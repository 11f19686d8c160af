//! Integration tests of the core, compiled into one binary (see STYLE.md). Every test talks
//! to real things: a real SQLite file and a real server on port 0.

mod auth;
mod backup;
mod busy_database;
mod categories;
mod cli;
mod concurrency;
mod contract;
mod deprecation;
mod docs;
mod errors;
mod fuzz;
mod idempotency;
mod inventory;
mod keys;
mod migrations;
mod model;
mod openapi;
mod orders;
mod paging;
mod pets;
mod support;
mod upgrade;
mod versions;
mod wrong_key_slowdown;
