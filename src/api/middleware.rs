//! The layers every request passes, outermost first: panic catching, request ids,
//! tracing, the Host/Origin check, the deprecation headers, a timeout, reading the body
//! and the body limit.
//! Whatever the framework itself refuses (unknown route, wrong method, timeout, oversize
//! body) is rewritten into the contract's Error object on the way out.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use tower::ServiceBuilder;
use tower_http::LatencyUnit;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

use super::error::ApiError;
use super::extract::{BODY_LIMIT, too_large};
use super::state::AppState;
use super::{access, deprecation};
use crate::error::{Error, ErrorCode};

static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

pub fn apply(router: Router<AppState>, state: AppState, timeout: Duration) -> Router<AppState> {
    router.layer(
        ServiceBuilder::new()
            .layer(CatchPanicLayer::custom(|_| {
                ApiError(Error::internal("a request handler panicked")).into_response()
            }))
            .layer(SetRequestIdLayer::new(X_REQUEST_ID.clone(), RequestIds::new()))
            .layer(
                TraceLayer::new_for_http()
                    // The span and a line per answered request are an access log: on demand
                    // (RUST_LOG=debug), not by default, where the line cost a tenth of a busy
                    // server's time and the span (its fields formatted for every request)
                    // another tenth. Server errors are logged at ERROR by `errors_as_json`,
                    // with the request id, whatever the level.
                    .make_span_with(|req: &Request| {
                        // The path only: a query string could hold something a client should not
                        // have put there, and logs must never carry a key.
                        tracing::debug_span!("request", id = request_id(req), method = %req.method(), path = req.uri().path())
                    })
                    .on_request(())
                    .on_response(
                        DefaultOnResponse::new().level(Level::DEBUG).latency_unit(LatencyUnit::Micros),
                    )
                    .on_failure(()),
            )
            .layer(PropagateRequestIdLayer::new(X_REQUEST_ID.clone()))
            .layer(from_fn_with_state(Edge { state, timeout }, edge))
            .layer(DefaultBodyLimit::max(BODY_LIMIT)),
    )
}

/// What the edge middleware needs.
#[derive(Clone)]
struct Edge {
    state: AppState,
    timeout: Duration,
}

/// The contract's own layers, outermost first: framework errors as the Error object, the
/// Host/Origin check, the deprecation headers, the timeout, and reading the body first.
/// One `from_fn`, not four and a timeout layer: each `from_fn` boxes its future and clones
/// the whole stack inside it for every request, which cost a tenth of a `GET /pets/{id}`.
async fn edge(State(edge): State<Edge>, req: Request, next: Next) -> Response {
    let Edge { state, timeout } = edge;
    errors_as_json(req, |req| async move {
        if let Err(refusal) = access::check_host_and_origin(&state.hosts, req.headers()) {
            return refusal.into_response();
        }
        let deprecated = deprecation::target(&req);
        let retired = deprecated.as_deref().and_then(|pet| deprecation::retired(&state.clock, pet));
        let mut response = match retired {
            Some(gone) => gone,
            None => tokio::time::timeout(timeout, read_body_first(req, next)).await.unwrap_or_else(|_| {
                ApiError::new(ErrorCode::RequestTimeout, "the request took too long and was abandoned")
                    .into_response()
            }),
        };
        if let Some(pet) = deprecated {
            deprecation::add_headers(response.headers_mut(), &pet);
        }
        response
    })
    .await
}

fn request_id(req: &Request) -> &str {
    req.headers().get(&X_REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-")
}

/// Request ids: a random prefix per server and a counter. They tell requests apart in the
/// log and across restarts as well as a random UUID would, without asking the kernel for
/// randomness on every request (a system call, about a hundredth of a cheap request).
#[derive(Clone)]
struct RequestIds {
    prefix: u64,
    next: Arc<AtomicU64>,
}

impl RequestIds {
    fn new() -> Self {
        Self { prefix: fastrand::u64(..), next: Arc::new(AtomicU64::new(1)) }
    }
}

impl MakeRequestId for RequestIds {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = format!("{:016x}-{n:012x}", self.prefix);
        // The header value takes the string's bytes as they are, without a copy.
        let value = HeaderValue::from_maybe_shared(Bytes::from(id));
        Some(RequestId::new(value.expect("hex digits are a valid header value")))
    }
}

/// How much of a request body is read at most. Beyond it the connection is cut.
const DRAIN_LIMIT: usize = 1024 * 1024;

/// Reads the whole request body before anything can answer, keeping only what the body
/// limit can use (one byte past it, so an oversized body still gets its 413). hyper closes
/// a connection whose request body was left unread, and a client still sending it then
/// sees a reset ("broken pipe") instead of the answer: a 401 for an upload with a wrong
/// key, a 400 for a bad id, a 415, a 413. The edge's timeout bounds the reading.
async fn read_body_first(req: Request, next: Next) -> Response {
    let (parts, mut body) = req.into_parts();
    if body.is_end_stream() {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let mut kept = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let Ok(frame) = frame else {
            // The client broke off; nobody will read the answer.
            return ApiError::new(ErrorCode::InvalidJson, "the request body broke off").into_response();
        };
        let Ok(data) = frame.into_data() else { continue };
        seen = seen.saturating_add(data.len());
        let room = (BODY_LIMIT + 1).saturating_sub(kept.len());
        kept.extend_from_slice(&data[..data.len().min(room)]);
        if seen > DRAIN_LIMIT {
            break;
        }
    }
    next.run(Request::from_parts(parts, Body::from(kept))).await
}

