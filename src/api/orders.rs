use axum::Json;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::Routes;
use super::actor::Acting;
use super::error::ApiResult;
use super::extract::{JsonBody, Params, PathId};
use super::idempotency::{Idempotency, first_outcome};
use super::paging::list_response;
use super::state::AppState;
use crate::domain::{CounterWrite, NewOrder, Operation, OrderFilter, OrderId, OrderPatch, Timestamp};
use crate::error::Error;

/// Says that an order a till accepted is queued there, not yet on its server.
const PETSTORE_SYNC: &str = "petstore-sync";

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/store/orders", list)
        .add(Method::POST, "/store/orders", place)
        .add(Method::GET, "/store/orders/{orderId}", get)
        .add(Method::PATCH, "/store/orders/{orderId}", update)
        .add(Method::DELETE, "/store/orders/{orderId}", delete)
        .add(Method::POST, "/store/orders/{orderId}/cancel", cancel)
}

async fn list(State(s): State<AppState>, uri: Uri, params: Params) -> ApiResult<Response> {
    params.allow(&["petId", "complete", "cancelled", "q", "limit", "offset"])?;
    let filter = OrderFilter {
        pet_id: params.one("petId")?,
        complete: params.one("complete")?,
        cancelled: params.one("cancelled")?.unwrap_or(false),
        q: params.one("q")?,
    };
    let page = params.page()?;
    let orders = s.engine.list_orders(filter, page).await?;
    Ok(list_response(&uri, &params, page, orders))
}

/// With an `Idempotency-Key`, a retry gets the first request's response again, refusal or
/// order, rendered by this same code so the two are identical. So do `update`, `cancel`
/// and `delete`.
async fn place(
    State(s): State<AppState>,
    key: Idempotency,
    who: Acting,
    JsonBody(new): JsonBody<NewOrder>,
) -> ApiResult<Response> {
    let shop = who.shop(&s, Operation::PlaceOrder)?;
    check_till_time("placedAt", new.placed_at, s.clock.now(), s.idempotency_window)?;
    let _turn = s.replay_turn(new.placed_at).await;
    let order = match key.in_window(&s) {
        None => shop.place_order(new).await?,
        Some((key, now)) => {
            first_outcome(shop.once(key, CounterWrite::Place(new), now).await?)?.into_order()?
        }
    };
    let location = format!("/store/orders/{}", order.id);
    // Only a till's mirror numbers orders in the provisional range: one it took while its
    // server could not be reached, queued to be sent.
    if order.id.is_provisional() {
        let headers = [("location", location), (PETSTORE_SYNC, "pending".to_owned())];
        return Ok((StatusCode::ACCEPTED, headers, Json(order)).into_response());
    }
    Ok(super::created(location, order))
}

/// How far ahead of the server's clock a till's may run: a till's clock is set by hand or
/// by a network that may be away, and a few minutes off must not refuse a sale.
const PLACED_AT_SKEW: chrono::TimeDelta = chrono::TimeDelta::minutes(2);

/// `placedAt` or `completedAt` (`what`), the moment a till says it made an order or
/// completed it, is believed within bounds: at most
/// [`PLACED_AT_SKEW`] ahead of the server's clock, and no older than twice the idempotency
/// `window`. A till sends nothing it queued longer ago than the window (it asks staff
/// instead), and a retry of an accepted request comes within the window of the first, so a
/// retry is never refused for its age where its first try was taken. It is checked, never
/// changed: the request is the idempotency key's fingerprint.
fn check_till_time(
    what: &str,
    placed_at: Option<Timestamp>,
    now: chrono::DateTime<chrono::Utc>,
    window: chrono::TimeDelta,
) -> Result<(), Error> {
    let Some(at) = placed_at.map(Timestamp::as_datetime) else { return Ok(()) };
    if at > now + PLACED_AT_SKEW {
        return Err(Error::validation(format!(
            "{what} {} is ahead of the server's clock ({}) by more than {} minutes; check the till's clock",
            Timestamp::from(at),
            Timestamp::from(now),
            PLACED_AT_SKEW.num_minutes()
        )));
    }
    if at < now - window * 2 {
        return Err(Error::validation(format!(
            "{what} {} is older than the server takes a write taken offline ({} days)",
            Timestamp::from(at),
            (window * 2).num_days()
        )));
    }
    Ok(())
}

async fn get(State(s): State<AppState>, PathId(id): PathId<OrderId>) -> ApiResult<impl IntoResponse> {
    Ok(Json(s.engine.get_order(id).await?))
}

