//! Integration tests of the core, compiled into one binary: this file declares every suite
//! as a module, so the crate and its dependencies are linked once, not once per file, and
//! the shared helpers (`support/`) are compiled once. Every test talks to real things: a
//! real SQLite file and a real server on port 0.

mod auth;
mod authorization_header;
mod backup;
mod bodies_after_the_key;
mod busy_database;
mod categories;
mod changes;
mod cli;
mod cli_postgres;
mod concurrency;
mod contract;
mod counter;
mod csv_round_trip;
mod deprecation;
mod docs;
mod errors;
mod fuzz;
mod history;
mod idempotency;
mod idempotent_commands;
mod idle_connections;
mod inventory;
mod keys;
mod migrations;
mod model;
mod openapi;
mod orders;
mod orders_kept;
mod paging;
mod pets;
mod placed_at;
mod replicas;
mod reports;
mod reports_scope;
mod request_timeouts;
mod search;
mod slow_bodies;
mod support;
mod test_client;
mod upgrade;
mod versions;
mod wrong_key_slowdown;
