use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row};

use super::categories;
use super::counts;
use super::filter::{Filter, Source};
use super::paging::{self, Bookmarks, KeptList};
use crate::domain::like_contains;
use crate::domain::{NewPet, Page, Paged, Pet, PetFilter, PetId, PetPatch, PetSort, Price, Sku, Timestamp};
use crate::error::{Error, Result};

/// The columns of a [`Pet`], as a macro so that the read by id below is one literal.
macro_rules! pet_columns {
    () => {
        "id, name, category_id, status, description, price_cents, sku, created_at, updated_at"
    };
}
pub(super) const COLUMNS: &str = pet_columns!();
const PETS: Source<'static> = Source { columns: COLUMNS, from: "pets", key: "id" };

pub(super) fn from_row(r: &Row<'_>) -> rusqlite::Result<Pet> {
    Ok(Pet {
        id: r.get(0)?,
        name: r.get(1)?,
        category_id: r.get(2)?,
        status: r.get(3)?,
        description: r.get(4)?,
        price: price(r, 5)?,
        sku: r.get(6)?,
        created_at: r.get(7)?,
        updated_at: r.get(8)?,
    })
}

/// A price in cents from column `at` (the table's CHECK keeps it in range).
pub(super) fn price(r: &Row<'_>, at: usize) -> rusqlite::Result<Option<Price>> {
    r.get::<_, Option<i64>>(at)?
        .map(Price::from_cents)
        .transpose()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(at, rusqlite::types::Type::Integer, e.into()))
}

/// Up to this many rows in, a page without a search is a short walk along an index.
const SHORT_WALK: u32 = 1_000;

/// Whether listing is cheap whatever the size of the shop: by ids (at most a page of
/// look-ups by key), or a page near the start of a list whose count is kept (no search).
pub(super) fn is_bounded(filter: &PetFilter, page: Page) -> bool {
    !filter.ids.is_empty()
        || filter.sku.is_some()
        || (!filter.searches() && page.offset() + page.limit() <= SHORT_WALK)
}

pub(super) fn list(
    conn: &Connection,
    bookmarks: &Bookmarks,
    filter: &PetFilter,
    page: Page,
) -> Result<Paged<Pet>> {
    filter.check_ids()?;
    let (w, order) = list_query(filter);
    // By ids or by barcode: at most a page of look-ups by key.
    if !filter.ids.is_empty() || filter.sku.is_some() {
        return paging::short_page(conn, &w, PETS, order, page, from_row);
    }
    // Without a search the count is the kept one (a category and status filter), and its
    // version follows everything that orders the list (name or id): bookmarks serve it.
    let count = |c: &Connection| counts::pets(c, &filter.statuses, filter.category_id);
    let kept = (!filter.searches()).then_some(KeptList { count: &count, bookmarks: Some(bookmarks) });
    paging::page(conn, &w, PETS, order, page, kept, from_row)
}

/// The `WHERE` and `ORDER BY` of a list of pets.
fn list_query(filter: &PetFilter) -> (Filter, &'static str) {
    let mut w = Filter::default();
    w.and_in("status", filter.statuses.iter().map(|s| Value::Text(s.as_str().into())));
    if let Some(category) = filter.category_id {
        w.and("category_id = ?", [Value::Integer(category.get())]);
    }
    if let Some(sku) = &filter.sku {
        w.and("sku_folded = ?", [Value::Text(sku.folded())]);
    }
    if let Some(q) = &filter.name_contains {
        w.and("name_folded LIKE ? ESCAPE '\\'", [Value::Text(like_contains(&q.folded()))]);
    }
    if let Some(search) = filter.search_patterns() {
        // SQLite's LIKE ignores the case of ASCII letters, which is what the description
        // needs (the name is folded already). The halves first: most rows stop there.
        let any = |n: usize| vec!["name_folded LIKE ? ESCAPE '\\'"; n].join(" OR ");
        let (halves, names) = (any(search.halves.len()), any(search.names.len()));
        w.and(
            &format!("((({halves}) AND ({names})) OR description LIKE ? ESCAPE '\\')"),
            search.halves.into_iter().chain(search.names).chain([search.description]).map(Value::Text),
        );
    }
    w.and_in("id", filter.ids.iter().map(|id| Value::Integer(id.get())));

    let (order, by_name) = match filter.sort {
        PetSort::Id => ("id", false),
        PetSort::IdDesc => ("id DESC", false),
        PetSort::Name => ("name_folded, id", true),
        PetSort::NameDesc => ("name_folded DESC, id DESC", true),
    };
    // The Pets screen's list: `pets_by_category_status_name` holds all of it (schema 6).
    let plain = !filter.searches() && filter.ids.is_empty() && filter.sku.is_none();
    if plain && filter.category_id.is_some() && filter.statuses.len() == 1 && by_name {
        w.covered_by_an_index();
    }
    (w, order)
}

/// A pet by id: the statement's text is a constant, not formatted for every read (the
/// busiest read of the shop).
const FIND: &str = concat!("SELECT ", pet_columns!(), " FROM pets WHERE id = ?1");

pub(super) fn find(conn: &Connection, id: PetId) -> Result<Option<Pet>> {
    Ok(conn.prepare_cached(FIND)?.query_row([id], from_row).optional()?)
}

pub(super) fn get(conn: &Connection, id: PetId) -> Result<Pet> {
    find(conn, id)?.ok_or_else(|| Error::not_found(PetId::WHAT, id.get()))
}

pub(super) fn create(conn: &Connection, new: &NewPet) -> Result<Pet> {
    categories::ensure_exists(conn, new.category_id)?;
    get(conn, insert(conn, new)?)
}

