//! The contract suite: local and remote mode are one interface (the app holds either the
//! SQLite store or, in remote mode, a till's `Mirror` of a server's shop, and every screen
//! works the same on both; see docs/ARCHITECTURE.md, "Invariants"), so every scenario is
//! written once against `&dyn Petstore` and run on every backend: the store on a fresh
//! database; the HTTP `Client` against a real server on port 0; the `Mirror` of such a
//! server, online (writes to the server, reads from its copy once it has synced, see
//! [`synced`]); and the same mirror through the till's local API, which serves it as its
//! `Database`. The store is the SQLite `Store`, or with `PETSTORE_TEST_ENGINE=postgres` the
//! PostgreSQL `PgStore` (and the servers serve one too), so the same scenarios hold both
//! engines to the same answers.
//!
//! Each scenario asserts what the contract says (ids included: all start empty). It also
//! records every answer in a [`Transcript`]; the remote backends' tests then replay the
//! scenario on a fresh store and require the very same answers, messages included, so any
//! difference between the backends fails even where a scenario asserts nothing in
//! particular.

mod catalogue;
mod remote;
mod staff;
mod stock;
mod support;
mod synced;

use catalogue::*;
use stock::*;
use support::{LocalStore, Transcript};

/// Runs `$scenario` on `$backend`, then on a fresh store, and requires the very same
/// answers of both. Used inside the modules [`on_every_backend`] generates, whose `super`
/// is this module.
macro_rules! same_as_the_store {
    ($backend:expr, $scenario:ident) => {{
        let mut remote = super::Transcript::default();
        super::$scenario($backend, &mut remote).await;

        let local = super::LocalStore::new().await;
        let mut expected = super::Transcript::default();
        super::$scenario(&*local.store, &mut expected).await;
        remote.assert_same_as(&expected);
    }};
}

/// Generates, for each scenario, `store::<scenario>`, `client::<scenario>`,
/// `mirror::<scenario>` and `mirror_api::<scenario>`.
macro_rules! on_every_backend {
    ($($scenario:ident),+ $(,)?) => {
        mod store {
            $(
                #[tokio::test]
                async fn $scenario() {
                    let local = super::LocalStore::new().await;
                    super::$scenario(&*local.store, &mut super::Transcript::default()).await;
                }
            )+
        }
        mod client {
            $(
                #[tokio::test]
                async fn $scenario() {
                    let app = crate::support::spawn_app().await;
                    let client = petstore::client::Client::new(&app.base_url, crate::support::KEY).unwrap();
                    same_as_the_store!(&client, $scenario);
                }
            )+
        }
        mod mirror {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    let app = crate::support::spawn_app().await;
                    let till = super::synced::SyncedMirror::open(&app).await;
                    same_as_the_store!(&till, $scenario);
                }
            )+
        }
        mod mirror_api {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    let app = crate::support::spawn_app().await;
                    let till = super::synced::SyncedMirror::through_local_api(&app).await;
                    same_as_the_store!(&till, $scenario);
                }
            )+
        }
    };
}

on_every_backend!(
    pets_are_listed_filtered_sorted_and_paged,
    missing_resources_are_not_found,
    categories_are_unique_and_kept_while_in_use,
    orders_take_stock_and_completing_the_last_sells_the_pet,
    cancelling_or_shrinking_an_order_returns_stock,
    a_counter_sale_sells_the_last_one,
    stock_counts_move_the_status_and_are_audited,
    completed_orders_are_final,
    cancelled_orders_are_kept_apart_and_completing_can_be_undone,
    references_and_deletions_are_checked,
    inventory_is_listed_lowest_first_with_filters,
);
