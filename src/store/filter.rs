//! A small builder for the dynamic `WHERE` of list filters, keeping values as bound
//! parameters (never spliced into SQL), and the statement that reads one page of a list
//! under it. How a page is found (counts, offsets, bookmarks) is `paging.rs`'s.

use rusqlite::types::Value;

#[derive(Default, Clone)]
pub(super) struct Filter {
    clauses: Vec<String>,
    pub params: Vec<Value>,
    /// Whether an index holds every column the list reads, in the list's order (see
    /// [`Filter::covered_by_an_index`]).
    covered: bool,
}

impl Filter {
    /// Adds `clause`, in which each `?` is bound to the next of `values`.
    pub fn and(&mut self, clause: &str, values: impl IntoIterator<Item = Value>) {
        self.clauses.push(clause.to_owned());
        self.params.extend(values);
    }

    /// Adds `column IN (?, ?, ...)` for a non-empty list of values. Written piece by piece,
    /// as [`Filter::sql`] is: every list builds its filter, `GET /pets?id=` (a read by id
    /// through the list) among them, and the joins and `format!`s were a twentieth of it.
    pub fn and_in(&mut self, column: &str, values: impl IntoIterator<Item = Value>) {
        let before = self.params.len();
        self.params.extend(values);
        let added = self.params.len() - before;
        if added == 0 {
            return;
        }
        let mut clause = String::with_capacity(column.len() + 6 + 3 * added);
        clause.push_str(column);
        clause.push_str(" IN (?");
        for _ in 1..added {
            clause.push_str(", ?");
        }
        clause.push(')');
        self.clauses.push(clause);
    }

    /// Tells the paging that an index holds every column of the list in its order, so that
    /// rows skipped by an offset are never read from the table anyway: the deferred join,
    /// which would read the page's own rows from the table, only costs then.
    pub fn covered_by_an_index(&mut self) {
        self.covered = true;
    }

    pub fn is_covered(&self) -> bool {
        self.covered
    }

    /// The statement reading one page (`LIMIT ? OFFSET ?`, bound after the filter's own
    /// values), plain or as a deferred join.
    pub(super) fn page_sql(
        &self,
        Source { columns, from, key }: Source<'_>,
        order: &str,
        deferred: bool,
    ) -> String {
        let where_sql = self.sql();
        if deferred {
            format!(
                "SELECT {columns} FROM {from} WHERE {key} IN
                    (SELECT {key} FROM {from} {where_sql} ORDER BY {order} LIMIT ? OFFSET ?)
                 ORDER BY {order}"
            )
        } else {
            format!("SELECT {columns} FROM {from} {where_sql} ORDER BY {order} LIMIT ? OFFSET ?")
        }
    }

    pub(super) fn sql(&self) -> String {
        let mut sql = String::with_capacity(self.clauses.iter().map(|c| c.len() + 5).sum::<usize>() + 1);
        for (at, clause) in self.clauses.iter().enumerate() {
            sql.push_str(if at == 0 { "WHERE " } else { " AND " });
            sql.push_str(clause);
        }
        sql
    }
}

/// What a list reads: `columns` of `from`, whose rows `key` identifies.
#[derive(Clone, Copy)]
pub(super) struct Source<'a> {
    pub columns: &'a str,
    pub from: &'a str,
    pub key: &'a str,
}

#[cfg(test)]
impl Filter {
    /// The plan SQLite makes for a page of 20 of `source` under this filter, in `order`
    /// (undeferred): what the tests that hold a list to its index read.
    pub(super) fn page_plan(
        &self,
        conn: &rusqlite::Connection,
        source: Source<'_>,
        order: &str,
    ) -> Vec<String> {
        let sql = self.page_sql(source, order, false);
        let values = self.params.iter().cloned().chain([Value::Integer(20), Value::Integer(0)]);
        conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(rusqlite::params_from_iter(values), |r| r.get(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }
}
