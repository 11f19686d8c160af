//! A system notification when a sale takes a pet below the shop's low-stock level
//! (`lowStockBelow` of the shop's settings): once per pet per day of the shop, so selling the
//! last kittens one by one all afternoon tells the clerk once. The Inventory screen's badge
//! shows the same pets for as long as they stay low.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{NaiveDate, Utc};
use petstore::domain::PetId;
use petstore::engine::Petstore;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_notification::NotificationExt;

use crate::language::Language;
use crate::settings::persist;
use crate::shell::Shell;

/// The pets told about, with the day they were.
#[derive(Debug, Default)]
pub struct LowStockAlerts {
    told: Mutex<HashMap<PetId, NaiveDate>>,
}

impl LowStockAlerts {
    /// Looks at `pet`'s stock after a sale (in the background: the sale's answer does not
    /// wait) and notifies if it is low and was not told about today.
    pub fn after_sale<R: Runtime>(
        self: &Arc<Self>,
        app: &AppHandle<R>,
        store: Arc<dyn Petstore>,
        pet: PetId,
    ) {
        let (alerts, app) = (self.clone(), app.clone());
        tauri::async_runtime::spawn(async move {
            if let Err(e) = alerts.check(&app, &*store, pet).await {
                tracing::warn!("low-stock check of pet {pet}: {e}");
            }
        });
    }

    async fn check<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        store: &dyn Petstore,
        pet: PetId,
    ) -> petstore::Result<()> {
        let settings = store.get_settings().await?;
        let item = store.get_inventory(pet).await?;
        let today = Utc::now().with_timezone(&settings.time_zone.tz()).date_naive();
        if item.quantity >= settings.low_stock_below.get() || !self.first_today(pet, today) {
            return Ok(());
        }
        let language = app_language(app);
        let body = match item.quantity {
            0 => language.out_of_stock(&item.pet_name, pet),
            n => language.stock_left(&item.pet_name, pet, n, settings.low_stock_below.get()),
        };
        let notification = app.notification().builder().title(language.low_stock_title()).body(body);
        if let Err(e) = notification.show() {
            // No notification service (a till without a desktop's): the badge still shows it.
            tracing::info!("low-stock notification not shown: {e}");
        }
        Ok(())
    }

    /// True the first time `pet` is low on `today`; remembers it.
    fn first_today(&self, pet: PetId, today: NaiveDate) -> bool {
        let mut told = self.told.lock().unwrap_or_else(|p| p.into_inner());
        told.retain(|_, day| *day == today);
        told.insert(pet, today) != Some(today)
    }
}

/// The language the window shows, read from its preferences each time: a notification is
/// rare, and a language chosen a minute ago applies at once.
fn app_language<R: Runtime>(app: &AppHandle<R>) -> Language {
    let Some(shell) = app.try_state::<Shell>() else { return Language::system() };
    persist::load_preferences(app, shell.dir()).unwrap_or_default().language.resolve()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pet_is_told_about_once_a_day() {
        let alerts = LowStockAlerts::default();
        let (rex, tom) = (PetId::try_from(1).unwrap(), PetId::try_from(2).unwrap());
        let day = NaiveDate::from_ymd_opt(2026, 11, 24).unwrap();
        assert!(alerts.first_today(rex, day));
        assert!(!alerts.first_today(rex, day), "the second sale of the day");
        assert!(alerts.first_today(tom, day), "another pet");
        assert!(alerts.first_today(rex, day.succ_opt().unwrap()), "the next day");
    }
}
