//! The REST API (axum). One module per resource, each adding its operations to a
//! [`Routes`] table; handlers are thin: extract, call one operation of the
//! server's `Arc<dyn Database>` (either engine, or a till's mirror), map the result.

mod access;
mod activity;
mod actor;
mod categories;
mod deprecation;
mod docs;
mod edge;
mod error;
mod exports;
mod extract;
mod failures;
mod fanout;
mod feed;
mod idempotency;
mod imports;
mod inventory;
mod orders;
mod paging;
mod permits;
mod pets;
mod reports;
mod require_key;
mod service;
mod settings;
mod staff;
mod state;
mod streams;

use std::time::Duration;

use axum::Router;
use axum::handler::Handler;
use axum::http::Method;
use axum::routing::{MethodFilter, on};

pub use access::{HostPolicy, KeyRing};
pub use deprecation::{deprecated_since, sunset};
pub use edge::{ApiService, ResponseFuture};
pub use error::ApiError;
pub use extract::{BODY_LIMIT, parse_body};
pub use failures::{FailedAuth, FailureLimit};
pub use fanout::FeedHub;
pub use require_key::{KeyPassed, KeyWatch};
pub use state::{AppState, Shared};
pub use streams::{StreamLimits, Streams};

/// One operation the router serves, as the OpenAPI document names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Operation {
    pub method: Method,
    pub path: &'static str,
}

/// A router that remembers which operations it was given, so tests can hold it against
/// the OpenAPI document in both directions.
pub(crate) struct Routes {
    router: Router<AppState>,
    operations: Vec<Operation>,
}

impl Routes {
    fn new() -> Self {
        Self { router: Router::new(), operations: Vec::new() }
    }

    pub(crate) fn add<H, T>(mut self, method: Method, path: &'static str, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        let filter = MethodFilter::try_from(method.clone()).expect("a standard HTTP method");
        self.router = self.router.route(path, on(filter, handler));
        self.operations.push(Operation { method, path });
        self
    }
}

/// Operations that need an API key.
fn protected() -> Routes {
    let routes = pets::routes(Routes::new());
    let routes = categories::routes(routes);
    let routes = orders::routes(routes);
    let routes = inventory::routes(routes);
    let routes = settings::routes(routes);
    let routes = reports::routes(routes);
    let routes = exports::routes(routes);
    let routes = imports::routes(routes);
    let routes = staff::routes(routes);
    let routes = activity::routes(routes);
    feed::routes(routes)
}

/// Every operation the API serves.
pub fn operations() -> Vec<Operation> {
    let mut all = protected().operations;
    all.extend(service::routes(Routes::new()).operations);
    all
}

/// The whole API for `state`: the routes behind the edge every request passes.
pub fn service(state: AppState, request_timeout: Duration) -> ApiService {
    let protected = protected().router.route_layer(require_key::RequireKey(state.clone()));
    let routes = protected
        .merge(service::routes(Routes::new()).router)
        .merge(docs::router())
        .fallback(service::no_route)
        .with_state(state.clone());
    ApiService::new(routes, state, request_timeout)
}

/// Room for one resource as JSON, a pet with some description: `Json` starts with 128
/// bytes, and a pet (about 190) made its buffer grow on every `GET /pets/{petId}`.
const ONE_ITEM_BYTES: usize = 256;

/// `value` as JSON, as `Json` answers it, written into a buffer sized for one resource.
fn json<T: serde::Serialize>(value: &T) -> axum::response::Response {
    use axum::http::{HeaderValue, header::CONTENT_TYPE};
    use axum::response::IntoResponse;
    let mut body = Vec::with_capacity(ONE_ITEM_BYTES);
    match serde_json::to_writer(&mut body, value) {
        Ok(()) => {
            let mut response = axum::response::Response::new(axum::body::Body::from(body));
            response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        // What `Json` does with a value that does not serialize (none of ours).
        Err(_) => axum::Json(value).into_response(),
    }
}

/// `201 Created` with `Location` and the new resource.
fn created<T: serde::Serialize>(location: String, body: T) -> axum::response::Response {
    use axum::response::IntoResponse;
    (axum::http::StatusCode::CREATED, [(axum::http::header::LOCATION, location)], axum::Json(body))
        .into_response()
}
