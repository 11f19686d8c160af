//! The paging every list shares: one page of a list under a filter with the count of all
//! its rows, read by ONE statement, so that the count and the page come from one snapshot
//! (as SQLite reads them in one read transaction) in one round trip.
//!
//! The statement is `SELECT total, page.* FROM (total) LEFT JOIN LATERAL (page) ON true`:
//! an empty page still gives the total, in a row whose item columns are NULL. The page is
//! sorted again outside (twenty rows), since a join does not promise to keep the order of
//! its inner side. Its SQL is built from fixed fragments chosen by which filters are given;
//! every value is a bound parameter (`$1`, `$2`, ...).

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::pg;
use super::types::col;
use crate::domain::{Page, Paged};
use crate::error::Result;

/// A `WHERE` under construction, its values bound as parameters.
#[derive(Default)]
pub(super) struct Filter {
    clauses: Vec<String>,
    pub params: Vec<Box<dyn ToSql + Sync + Send>>,
}

impl Filter {
    /// Adds `clause`, in which `$?` stands for the parameter that `value` becomes.
    pub fn and(&mut self, clause: &str, value: impl ToSql + Sync + Send + 'static) {
        self.params.push(Box::new(value));
        self.clauses.push(clause.replace("$?", &format!("${}", self.params.len())));
    }

    /// Adds `clause`, which binds no value.
    pub fn and_sql(&mut self, clause: &str) {
        self.clauses.push(clause.to_owned());
    }

    /// The next parameter's placeholder, for a value bound with [`Filter::bind`].
    pub fn bind(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.params.push(Box::new(value));
        format!("${}", self.params.len())
    }

    pub fn sql(&self) -> String {
        if self.clauses.is_empty() { String::new() } else { format!("WHERE {}", self.clauses.join(" AND ")) }
    }

    pub fn values(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)).collect()
    }
}

/// A list to page through.
pub(super) struct List<'a> {
    /// The columns of an item, qualified by `p.` (the page's alias), then the sort keys.
    pub columns: &'a str,
    /// An expression giving the total: a scalar subquery over the same parameters.
    pub total: String,
    /// The page: a `SELECT` of the source's rows under the filter, in order, with `LIMIT`
    /// and `OFFSET`, whose rows are named `p` outside.
    pub page: String,
    /// The order of the page, in terms of `p`.
    pub order: &'a str,
}

/// Reads one page and the total of `list`, whose SQL uses `filter`'s parameters; `item`
/// reads an item from a row whose column 1 on are `list.columns`.
pub(super) async fn page<T>(
    c: &impl GenericClient,
    list: List<'_>,
    filter: &Filter,
    item: impl Fn(&Row) -> Result<T>,
) -> Result<Paged<T>> {
    let sql = format!(
        "SELECT t.total, {columns} FROM (SELECT ({total})::bigint AS total) t
         LEFT JOIN LATERAL ({page}) p ON true ORDER BY {order}",
        columns = list.columns,
        total = list.total,
        page = list.page,
        order = list.order,
    );
    let rows = c.query(&c.prepare_cached(&sql).await.map_err(pg)?, &filter.values()).await.map_err(pg)?;
    let total = rows.first().map(|r| col::<i64>(r, 0)).transpose()?.unwrap_or(0);
    let mut items = Vec::with_capacity(rows.len());
    for row in &rows {
        // The one row of an empty page has no item.
        if col::<Option<i64>>(row, 1)?.is_some() {
            items.push(item(row)?);
        }
    }
    Ok(Paged { items, total: total.max(0) as u64 })
}

/// `LIMIT` and `OFFSET` of `page`, bound as the next two parameters.
pub(super) fn limit_offset(filter: &mut Filter, page: Page) -> String {
    let limit = filter.bind(i64::from(page.limit()));
    let offset = filter.bind(i64::from(page.offset()));
    format!("LIMIT {limit} OFFSET {offset}")
}

/// [`limit_offset`] as values the planner cannot see (each an uncorrelated subquery, run
/// once): a plan then cannot depend on them, so every execution of a prepared statement
/// can share one generic plan. Only for a page read by one index walk in its order, whose
/// best plan is that walk however far it goes.
pub(super) fn limit_offset_unplanned(filter: &mut Filter, page: Page) -> String {
    let limit = filter.bind(i64::from(page.limit()));
    let offset = filter.bind(i64::from(page.offset()));
    format!("LIMIT (SELECT {limit}::bigint) OFFSET (SELECT {offset}::bigint)")
}
