//! The edge every request passes before routing, as one service: request ids, panic
//! catching, the access log, the Host/Origin check, the deprecation headers, a timeout
//! (which keeps a timed-out request's queued writes from running), the body limit, and
//! reading what is left of a body after its answer (the body itself is read by whoever needs
//! it, after the key check).
//! Whatever the framework itself refuses (unknown route, wrong method, timeout, oversize
//! body) is rewritten into the contract's Error object on the way out.
//!
//! Written by hand rather than as a stack of tower-http layers (`CatchPanic`, `SetRequestId`,
//! `Trace`, `PropagateRequestId`) and an axum `from_fn`, although the project otherwise
//! prefers a maintained library to its own code: applied to the router, each of those
//! wrapped every route, boxed its future and cloned the routes below it for every request,
//! and together they cost a tenth of a `GET /pets/{petId}` (measured with and without them).
//! Here the request is boxed once. Composed around the router instead (`ServiceBuilder`),
//! they still cost +1.7 % server CPU per request in 16 paired rounds when measured again later, and would
//! drop reading what is left of a refused request's body. docs/ARCHITECTURE.md, "Decisions", has the
//! figures.

use std::convert::Infallible;
use std::future::poll_fn;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, HttpBody};
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tower::{Layer, Service, ServiceExt};
use tracing::Instrument;

use super::error::ApiError;
use super::extract::{body_limit, too_large};
use super::state::AppState;
use super::{access, deprecation};
use crate::admission::WriteAdmission;
use crate::error::{Error, ErrorCode};

static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The whole API as one service: the edge in front of the router.
#[derive(Clone)]
pub struct ApiService {
    router: Router,
    edge: Arc<Edge>,
}

/// What the edge needs for every request.
struct Edge {
    state: AppState,
    timeout: Duration,
    ids: RequestIds,
}

/// The answer to one request, as [`ApiService`] gives it.
pub type ResponseFuture = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl ApiService {
    pub fn new(router: Router, state: AppState, timeout: Duration) -> Self {
        Self { router, edge: Arc::new(Edge { state, timeout, ids: RequestIds::new() }) }
    }

    /// Answers `req`, as [`Service::call`] does, without a clone of the service to call it
    /// on: the server calls this for every request, and the clone's counts are shared by
    /// every connection.
    pub fn answer(&self, mut req: Request) -> ResponseFuture {
        // A client's own request id is kept, so that its logs and ours can be matched.
        let id = match req.headers().get(&X_REQUEST_ID) {
            Some(id) => id.clone(),
            None => {
                let id = self.edge.ids.next();
                req.headers_mut().insert(X_REQUEST_ID.clone(), id.clone());
                id
            }
        };
        let router = self.router.clone();
        let edge = self.edge.clone();
        Box::pin(async move {
            // The span and a line per answered request are an access log: on demand
            // (RUST_LOG=debug), not by default, where they cost a fifth of a busy server's
            // time. Server errors are logged at ERROR by `errors_as_json`, with the request
            // id, whatever the level. The path only: a query string could hold something a
            // client should not have put there, and logs must never carry a key.
            let span = tracing::debug_span!(
                "request",
                id = id.to_str().unwrap_or("-"),
                method = %req.method(),
                path = req.uri().path()
            );
            let started = (!span.is_disabled()).then(Instant::now);
            let mut response =
                errors_as_json(req, &id, |req| answer(&edge, router, req)).instrument(span.clone()).await;
            if let Some(started) = started {
                span.in_scope(|| {
                    tracing::debug!(
                        status = response.status().as_u16(),
                        micros = started.elapsed().as_micros() as u64,
                        "answered"
                    )
                });
            }
            response.headers_mut().entry(&X_REQUEST_ID).or_insert(id);
            Ok(response)
        })
    }
}

impl Service<Request> for ApiService {
    type Response = Response;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The router is always ready; it is called by `oneshot` in `route`, which
        // asks it.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> ResponseFuture {
        self.answer(req)
    }
}

/// The contract's own checks in front of the router: the Host/Origin check, the deprecation
/// headers, the timeout, and the body limit.
async fn answer(edge: &Edge, router: Router, req: Request) -> Response {
    if let Err(refusal) = access::check_host_and_origin(&edge.state.hosts, req.headers()) {
        return refusal.into_response();
    }
    let deprecated = deprecation::target(&req);
    let retired = deprecated.as_deref().and_then(|pet| deprecation::retired(&edge.state.clock, pet));
    let mut response = match retired {
        Some(gone) => gone,
        None => within_timeout(edge.timeout, route(req, router)).await,
    };
    if let Some(pet) = deprecated {
        deprecation::add_headers(response.headers_mut(), &pet);
    }
    response
}

