use axum::Json;
use axum::extract::State;
use axum::http::Method;
use axum::response::IntoResponse;

use super::Routes;
use super::actor::Acting;
use super::error::ApiResult;
use super::extract::JsonBody;
use super::state::AppState;
use crate::domain::{Operation, ShopSettings};

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/store/settings", get).add(Method::PUT, "/store/settings", put)
}

async fn get(State(s): State<AppState>) -> ApiResult<impl IntoResponse> {
    Ok(Json(s.engine.get_settings().await?))
}

async fn put(
    State(s): State<AppState>,
    who: Acting,
    JsonBody(settings): JsonBody<ShopSettings>,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(who.shop(&s, Operation::ChangeShopSettings)?.put_settings(settings).await?))
}
