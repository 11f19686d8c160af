//! The command layer on Tauri's mock runtime: every command as the UI calls it, over a real
//! database in a temporary directory and, for remote mode, a real server on port 0.

mod api_keys;
mod backup;
mod categories;
mod changes;
mod concurrency;
mod counter;
mod file_commands;
mod helpers;
mod inventory;
mod local_api;
mod orders;
mod pets;
mod private_files;
mod provisioning;
mod remote_faults;
mod remote_key;
mod remote_key_origin;
mod settings;
mod staff;
mod startup;
mod updates;
