//! The shop's settings on PostgreSQL: as `src/store/settings.rs`.

use deadpool_postgres::GenericClient;

use super::pg;
use super::types::col;
use crate::domain::{Completed, DayRange, SalesDay, ShopSettings, sales_days};
use crate::error::Result;

pub(super) async fn get(c: &impl GenericClient) -> Result<ShopSettings> {
    let sql = "SELECT shop_name, currency, time_zone, low_stock_below FROM shop_settings WHERE id = 1";
    match c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[]).await.map_err(pg)? {
        None => Ok(ShopSettings::defaults()),
        Some(r) => crate::store::settings_parsed(
            &col::<String>(&r, 0)?,
            &col::<String>(&r, 1)?,
            &col::<String>(&r, 2)?,
            col(&r, 3)?,
        ),
    }
}

/// The sales of `range`, its days counted in the shop's time zone.
pub(super) async fn sales_report(c: &impl GenericClient, range: DayRange) -> Result<Vec<SalesDay>> {
    let zone = get(c).await?.time_zone;
    let (start, end) = range.instants(zone);
    let sql = "SELECT completed_at, quantity, unit_price_cents FROM orders WHERE completed_at >= $1 AND completed_at < $2";
    let rows = c
        .query(&c.prepare_cached(sql).await.map_err(pg)?, &[&start.to_string(), &end.to_string()])
        .await
        .map_err(pg)?;
    let completed = rows
        .iter()
        .map(|r| Ok(Completed { at: col(r, 0)?, quantity: col(r, 1)?, unit_price_cents: col(r, 2)? }))
        .collect::<Result<Vec<_>>>()?;
    Ok(sales_days(range, zone, completed))
}

pub(super) async fn put(c: &impl GenericClient, settings: &ShopSettings) -> Result<ShopSettings> {
    let sql = "INSERT INTO shop_settings (id, shop_name, currency, time_zone, low_stock_below) VALUES (1, $1, $2, $3, $4)
               ON CONFLICT (id) DO UPDATE SET shop_name = excluded.shop_name, currency = excluded.currency,
                  time_zone = excluded.time_zone, low_stock_below = excluded.low_stock_below";
    c.execute(
        &c.prepare_cached(sql).await.map_err(pg)?,
        &[
            &settings.shop_name.as_str(),
            &settings.currency.as_str(),
            &settings.time_zone.to_string(),
            &settings.low_stock_below.get(),
        ],
    )
    .await
    .map_err(pg)?;
    Ok(settings.clone())
}
