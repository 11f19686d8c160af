//! Who may talk to the API: the DNS-rebinding defence (Host and Origin) for every request,
//! and the key check for every operation but the service ones: Bearer keys, either the
//! operator's, which may do everything, or the named keys of the database, each with its
//! scope. `require_key.rs` runs the key check in front of the routes that need it;
//! `failures.rs` slows down clients that guess keys.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderMap, Method, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use subtle::{ConditionallySelectable, ConstantTimeEq};

use super::error::ApiError;
use super::failures::{FailedAuth, too_many};
use crate::api_key;
use crate::api_key::{KeyIdentity, KeyMatch, Scope};
use crate::engine::Keys;
use crate::error::ErrorCode;
use crate::idempotency;

/// The Host names a request may carry. A page on another site that resolves its own name
/// to 127.0.0.1 (DNS rebinding) still sends its own name, and is refused.
///
/// Loopback names must come with the port the server listens on. A name the operator
/// configured (`--allowed-host`) is the name clients use to reach the server, often through
/// a reverse proxy in front of several replicas: their Host carries the proxy's port (or
/// none, for 80 and 443), never the replica's, so any port passes with it.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    port: u16,
    loopback: Vec<String>,
    configured: Vec<String>,
}

impl HostPolicy {
    /// Loopback names plus `extra` names an operator configured for a server reached by a
    /// real host name.
    pub fn new(port: u16, extra: &[String]) -> Self {
        let loopback = ["localhost", "127.0.0.1", "[::1]"].map(String::from).into();
        Self { port, loopback, configured: extra.iter().map(|n| n.to_ascii_lowercase()).collect() }
    }

    fn host_allowed(&self, host: &str) -> bool {
        let (name, port) = split_port(host);
        let named = |names: &[String]| names.iter().any(|allowed| allowed.eq_ignore_ascii_case(name));
        named(&self.configured) || (port == Some(self.port) && named(&self.loopback))
    }

    /// A browser sends `Origin`; only pages served by this very server (its docs page) may
    /// call it, over plain http on loopback, or under a configured name (https too, as a
    /// proxy that ends TLS serves it). Tools like curl send none and pass.
    fn origin_allowed(&self, origin: &str) -> bool {
        if let Some(authority) = origin.strip_prefix("http://") {
            return self.host_allowed(authority);
        }
        let Some(authority) = origin.strip_prefix("https://") else { return false };
        let (name, _) = split_port(authority);
        self.configured.iter().any(|allowed| allowed.eq_ignore_ascii_case(name))
    }
}

/// A Host header's name and port (80 when it has none).
fn split_port(host: &str) -> (&str, Option<u16>) {
    match host.rsplit_once(':') {
        // An IPv6 literal without a port ends in `]`, not in a port number.
        Some((name, port)) if !port.contains(']') => (name, port.parse::<u16>().ok()),
        _ => (host, Some(80)),
    }
}

/// Refuses a request whose Host is not this server's, or which a page of another web origin
/// sent. Applied to every request by the edge (`edge.rs`).
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
    /// For each key, the scope its idempotency records were kept under before they were
    /// scoped by its identity, and that identity's scope (see `crate::idempotency`).
    moves: Arc<Vec<([u8; 32], [u8; 32])>>,
}

impl KeyRing {
    pub fn from_secrets<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        let secrets: Vec<&str> = secrets.into_iter().collect();
        let moves = secrets
            .iter()
            .enumerate()
            .map(|(at, secret)| {
                let identity = KeyIdentity::Operator(at).label();
                (idempotency::secret_scope(secret), idempotency::identity_scope(&identity))
            })
            .collect();
        Self { hashes: Arc::new(secrets.into_iter().map(api_key::hash).collect()), moves: Arc::new(moves) }
    }

    /// The moves of the operator keys' idempotency records from the scopes of their
    /// secrets to those of their identities, which the server makes as it starts.
    pub fn idempotency_moves(&self) -> Vec<([u8; 32], [u8; 32])> {
        self.moves.to_vec()
    }

    /// Compares the hash of a presented key against every key in constant time, so timing
    /// says nothing about how close a guess came or which key it resembled.
    pub fn accepts(&self, presented: &[u8; 32]) -> bool {
        self.identify(presented).is_some()
    }

    /// Which of the operator's keys `presented` is the hash of (its place in the ring, its
    /// identity), compared against every key in constant time as [`KeyRing::accepts`] is.
    pub fn identify(&self, presented: &[u8; 32]) -> Option<usize> {
        let (mut found, mut at) = (subtle::Choice::from(0), 0_u64);
        for (i, key) in self.hashes.iter().enumerate() {
            let this = key.ct_eq(presented);
            at = u64::conditional_select(&at, &(i as u64), this & !found);
            found |= this;
        }
        bool::from(found).then_some(at as usize)
    }
}

