//! A small builder for the dynamic `WHERE` of list filters, keeping values as bound
//! parameters (never spliced into SQL), and the paging every list shares.

use rusqlite::types::Value;
use rusqlite::{Connection, Row, params_from_iter};

use crate::domain::{Page, Paged};
use crate::error::Result;

#[derive(Default)]
pub(super) struct Filter {
    clauses: Vec<String>,
    pub params: Vec<Value>,
}

impl Filter {
    /// Adds `clause`, in which each `?` is bound to the next of `values`.
    pub fn and(&mut self, clause: &str, values: impl IntoIterator<Item = Value>) {
        self.clauses.push(clause.to_owned());
        self.params.extend(values);
    }

    /// Adds `column IN (?, ?, ...)` for a non-empty list of values.
    pub fn and_in(&mut self, column: &str, values: impl IntoIterator<Item = Value>) {
        let values: Vec<Value> = values.into_iter().collect();
        if values.is_empty() {
            return;
        }
        let marks = vec!["?"; values.len()].join(", ");
        self.and(&format!("{column} IN ({marks})"), values);
    }

    /// One page of `source` under this filter, in `order` (comma-separated terms, each
    /// optionally `DESC`), with the count of all matching rows (the `X-Total-Count`):
    /// `total` when the caller knows it cheaply, else counted here.
    ///
    /// Two habits keep deep pages affordable at a million rows. The rows skipped by the
    /// offset are stepped over on the index alone, and only the page's own rows are read
    /// from the table (a "deferred join" on `source.key`). And a page in the back half of
    /// the list is read from the other end, so that "last page" skips almost nothing.
    pub fn page<T>(
        &self,
        conn: &Connection,
        source: Source<'_>,
        order: &str,
        page: Page,
        total: Option<u64>,
        row: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Paged<T>> {
        // One snapshot for the count and the page, so that they agree under writes.
        let snapshot = conn.unchecked_transaction()?;
        let Source { columns, from, key } = source;
        let where_sql = self.sql();
        let total = match total {
            Some(total) => total,
            None => {
                conn.prepare_cached(&format!("SELECT count(*) FROM {from} {where_sql}"))?
                    .query_row(params_from_iter(&self.params), |r| r.get::<_, i64>(0))? as u64
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
        let mut items = conn
            .prepare_cached(&format!(
                "SELECT {columns} FROM {from} WHERE {key} IN
                    (SELECT {key} FROM {from} {where_sql} ORDER BY {order} LIMIT {limit} OFFSET {offset})
                 ORDER BY {order}"
            ))?
            .query_map(params_from_iter(&self.params), row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        if from_end {
            items.reverse();
        }
        snapshot.finish()?;
        Ok(Paged { items, total })
    }

    pub(super) fn sql(&self) -> String {
        if self.clauses.is_empty() { String::new() } else { format!("WHERE {}", self.clauses.join(" AND ")) }
    }
}

/// What a list reads: `columns` of `from`, whose rows `key` identifies.
#[derive(Clone, Copy)]
pub(super) struct Source<'a> {
    pub columns: &'a str,
    pub from: &'a str,
    pub key: &'a str,
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

/// Escapes `%`, `_` and `\` so user text in a `LIKE ... ESCAPE '\'` matches literally.
pub(super) fn like_contains(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}
