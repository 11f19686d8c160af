//! Categories on PostgreSQL: the same operations, messages and order as
//! `src/store/categories.rs`.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;

use super::paging::{self, Filter, List, limit_offset};
use super::types::col;
use super::{pg, violates};
use crate::domain::{Category, CategoryId, NewCategory, Page, Paged, Timestamp, no_such_category};
use crate::error::{Error, Result};

/// The pet count is the kept one (`pet_counts`), not a count of the category's pets.
const COLUMNS: &str = "c.id, c.name, c.description,
    (SELECT coalesce(sum(pc.pets), 0)::bigint FROM pet_counts pc WHERE pc.category_id = c.id), c.created_at";

fn from_row(r: &Row, at: usize) -> Result<Category> {
    Ok(Category {
        id: col(r, at)?,
        name: col(r, at + 1)?,
        description: col(r, at + 2)?,
        pet_count: col(r, at + 3)?,
        created_at: col(r, at + 4)?,
    })
}

pub(super) async fn list(c: &impl GenericClient, page: Page) -> Result<Paged<Category>> {
    let mut w = Filter::default();
    let limit = limit_offset(&mut w, page);
    let list = List {
        columns: "p.id, p.name, p.description, p.pet_count, p.created_at",
        total: "SELECT count(*) FROM categories".into(),
        page: format!(
            "SELECT c.id, c.name, c.description,
                    (SELECT coalesce(sum(pc.pets), 0)::bigint FROM pet_counts pc WHERE pc.category_id = c.id)
                        AS pet_count,
                    c.created_at, c.name_folded
             FROM categories c ORDER BY c.name_folded, c.id {limit}"
        ),
        order: "p.name_folded, p.id",
    };
    paging::page(c, list, &w, |r| from_row(r, 1)).await
}

pub(super) async fn get(c: &impl GenericClient, id: CategoryId) -> Result<Category> {
    let sql = format!("SELECT {COLUMNS} FROM categories c WHERE c.id = $1");
    c.query_opt(&c.prepare_cached(&sql).await.map_err(pg)?, &[&id.get()])
        .await
        .map_err(pg)?
        .map(|r| from_row(&r, 0))
        .transpose()?
        .ok_or_else(|| Error::not_found(CategoryId::WHAT, id.get()))
}

/// Refuses a body that names a category that is not there.
pub(super) async fn ensure_exists(c: &impl GenericClient, id: Option<CategoryId>) -> Result<()> {
    let Some(id) = id else { return Ok(()) };
    let sql = "SELECT 1 FROM categories WHERE id = $1";
    let found = c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get()]).await.map_err(pg)?;
    if found.is_some() { Ok(()) } else { Err(no_such_category(id)) }
}

pub(super) async fn create(c: &impl GenericClient, new: &NewCategory) -> Result<Category> {
    // Looked for first: a refused INSERT would still take an id from the sequence, and the
    // next category's id would then differ from SQLite's (AUTOINCREMENT gives back an id
    // whose insert failed). The unique index still decides between two replicas at once.
    let sql = "SELECT 1 FROM categories WHERE name_folded = $1";
    let taken =
        c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[&new.name.folded()]).await.map_err(pg)?;
    if taken.is_some() {
        return Err(new.duplicate_name());
    }
    let sql = "INSERT INTO categories (name, name_folded, description, created_at) VALUES ($1, $2, $3, $4)
               RETURNING id";
    let row = c
        .query_one(
            &c.prepare_cached(sql).await.map_err(pg)?,
            &[
                &new.name.as_str(),
                &new.name.folded(),
                &new.description.as_ref().map(|d| d.as_str()),
                &Timestamp::now().to_string(),
            ],
        )
        .await
        .map_err(|e| on_duplicate_name(e, new))?;
    get(c, col(&row, 0)?).await
}

pub(super) async fn replace(c: &impl GenericClient, id: CategoryId, new: &NewCategory) -> Result<Category> {
    let sql = "UPDATE categories SET name = $2, name_folded = $3, description = $4 WHERE id = $1";
    let changed = c
        .execute(
            &c.prepare_cached(sql).await.map_err(pg)?,
            &[
                &id.get(),
                &new.name.as_str(),
                &new.name.folded(),
                &new.description.as_ref().map(|d| d.as_str()),
            ],
        )
        .await
        .map_err(|e| on_duplicate_name(e, new))?;
    if changed == 0 {
        return Err(Error::not_found(CategoryId::WHAT, id.get()));
    }
    get(c, id).await
}

pub(super) async fn delete(c: &impl GenericClient, id: CategoryId) -> Result<()> {
    // Locked first: a pet being added to the category elsewhere holds a key-share lock on
    // this row (its foreign key), so the count below is read once that pet is in, and a
    // pet added later finds the category gone.
    let sql = "SELECT 1 FROM categories WHERE id = $1 FOR UPDATE";
    c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get()]).await.map_err(pg)?;
    let category = get(c, id).await?;
    if category.pet_count > 0 {
        return Err(category.in_use());
    }
    let sql = "DELETE FROM categories WHERE id = $1";
    c.execute(&c.prepare_cached(sql).await.map_err(pg)?, &[&id.get()]).await.map_err(pg)?;
    Ok(())
}

/// The unique index on the folded name is the source of truth for "names are unique,
/// ignoring case"; its violation becomes the precise conflict.
fn on_duplicate_name(e: tokio_postgres::Error, new: &NewCategory) -> Error {
    if violates(&e, &SqlState::UNIQUE_VIOLATION, "categories_name_folded_key") {
        return new.duplicate_name();
    }
    pg(e)
}
