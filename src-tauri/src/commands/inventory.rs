use petstore::domain::{
    InventoryAdjustment, InventoryFilter, InventoryItem, InventoryUpdate, NewInventoryAdjustment, Paged,
    PetId, PetStatus,
};
use serde::Deserialize;
use tauri::State;

use super::PageQuery;
use crate::error::CommandResult;
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
    query: InventoryQuery,
) -> CommandResult<Paged<InventoryItem>> {
    let filter = InventoryFilter { statuses: query.statuses, below_quantity: query.below_quantity };
    Ok(shell.current().list_inventory(filter, query.page.parse()?).await?)
}

#[tauri::command]
pub async fn get_inventory(shell: State<'_, Shell>, pet_id: PetId) -> CommandResult<InventoryItem> {
    Ok(shell.current().get_inventory(pet_id).await?)
}

#[tauri::command]
pub async fn set_inventory(
    shell: State<'_, Shell>,
    pet_id: PetId,
    update: InventoryUpdate,
) -> CommandResult<InventoryItem> {
    Ok(shell.current().set_inventory(pet_id, update).await?)
}

#[tauri::command]
pub async fn adjust_inventory(
    shell: State<'_, Shell>,
    pet_id: PetId,
    adjustment: NewInventoryAdjustment,
) -> CommandResult<InventoryItem> {
    Ok(shell.current().adjust_inventory(pet_id, adjustment).await?)
}

#[tauri::command]
pub async fn list_adjustments(
    shell: State<'_, Shell>,
    pet_id: PetId,
    page: Option<PageQuery>,
) -> CommandResult<Paged<InventoryAdjustment>> {
    let page = page.unwrap_or_default().parse()?;
    Ok(shell.current().list_adjustments(pet_id, page).await?)
}
