//! The shop's settings: one row once saved; until then the defaults.

use rusqlite::{Connection, OptionalExtension, params};

use crate::domain::{
    Completed, Currency, DayRange, LowStockBelow, Name, SalesDay, ShopSettings, TimeZone, sales_days,
};
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
        Some((name, currency, zone, low)) => parsed(&name, &currency, &zone, low),
    }
}

/// Settings as stored (the columns' own checks keep them close to valid; a time zone this
/// Petstore's database does not know is an internal error, not a shop without settings).
pub(crate) fn parsed(name: &str, currency: &str, zone: &str, low: i64) -> Result<ShopSettings> {
    Ok(ShopSettings {
        shop_name: Name::parse(name).map_err(Error::internal)?,
        currency: Currency::parse(currency).map_err(Error::internal)?,
        time_zone: TimeZone::parse(zone).map_err(Error::internal)?,
        low_stock_below: LowStockBelow::try_from(low).map_err(Error::internal)?,
    })
}

/// The sales of `range`, its days counted in the shop's time zone.
pub(super) fn sales_report(conn: &Connection, range: DayRange) -> Result<Vec<SalesDay>> {
    let zone = get(conn)?.time_zone;
    let (start, end) = range.instants(zone);
    let mut statement = conn.prepare_cached(
        "SELECT completed_at, quantity, unit_price_cents FROM orders WHERE completed_at >= ?1 AND completed_at < ?2",
    )?;
    let rows = statement.query_map(params![start, end], |r| {
        Ok(Completed { at: r.get(0)?, quantity: r.get(1)?, unit_price_cents: r.get(2)? })
    })?;
    let completed = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(sales_days(range, zone, completed))
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
