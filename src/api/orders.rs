use axum::Json;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::Routes;
use super::error::ApiResult;
use super::extract::{JsonBody, Params, PathId};
use super::idempotency::Idempotency;
use super::paging::list_response;
use super::state::AppState;
use crate::domain::{NewOrder, OrderFilter, OrderId, OrderPatch};

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/store/orders", list)
        .add(Method::POST, "/store/orders", place)
        .add(Method::GET, "/store/orders/{orderId}", get)
        .add(Method::PATCH, "/store/orders/{orderId}", update)
        .add(Method::DELETE, "/store/orders/{orderId}", cancel)
}

async fn list(State(s): State<AppState>, uri: Uri, params: Params) -> ApiResult<Response> {
    params.allow(&["petId", "complete", "limit", "offset"])?;
    let filter = OrderFilter { pet_id: params.one("petId")?, complete: params.one("complete")? };
    let page = params.page()?;
    let orders = s.store.list_orders(filter, page).await?;
    Ok(list_response(&uri, &params, page, orders))
}

/// With an `Idempotency-Key`, a retry gets the first request's response again, refusal or
/// order, rendered by this same code so the two are identical.
async fn place(
    State(s): State<AppState>,
    Idempotency(key): Idempotency,
    JsonBody(new): JsonBody<NewOrder>,
) -> ApiResult<Response> {
    let order = match key {
        None => s.store.place_order(new).await?,
        Some(key) => {
            let key = key.kept_for(s.idempotency_window);
            let placed = s.store.place_order_once(key, new, s.clock.now()).await?;
            if placed.replayed {
                tracing::info!("replayed the first response to an Idempotency-Key");
            }
            placed.outcome?
        }
    };
    Ok(super::created(format!("/store/orders/{}", order.id), order))
}

async fn get(State(s): State<AppState>, PathId(id): PathId<OrderId>) -> ApiResult<impl IntoResponse> {
    Ok(Json(s.store.get_order(id).await?))
}

async fn update(
    State(s): State<AppState>,
    PathId(id): PathId<OrderId>,
    JsonBody(patch): JsonBody<OrderPatch>,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(s.store.update_order(id, patch).await?))
}

async fn cancel(State(s): State<AppState>, PathId(id): PathId<OrderId>) -> ApiResult<StatusCode> {
    s.store.cancel_order(id).await?;
    Ok(StatusCode::NO_CONTENT)
}
