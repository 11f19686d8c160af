//! The paging every list shares: a page of a list under a filter, with the count of all
//! its rows, read in one snapshot; deep pages start from a bookmark where the list has them
//! (`paging/bookmarks.rs`).

mod bookmarks;

use rusqlite::types::Value;
use rusqlite::{Connection, Row, params_from_iter};

pub(super) use bookmarks::Bookmarks;
use bookmarks::{Start, read};

use super::filter::{Filter, Source};
use crate::domain::{Page, Paged};
use crate::error::Result;

/// One page of `source` under `filter`, in `order` (comma-separated terms, each
/// optionally `DESC`), with the count of all matching rows (the `X-Total-Count`):
/// from `kept` when the store keeps it, else counted here. The count and the page are
/// read in one snapshot, so that they agree under writes.
///
/// Three habits keep deep pages affordable at a million rows. The rows skipped by the
/// offset are stepped over on the index alone, and only the page's own rows are read
/// from the table (a "deferred join" on `source.key`). A page in the back half of the
/// list is read from the other end, so that "last page" skips almost nothing. And where
/// the list has bookmarks (`kept.bookmarks`), a page starts from the nearest one.
pub(super) fn page<T>(
    conn: &Connection,
    filter: &Filter,
    source: Source<'_>,
    order: &str,
    page: Page,
    kept: Option<KeptList<'_>>,
    row: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Paged<T>> {
    in_snapshot(conn, || page_in_snapshot(conn, filter, source, order, page, kept, row))
}

fn page_in_snapshot<T>(
    conn: &Connection,
    filter: &Filter,
    source: Source<'_>,
    order: &str,
    page: Page,
    kept: Option<KeptList<'_>>,
    row: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Paged<T>> {
    let (total, bookmarks) = match kept {
        Some(KeptList { count, bookmarks }) => {
            let Kept { total, version } = count(conn)?;
            (total, bookmarks.map(|b| (b, version)))
        }
        None => {
            let total = conn
                .prepare_cached(&format!("SELECT count(*) FROM {} {}", source.from, filter.sql()))?
                .query_row(params_from_iter(&filter.params), |r| r.get::<_, i64>(0))?;
            (total as u64, None)
        }
    };
    let (limit, offset) = (u64::from(page.limit()), u64::from(page.offset()));
    if offset >= total {
        return Ok(Paged { items: Vec::new(), total });
    }
    let from_end = offset + limit / 2 > total / 2;
    let (order, limit, offset) = if from_end {
        let end = (offset + limit).min(total);
        (reversed(order), end - offset, total - end)
    } else {
        (order.to_owned(), limit, offset)
    };
    let start = match bookmarks {
        Some((bookmarks, version)) => bookmarks.start(conn, source, filter, &order, offset, version)?,
        None => None,
    };
    let mut items = match &start {
        Some(Start { arms, offset }) => read(conn, source, arms, &order, limit, *offset, row)?,
        None => {
            let deferred = offset >= DEFER_FROM && !filter.is_covered();
            let paging = [Value::from(limit as i64), Value::from(offset as i64)];
            conn.prepare_cached(&filter.page_sql(source, &order, deferred))?
                .query_map(params_from_iter(filter.params.iter().chain(&paging)), row)?
                .collect::<rusqlite::Result<Vec<_>>>()?
        }
    };
    if from_end {
        items.reverse();
    }
    Ok(Paged { items, total })
}

/// A page of a list that is short whatever the size of the shop (by ids: at most a
/// page of them). It is read whole by one statement and cut here, so it needs neither a
/// count nor a snapshot around two statements.
pub(super) fn short_page<T>(
    conn: &Connection,
    filter: &Filter,
    source: Source<'_>,
    order: &str,
    page: Page,
    row: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Paged<T>> {
    let Source { columns, from, .. } = source;
    // `SELECT {columns} FROM {from} {where} ORDER BY {order}`, without `format!`: this is
    // every read by ids, `GET /pets?id=` among them.
    let mut sql = String::with_capacity(256);
    for piece in ["SELECT ", columns, " FROM ", from, " ", &filter.sql(), " ORDER BY ", order] {
        sql.push_str(piece);
    }
    let mut items = conn
        .prepare_cached(&sql)?
        .query_map(params_from_iter(&filter.params), row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let total = items.len() as u64;
    let start = (page.offset() as usize).min(items.len());
    items.truncate(start.saturating_add(page.limit() as usize));
    items.drain(..start);
    Ok(Paged { items, total })
}

/// Runs `read` in one read transaction, so that what it reads in several statements agrees:
/// the connection's own when it has one open (a pooled reader's, see `engine/readers.rs`).
fn in_snapshot<T>(conn: &Connection, read: impl FnOnce() -> Result<T>) -> Result<T> {
    if !conn.is_autocommit() {
        return read();
    }
    // Cached, like every statement of a list: parsing even these two costs a busy server
    // more than running them.
    conn.prepare_cached("BEGIN")?.execute([])?;
    let result = read();
    conn.prepare_cached("COMMIT")?.execute([])?;
    result
}

/// From this many skipped rows on, a page is read by a deferred join (measured at a
/// million pets: the plain query is 15 % faster on the first page, 30 % slower at 5,000).
const DEFER_FROM: u64 = 500;

/// A list's total as the store keeps it, and the version of the list (see `bookmarks.rs`).
pub(super) struct Kept {
    pub total: u64,
    pub version: i64,
}

/// Reads a list's total from what the store keeps, instead of counting the rows.
pub(super) type KeptTotal<'a> = dyn Fn(&Connection) -> Result<Kept> + 'a;

/// What the store keeps about a list: its count, and bookmarks into it if the kept
/// version covers everything that orders the list.
#[derive(Clone, Copy)]
pub(super) struct KeptList<'a> {
    pub count: &'a KeptTotal<'a>,
    pub bookmarks: Option<&'a Bookmarks>,
}

/// `order` the other way round: `a, b DESC` becomes `a DESC, b`.
fn reversed(order: &str) -> String {
    order
        .split(',')
        .map(|term| {
            let term = term.trim();
            match term.strip_suffix(" DESC") {
                Some(ascending) => ascending.to_owned(),
                None => format!("{term} DESC"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
