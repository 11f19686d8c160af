//! The shop's settings: one row once saved; until then the defaults.

use rusqlite::{Connection, OptionalExtension, params};

use crate::domain::{DayRange, SalesDay, ShopSettings, SpanTotals, day_spans, sales_days};
use crate::error::{Error, Result};

pub(super) fn get(conn: &Connection) -> Result<ShopSettings> {
    let row = conn
        .prepare_cached(
            "SELECT shop_name, currency, time_zone, low_stock_below FROM shop_settings WHERE id = 1",
        )?
        .query_row([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(3)?))
        })
        .optional()?;
    match row {
        None => Ok(ShopSettings::defaults()),
        Some((name, currency, zone, low)) => ShopSettings::from_stored(&name, &currency, &zone, low),
    }
}

/// The sales of `range`, its days counted in the shop's time zone: SQLite adds up the
/// orders of each of the day's spans (`json_each` hands it the spans' ends; the partial
/// index on `completed_at` serves each span's range), so what is held is a row per span.
pub(super) fn sales_report(conn: &Connection, range: DayRange) -> Result<Vec<SalesDay>> {
    let zone = get(conn)?.time_zone;
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

pub(super) fn put(conn: &Connection, settings: &ShopSettings) -> Result<ShopSettings> {
    conn.prepare_cached(
        "INSERT INTO shop_settings (id, shop_name, currency, time_zone, low_stock_below) VALUES (1, ?1, ?2, ?3, ?4)
         ON CONFLICT (id) DO UPDATE SET shop_name = excluded.shop_name, currency = excluded.currency,
            time_zone = excluded.time_zone, low_stock_below = excluded.low_stock_below",
    )?
    .execute(params![
        settings.shop_name.as_str(),
        settings.currency.as_str(),
        settings.time_zone.to_string(),
        settings.low_stock_below.get()
    ])?;
    Ok(settings.clone())
}
