//! Pets on PostgreSQL: the same operations, messages and orders as `src/store/pets.rs`.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

use super::categories;
use super::paging::{self, Filter, List, limit_offset};
use super::types::col;
use super::{pg, violates};
use crate::domain::{
    CategoryId, NewPet, Page, Paged, Pet, PetFilter, PetId, PetPatch, PetSort, Price, Sku, Timestamp,
    duplicate_sku,
};
use crate::domain::{like_contains, no_such_category};
use crate::error::{Error, Result};

pub(super) const COLUMNS: &str =
    "id, name, category_id, status, description, price_cents, sku, created_at, updated_at";

/// A pet from `r`, whose columns from `at` on are [`COLUMNS`].
pub(super) fn from_row(r: &Row, at: usize) -> Result<Pet> {
    Ok(Pet {
        id: col(r, at)?,
        name: col(r, at + 1)?,
        category_id: col(r, at + 2)?,
        status: col(r, at + 3)?,
        description: col(r, at + 4)?,
        price: col(r, at + 5)?,
        sku: col(r, at + 6)?,
        created_at: col(r, at + 7)?,
        updated_at: col(r, at + 8)?,
    })
}

pub(super) async fn list(c: &impl GenericClient, filter: &PetFilter, page: Page) -> Result<Paged<Pet>> {
    filter.check_ids()?;
    let order = match filter.sort {
        PetSort::Id => "id",
        PetSort::IdDesc => "id DESC",
        PetSort::Name => "name_folded, id",
        PetSort::NameDesc => "name_folded DESC, id DESC",
    };
    let mut w = Filter::default();
    // The same parameters filter the kept counts: `$status` and `$category` name them.
    let mut counted = Vec::new();
    if let [status] = filter.statuses[..] {
        // `=`, not `= ANY`: PostgreSQL 15 reads an index in order only under equality, so
        // `= ANY` of one status would sort every pet of the category to find one page.
        w.and("status = $?", status.as_str());
        counted.push(format!("status = ${}", w.params.len()));
    } else if !filter.statuses.is_empty() {
        let statuses: Vec<String> = filter.statuses.iter().map(|s| s.as_str().to_owned()).collect();
        w.and("status = ANY($?)", statuses);
        counted.push(format!("status = ANY(${})", w.params.len()));
    }
    if let Some(category) = filter.category_id {
        w.and("category_id = $?", category.get());
        counted.push(format!("category_id = ${}", w.params.len()));
    }
    if let Some(q) = &filter.name_contains {
        w.and("name_folded LIKE $? ESCAPE '\\'", like_contains(&q.folded()));
    }
    if let Some(search) = filter.search_patterns() {
        // Arrays, so that every search text is one statement (prepared once per connection)
        // whatever its number of patterns; `\` is LIKE's default escape. The halves first:
        // most rows stop there. ILIKE under "C" ignores the case of ASCII letters alone, as
        // SQLite's LIKE does, so that both engines find the same pets whatever the locale.
        let halves = w.bind(search.halves);
        let names = w.bind(search.names);
        let clause = format!(
            "((name_folded LIKE ANY({halves}) AND name_folded LIKE ANY({names})) \
              OR description COLLATE \"C\" ILIKE $? ESCAPE '\\')"
        );
        w.and(&clause, search.description);
    }
    if let Some(sku) = &filter.sku {
        w.and("sku_folded = $?", sku.folded());
    }
    if !filter.ids.is_empty() {
        w.and("id = ANY($?)", filter.ids.iter().map(|id| id.get()).collect::<Vec<i64>>());
    }
    // By ids or by barcode: at most a page of look-ups by key.
    if !filter.ids.is_empty() || filter.sku.is_some() {
        return short_page(c, &w, order, page).await;
    }

    // Without a search the count is the kept one (a category and status filter).
    let total = if !filter.searches() {
        let counted =
            if counted.is_empty() { String::new() } else { format!("WHERE {}", counted.join(" AND ")) };
        format!("SELECT coalesce(sum(pets), 0) FROM pet_counts {counted}")
    } else {
        format!("SELECT count(*) FROM pets {}", w.sql())
    };
    // The page's ids come from one index walk in the list's order (every list index ends
    // in id); only the page's own rows are then read from the table, by primary key.
    // `= ANY(ARRAY(...))` keeps that lookup whatever the planner guesses of the walk's
    // length: a join on the ids turns into a hash join over every pet once it expects
    // thousands of them, as it does when it cannot see the LIMIT (below).
    //
    // Where one index walk gives the order whatever LIMIT and OFFSET are (the filters are
    // the leading columns of an index in the sort's order), they are hidden from the
    // planner: every plan of the statement is then the same, so PostgreSQL keeps one
    // generic plan per connection instead of planning each page anew, which took half of
    // its time for a page (measured: `tests/bench/README.md`, PostgreSQL). Elsewhere the
    // planner needs them to choose between walking the order and sorting what the filters
    // find.
    let walked = !filter.searches()
        && filter.statuses.len() <= 1
        && match filter.sort {
            PetSort::Name | PetSort::NameDesc => true,
            PetSort::Id | PetSort::IdDesc => filter.category_id.is_none() && filter.statuses.is_empty(),
        };
    let limit =
        if walked { paging::limit_offset_unplanned(&mut w, page) } else { limit_offset(&mut w, page) };
    let page_sql = format!(
        "SELECT q.* FROM pets q WHERE q.id = ANY(ARRAY(SELECT id FROM pets {where_sql} ORDER BY {order} {limit}))",
        where_sql = w.sql(),
    );
    // The same order, on the page's alias.
    let outer = order.split(", ").map(|key| format!("p.{key}")).collect::<Vec<_>>().join(", ");
    let list = List {
        columns: "p.id, p.name, p.category_id, p.status, p.description, p.price_cents, p.sku, p.created_at, p.updated_at",
        total,
        page: page_sql,
        order: &outer,
    };
    paging::page(c, list, &w, |r| from_row(r, 1)).await
}