/// A new pet's row, with no stock, its category known to exist (an import checked them all).
pub(super) fn insert(conn: &Connection, new: &NewPet) -> Result<PetId> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO pets (name, name_folded, category_id, status, description, price_cents, sku, sku_folded,
                           stock, stock_updated_at, created_at, updated_at)
         VALUES (:name, :name_folded, :category_id, :status, :description, :price_cents, :sku, :sku_folded,
                 0, :now, :now, :now)",
    )?;
    bind_fields(&mut insert, new)?;
    insert.raw_bind_parameter(":now", Timestamp::now())?;
    insert.raw_execute().map_err(|e| on_duplicate_sku(e, new.sku.as_ref()))?;
    PetId::try_from(conn.last_insert_rowid()).map_err(Error::internal)
}

pub(super) fn replace(conn: &Connection, id: PetId, new: &NewPet) -> Result<Pet> {
    store_fields(conn, id, new)
}

pub(super) fn update(conn: &Connection, id: PetId, patch: &PetPatch) -> Result<Pet> {
    if patch.is_empty() {
        return Err(Error::validation(
            "the patch changes nothing: give name, categoryId, status, description, price or sku",
        ));
    }
    let pet = get(conn, id)?;
    store_fields(conn, id, &patch.applied_to(pet).map_err(Error::internal)?)
}

fn store_fields(conn: &Connection, id: PetId, new: &NewPet) -> Result<Pet> {
    categories::ensure_exists(conn, new.category_id)?;
    let mut update = conn.prepare_cached(
        "UPDATE pets SET name = :name, name_folded = :name_folded, category_id = :category_id, status = :status,
                         description = :description, price_cents = :price_cents, sku = :sku,
                         sku_folded = :sku_folded, updated_at = :now
         WHERE id = :id",
    )?;
    bind_fields(&mut update, new)?;
    update.raw_bind_parameter(":now", Timestamp::now())?;
    update.raw_bind_parameter(":id", id)?;
    let changed = update.raw_execute().map_err(|e| on_duplicate_sku(e, new.sku.as_ref()))?;
    if changed == 0 {
        return Err(Error::not_found(PetId::WHAT, id.get()));
    }
    get(conn, id)
}

/// Binds the pet's own fields to the statement's parameters of the same names.
fn bind_fields(statement: &mut rusqlite::Statement<'_>, new: &NewPet) -> rusqlite::Result<()> {
    let (name_folded, sku_folded) = (new.name.folded(), new.sku.as_ref().map(Sku::folded));
    let fields: [(&str, &dyn rusqlite::ToSql); 8] = [
        (":name", &new.name.as_str()),
        (":name_folded", &name_folded),
        (":category_id", &new.category_id),
        (":status", &new.status),
        (":description", &new.description.as_ref().map(|d| d.as_str())),
        (":price_cents", &new.price.map(Price::cents)),
        (":sku", &new.sku.as_ref().map(Sku::as_str)),
        (":sku_folded", &sku_folded),
    ];
    for (name, value) in fields {
        let at = statement
            .parameter_index(name)?
            .ok_or_else(|| rusqlite::Error::InvalidParameterName(name.into()))?;
        statement.raw_bind_parameter(at, value)?;
    }
    Ok(())
}

/// The unique index on the folded barcode is the source of truth for "barcodes are
/// unique, ignoring case"; its violation becomes the precise conflict.
fn on_duplicate_sku(e: rusqlite::Error, sku: Option<&Sku>) -> Error {
    match (e.sqlite_error_code(), sku) {
        (Some(rusqlite::ErrorCode::ConstraintViolation), Some(sku))
            if e.to_string().contains("sku_folded") =>
        {
            crate::domain::duplicate_sku(sku)
        }
        _ => Error::from(e),
    }
}

/// Deletes a pet whose orders, if any, are all cancelled: those go with it (they sold
/// nothing); an open or completed order keeps the pet for its record.
pub(super) fn delete(conn: &Connection, id: PetId) -> Result<()> {
    get(conn, id)?;
    let orders: i64 = conn.query_row(
        "SELECT count(*) FROM orders WHERE pet_id = ?1 AND cancelled_at IS NULL",
        [id],
        |r| r.get(0),
    )?;
    if orders > 0 {
        return Err(crate::domain::pet_has_orders(id, orders));
    }
    conn.execute("DELETE FROM orders WHERE pet_id = ?1", [id])?;
    conn.execute("DELETE FROM pets WHERE id = ?1", [id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{CategoryId, PetStatus};

    /// The plan SQLite makes for the page statement of `filter`.
    fn plan(conn: &Connection, filter: &PetFilter) -> Vec<String> {
        let (w, order) = list_query(filter);
        w.page_plan(conn, PETS, order)
    }

    #[test]
    fn the_pets_screens_list_is_read_from_one_index_alone_in_its_order() {
        let dir = tempfile::tempdir().unwrap();
        let conn = super::super::engine::open_writer(&dir.path().join("plan.db")).unwrap();
        for sort in [PetSort::Name, PetSort::NameDesc] {
            let filter = PetFilter {
                statuses: vec![PetStatus::Available],
                category_id: Some(CategoryId::try_from(3).unwrap()),
                sort,
                ..PetFilter::default()
            };
            assert!(list_query(&filter).0.is_covered());
            // No table look-up per row and no sort: a page is a walk along one index.
            assert_eq!(
                plan(&conn, &filter),
                [
                    "SEARCH pets USING COVERING INDEX pets_by_category_status_name (category_id=? AND status=?)"
                ],
                "{sort:?}"
            );
        }
    }
}