/// Gives framework-made error responses (which have no JSON body) the Error object,
/// keeping their status and headers such as `Allow`.
async fn errors_as_json<F, Fut>(req: Request, inner: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    // Clones that share their bytes, kept for the rare answer that needs them.
    let method = req.method().clone();
    let uri = req.uri().clone();
    let id = request_id(&req).to_owned();
    let response = crate::error::REQUEST_ID.scope(id.clone(), inner(req)).await;
    let status = response.status();
    let path = uri.path();
    if status.is_server_error() {
        tracing::error!(id, %method, path, status = status.as_u16(), "request failed");
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let error = match status {
        StatusCode::NOT_FOUND => ApiError::new(ErrorCode::NotFound, format!("no route for {method} {path}")),
        StatusCode::METHOD_NOT_ALLOWED => {
            let allow = response.headers().get(header::ALLOW).and_then(|v| v.to_str().ok()).unwrap_or("");
            ApiError::new(
                ErrorCode::MethodNotAllowed,
                format!("{method} is not allowed on {path}; allowed: {allow}"),
            )
        }
        StatusCode::PAYLOAD_TOO_LARGE => too_large(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            ApiError::new(ErrorCode::UnsupportedMediaType, "the request body must be application/json")
        }
        s if s.is_client_error() => {
            ApiError::new(ErrorCode::InvalidParameter, format!("the request was refused ({s})"))
        }
        _ => ApiError(Error::internal(format!("{method} {path} failed with {status}"))),
    };
    let (mut parts, _) = response.into_parts();
    let replacement = error.into_response();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.extend(replacement.headers().clone());
    let (_, body) = replacement.into_parts();
    Response::from_parts(parts, Body::new(body))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::routing::get;
    use tower::ServiceExt;

    use super::*;
    use crate::api::{HostPolicy, KeyRing, Shared};
    use crate::clock::Clock;
    use crate::store::Store;

    /// The real middleware around three misbehaving handlers.
    fn app(dir: &tempfile::TempDir) -> Router {
        let state = AppState::new(Shared {
            store: Store::open(dir.path().join("m.db")).unwrap(),
            keys: KeyRing::from_secrets(["k"]),
            hosts: Arc::new(HostPolicy::new(80, &[])),
            clock: Clock::system(),
            failures: Default::default(),
        });
        let routes = Router::new()
            .route("/slow", get(|| async { tokio::time::sleep(Duration::from_secs(5)).await }))
            .route("/panic", get(panics))
            .route(
                "/fails",
                get(|| async { Err::<(), _>(ApiError(Error::internal("the disk is on fire"))) }),
            );
        apply(routes, state.clone(), Duration::from_millis(50)).with_state(state)
    }

    async fn panics() -> StatusCode {
        panic!("a bug")
    }

    /// Log lines, collected for a test to read.
    #[derive(Clone, Default)]
    struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Logs {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_server_error_is_logged_with_its_request_id_and_detail() {
        let logs = Logs::default();
        let sink = logs.clone();
        let subscriber =
            tracing_subscriber::fmt().with_ansi(false).with_writer(move || sink.clone()).finish();
        let _default = tracing::subscriber::set_default(subscriber);

        let dir = tempfile::tempdir().unwrap();
        let request = Request::get("/fails").header("host", "localhost").body(Body::empty()).unwrap();
        let response = app(&dir).oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let id = response.headers()[&X_REQUEST_ID].to_str().unwrap().to_owned();

        let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
        let detail = logs.lines().find(|l| l.contains("the disk is on fire")).expect("the detail is logged");
        assert!(detail.contains(&id), "the detail names the request {id}: {detail}");
        let failed = logs.lines().find(|l| l.contains("request failed")).expect("the failure is logged");
        assert!(failed.contains(&id) && failed.contains("/fails") && failed.contains("500"), "{failed}");
    }

    async fn call(app: Router, path: &str) -> (StatusCode, serde_json::Value) {
        let request = Request::get(path).header("host", "localhost").body(Body::empty()).unwrap();
        let response = app.oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn a_request_that_takes_too_long_is_a_408_error_object() {
        let dir = tempfile::tempdir().unwrap();
        let (status, body) = call(app(&dir), "/slow").await;
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
        assert_eq!(body["code"], "request_timeout");
        assert_eq!(body["status"], 408);
    }

    #[tokio::test]
    async fn a_panicking_handler_is_a_500_error_object_without_details() {
        let dir = tempfile::tempdir().unwrap();
        let (status, body) = call(app(&dir), "/panic").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["code"], "internal");
        assert!(!body["message"].as_str().unwrap().contains("a bug"));
    }
}
