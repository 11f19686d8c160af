//! Importing pets from a CSV file, all or nothing, in the caller's transaction: the file's
//! categories and barcodes looked up, the whole file checked ([`ImportPlan`]), the new
//! categories made, then each pet created with its stock (and the stock's audit record).
//! A refusal names the line and the column, and the caller rolls back.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use super::{categories, pets};
use crate::domain::{
    Actor, CategoryId, ImportPlan, ImportReport, ImportRow, NewCategory, Timestamp, activity,
};
use crate::error::Result;

/// The import as `by`'s: the stock's audit records name them, and the log has one entry
/// for the whole file.
pub(super) fn import(
    tx: &Connection,
    rows: &[ImportRow],
    create_categories: bool,
    by: &Actor,
) -> Result<ImportReport> {
    // In-process lookups cost microseconds: one by one, with a cached statement.
    let mut existing = HashMap::new();
    let mut find = tx.prepare_cached("SELECT id FROM categories WHERE name_folded = ?1")?;
    for name in ImportPlan::category_names(rows) {
        if let Some(id) = find.query_row([&name], |r| r.get::<_, CategoryId>(0)).optional()? {
            existing.insert(name, id);
        }
    }
    let mut taken = HashSet::new();
    let mut has = tx.prepare_cached("SELECT EXISTS (SELECT 1 FROM pets WHERE sku_folded = ?1)")?;
    for sku in ImportPlan::skus(rows) {
        if has.query_row([&sku], |r| r.get::<_, bool>(0))? {
            taken.insert(sku);
        }
    }
    let plan = ImportPlan::check(rows, &existing, &taken, create_categories)?;

    let made = plan
        .new_categories()
        .iter()
        .map(|name| Ok(categories::create(tx, &NewCategory { name: name.clone(), description: None })?.id))
        .collect::<Result<Vec<_>>>()?;
    // The stock set after the row is made, not with it: the feed's triggers see a change of
    // stock only in an UPDATE, and a till's mirror reads the stock of the pets it names.
    let mut set_stock = tx.prepare_cached("UPDATE pets SET stock = ?2 WHERE id = ?1")?;
    for (row, new) in plan.pets(&made) {
        let pet = pets::insert(tx, &new).map_err(|e| ImportPlan::pet_refused(row, e))?;
        if let Some(stock) = row.stock.map(|s| s.get()).filter(|&s| s > 0) {
            set_stock.execute(params![pet, stock])?;
            super::inventory::record_import(tx, pet, stock, by)?;
        }
    }
    let report = plan.report(false);
    let entry = activity::pets_imported(report.pets, report.categories_created.len(), by);
    super::activity::record(tx, &entry, Timestamp::now())?;
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
        let refused = import(&tx, &rows, false, &Actor::operator()).unwrap_err();
        assert_eq!(refused.message.split(':').next(), Some("line 2, column category"), "{}", refused.message);
        drop(tx);

        let tx = conn.transaction().unwrap();
        let report = import(&tx, &rows, true, &Actor::operator()).unwrap();
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
        let again = import(&tx, &rows, true, &Actor::operator()).unwrap_err();
        assert!(again.message.starts_with("line 2, column sku"), "{}", again.message);
        let twice = parse_pets_csv("name,category,sku\nA,Dogs,X\nB,Dogs,x\n".as_bytes()).unwrap();
        assert!(
            import(&tx, &twice, true, &Actor::operator()).unwrap_err().message.contains("also on line 2")
        );
    }
}