pub use crate::staff::STAFF_HEADER;

/// The refusal of a till's key writing with no one signed in.
pub(super) fn staff_required(key: &str) -> ApiError {
    ApiError::new(
        ErrorCode::StaffRequired,
        format!(
            "the API key {key:?} is a till's key: it writes only for a staff member signed in at it; \
             sign in (POST /staff/sessions) and send the session as Petstore-Staff"
        ),
    )
}

/// Query parameter names that would carry a key in a URL, where it ends up in logs and
/// browser history. They are refused outright, never tried.
const KEY_PARAMS: &[&str] = &["api_key", "apikey", "key", "access_token", "token"];

/// The key of an `Authorization: Bearer <key>` header: the one reading of that header,
/// so that the key check and the idempotency scope (`idempotency.rs`) take the same key
/// from it. The scheme is matched without regard to case, as every HTTP authentication
/// scheme is (RFC 9110, section 11.1). `None` without the header or with another scheme.
pub(super) fn bearer_key(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
}

/// What the key check found in memory, without the database.
pub(super) enum FirstLook {
    /// One of the operator's keys (its place in the ring): the request may run.
    Operator(usize),
    /// A key that only the database can tell about: the hash to look up.
    Named([u8; 32]),
    /// No usable key: the answer is a refusal.
    Refused(Refusal),
}

/// The key check's first step, in memory: a key in the URL is refused, a missing one too,
/// and an operator's key passes. Any other key is a named key's or a wrong one; see
/// [`check_named`].
pub(super) fn first_look(req: &Request, keys: &KeyRing) -> FirstLook {
    let query = req.uri().query().unwrap_or("");
    if url::form_urlencoded::parse(query.as_bytes()).any(|(name, _)| KEY_PARAMS.contains(&name.as_ref())) {
        return FirstLook::Refused(Refusal::InUrl(
            "API keys are not accepted in the URL; send Authorization: Bearer <key>",
        ));
    }
    let Some(key) = bearer_key(req.headers()) else {
        return FirstLook::Refused(Refusal::NoKey(
            "this operation needs an API key: send Authorization: Bearer <key>",
        ));
    };
    let presented = api_key::hash(key);
    match keys.identify(&presented) {
        Some(at) => FirstLook::Operator(at),
        None => FirstLook::Named(presented),
    }
}

/// The name of the named key a request came with, once checked, and its scope: left in the
/// request's extensions for the operations that keep going (an event stream ends with its
/// key) and for the actor a write is made as (`actor.rs`).
#[derive(Debug, Clone)]
pub(super) struct NamedKey(pub String, pub Scope);

/// The key check's second step: the named key with the hash `presented` must be active,
/// a `read` key may only read, a `reports` key only read what holds no personal data, and a
/// `till` key write only with a staff member's session (`Petstore-Staff`) or proof
/// (`Petstore-Staff-Proof`; which one, whether it holds and what they may do is the actor's
/// business, `actor.rs`) or to sign one in. Answers the
/// key's identity and its name.
pub(super) async fn check_named(
    store: &dyn Keys,
    presented: [u8; 32],
    method: &Method,
    path: &str,
    headers: &HeaderMap,
) -> Result<(KeyIdentity, NamedKey), Refusal> {
    let (id, holder) = match store.find_key(presented).await.map_err(Refusal::Failed)? {
        KeyMatch::Active(key) => {
            tracing::debug!(key = %key.name, scope = %key.scope, "authenticated with a named key");
            (key.id, Holder { name: key.name, scope: key.scope })
        }
        KeyMatch::Revoked { name } => {
            tracing::info!(key = %name, "refused a request with the revoked API key");
            return Err(Refusal::WrongKey("the API key was revoked"));
        }
        KeyMatch::Unknown => return Err(Refusal::WrongKey("the API key is not valid")),
    };
    let reads = method == Method::GET || method == Method::HEAD;
    let for_staff = holder.scope.writes_for_staff()
        && (headers.contains_key(STAFF_HEADER)
            || headers.contains_key(crate::staff::proof::STAFF_PROOF_HEADER)
            || is_sign_in(method, path));
    if holder.scope.can_write() || for_staff || (reads && holder.scope.can_read(path)) {
        let scope = holder.scope;
        Ok((KeyIdentity::Named(id), NamedKey(holder.name, scope)))
    } else if holder.scope.writes_for_staff() {
        Err(Refusal::StaffRequired(holder))
    } else if reads {
        Err(Refusal::NoPersonalData(holder))
    } else {
        Err(Refusal::ReadOnly(holder))
    }
}

