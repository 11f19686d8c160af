//! Who may talk to the API: the DNS-rebinding defence (Host and Origin) for every request,
//! and Bearer keys for every operation but the service ones: the operator's keys, which may
//! do everything, and the named keys of the database, each with its scope.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;
use tower::{Layer, Service};

use super::error::ApiError;
use super::failures::retry_after_secs;
use super::state::AppState;
use crate::api_key;
use crate::error::ErrorCode;
use crate::store::{KeyMatch, Scope};

/// The Host names a request may carry, with the port the server listens on. A page on
/// another site that resolves its own name to 127.0.0.1 (DNS rebinding) still sends its
/// own name, and is refused.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    port: u16,
    names: Vec<String>,
}

impl HostPolicy {
    /// Loopback names plus `extra` names an operator configured for a server reached by a
    /// real host name.
    pub fn new(port: u16, extra: &[String]) -> Self {
        let mut names: Vec<String> = ["localhost", "127.0.0.1", "[::1]"].map(String::from).into();
        names.extend(extra.iter().map(|n| n.to_ascii_lowercase()));
        Self { port, names }
    }

    fn host_allowed(&self, host: &str) -> bool {
        let (name, port) = match host.rsplit_once(':') {
            // An IPv6 literal without a port ends in `]`, not in a port number.
            Some((name, port)) if !port.contains(']') => (name, port.parse::<u16>().ok()),
            _ => (host, Some(80)),
        };
        port == Some(self.port) && self.names.iter().any(|allowed| allowed.eq_ignore_ascii_case(name))
    }

    /// A browser sends `Origin`; only pages served by this very server (its docs page) may
    /// call it. Tools like curl send none and pass.
    fn origin_allowed(&self, origin: &str) -> bool {
        let Some(authority) = origin.strip_prefix("http://") else { return false };
        self.host_allowed(authority)
    }
}

/// Refuses a request whose Host is not this server's, or which a page of another web origin
/// sent. Applied to every request by the edge middleware (`middleware.rs`).
pub fn check_host_and_origin(policy: &HostPolicy, headers: &HeaderMap) -> Result<(), ApiError> {
    let forbidden = |message: String| ApiError::new(ErrorCode::Forbidden, message);
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    match host {
        Some(host) if policy.host_allowed(host) => {}
        Some(host) => return Err(forbidden(format!("Host {host:?} is not allowed on this server"))),
        None => return Err(forbidden("the request has no Host header".into())),
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !policy.origin_allowed(origin) {
            return Err(forbidden(format!("requests from the web origin {origin:?} are not allowed")));
        }
    }
    Ok(())
}

/// The operator's keys (the key file or `PETSTORE_API_KEY`, and the desktop app's own key),
/// kept only as SHA-256 hashes. They may do everything; named keys live in the database.
#[derive(Clone)]
pub struct KeyRing {
    hashes: Arc<Vec<[u8; 32]>>,
}

impl KeyRing {
    pub fn from_secrets<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        Self { hashes: Arc::new(secrets.into_iter().map(api_key::hash).collect()) }
    }

    /// Compares the hash of a presented key against every key in constant time, so timing
    /// says nothing about how close a guess came or which key it resembled.
    pub fn accepts(&self, presented: &[u8; 32]) -> bool {
        self.hashes.iter().fold(subtle::Choice::from(0), |found, key| found | key.ct_eq(presented)).into()
    }
}

/// Query parameter names that would carry a key in a URL, where it ends up in logs and
/// browser history. They are refused outright, never tried.
const KEY_PARAMS: &[&str] = &["api_key", "apikey", "key", "access_token", "token"];

/// Who sent a request with a named key, once it is known.
struct Holder {
    name: String,
    scope: Scope,
}

