//! The shop's settings: one row once saved; until then the defaults.

use rusqlite::{Connection, OptionalExtension, params};

use crate::domain::ShopSettings;
use crate::error::Result;

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