/// Answers `answer` if it is ready within `timeout`, else 408. A timed-out request's
/// future is dropped, but a write it sent may still be waiting in the engine (queued at
/// SQLite's writer, or for a PostgreSQL connection or row lock) and would change the shop
/// after the client was told the request failed (and a client that retries would order
/// twice). So the request runs in a [`WriteAdmission`] that either engine's writes pick up: at the timeout it is closed, no write of the request that has not begun
/// will begin, and the 408 says whether one had, in which case it may have been applied.
async fn within_timeout(timeout: Duration, answer: impl Future<Output = Response>) -> Response {
    let admission = WriteAdmission::new();
    match tokio::time::timeout(timeout, admission.clone().scope(answer)).await {
        Ok(response) => response,
        Err(_) => {
            let consequence = if admission.close() {
                "the change may have been applied; check before retrying"
            } else {
                "nothing was changed"
            };
            ApiError::new(
                ErrorCode::RequestTimeout,
                format!("the request took too long and was abandoned; {consequence}"),
            )
            .into_response()
        }
    }
}

/// Request ids: a random prefix per server and a counter. They tell requests apart in the
/// log and across restarts as well as a random UUID would, without asking the kernel for
/// randomness on every request (a system call, about a hundredth of a cheap request).
struct RequestIds {
    prefix: u64,
    next: AtomicU64,
}

impl RequestIds {
    fn new() -> Self {
        Self { prefix: fastrand::u64(..), next: AtomicU64::new(1) }
    }

    fn next(&self) -> HeaderValue {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        // `{prefix:016x}-{n:012x}`, written digit by digit: `format!` was a seventh of the
        // edge's own time.
        let mut id = [b'-'; 29];
        let hex = |out: &mut [u8], value: u64| {
            for (i, digit) in out.iter_mut().rev().enumerate() {
                *digit = b"0123456789abcdef"[((value >> (4 * i)) & 0xf) as usize];
            }
        };
        hex(&mut id[..16], self.prefix);
        hex(&mut id[17..], n);
        HeaderValue::from_bytes(&id).expect("hex digits are a valid header value")
    }
}

/// A handler's panic as the 500 Error object, logged with the request id (the panic hook
/// has already printed its message). The server goes on answering other requests.
async fn catch_panic(answer: impl Future<Output = Response>) -> Response {
    let mut answer = pin!(answer);
    poll_fn(|cx| {
        catch_unwind(AssertUnwindSafe(|| answer.as_mut().poll(cx))).unwrap_or_else(|_| {
            Poll::Ready(ApiError(Error::internal("a request handler panicked")).into_response())
        })
    })
    .await
}

/// Most bytes of a request body read and thrown away after its answer (see [`route`]).
/// Beyond it the connection is cut.
const DRAIN_LIMIT: usize = 1024 * 1024;

/// How long a request body is read and thrown away after its answer, at most.
const DRAIN_FOR: Duration = Duration::from_secs(10);

/// Routes `req` with its body unread: whoever needs it reads it, after the key check (the
/// routes that need a key check it before any handler runs, `require_key.rs`), and never
/// more than the route's body limit. A body declared larger than that is refused at once.
///
/// What is left of the body once the answer is ready is read after it and thrown away, up
/// to [`DRAIN_LIMIT`]: hyper closes a connection whose request body was left unread, and a
/// client still sending it then sees a reset ("broken pipe") instead of the answer (a 401
/// for an upload with a wrong key, a 400 for a bad id, a 415, a 413). Reading it first, as
/// the server once did, let anyone without a key make it hold 10 MB per connection.
async fn route(req: Request, router: Router) -> Response {
    let limit = body_limit(req.uri().path());
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let (parts, body) = req.into_parts();
    if declared.is_some_and(|length| length > limit as u64) {
        Leftover::new(body, &parts.headers, declared).drain_after_answer();
        return too_large(limit).into_response();
    }
    // The body limit's layer only marks the request for the extractors; it costs nothing.
    let router = DefaultBodyLimit::max(limit).layer(router);
    if body.is_end_stream() {
        return router.oneshot(Request::from_parts(parts, body)).await.unwrap_or_else(|never| match never {});
    }
    let leftover = Leftover::new(body, &parts.headers, declared);
    let body = Body::new(leftover.clone());
    let response =
        router.oneshot(Request::from_parts(parts, body)).await.unwrap_or_else(|never| match never {});
    leftover.drain_after_answer();
    response
}

