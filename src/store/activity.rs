//! The activity log's rows: every write of the shop adds its entry here, on the write's own
//! connection, so the entry commits or rolls back with it. What an entry says is decided
//! in `domain::activity`; the list reads newest first, paged like every other list.

use rusqlite::types::Value;
use rusqlite::{Connection, Row, params};

use super::filter::{Filter, Source};
use super::paging;
use crate::domain::{ActivityEntry, ActivityFilter, NewActivity, Page, Paged, Subject, Timestamp};
use crate::error::Result;

/// Writes `entry`, made at `at`.
pub(super) fn record(conn: &Connection, entry: &NewActivity, at: Timestamp) -> Result<()> {
    let (staff, approver) = entry.staff_ids();
    let subject = entry.subject.as_ref();
    conn.prepare_cached(
        "INSERT INTO activity (at, kind, subject_entity, subject_id, staff_id, approver_id, actor, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        at,
        entry.kind.as_str(),
        subject.map(|s| s.entity.as_str()),
        subject.map(|s| s.id.as_str()),
        staff,
        approver,
        entry.actor,
        entry.detail,
    ])?;
    Ok(())
}

/// Writes each of `entries` (a sign-in refused and the lockout it earned), made at `at`.
pub(super) fn record_all(conn: &Connection, entries: &[NewActivity], at: Timestamp) -> Result<()> {
    entries.iter().try_for_each(|entry| record(conn, entry, at))
}

const COLUMNS: &str = "id, at, kind, subject_entity, subject_id, actor, detail";

fn from_row(r: &Row<'_>) -> rusqlite::Result<ActivityEntry> {
    let kind: String = r.get(2)?;
    let subject = match (r.get::<_, Option<String>>(3)?, r.get::<_, Option<String>>(4)?) {
        (Some(entity), Some(id)) => Some(Subject { entity, id }),
        (Some(entity), None) => Some(Subject { entity, id: String::new() }),
        _ => None,
    };
    Ok(ActivityEntry {
        id: r.get(0)?,
        at: r.get(1)?,
        kind: kind.parse().map_err(|e: crate::error::Error| {
            rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, e.message.into())
        })?,
        subject,
        actor: r.get(5)?,
        detail: r.get(6)?,
    })
}

/// The log under `filter`, newest first: a person is found as the one who acted and as the
/// one who approved (each through its own index).
pub(super) fn list(conn: &Connection, filter: &ActivityFilter, page: Page) -> Result<Paged<ActivityEntry>> {
    let mut w = Filter::default();
    if let Some(staff) = filter.staff {
        let id = Value::Integer(staff.get());
        w.and(
            "id IN (SELECT id FROM activity WHERE staff_id = ? UNION SELECT id FROM activity WHERE approver_id = ?)",
            [id.clone(), id],
        );
    }
    if let Some(kind) = filter.kind {
        w.and("kind = ?", [Value::Text(kind.as_str().to_owned())]);
    }
    if let Some(from) = filter.from {
        w.and("at >= ?", [Value::Text(from.to_string())]);
    }
    if let Some(to) = filter.to {
        w.and("at < ?", [Value::Text(to.to_string())]);
    }
    paging::page(
        conn,
        &w,
        Source { columns: COLUMNS, from: "activity", key: "id" },
        "id DESC",
        page,
        None,
        from_row,
    )
}
