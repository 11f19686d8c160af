//! Importing pets on PostgreSQL: as `src/store/imports.rs`, in the caller's transaction.

use deadpool_postgres::GenericClient;

use super::types::col;
use super::{categories, inventory, pets, pg};
use crate::domain::{ImportChecks, ImportReport, ImportRow, NewCategory};
use crate::error::Result;

pub(super) async fn import(
    c: &impl GenericClient,
    rows: &[ImportRow],
    create_categories: bool,
) -> Result<ImportReport> {
    let mut report = ImportReport { pets: 0, categories_created: Vec::new(), dry_run: false };
    let mut checks = ImportChecks::default();
    let find_category =
        c.prepare_cached("SELECT id FROM categories WHERE name_folded = $1").await.map_err(pg)?;
    let sku_taken =
        c.prepare_cached("SELECT EXISTS (SELECT 1 FROM pets WHERE sku_folded = $1)").await.map_err(pg)?;
    let set_stock = c.prepare_cached("UPDATE pets SET stock = $2 WHERE id = $1").await.map_err(pg)?;
    for row in rows {
        let category = match checks.known_category(row) {
            Some(id) => id,
            None => {
                let found = c.query_opt(&find_category, &[&row.category.folded()]).await.map_err(pg)?;
                let id = match found {
                    Some(r) => col(&r, 0)?,
                    None if create_categories => {
                        let new = NewCategory { name: row.category.clone(), description: None };
                        report.categories_created.push(row.category.as_str().to_owned());
                        categories::create(c, &new).await?.id
                    }
                    None => return Err(ImportChecks::no_category(row)),
                };
                checks.remember_category(row, id);
                id
            }
        };
        if let Some(sku) = checks.sku_in_file(row)? {
            let taken: bool = col(&c.query_one(&sku_taken, &[&sku]).await.map_err(pg)?, 0)?;
            if taken {
                return Err(ImportChecks::sku_taken(row));
            }
        }
        let new = ImportChecks::new_pet(row, category);
        let pet = pets::create(c, &new).await.map_err(|e| ImportChecks::pet_refused(row, e))?;
        if let Some(stock) = row.stock.filter(|s| s.get() > 0) {
            c.execute(&set_stock, &[&pet.id.get(), &stock.get()]).await.map_err(pg)?;
            inventory::record_import(c, pet.id, stock.get()).await?;
        }
        report.pets += 1;
    }
    Ok(report)
}
