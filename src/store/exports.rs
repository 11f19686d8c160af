//! The exports' pages: pets with their category's name and stock, orders with their pet's
//! name, each a walk along the primary key from where the last page ended.

use rusqlite::{Connection, params};

use super::{orders, pets};
use crate::domain::{OrderExport, PetExport, Timestamp};
use crate::error::Result;

/// `columns` (a COLUMNS list) on the table aliased `alias`.
pub(super) fn prefixed(columns: &str, alias: &str) -> String {
    columns.split(',').map(|c| format!("{alias}.{}", c.trim())).collect::<Vec<_>>().join(", ")
}

pub(super) fn pets_after(conn: &Connection, after: i64, limit: u32) -> Result<Vec<PetExport>> {
    let sql = format!(
        "SELECT {}, c.name, p.stock, p.stock_updated_at
         FROM pets p LEFT JOIN categories c ON c.id = p.category_id
         WHERE p.id > ?1 ORDER BY p.id LIMIT ?2",
        prefixed(pets::COLUMNS, "p")
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params![after, limit], |r| {
        Ok(PetExport {
            pet: pets::from_row(r)?,
            category: r.get(9)?,
            stock: r.get(10)?,
            stock_updated_at: r.get(11)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(super) fn orders_after(
    conn: &Connection,
    created: Option<(Timestamp, Timestamp)>,
    after: i64,
    limit: u32,
) -> Result<Vec<OrderExport>> {
    let (from, to) = created.unzip();
    let sql = format!(
        "SELECT {}, p.name FROM orders o JOIN pets p ON p.id = o.pet_id
         WHERE o.id > ?1 AND (?3 IS NULL OR o.created_at >= ?3) AND (?4 IS NULL OR o.created_at < ?4)
           AND o.cancelled_at IS NULL
         ORDER BY o.id LIMIT ?2",
        prefixed(orders::COLUMNS, "o")
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params![after, limit, from, to], |r| {
        Ok(OrderExport { order: orders::from_row(r)?, pet_name: r.get(13)? })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
