//! Integration tests of the core, compiled into one binary (see STYLE.md). Every test talks
//! to real things: a real SQLite file and a real server on port 0.

mod auth;
mod categories;
mod deprecation;
mod errors;
mod helpers;
mod inventory;
mod openapi;
mod orders;
mod pets;
mod schema;
