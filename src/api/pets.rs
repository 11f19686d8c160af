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
use crate::domain::{NewPet, Operation, PetFilter, PetId, PetPatch};

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/pets", list)
        .add(Method::POST, "/pets", create)
        .add(Method::GET, "/pets/{petId}", get)
        .add(Method::PUT, "/pets/{petId}", replace)
        .add(Method::PATCH, "/pets/{petId}", update)
        .add(Method::DELETE, "/pets/{petId}", delete)
}

async fn list(State(s): State<AppState>, uri: Uri, params: Params) -> ApiResult<Response> {
    params.allow(&["status", "categoryId", "q", "search", "id", "sku", "sort", "limit", "offset"])?;
    let filter = PetFilter {
        statuses: params.many("status")?,
        category_id: params.one("categoryId")?,
        name_contains: params.one("q")?,
        search: params.one("search")?,
        ids: params.many("id")?,
        sku: params.one("sku")?,
        sort: params.one("sort")?.unwrap_or_default(),
    };
    let page = params.page()?;
    let pets = s.engine.list_pets(filter, page).await?;
    Ok(list_response(&uri, &params, page, pets))
}

async fn create(
    State(s): State<AppState>,
    who: Acting,
    JsonBody(new): JsonBody<NewPet>,
) -> ApiResult<Response> {
    let pet = who.shop(&s, Operation::CreatePet)?.create_pet(new).await?;
    Ok(super::created(format!("/pets/{}", pet.id), pet))
}

async fn get(State(s): State<AppState>, PathId(id): PathId<PetId>) -> ApiResult<Response> {
    Ok(super::json(&s.engine.get_pet(id).await?))
}

async fn replace(
    State(s): State<AppState>,
    PathId(id): PathId<PetId>,
    who: Acting,
    JsonBody(new): JsonBody<NewPet>,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(who.shop(&s, Operation::EditPet)?.replace_pet(id, new).await?))
}

async fn update(
    State(s): State<AppState>,
    PathId(id): PathId<PetId>,
    who: Acting,
    JsonBody(patch): JsonBody<PetPatch>,
) -> ApiResult<impl IntoResponse> {
    Ok(Json(who.shop(&s, Operation::EditPet)?.update_pet(id, patch).await?))
}

async fn delete(State(s): State<AppState>, PathId(id): PathId<PetId>, who: Acting) -> ApiResult<StatusCode> {
    who.shop(&s, Operation::DeletePet)?.delete_pet(id).await?;
    Ok(StatusCode::NO_CONTENT)
}
