//! Importing pets on PostgreSQL: as `src/store/imports.rs`, in the caller's transaction.

use std::collections::HashMap;

use deadpool_postgres::GenericClient;

use super::types::col;
use super::{categories, inventory, pets, pg};
use crate::domain::{CategoryId, ImportReport, ImportRow, NewCategory, NewPet, refused_at};
use crate::error::{Error, Result};

pub(super) async fn import(
    c: &impl GenericClient,
    rows: &[ImportRow],
    create_categories: bool,
) -> Result<ImportReport> {
    let mut report = ImportReport { pets: 0, categories_created: Vec::new(), dry_run: false };
    let mut category_ids: HashMap<String, CategoryId> = HashMap::new();
    let mut skus: HashMap<String, u64> = HashMap::new();
    let find_category =
        c.prepare_cached("SELECT id FROM categories WHERE name_folded = $1").await.map_err(pg)?;
    let sku_taken =
        c.prepare_cached("SELECT EXISTS (SELECT 1 FROM pets WHERE sku_folded = $1)").await.map_err(pg)?;
    let set_stock = c.prepare_cached("UPDATE pets SET stock = $2 WHERE id = $1").await.map_err(pg)?;
    for row in rows {
        let folded = row.category.folded();
        let category = match category_ids.get(&folded) {
            Some(id) => *id,
            None => {
                let found = c.query_opt(&find_category, &[&folded]).await.map_err(pg)?;
                let id = match found {
                    Some(r) => col(&r, 0)?,
                    None if create_categories => {
                        let new = NewCategory { name: row.category.clone(), description: None };
                        report.categories_created.push(row.category.as_str().to_owned());
                        categories::create(c, &new).await?.id
                    }
                    None => {
                        return Err(refused_at(
                            row.line,
                            "category",
                            format!(
                                "there is no category named {:?}; add it first, or import with createCategories=true",
                                row.category.as_str()
                            ),
                        ));
                    }
                };
                category_ids.insert(folded, id);
                id
            }
        };
        if let Some(sku) = &row.sku {
            if let Some(first) = skus.insert(sku.folded(), row.line) {
                return Err(refused_at(
                    row.line,
                    "sku",
                    format!("{:?} is also on line {first}", sku.as_str()),
                ));
            }
            let taken: bool = col(&c.query_one(&sku_taken, &[&sku.folded()]).await.map_err(pg)?, 0)?;
            if taken {
                return Err(refused_at(
                    row.line,
                    "sku",
                    format!("another pet already has the sku {:?}", sku.as_str()),
                ));
            }
        }
        let new = NewPet {
            name: row.name.clone(),
            category_id: Some(category),
            status: row.status,
            description: row.description.clone(),
            price: row.price,
            sku: row.sku.clone(),
        };
        let pet = pets::create(c, &new)
            .await
            .map_err(|e| Error::validation(format!("line {}: {}", row.line, e.message)))?;
        if let Some(stock) = row.stock.filter(|s| s.get() > 0) {
            c.execute(&set_stock, &[&pet.id.get(), &stock.get()]).await.map_err(pg)?;
            inventory::record_import(c, pet.id, stock.get()).await?;
        }
        report.pets += 1;
    }
    Ok(report)
}
