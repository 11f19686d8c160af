use axum::Json;
use axum::extract::State;
use axum::http::{Method, Uri};
use axum::response::{IntoResponse, Response};

use super::Routes;
use super::actor::Acting;
use super::error::ApiResult;
use super::extract::{JsonBody, Params, PathId};
use super::idempotency::{Idempotency, first_outcome};
use super::paging::list_response;
use super::state::AppState;
use serde::Serialize;

use crate::domain::{
    CounterWrite, InventoryFilter, InventoryUpdate, NewInventoryAdjustment, Operation, Page, Paged, PetId,
};
use crate::error::Result;

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/store/inventory", list)
        .add(Method::GET, "/store/inventory/{petId}", get)
        .add(Method::PUT, "/store/inventory/{petId}", set)
        .add(Method::POST, "/store/inventory/{petId}/adjustments", adjust)
        .add(Method::GET, "/store/inventory/{petId}/adjustments", adjustments)
        .add(Method::GET, "/store/inventory/{petId}/history", history)
}

async fn list(State(s): State<AppState>, uri: Uri, params: Params) -> ApiResult<Response> {
    params.allow(&["status", "belowQuantity", "limit", "offset"])?;
    let filter =
        InventoryFilter { statuses: params.many("status")?, below_quantity: params.one("belowQuantity")? };
    let page = params.page()?;
    let items = s.engine.list_inventory(filter, page).await?;
    Ok(list_response(&uri, &params, page, items))
}

async fn get(State(s): State<AppState>, PathId(pet): PathId<PetId>) -> ApiResult<impl IntoResponse> {
    Ok(Json(s.engine.get_inventory(pet).await?))
}

async fn set(
    State(s): State<AppState>,
    PathId(pet): PathId<PetId>,
    who: Acting,
    JsonBody(update): JsonBody<InventoryUpdate>,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(who.shop(&s, Operation::SetStockCount)?.set_inventory(pet, update).await?))
}

/// With an `Idempotency-Key`, a retry gets the first response again and adjusts nothing.
async fn adjust(
    State(s): State<AppState>,
    PathId(pet): PathId<PetId>,
    key: Idempotency,
    who: Acting,
    JsonBody(adjustment): JsonBody<NewInventoryAdjustment>,
) -> ApiResult<impl IntoResponse> {
    let shop = who.shop(&s, Operation::AdjustStock)?;
    let item = match key.in_window(&s) {
        None => shop.adjust_inventory(pet, adjustment).await?,
        Some((key, now)) => {
            let write = CounterWrite::Adjust { pet, adjustment };
            first_outcome(shop.once(key, write, now).await?)?.into_item()?
        }
    };
    Ok(Json(item))
}

async fn adjustments(
    State(s): State<AppState>,
    uri: Uri,
    PathId(pet): PathId<PetId>,
    params: Params,
) -> ApiResult<Response> {
    of_one_pet(&uri, &params, |page| s.engine.list_adjustments(pet, page)).await
}

async fn history(
    State(s): State<AppState>,
    uri: Uri,
    PathId(pet): PathId<PetId>,
    params: Params,
) -> ApiResult<Response> {
    of_one_pet(&uri, &params, |page| s.engine.stock_history(pet, page)).await
}

/// A page of one pet's list (its audit trail, its history), which takes `limit` and
/// `offset` only.
async fn of_one_pet<T: Serialize, F: Future<Output = Result<Paged<T>>>>(
    uri: &Uri,
    params: &Params,
    list: impl FnOnce(Page) -> F,
) -> ApiResult<Response> {
    params.allow(&["limit", "offset"])?;
    let page = params.page()?;
    Ok(list_response(uri, params, page, list(page).await?))
}
