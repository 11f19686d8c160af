//! A small builder for the dynamic `WHERE` of list filters, keeping values as bound
//! parameters (never spliced into SQL).

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

    /// One page of `SELECT {columns} FROM {from}` under this filter, in `order`, with the
    /// count of all matching rows (the `X-Total-Count`).
    pub fn page<T>(
        &self,
        conn: &Connection,
        (columns, from): (&str, &str),
        order: &str,
        page: Page,
        row: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Paged<T>> {
        let where_sql = self.sql();
        let total: i64 = conn.query_row(
            &format!("SELECT count(*) FROM {from} {where_sql}"),
            params_from_iter(&self.params),
            |r| r.get(0),
        )?;
        let items = conn
            .prepare_cached(&format!(
                "SELECT {columns} FROM {from} {where_sql} ORDER BY {order} LIMIT {} OFFSET {}",
                page.limit(),
                page.offset()
            ))?
            .query_map(params_from_iter(&self.params), row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Paged { items, total: total as u64 })
    }

    fn sql(&self) -> String {
        if self.clauses.is_empty() { String::new() } else { format!("WHERE {}", self.clauses.join(" AND ")) }
    }
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