/// A list by ids: at most a page of them, read whole and cut here.
async fn short_page(c: &impl GenericClient, w: &Filter, order: &str, page: Page) -> Result<Paged<Pet>> {
    let sql = format!("SELECT {COLUMNS} FROM pets {} ORDER BY {order}", w.sql());
    let rows = c.query(&c.prepare_cached(&sql).await.map_err(pg)?, &w.values()).await.map_err(pg)?;
    let total = rows.len() as u64;
    let items = rows
        .iter()
        .skip(page.offset() as usize)
        .take(page.limit() as usize)
        .map(|r| from_row(r, 0))
        .collect::<Result<_>>()?;
    Ok(Paged { items, total })
}

/// A pet by id, prepared on the shared connections of `readers.rs`.
pub(super) const FIND: &str =
    "SELECT id, name, category_id, status, description, price_cents, sku, created_at, updated_at
                               FROM pets WHERE id = $1";

/// The pet, its row locked until the transaction `c` ends.
async fn get_for_update(c: &impl GenericClient, id: PetId) -> Result<Pet> {
    let sql = "SELECT id, name, category_id, status, description, price_cents, sku, created_at, updated_at
               FROM pets WHERE id = $1 FOR UPDATE";
    let row = c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get()]).await.map_err(pg)?;
    row.map(|r| from_row(&r, 0)).transpose()?.ok_or_else(|| Error::not_found(PetId::WHAT, id.get()))
}

pub(super) async fn create(c: &impl GenericClient, new: &NewPet) -> Result<Pet> {
    categories::ensure_exists(c, new.category_id).await?;
    let now = Timestamp::now().to_string();
    let sql = "INSERT INTO pets (name, name_folded, category_id, status, description, price_cents, sku, sku_folded,
                                 stock, stock_updated_at, created_at, updated_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $9, $9)
               RETURNING id, name, category_id, status, description, price_cents, sku, created_at, updated_at";
    let fields = Fields::of(new);
    let mut params = fields.refs().to_vec();
    params.push(&now);
    let row = c
        .query_one(&c.prepare_cached(sql).await.map_err(pg)?, &params)
        .await
        .map_err(|e| on_refused(e, new))?;
    from_row(&row, 0)
}

pub(super) async fn replace(c: &impl GenericClient, id: PetId, new: &NewPet) -> Result<Pet> {
    store_fields(c, id, new).await
}

