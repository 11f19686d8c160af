//! Pet counts from the `pet_counts` table (migration 0004), which triggers keep exact in
//! the same transaction as every pet change: counting a category's or a status's pets is
//! then a few rows' read whatever the size of the shop.

use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};

use super::query::Filter;
use crate::domain::{CategoryId, PetStatus};
use crate::error::Result;

/// How many pets have one of `statuses` (any status when empty) and are in `category`
/// (any when `None`).
pub(super) fn pets(conn: &Connection, statuses: &[PetStatus], category: Option<CategoryId>) -> Result<u64> {
    let mut w = Filter::default();
    w.and_in("status", statuses.iter().map(|s| Value::Text(s.as_str().into())));
    if let Some(category) = category {
        w.and("category_id = ?", [Value::Integer(category.get())]);
    }
    let total: i64 = conn
        .prepare_cached(&format!("SELECT coalesce(sum(pets), 0) FROM pet_counts {}", w.sql()))?
        .query_row(params_from_iter(&w.params), |r| r.get(0))?;
    Ok(total as u64)
}
