//! Importing pets from a CSV file, all or nothing: in the caller's transaction, every row's
//! category is found (or made, when asked), every barcode checked against the shop and the
//! rest of the file, and each pet created with its stock (and the stock's audit record);
//! the first refusal names the line and the column, and the caller rolls back.

use rusqlite::{Connection, OptionalExtension, params};

use super::{categories, pets};
use crate::domain::{CategoryId, ImportChecks, ImportReport, ImportRow, NewCategory};
use crate::error::Result;

pub(super) fn import(tx: &Connection, rows: &[ImportRow], create_categories: bool) -> Result<ImportReport> {
    let mut report = ImportReport { pets: 0, categories_created: Vec::new(), dry_run: false };
    let mut checks = ImportChecks::default();
    for row in rows {
        let category = match checks.known_category(row) {
            Some(id) => id,
            None => {
                let found: Option<CategoryId> = tx
                    .prepare_cached("SELECT id FROM categories WHERE name_folded = ?1")?
                    .query_row([row.category.folded()], |r| r.get(0))
                    .optional()?;
                let id = match found {
                    Some(id) => id,
                    None if create_categories => {
                        let new = NewCategory { name: row.category.clone(), description: None };
                        report.categories_created.push(row.category.as_str().to_owned());
                        categories::create(tx, &new)?.id
                    }
                    None => return Err(ImportChecks::no_category(row)),
                };
                checks.remember_category(row, id);
                id
            }
        };
        if let Some(sku) = checks.sku_in_file(row)? {
            let taken: bool = tx
                .prepare_cached("SELECT EXISTS (SELECT 1 FROM pets WHERE sku_folded = ?1)")?
                .query_row([sku], |r| r.get(0))?;
            if taken {
                return Err(ImportChecks::sku_taken(row));
            }
        }
        let pet = pets::create(tx, &ImportChecks::new_pet(row, category))
            .map_err(|e| ImportChecks::pet_refused(row, e))?;
        if let Some(stock) = row.stock.filter(|s| s.get() > 0) {
            tx.prepare_cached("UPDATE pets SET stock = ?2 WHERE id = ?1")?
                .execute(params![pet.id, stock.get()])?;
            super::inventory::record_import(tx, pet.id, stock.get())?;
        }
        report.pets += 1;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::parse_pets_csv;

    fn shop() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = super::super::engine::open_writer(&dir.path().join("import.db")).unwrap();
        (dir, conn)
    }

    #[test]
    fn an_import_makes_every_pet_with_its_stock_or_none() {
        let (_dir, mut conn) = shop();
        let file = "name,category,price,sku,stock\nRex,Dogs,249.00,A-1,3\nBella,dogs,,,\nTom,Cats,,a-2,\n";
        let rows = parse_pets_csv(file.as_bytes()).unwrap();

        let tx = conn.transaction().unwrap();
        let refused = import(&tx, &rows, false).unwrap_err();
        assert_eq!(refused.message.split(':').next(), Some("line 2, column category"), "{}", refused.message);
        drop(tx);

        let tx = conn.transaction().unwrap();
        let report = import(&tx, &rows, true).unwrap();
        tx.commit().unwrap();
        assert_eq!(
            report,
            ImportReport { pets: 3, categories_created: vec!["Dogs".into(), "Cats".into()], dry_run: false }
        );
        let stock: i64 =
            conn.query_row("SELECT stock FROM pets WHERE name = 'Rex'", [], |r| r.get(0)).unwrap();
        let audited: i64 =
            conn.query_row("SELECT sum(delta) FROM inventory_adjustments", [], |r| r.get(0)).unwrap();
        assert_eq!((stock, audited), (3, 3), "the stock, and its audit trail");

        // Again: the barcodes are taken now, and the file names the line.
        let tx = conn.transaction().unwrap();
        let again = import(&tx, &rows, true).unwrap_err();
        assert!(again.message.starts_with("line 2, column sku"), "{}", again.message);
        let twice = parse_pets_csv("name,category,sku\nA,Dogs,X\nB,Dogs,x\n".as_bytes()).unwrap();
        assert!(import(&tx, &twice, true).unwrap_err().message.contains("also on line 2"));
    }
}
