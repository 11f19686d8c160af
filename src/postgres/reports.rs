//! The sales report on PostgreSQL: as `src/store/reports.rs`.

use deadpool_postgres::GenericClient;

use super::types::col;
use super::{pg, settings};
use crate::domain::{DayRange, SalesDay, SpanTotals, day_spans, sales_days};
use crate::error::{Error, Result};

/// The sales of `range`, its days counted in the shop's time zone: as SQLite's, the spans'
/// ends handed over as two arrays, a row per span coming back.
pub(super) async fn sales_report(c: &impl GenericClient, range: DayRange) -> Result<Vec<SalesDay>> {
    let zone = settings::get(c).await?.time_zone;
    let spans = day_spans(range, zone);
    let starts: Vec<String> = spans.iter().map(|s| s.start.to_string()).collect();
    let ends: Vec<String> = spans.iter().map(|s| s.end.to_string()).collect();
    // `sum` of bigint is numeric: the revenue is held to what Money holds, as SQLite's
    // figure would be, and the units (at most 10,000 an order) fit.
    let sql = "SELECT s.i, count(*), sum(o.quantity)::bigint,
                      LEAST(sum(coalesce(o.unit_price_cents, 0) * o.quantity), 9223372036854775807)::bigint
               FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS s (start_at, end_at, i)
               JOIN orders AS o ON o.completed_at >= s.start_at AND o.completed_at < s.end_at
               WHERE o.completed_at IS NOT NULL
               GROUP BY s.i";
    let rows = c.query(&c.prepare_cached(sql).await.map_err(pg)?, &[&starts, &ends]).await.map_err(pg)?;
    let totals = rows
        .iter()
        .map(|r| {
            // WITH ORDINALITY counts from 1.
            let span = usize::try_from(col::<i64>(r, 0)? - 1).map_err(Error::internal)?;
            let day = spans.get(span).ok_or_else(|| Error::internal(format!("no span {span}")))?.day;
            Ok(SpanTotals { day, orders: col(r, 1)?, units: col(r, 2)?, revenue_cents: col(r, 3)? })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(sales_days(range, totals))
}