/// `POST /staff/sessions`, which a till's key calls with no one signed in yet.
fn is_sign_in(method: &Method, path: &str) -> bool {
    method == Method::POST && path == "/staff/sessions"
}

/// Who sent a request with a named key, once it is known.
pub(super) struct Holder {
    name: String,
    scope: Scope,
}

/// Why the key check refused a request.
pub(super) enum Refusal {
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
    /// A `reports` key asking for what holds personal data.
    NoPersonalData(Holder),
    /// A `till` key writing with no staff member signed in.
    StaffRequired(Holder),
    Failed(crate::Error),
}

/// The answer to a request whose key does not let it run. A wrong key counts against its
/// client in `failures`; past the limit, the client's requests without a right key get 429.
pub(super) fn refuse(failures: &FailedAuth, now: DateTime<Utc>, req: &Request, refusal: Refusal) -> Response {
    let client = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED), |info| info.0.ip());
    let unauthorized = |message: &str| ApiError::new(ErrorCode::Unauthorized, message).into_response();
    match refusal {
        Refusal::InUrl(message) => unauthorized(message),
        Refusal::NoKey(message) => match failures.blocked(client, now) {
            Some(wait) => too_many(wait),
            None => unauthorized(message),
        },
        Refusal::WrongKey(message) => match failures.record(client, now) {
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
        Refusal::NoPersonalData(holder) => ApiError::new(
            ErrorCode::Forbidden,
            format!(
                "the API key {:?} has the {} scope, which sees no personal data: {} (orders and the change \
                 feed carry customers' names and phones) needs a read key",
                holder.name,
                holder.scope,
                req.uri().path()
            ),
        )
        .into_response(),
        Refusal::StaffRequired(holder) => staff_required(&holder.name).into_response(),
        Refusal::Failed(error) => ApiError(error).into_response(),
    }
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
    fn a_configured_name_passes_on_any_port_as_a_reverse_proxy_forwards_it() {
        let policy = HostPolicy::new(8787, &["Petstore.Chain.Example".into()]);
        assert!(policy.host_allowed("petstore.chain.example"));
        assert!(policy.host_allowed("petstore.chain.example:443"));
        assert!(policy.host_allowed("petstore.chain.example:8787"));
        assert!(!policy.host_allowed("evil.example"));
        assert!(!policy.host_allowed("localhost:443"), "loopback names keep the port check");
        assert!(policy.origin_allowed("https://petstore.chain.example"));
        assert!(!policy.origin_allowed("https://localhost:8787"), "https only under a configured name");
        assert!(!policy.origin_allowed("https://evil.example"));
    }

    #[test]
    fn only_the_servers_own_origin_passes() {
        let policy = HostPolicy::new(8787, &[]);
        assert!(policy.origin_allowed("http://127.0.0.1:8787"));
        assert!(!policy.origin_allowed("http://evil.example"));
        assert!(!policy.origin_allowed("null"));
    }

    #[test]
    fn the_bearer_key_is_read_whatever_the_schemes_case() {
        let key = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, value.parse().unwrap());
            bearer_key(&headers).map(str::to_owned)
        };
        assert_eq!(key("Bearer psk_1").as_deref(), Some("psk_1"));
        assert_eq!(key("BEARER  psk_1 ").as_deref(), Some("psk_1"));
        assert_eq!(key("Basic cHNrXzE="), None);
        assert_eq!(key("Bearer"), None);
        assert_eq!(bearer_key(&HeaderMap::new()), None);
    }

    #[test]
    fn keys_are_matched_exactly() {
        let ring = KeyRing::from_secrets(["one", "two"]);
        let accepts = |key| ring.accepts(&api_key::hash(key));
        assert!(accepts("two"));
        assert!(!accepts("tw"));
        assert!(!accepts(""));
        assert_eq!(ring.identify(&api_key::hash("one")), Some(0));
        assert_eq!(ring.identify(&api_key::hash("two")), Some(1), "each operator key is its own client");
        assert_eq!(ring.identify(&api_key::hash("three")), None);
    }
}
