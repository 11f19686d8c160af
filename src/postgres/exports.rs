//! The exports' pages on PostgreSQL: as `src/store/exports.rs`.

use deadpool_postgres::GenericClient;

use super::types::col;
use super::{orders, pets, pg};
use crate::domain::{OrderExport, PetExport, Timestamp};
use crate::error::Result;

fn prefixed(columns: &str, alias: &str) -> String {
    columns.split(',').map(|c| format!("{alias}.{}", c.trim())).collect::<Vec<_>>().join(", ")
}

pub(super) async fn pets_after(c: &impl GenericClient, after: i64, limit: u32) -> Result<Vec<PetExport>> {
    let sql = format!(
        "SELECT {}, c.name, p.stock, p.stock_updated_at
         FROM pets p LEFT JOIN categories c ON c.id = p.category_id
         WHERE p.id > $1 ORDER BY p.id LIMIT $2",
        prefixed(pets::COLUMNS, "p")
    );
    let rows = c
        .query(&c.prepare_cached(&sql).await.map_err(pg)?, &[&after, &i64::from(limit)])
        .await
        .map_err(pg)?;
    rows.iter()
        .map(|r| {
            Ok(PetExport {
                pet: pets::from_row(r, 0)?,
                category: col(r, 9)?,
                stock: col(r, 10)?,
                stock_updated_at: col(r, 11)?,
            })
        })
        .collect()
}

pub(super) async fn orders_after(
    c: &impl GenericClient,
    created: Option<(Timestamp, Timestamp)>,
    after: i64,
    limit: u32,
) -> Result<Vec<OrderExport>> {
    let (from, to) = created.map(|(f, t)| (f.to_string(), t.to_string())).unzip();
    let sql = format!(
        "SELECT {}, p.name FROM orders o JOIN pets p ON p.id = o.pet_id
         WHERE o.id > $1 AND ($3::text IS NULL OR o.created_at >= $3) AND ($4::text IS NULL OR o.created_at < $4)
           AND o.cancelled_at IS NULL
         ORDER BY o.id LIMIT $2",
        prefixed(orders::COLUMNS, "o")
    );
    let rows = c
        .query(&c.prepare_cached(&sql).await.map_err(pg)?, &[&after, &i64::from(limit), &from, &to])
        .await
        .map_err(pg)?;
    // The pet's name follows the order's own columns, however many the order has.
    let name_at = orders::COLUMNS.split(',').count();
    rows.iter()
        .map(|r| Ok(OrderExport { order: orders::from_row(r, 0)?, pet_name: col(r, name_at)? }))
        .collect()
}
