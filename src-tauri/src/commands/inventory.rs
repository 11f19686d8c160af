use petstore::domain::{
    InventoryAdjustment, InventoryFilter, InventoryItem, InventoryUpdate, NewInventoryAdjustment, Operation,
    Paged, PetId, PetStatus, StockEntry,
};
use serde::Deserialize;
use tauri::State;

use super::PageQuery;
use crate::error::CommandResult;
use crate::input::Input;
use crate::shell::Shell;

/// The Inventory screen's filters; `below_quantity` is the low-stock view.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InventoryQuery {
    #[serde(default)]
    pub statuses: Vec<PetStatus>,
    #[serde(default)]
    pub below_quantity: Option<i64>,
    #[serde(flatten)]
    pub page: PageQuery,
}

#[tauri::command]
pub async fn list_inventory(
    shell: State<'_, Shell>,
    query: Input<InventoryQuery>,
) -> CommandResult<Paged<InventoryItem>> {
    let filter = InventoryFilter { statuses: query.0.statuses, below_quantity: query.0.below_quantity };
    Ok(shell.current().list_inventory(filter, query.0.page.parse()?).await?)
}

#[tauri::command]
pub async fn get_inventory(shell: State<'_, Shell>, pet_id: Input<PetId>) -> CommandResult<InventoryItem> {
    Ok(shell.current().get_inventory(pet_id.0).await?)
}

#[tauri::command]
pub async fn set_inventory(
    shell: State<'_, Shell>,
    pet_id: Input<PetId>,
    update: Input<InventoryUpdate>,
) -> CommandResult<InventoryItem> {
    Ok(shell.acting(Operation::SetStockCount).await?.set_inventory(pet_id.0, update.0).await?)
}

#[tauri::command]
pub async fn adjust_inventory(
    shell: State<'_, Shell>,
    pet_id: Input<PetId>,
    adjustment: Input<NewInventoryAdjustment>,
) -> CommandResult<InventoryItem> {
    Ok(shell.acting(Operation::AdjustStock).await?.adjust_inventory(pet_id.0, adjustment.0).await?)
}

#[tauri::command]
pub async fn list_adjustments(
    shell: State<'_, Shell>,
    pet_id: Input<PetId>,
    page: Input<Option<PageQuery>>,
) -> CommandResult<Paged<InventoryAdjustment>> {
    let page = page.0.unwrap_or_default().parse()?;
    Ok(shell.current().list_adjustments(pet_id.0, page).await?)
}

/// Everything that moved the pet's stock, newest first: the Inventory screen's history.
#[tauri::command]
pub async fn stock_history(
    shell: State<'_, Shell>,
    pet_id: Input<PetId>,
    page: Input<Option<PageQuery>>,
) -> CommandResult<Paged<StockEntry>> {
    Ok(shell.current().stock_history(pet_id.0, page.0.unwrap_or_default().parse()?).await?)
}