async fn update(
    State(s): State<AppState>,
    PathId(id): PathId<OrderId>,
    key: Idempotency,
    who: Acting,
    JsonBody(patch): JsonBody<OrderPatch>,
) -> ApiResult<impl IntoResponse> {
    // Reopening a completed order needs more (`reopen_orders`): the order's plan decides
    // it, and the engine asks the actor inside the write, against the order as it is.
    let shop = who.shop(&s, Operation::ChangeOrder)?;
    if patch.completed_at.is_some() && patch.complete != Some(true) {
        return Err(
            Error::validation("completedAt goes with complete: true (when the till completed it)").into()
        );
    }
    check_till_time("completedAt", patch.completed_at, s.clock.now(), s.idempotency_window)?;
    let _turn = s.replay_turn(patch.completed_at).await;
    let order = match key.in_window(&s) {
        None => shop.update_order(id, patch).await?,
        Some((key, now)) => {
            let write = CounterWrite::Update { order: id, patch };
            first_outcome(shop.once(key, write, now).await?)?.into_order()?
        }
    };
    Ok(Json(order))
}

/// Cancels an open order and answers it, kept with `cancelledAt`: it stays readable and
/// listed (`?cancelled=true`), which `DELETE` does not leave it.
async fn cancel(
    State(s): State<AppState>,
    PathId(id): PathId<OrderId>,
    key: Idempotency,
    who: Acting,
) -> ApiResult<impl IntoResponse> {
    let shop = who.shop(&s, Operation::CancelOrder)?;
    let order = match key.in_window(&s) {
        None => shop.cancel_order(id).await?,
        Some((key, now)) => {
            first_outcome(shop.once(key, CounterWrite::Cancel(id), now).await?)?.into_order()?
        }
    };
    Ok(Json(order))
}

/// Deletes an order: a client told `204` takes it to be gone (RFC 9110), so from then on
/// the API answers `404` for it; the engine keeps its row for the shop's records.
async fn delete(
    State(s): State<AppState>,
    PathId(id): PathId<OrderId>,
    key: Idempotency,
    who: Acting,
) -> ApiResult<StatusCode> {
    let shop = who.shop(&s, Operation::DeleteOrder)?;
    match key.in_window(&s) {
        None => shop.delete_order(id).await?,
        Some((key, now)) => {
            first_outcome(shop.once(key, CounterWrite::Delete(id), now).await?)?;
        }
    }
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use serde_json::{Value, json};
    use tower::ServiceExt;

    use crate::api::AppState;
    use crate::api::permits::REPLAYS_AT_ONCE;
    use crate::domain::Timestamp;
    use crate::store::Store;

    /// A sale replayed from a till's outbox (its `placedAt` minutes old) waits for a turn
    /// while every turn is taken, and a sale made now goes past it; the replay is placed
    /// once a turn is free. Without the lane, the replay (sent first) was placed first, and
    /// after an outage a till that stayed online waited behind thousands of them.
    #[tokio::test]
    async fn a_sale_made_now_goes_past_replays_waiting_for_a_turn() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn crate::engine::ShopDatabase> =
            Arc::new(Store::open(dir.path().join("o.db")).unwrap());
        let state = AppState::for_tests(store.clone());
        let app = crate::api::service(state.clone(), Duration::from_secs(30));
        let post = |path: &str, body: Value, key: Option<&str>| {
            let mut request = Request::post(path)
                .header("host", "localhost")
                .header("authorization", "Bearer k")
                .header("content-type", "application/json");
            if let Some(key) = key {
                request = request.header("idempotency-key", key);
            }
            app.clone().oneshot(request.body(Body::from(body.to_string())).unwrap())
        };
        let pet = store.create_pet(serde_json::from_value(json!({ "name": "Rex" })).unwrap()).await.unwrap();
        store
            .set_inventory(pet.id, serde_json::from_value(json!({ "quantity": 10 })).unwrap())
            .await
            .unwrap();
        let pet_id = pet.id.get();

        let made_offline = Timestamp::from(chrono::Utc::now() - chrono::TimeDelta::minutes(5));
        let mut turns = Vec::new();
        for _ in 0..REPLAYS_AT_ONCE {
            turns.push(state.replay_turn(Some(made_offline)).await.expect("an old placedAt takes a turn"));
        }
        let replay = json!({ "petId": pet_id, "complete": true, "placedAt": made_offline });
        let replayed = tokio::spawn(post("/store/orders", replay, Some("outbox-1")));
        // Given the time to reach the store, were it not held back.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = tokio::time::timeout(
            Duration::from_secs(10),
            post("/store/orders", json!({ "petId": pet_id }), None),
        )
        .await
        .expect("a sale made now does not wait for the replays' turns")
        .unwrap();
        assert_eq!(now.status(), StatusCode::CREATED);
        assert!(!replayed.is_finished(), "the replay waits while every turn is taken");
        let orders = || store.list_orders(Default::default(), crate::domain::Page::new(100, 0).unwrap());
        let placed = orders().await.unwrap();
        assert_eq!(placed.total, 1, "only the sale made now is placed: {placed:?}");

        turns.pop();
        let replayed =
            tokio::time::timeout(Duration::from_secs(10), replayed).await.unwrap().unwrap().unwrap();
        assert_eq!(replayed.status(), StatusCode::CREATED, "placed once a turn is free");
        assert_eq!(orders().await.unwrap().total, 2);
    }
}
