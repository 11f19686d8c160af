use rusqlite::{Connection, OptionalExtension, Row, params};

use super::filter::{Filter, Source};
use super::paging;
use crate::domain::{Category, CategoryId, NewCategory, Page, Paged, Timestamp, no_such_category};
use crate::error::{Error, Result};

/// The pet count is the kept one (see `counts.rs`), not a count of the category's pets.
const COLUMNS: &str = "c.id, c.name, c.description,
    (SELECT coalesce(sum(pc.pets), 0) FROM pet_counts pc WHERE pc.category_id = c.id), c.created_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Category> {
    Ok(Category {
        id: r.get(0)?,
        name: r.get(1)?,
        description: r.get(2)?,
        pet_count: r.get(3)?,
        created_at: r.get(4)?,
    })
}

pub(super) fn list(conn: &Connection, page: Page) -> Result<Paged<Category>> {
    let source = Source { columns: COLUMNS, from: "categories c", key: "c.id" };
    paging::page(conn, &Filter::default(), source, "c.name_folded, c.id", page, None, from_row)
}

pub(super) fn get(conn: &Connection, id: CategoryId) -> Result<Category> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM categories c WHERE c.id = ?1"))?
        .query_row([id], from_row)
        .optional()?
        .ok_or_else(|| Error::not_found(CategoryId::WHAT, id.get()))
}

/// Refuses a body that names a category that is not there.
pub(super) fn ensure_exists(conn: &Connection, id: Option<CategoryId>) -> Result<()> {
    let Some(id) = id else { return Ok(()) };
    let found = conn.prepare_cached("SELECT 1 FROM categories WHERE id = ?1")?.exists([id])?;
    if found { Ok(()) } else { Err(no_such_category(id)) }
}

pub(super) fn create(conn: &Connection, new: &NewCategory) -> Result<Category> {
    conn.execute(
        "INSERT INTO categories (name, name_folded, description, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![
            new.name.as_str(),
            new.name.folded(),
            new.description.as_ref().map(|d| d.as_str()),
            Timestamp::now()
        ],
    )
    .map_err(|e| on_duplicate_name(e, new))?;
    get(conn, CategoryId::try_from(conn.last_insert_rowid()).map_err(Error::internal)?)
}

pub(super) fn replace(conn: &Connection, id: CategoryId, new: &NewCategory) -> Result<Category> {
    let changed = conn
        .execute(
            "UPDATE categories SET name = ?2, name_folded = ?3, description = ?4 WHERE id = ?1",
            params![id, new.name.as_str(), new.name.folded(), new.description.as_ref().map(|d| d.as_str())],
        )
        .map_err(|e| on_duplicate_name(e, new))?;
    if changed == 0 {
        return Err(Error::not_found(CategoryId::WHAT, id.get()));
    }
    get(conn, id)
}

pub(super) fn delete(conn: &Connection, id: CategoryId) -> Result<()> {
    let category = get(conn, id)?;
    if category.pet_count > 0 {
        return Err(category.in_use());
    }
    conn.execute("DELETE FROM categories WHERE id = ?1", [id])?;
    Ok(())
}

/// The unique index on the folded name is the source of truth for "names are unique,
/// case-insensitive"; its violation becomes the precise conflict.
fn on_duplicate_name(e: rusqlite::Error, new: &NewCategory) -> Error {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::ConstraintViolation) => new.duplicate_name(),
        _ => Error::from(e),
    }
}
