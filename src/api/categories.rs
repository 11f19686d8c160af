use axum::Json;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::Routes;
use super::actor::Acting;
use super::error::ApiResult;
use super::extract::{JsonBody, Params, PathId};
use super::paging::list_response;
use super::state::AppState;
use crate::domain::{CategoryId, NewCategory, Operation};

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/categories", list)
        .add(Method::POST, "/categories", create)
        .add(Method::GET, "/categories/{categoryId}", get)
        .add(Method::PUT, "/categories/{categoryId}", replace)
        .add(Method::DELETE, "/categories/{categoryId}", delete)
}

async fn list(State(s): State<AppState>, uri: Uri, params: Params) -> ApiResult<Response> {
    params.allow(&["limit", "offset"])?;
    let page = params.page()?;
    let categories = s.engine.list_categories(page).await?;
    Ok(list_response(&uri, &params, page, categories))
}

async fn create(
    State(s): State<AppState>,
    who: Acting,
    JsonBody(new): JsonBody<NewCategory>,
) -> ApiResult<Response> {
    let category = who.shop(&s, Operation::CreateCategory)?.create_category(new).await?;
    Ok(super::created(format!("/categories/{}", category.id), category))
}

async fn get(State(s): State<AppState>, PathId(id): PathId<CategoryId>) -> ApiResult<impl IntoResponse> {
    Ok(Json(s.engine.get_category(id).await?))
}

async fn replace(
    State(s): State<AppState>,
    PathId(id): PathId<CategoryId>,
    who: Acting,
    JsonBody(new): JsonBody<NewCategory>,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(who.shop(&s, Operation::EditCategory)?.replace_category(id, new).await?))
}

async fn delete(
    State(s): State<AppState>,
    PathId(id): PathId<CategoryId>,
    who: Acting,
) -> ApiResult<StatusCode> {
    who.shop(&s, Operation::DeleteCategory)?.delete_category(id).await?;
    Ok(StatusCode::NO_CONTENT)
}