/// A request body the router reads through, whose rest the edge can take back once the
/// answer is ready (a handler that does not read it drops it).
#[derive(Clone)]
struct Leftover(Arc<std::sync::Mutex<LeftoverBody>>);

struct LeftoverBody {
    body: Option<Body>,
    /// Whether anyone asked for its bytes yet.
    polled: bool,
    /// The client waits for a `100 Continue` before it sends the body.
    expects_continue: bool,
    /// Its `Content-Length`, if it has one.
    declared: Option<u64>,
}

impl Leftover {
    fn new(body: Body, headers: &axum::http::HeaderMap, declared: Option<u64>) -> Self {
        let expects_continue =
            headers.get(header::EXPECT).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        let body = LeftoverBody { body: Some(body), polled: false, expects_continue, declared };
        Self(Arc::new(std::sync::Mutex::new(body)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LeftoverBody> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads what is left of the body after the answer and throws it away, up to
    /// [`DRAIN_LIMIT`] bytes within [`DRAIN_FOR`]. A client that waits for `100 Continue`
    /// before sending a body nobody asked for is not asked for it: it sends nothing, and
    /// the connection closes after the answer. A body declared larger than the drain limit
    /// would be cut anyway, so none of it is read: 150 requests of 10 MB without a key grew
    /// the server by 55-66 MB while it read their first megabyte.
    fn drain_after_answer(self) {
        let mut leftover = self.lock();
        let Some(mut body) = leftover.body.take() else { return };
        let unasked = leftover.expects_continue && !leftover.polled;
        let cut_anyway = leftover.declared.is_some_and(|length| length > DRAIN_LIMIT as u64);
        if body.is_end_stream() || unasked || cut_anyway {
            return;
        }
        drop(leftover);
        tokio::spawn(async move {
            let drain = async {
                let mut seen = 0usize;
                while let Some(Ok(frame)) = poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
                    seen = seen.saturating_add(frame.data_ref().map_or(0, |d| d.len()));
                    if seen > DRAIN_LIMIT {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(DRAIN_FOR, drain).await;
        });
    }
}

impl HttpBody for Leftover {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let mut leftover = self.lock();
        leftover.polled = true;
        match leftover.body.as_mut() {
            Some(body) => Pin::new(body).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.lock().body.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.lock().body.as_ref().map(HttpBody::size_hint).unwrap_or_default()
    }
}

/// Gives framework-made error responses (which have no JSON body) the Error object,
/// keeping their status and headers such as `Allow`, and a panic the 500 Error object.
async fn errors_as_json<F, Fut>(req: Request, id: &HeaderValue, inner: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    // Clones that share their bytes, kept for the rare answer that needs them.
    let method = req.method().clone();
    let uri = req.uri().clone();
    let id = id.to_str().unwrap_or("-");
    let response = crate::error::REQUEST_ID.scope(id.to_owned(), catch_panic(inner(req))).await;
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
        StatusCode::PAYLOAD_TOO_LARGE => too_large(body_limit(path)),
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

    use std::sync::atomic::AtomicBool;

    use axum::routing::get;
    use serde_json::json;
    use tower::ServiceExt;

    use super::*;
    use crate::store::{Change, Store};

    fn state(store: &Store) -> AppState {
        AppState::for_tests(Arc::new(store.clone()))
    }

    /// The real edge around misbehaving handlers.
    fn app(dir: &tempfile::TempDir) -> ApiService {
        let store = Store::open(dir.path().join("m.db")).unwrap();
        let state = state(&store);
        let routes = Router::new()
            .route("/slow", get(|| async { tokio::time::sleep(Duration::from_secs(5)).await }))
            .route("/write-slowly", get(move || write_slowly(store.clone())))
            .route("/panic", get(panics))
            .route(
                "/fails",
                get(|| async { Err::<(), _>(ApiError(Error::internal("the disk is on fire"))) }),
            );
        ApiService::new(routes.with_state(state.clone()), state, Duration::from_millis(50))
    }

    async fn panics() -> StatusCode {
        panic!("a bug")
    }

    /// A write that begins at once and takes longer than the edge's timeout (50 ms).
    async fn write_slowly(store: Store) -> Result<(), ApiError> {
        store
            .write(Change::Pets, |_| {
                std::thread::sleep(Duration::from_millis(300));
                Ok(())
            })
            .await?;
        Ok(())
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

    /// What this thread logs from now until the guard is dropped. A test reaching a log
    /// call site while another test reached it with no subscriber lost the line now and then
    /// (tracing caches per call site whether anyone listens), so every test that reaches
    /// `Error::internal` here captures.
    fn capture_logs() -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let sink = logs.clone();
        let subscriber =
            tracing_subscriber::fmt().with_ansi(false).with_writer(move || sink.clone()).finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    #[tokio::test]
    async fn a_server_error_is_logged_with_its_request_id_and_detail() {
        let (logs, _default) = capture_logs();

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

    #[tokio::test]
    async fn every_answer_carries_a_request_id_and_a_clients_own_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let app = app(&dir);
        let get = |id: Option<&str>| {
            let request = Request::get("/fails").header("host", "localhost");
            let request = match id {
                Some(id) => request.header("x-request-id", id),
                None => request,
            };
            app.clone().oneshot(request.body(Body::empty()).unwrap())
        };
        let first = get(None).await.unwrap().headers()[&X_REQUEST_ID].clone();
        let second = get(None).await.unwrap().headers()[&X_REQUEST_ID].clone();
        assert_ne!(first, second, "each request gets its own id");
        let (prefix, n) = first.to_str().unwrap().split_once('-').expect("prefix-counter");
        assert_eq!((prefix.len(), n.len()), (16, 12), "{first:?}");
        assert!(prefix.chars().chain(n.chars()).all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        let next = second.to_str().unwrap().split_once('-').unwrap();
        assert_eq!(next.0, prefix, "one prefix per server");
        assert_eq!(u64::from_str_radix(next.1, 16).unwrap(), u64::from_str_radix(n, 16).unwrap() + 1);
        let own = get(Some("till-7-0042")).await.unwrap();
        assert_eq!(own.headers()[&X_REQUEST_ID], "till-7-0042");
    }

    async fn call(app: ApiService, path: &str) -> (StatusCode, serde_json::Value) {
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
    async fn a_write_that_began_before_the_timeout_is_a_408_saying_it_may_have_been_applied() {
        let dir = tempfile::tempdir().unwrap();
        let (status, body) = call(app(&dir), "/write-slowly").await;
        assert_eq!((status, &body["code"]), (StatusCode::REQUEST_TIMEOUT, &json!("request_timeout")));
        let message = body["message"].as_str().unwrap();
        assert!(message.contains("may have been applied; check before retrying"), "{message}");
    }

    #[tokio::test]
    async fn a_write_still_queued_at_the_timeout_is_a_408_saying_nothing_changed_and_never_runs() {
        let dir = tempfile::tempdir().unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let store = Store::open(dir.path().join("m.db")).unwrap();
        let state = state(&store);
        let routes = Router::new().route(
            "/write",
            get({
                let ran = ran.clone();
                let store = store.clone();
                move || async move {
                    store
                        .write(Change::Pets, move |_| {
                            ran.store(true, Ordering::SeqCst);
                            Ok(())
                        })
                        .await
                        .map_err(ApiError)
                }
            }),
        );
        let app = ApiService::new(routes.with_state(state.clone()), state.clone(), Duration::from_millis(50));
        // The writer is busy with work of its own for longer than the timeout.
        let busy = store.with_writer(|_| {
            std::thread::sleep(Duration::from_millis(300));
            Ok(())
        });
        let (busy, (status, body)) = tokio::join!(busy, call(app, "/write"));
        busy.unwrap();

        assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
        let message = body["message"].as_str().unwrap();
        assert!(message.ends_with("nothing was changed"), "{message}");
        store.with_writer(|_| Ok(())).await.unwrap();
        assert!(!ran.load(Ordering::SeqCst), "the write of a request that timed out ran afterwards");
    }

    #[tokio::test]
    async fn a_panicking_handler_is_a_500_error_object_without_details_logged_with_its_request_id() {
        let (logs, _default) = capture_logs();
        let dir = tempfile::tempdir().unwrap();
        let request = Request::get("/panic").header("host", "localhost").body(Body::empty()).unwrap();
        let response = app(&dir).oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let id = response.headers()[&X_REQUEST_ID].to_str().unwrap().to_owned();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["code"], "internal");
        assert!(!body["message"].as_str().unwrap().contains("a bug"));

        let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
        let line = logs.lines().find(|l| l.contains("panicked")).expect("the panic is logged");
        assert!(line.contains(&id), "the panic names the request {id}: {line}");
    }
}
