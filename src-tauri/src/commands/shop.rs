//! The counter's shop-wide commands: the shop's settings (name on receipts, currency, time
//! zone, low-stock level) and the sales report. Both go to the shop the window shows.

use chrono::NaiveDate;
use petstore::domain::{DayRange, Operation, SalesDay, ShopSettings};
use tauri::State;

use crate::error::{CommandError, CommandResult};
use crate::input::Input;
use crate::shell::Shell;

#[tauri::command]
pub async fn get_shop_settings(shell: State<'_, Shell>) -> CommandResult<ShopSettings> {
    Ok(shell.current().get_settings().await?)
}

#[tauri::command]
pub async fn save_shop_settings(
    shell: State<'_, Shell>,
    settings: Input<ShopSettings>,
) -> CommandResult<ShopSettings> {
    Ok(shell.acting(Operation::ChangeShopSettings).await?.put_settings(settings.0).await?)
}

/// A row per day from `from` to `to` (inclusive, `YYYY-MM-DD`, at most 366 days).
#[tauri::command]
pub async fn sales_report(
    shell: State<'_, Shell>,
    from: Input<NaiveDate>,
    to: Input<NaiveDate>,
) -> CommandResult<Vec<SalesDay>> {
    let range = DayRange::new(from.0, to.0).map_err(CommandError::validation)?;
    Ok(shell.current().sales_report(range).await?)
}