pub(super) async fn update(c: &impl GenericClient, id: PetId, patch: &PetPatch) -> Result<Pet> {
    if patch.is_empty() {
        return Err(Error::validation(
            "the patch changes nothing: give name, categoryId, status, description, price or sku",
        ));
    }
    // Locked: what the patch leaves alone is kept as it is at the write, not as it was
    // before another replica's change.
    let pet = get_for_update(c, id).await?;
    store_fields(c, id, &patch.applied_to(pet).map_err(Error::internal)?).await
}

async fn store_fields(c: &impl GenericClient, id: PetId, new: &NewPet) -> Result<Pet> {
    categories::ensure_exists(c, new.category_id).await?;
    let sql = "UPDATE pets SET name = $2, name_folded = $3, category_id = $4, status = $5, description = $6,
                               price_cents = $7, sku = $8, sku_folded = $9, updated_at = $10
               WHERE id = $1
               RETURNING id, name, category_id, status, description, price_cents, sku, created_at, updated_at";
    let (key, now, fields) = (id.get(), Timestamp::now().to_string(), Fields::of(new));
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&key];
    params.extend(fields.refs());
    params.push(&now);
    let row = c
        .query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &params)
        .await
        .map_err(|e| on_refused(e, new))?;
    match row {
        Some(row) => from_row(&row, 0),
        None => Err(Error::not_found(PetId::WHAT, id.get())),
    }
}

/// A category deleted by another replica between the check and the write.
/// A pet's own columns as bound, in the order of both statements: name, its folded form,
/// category, status, description, price in cents, barcode and its folded form.
struct Fields {
    name: String,
    name_folded: String,
    category: Option<i64>,
    status: &'static str,
    description: Option<String>,
    price: Option<i64>,
    sku: Option<String>,
    sku_folded: Option<String>,
}

impl Fields {
    fn of(new: &NewPet) -> Self {
        Self {
            name: new.name.as_str().to_owned(),
            name_folded: new.name.folded(),
            category: new.category_id.map(CategoryId::get),
            status: new.status.as_str(),
            description: new.description.as_ref().map(|d| d.as_str().to_owned()),
            price: new.price.map(Price::cents),
            sku: new.sku.as_ref().map(|s| s.as_str().to_owned()),
            sku_folded: new.sku.as_ref().map(Sku::folded),
        }
    }

    fn refs(&self) -> [&(dyn ToSql + Sync); 8] {
        [
            &self.name,
            &self.name_folded,
            &self.category,
            &self.status,
            &self.description,
            &self.price,
            &self.sku,
            &self.sku_folded,
        ]
    }
}

/// A category deleted meanwhile, or a barcode another pet took meanwhile, as the precise
/// refusal (the constraints are the source of truth).
fn on_refused(e: tokio_postgres::Error, new: &NewPet) -> Error {
    match (new.category_id, &new.sku) {
        (Some(id), _) if violates(&e, &SqlState::FOREIGN_KEY_VIOLATION, "pets_category_id_fkey") => {
            no_such_category(id)
        }
        (_, Some(sku)) if violates(&e, &SqlState::UNIQUE_VIOLATION, "pets_by_sku") => duplicate_sku(sku),
        _ => pg(e),
    }
}

/// Deletes a pet whose orders, if any, are all cancelled: those go with it (they sold
/// nothing); an open or completed order keeps the pet for its record.
pub(super) async fn delete(c: &impl GenericClient, id: PetId) -> Result<()> {
    // Locked, so that no order for it is placed between the count and the delete.
    get_for_update(c, id).await?;
    let sql = "SELECT count(*) FROM orders WHERE pet_id = $1 AND cancelled_at IS NULL";
    let orders: i64 =
        col(&c.query_one(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get()]).await.map_err(pg)?, 0)?;
    if orders > 0 {
        return Err(crate::domain::pet_has_orders(id, orders));
    }
    let sql = "DELETE FROM orders WHERE pet_id = $1";
    c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get()]).await.map_err(pg)?;
    let sql = "DELETE FROM pets WHERE id = $1";
    c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get()]).await.map_err(pg)?;
    Ok(())
}
