//! Pet counts from the `pet_counts` table (migration 0004), which triggers keep exact in
//! the same transaction as every pet change: counting a category's or a status's pets is
//! then a few rows' read whatever the size of the shop. With each count comes its version
//! (migration 0007), which moves whenever the counted list does.

use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};

use super::filter::Filter;
use super::paging::Kept;
use crate::domain::{CategoryId, PetStatus};
use crate::error::Result;

/// How many pets have one of `statuses` (any status when empty) and are in `category`
/// (any when `None`), and the version of that list of pets.
pub(super) fn pets(conn: &Connection, statuses: &[PetStatus], category: Option<CategoryId>) -> Result<Kept> {
    let mut w = Filter::default();
    w.and_in("status", statuses.iter().map(|s| Value::Text(s.as_str().into())));
    if let Some(category) = category {
        w.and("category_id = ?", [Value::Integer(category.get())]);
    }
    let (total, version): (i64, i64) = conn
        .prepare_cached(&format!(
            "SELECT coalesce(sum(pets), 0), coalesce(sum(version), 0) FROM pet_counts {}",
            w.sql()
        ))?
        .query_row(params_from_iter(&w.params), |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(Kept { total: total as u64, version })
}