enum Refusal {
    /// A key in the URL: refused without being tried, so it is no guess and is not counted
    /// (the request may carry a right key in its header too).
    InUrl(&'static str),
    /// No key at all: not a guess, so not counted, but refused like one while the client
    /// is being slowed down.
    NoKey(&'static str),
    /// A key that is not (or no longer) valid.
    WrongKey(&'static str),
    /// A valid key whose scope does not allow the request.
    ReadOnly(Holder),
    Failed(crate::Error),
}

/// The one place that decides whether a request may run: its key must be valid, a `read`
/// key may only read, and a client guessing keys is slowed down. A layer for the routes
/// that need a key (axum's `route_layer`), so that an unknown path stays a 404 and the key
/// is checked before any parameter is parsed.
///
/// A hand-written service rather than `from_fn`, which boxed and cloned the routes below it
/// for every request: an operator's key (the desktop app's, an integration's) is checked in
/// memory and the route called at once; only a named key waits for the database.
#[derive(Clone)]
pub struct RequireKey(pub AppState);

impl<S> Layer<S> for RequireKey {
    type Service = KeyCheck<S>;

    fn layer(&self, inner: S) -> KeyCheck<S> {
        KeyCheck { inner, state: self.0.clone() }
    }
}

#[derive(Clone)]
pub struct KeyCheck<S> {
    inner: S,
    state: AppState,
}

impl<S> Service<Request> for KeyCheck<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = Infallible;
    type Future = KeyFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let presented = match presented_key(&req) {
            Ok(key) => api_key::hash(key),
            Err(refusal) => return KeyFuture::Ready { response: Some(refuse(&self.state, &req, refusal)) },
        };
        if self.state.keys.accepts(&presented) {
            return KeyFuture::Pass { future: self.inner.call(req) };
        }
        // The service that was made ready answers the request; a clone takes its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let state = self.state.clone();
        KeyFuture::LookUp {
            future: Box::pin(async move {
                let refusal = match find_named(&state, presented).await {
                    Ok(holder) if holder.scope.can_write() || is_read(req.method()) => {
                        return inner.call(req).await.unwrap_or_else(|never| match never {});
                    }
                    Ok(holder) => Refusal::ReadOnly(holder),
                    Err(refusal) => refusal,
                };
                refuse(&state, &req, refusal)
            }),
        }
    }
}

pin_project_lite::pin_project! {
    /// The answer of [`KeyCheck`]: the route's own future when the key was checked in
    /// memory, a refusal, or the database lookup of a named key followed by the route.
    #[project = KeyFutureProj]
    pub enum KeyFuture<F> {
        Pass { #[pin] future: F },
        Ready { response: Option<Response> },
        LookUp { future: Pin<Box<dyn Future<Output = Response> + Send>> },
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for KeyFuture<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            KeyFutureProj::Pass { future } => future.poll(cx),
            KeyFutureProj::Ready { response } => {
                Poll::Ready(Ok(response.take().expect("a KeyFuture polled after it finished")))
            }
            KeyFutureProj::LookUp { future } => future.as_mut().poll(cx).map(Ok),
        }
    }
}

/// The answer to a request whose key does not let it run.
fn refuse(state: &AppState, req: &Request, refusal: Refusal) -> Response {
    let client = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED), |info| info.0.ip());
    let unauthorized = |message: &str| ApiError::new(ErrorCode::Unauthorized, message).into_response();
    match refusal {
        Refusal::InUrl(message) => unauthorized(message),
        Refusal::NoKey(message) => match state.failures.blocked(client, state.clock.now()) {
            Some(wait) => too_many(wait),
            None => unauthorized(message),
        },
        Refusal::WrongKey(message) => match state.failures.record(client, state.clock.now()) {
            Some(wait) => too_many(wait),
            None => unauthorized(message),
        },
        Refusal::ReadOnly(holder) => ApiError::new(
            ErrorCode::Forbidden,
            format!(
                "the API key {:?} has the {} scope and may only call GET operations; {} needs a write key",
                holder.name,
                holder.scope,
                req.method()
            ),
        )
        .into_response(),
        Refusal::Failed(error) => ApiError(error).into_response(),
    }
}

fn is_read(method: &Method) -> bool {
    method == Method::GET || method == Method::HEAD
}

/// The key a request carries, refusing one in the URL.
fn presented_key(req: &Request) -> Result<&str, Refusal> {
    let query = req.uri().query().unwrap_or("");
    if url::form_urlencoded::parse(query.as_bytes()).any(|(name, _)| KEY_PARAMS.contains(&name.as_ref())) {
        return Err(Refusal::InUrl("API keys are not accepted in the URL; send Authorization: Bearer <key>"));
    }
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
        .ok_or(Refusal::NoKey("this operation needs an API key: send Authorization: Bearer <key>"))
}

/// A named key of the database, by the hash of the presented key.
async fn find_named(state: &AppState, presented: [u8; 32]) -> Result<Holder, Refusal> {
    match state.store.find_key(presented).await.map_err(Refusal::Failed)? {
        KeyMatch::Active(key) => {
            tracing::debug!(key = %key.name, scope = %key.scope, "authenticated with a named key");
            Ok(Holder { name: key.name, scope: key.scope })
        }
        KeyMatch::Revoked { name } => {
            tracing::info!(key = %name, "refused a request with the revoked API key");
            Err(Refusal::WrongKey("the API key was revoked"))
        }
        KeyMatch::Unknown => Err(Refusal::WrongKey("the API key is not valid")),
    }
}

fn too_many(wait: std::time::Duration) -> Response {
    let secs = retry_after_secs(wait);
    let message = format!(
        "too many failed authentications from this address; requests without a valid API key \
         are refused for {secs} s more"
    );
    let mut response = ApiError::new(ErrorCode::RateLimited, message).into_response();
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_on_the_right_port_pass() {
        let policy = HostPolicy::new(8787, &[]);
        assert!(policy.host_allowed("127.0.0.1:8787"));
        assert!(policy.host_allowed("LOCALHOST:8787"));
        assert!(policy.host_allowed("[::1]:8787"));
        assert!(!policy.host_allowed("127.0.0.1:9999"));
        assert!(!policy.host_allowed("evil.example:8787"));
        assert!(!policy.host_allowed("localhost"));
        assert!(HostPolicy::new(80, &[]).host_allowed("localhost"));
        assert!(HostPolicy::new(8787, &["shop.lan".into()]).host_allowed("shop.lan:8787"));
    }

    #[test]
    fn only_the_servers_own_origin_passes() {
        let policy = HostPolicy::new(8787, &[]);
        assert!(policy.origin_allowed("http://127.0.0.1:8787"));
        assert!(!policy.origin_allowed("http://evil.example"));
        assert!(!policy.origin_allowed("null"));
    }

    #[test]
    fn keys_are_matched_exactly() {
        let ring = KeyRing::from_secrets(["one", "two"]);
        let accepts = |key| ring.accepts(&api_key::hash(key));
        assert!(accepts("two"));
        assert!(!accepts("tw"));
        assert!(!accepts(""));
    }
}
