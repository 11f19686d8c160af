//! What the CSV exports list (`GET /exports/pets.csv`, `/exports/inventory.csv`,
//! `/exports/orders.csv`): rows read a page at a time by key, so that an export of a
//! million pets never holds them all.

use super::{Order, Pet, Timestamp};

/// Rows per page of an export: one read each.
pub const EXPORT_PAGE: u32 = 1_000;

/// A pet with what its rows of the exports show beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct PetExport {
    pub pet: Pet,
    /// Its category's name.
    pub category: Option<String>,
    pub stock: i64,
    pub stock_updated_at: Timestamp,
}

/// An order with its pet's name.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderExport {
    pub order: Order,
    pub pet_name: String,
}
