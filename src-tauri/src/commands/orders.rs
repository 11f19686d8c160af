use petstore::domain::{Name, NewOrder, Operation, Order, OrderFilter, OrderId, OrderPatch, Paged, PetId};
use serde::Deserialize;
use std::sync::Arc;

use tauri::{AppHandle, Runtime, State};

use super::PageQuery;
use crate::error::{CommandError, CommandResult};
use crate::input::Input;
use crate::low_stock::LowStockAlerts;
use crate::shell::Shell;

/// The Orders screen's filters: open, completed or cancelled, one pet, and the page.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrderQuery {
    #[serde(default)]
    pub pet_id: Option<PetId>,
    #[serde(default)]
    pub complete: Option<bool>,
    /// Only the cancelled orders (the Cancelled tab); without it they are left out.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default)]
    pub cancelled: Option<bool>,
    /// Part of the customer's or the pet's name; blank means no search.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default)]
    pub q: Option<String>,
    #[serde(flatten)]
    pub page: PageQuery,
}

#[tauri::command]
pub async fn list_orders(shell: State<'_, Shell>, query: Input<OrderQuery>) -> CommandResult<Paged<Order>> {
    let q = match query.0.q.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
        Some(q) => Some(Name::parse(q).map_err(CommandError::validation)?),
        None => None,
    };
    let filter = OrderFilter {
        pet_id: query.0.pet_id,
        complete: query.0.complete,
        cancelled: query.0.cancelled.unwrap_or(false),
        q,
    };
    Ok(shell.current().list_orders(filter, query.0.page.parse()?).await?)
}

/// Places an order; with `complete: true` it is a counter sale.
#[tauri::command]
pub async fn place_order<R: Runtime>(
    app: AppHandle<R>,
    shell: State<'_, Shell>,
    alerts: State<'_, Arc<LowStockAlerts>>,
    order: Input<NewOrder>,
) -> CommandResult<Order> {
    let store = shell.acting(Operation::PlaceOrder).await?;
    let placed = store.place_order(order.0).await?;
    alerts.after_sale(&app, store, placed.pet_id);
    Ok(placed)
}

/// Changes an open order's quantity or ship date, or completes it; `complete: false` on a
/// completed order reopens it (the Undo after completing).
#[tauri::command]
pub async fn update_order<R: Runtime>(
    app: AppHandle<R>,
    shell: State<'_, Shell>,
    alerts: State<'_, Arc<LowStockAlerts>>,
    id: Input<OrderId>,
    patch: Input<OrderPatch>,
) -> CommandResult<Order> {
    let store = shell.acting(Operation::ChangeOrder).await?;
    let more = patch.0.quantity.is_some();
    let order = store.update_order(id.0, patch.0).await?;
    if more {
        alerts.after_sale(&app, store, order.pet_id);
    }
    Ok(order)
}

/// Cancels an open order: its stock returns, and the order is kept (the Cancelled tab).
#[tauri::command]
pub async fn cancel_order(shell: State<'_, Shell>, id: Input<OrderId>) -> CommandResult<()> {
    shell.acting(Operation::CancelOrder).await?.cancel_order(id.0).await?;
    Ok(())
}
