//! The shop's settings on PostgreSQL: as `src/store/settings.rs`.

use deadpool_postgres::GenericClient;

use super::pg;
use super::types::col;
use crate::domain::ShopSettings;
use crate::error::Result;

pub(super) async fn get(c: &impl GenericClient) -> Result<ShopSettings> {
    let sql = "SELECT shop_name, currency, time_zone, low_stock_below FROM shop_settings WHERE id = 1";
    match c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[]).await.map_err(pg)? {
        None => Ok(ShopSettings::defaults()),
        Some(r) => ShopSettings::from_stored(
            &col::<String>(&r, 0)?,
            &col::<String>(&r, 1)?,
            &col::<String>(&r, 2)?,
            col(&r, 3)?,
        ),
    }
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
