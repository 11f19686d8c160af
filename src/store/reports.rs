//! The sales report: the completed orders of each of the shop's days, added up in SQL.

use rusqlite::Connection;

use super::settings;
use crate::domain::{DayRange, SalesDay, SpanTotals, day_spans, sales_days};
use crate::error::{Error, Result};

/// The sales of `range`, its days counted in the shop's time zone: SQLite adds up the
/// orders of each of the day's spans (`json_each` hands it the spans' ends; the partial
/// index on `completed_at` serves each span's range), so what is held is a row per span.
pub(super) fn sales_report(conn: &Connection, range: DayRange) -> Result<Vec<SalesDay>> {
    let zone = settings::get(conn)?.time_zone;
    let spans = day_spans(range, zone);
    let ends: Vec<[String; 2]> = spans.iter().map(|s| [s.start.to_string(), s.end.to_string()]).collect();
    let ends = serde_json::to_string(&ends).map_err(Error::internal)?;
    // An order's revenue is at most 10,000 units at 999,999.99: a day's sum overflows (an
    // error) only past nine million such orders.
    let mut statement = conn.prepare_cached(
        "SELECT s.key, count(*), sum(o.quantity), sum(coalesce(o.unit_price_cents, 0) * o.quantity)
         FROM json_each(?1) AS s
         JOIN orders AS o ON o.completed_at >= s.value ->> 0 AND o.completed_at < s.value ->> 1
         WHERE o.completed_at IS NOT NULL
         GROUP BY s.key",
    )?;
    let totals = statement
        .query_map([ends], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .map(|row| {
            let (span, orders, units, revenue_cents) = row?;
            let day = usize::try_from(span)
                .ok()
                .and_then(|i| spans.get(i))
                .ok_or_else(|| Error::internal(format!("no span {span}")))?
                .day;
            Ok(SpanTotals { day, orders, units, revenue_cents })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(sales_days(range, totals))
}
