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
        // The pet's name follows the order's columns.
        Ok(OrderExport { order: orders::from_row(r)?, pet_name: r.get(orders::COLUMNS.split(',').count())? })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use crate::api::parse_body;
    use crate::domain::NewOrder;
    use crate::engine::{Exports, Petstore};
    use crate::store::Store;

    #[tokio::test]
    async fn an_exported_order_carries_its_pets_name_after_every_column_of_the_order() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("shop.db")).unwrap();
        let pet = store.create_pet(parse_body(br#"{"name": "Nemo"}"#).unwrap()).await.unwrap();
        store.set_inventory(pet.id, parse_body(br#"{"quantity": 3}"#).unwrap()).await.unwrap();
        let new: NewOrder = parse_body(format!(r#"{{"petId": {}}}"#, pet.id).as_bytes()).unwrap();
        let order = store.place_order(new).await.unwrap();
        let exported = store.export_orders(None, 0, 10).await.unwrap();
        assert_eq!(exported.len(), 1);
        assert_eq!((&exported[0].order, exported[0].pet_name.as_str()), (&order, "Nemo"));
    }
}
