//! The commands the UI calls, one module per area. Each is thin: parse its arguments,
//! call one operation of the active backend, hand back the result or the error object.

pub mod api_keys;
pub mod backup;
pub mod categories;
pub mod files;
pub mod inventory;
pub mod orders;
pub mod outbox;
pub mod pets;
pub mod settings;
pub mod shop;
pub mod staff;
pub mod startup;
pub mod updates;

use petstore::domain::Page;
use serde::Deserialize;
use tauri::{Runtime, ipc::Invoke};

use crate::error::CommandResult;

/// Paging as the UI sends it; both fields optional.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PageQuery {
    #[serde(default)]
    pub limit: Option<u32>,
    #[serde(default)]
    pub offset: Option<u32>,
}

impl PageQuery {
    pub fn parse(&self) -> CommandResult<Page> {
        Ok(Page::new(self.limit.unwrap_or(Page::DEFAULT_LIMIT), self.offset.unwrap_or(0))?)
    }
}

pub fn handler<R: Runtime>() -> impl Fn(Invoke<R>) -> bool + Send + Sync + 'static {
    tauri::generate_handler![
        pets::list_pets,
        pets::list_pet_rows,
        pets::create_pet,
        pets::get_pet,
        pets::replace_pet,
        pets::update_pet,
        pets::delete_pet,
        categories::list_categories,
        categories::create_category,
        categories::replace_category,
        categories::delete_category,
        orders::list_orders,
        orders::place_order,
        orders::update_order,
        orders::cancel_order,
        outbox::get_sync_status,
        outbox::list_outbox,
        outbox::retry_outbox_entry,
        outbox::drop_outbox_entry,
        outbox::quit_app,
        outbox::keep_app_open,
        inventory::list_inventory,
        inventory::get_inventory,
        inventory::set_inventory,
        inventory::adjust_inventory,
        inventory::list_adjustments,
        inventory::stock_history,
        settings::get_settings,
        settings::save_settings,
        settings::test_connection,
        settings::get_status,
        settings::get_local_api_key,
        settings::regenerate_local_api_key,
        settings::open_api_docs,
        settings::get_preferences,
        settings::save_preferences,
        backup::suggest_backup_path,
        backup::backup_database,
        api_keys::list_api_keys,
        api_keys::create_api_key,
        api_keys::revoke_api_key,
        api_keys::rotate_api_key,
        shop::get_shop_settings,
        shop::save_shop_settings,
        shop::sales_report,
        files::choose_file,
        files::export_csv,
        files::import_pets_csv,
        startup::startup_failure,
        startup::open_data_folder,
        startup::restart_app,
        startup::choose_backup,
        startup::restore_backup,
        updates::get_update_settings,
        updates::save_update_address,
        updates::check_for_update,
        updates::install_update,
        staff::list_staff,
        staff::current_staff,
        staff::sign_in,
        staff::sign_out,
        staff::approve,
        staff::create_staff,
        staff::update_staff,
        staff::list_activity,
        staff::export_activity_csv,
        staff::get_till_lock,
        staff::save_till_lock,
    ]
}
