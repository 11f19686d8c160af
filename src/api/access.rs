//! Who may talk to the API: the DNS-rebinding defence (Host and Origin) for every request,
//! and Bearer keys for every operation but the service ones.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::error::ApiError;
use super::state::AppState;
use crate::error::ErrorCode;

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
        let host = host.to_ascii_lowercase();
        let (name, port) = match host.rsplit_once(':') {
            // An IPv6 literal without a port ends in `]`, not in a port number.
            Some((name, port)) if !port.contains(']') => (name.to_owned(), port.parse::<u16>().ok()),
            _ => (host.clone(), Some(80)),
        };
        port == Some(self.port) && self.names.contains(&name)
    }

    /// A browser sends `Origin`; only pages served by this very server (its docs page) may
    /// call it. Tools like curl send none and pass.
    fn origin_allowed(&self, origin: &str) -> bool {
        let Some(authority) = origin.strip_prefix("http://") else { return false };
        self.host_allowed(authority)
    }
}

pub async fn check_host_and_origin(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if let Err(refusal) = judge(&state.hosts, req.headers()) {
        return refusal.into_response();
    }
    next.run(req).await
}

fn judge(policy: &HostPolicy, headers: &HeaderMap) -> Result<(), ApiError> {
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

/// The accepted API keys, kept only as SHA-256 hashes.
#[derive(Clone)]
pub struct KeyRing {
    hashes: Arc<Vec<[u8; 32]>>,
}

impl KeyRing {
    pub fn from_secrets<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        Self { hashes: Arc::new(secrets.into_iter().map(hash).collect()) }
    }

    /// Compares against every key in constant time, so timing says nothing about how close
    /// a guess came or which key it resembled.
    pub fn accepts(&self, presented: &str) -> bool {
        let presented = hash(presented);
        self.hashes.iter().fold(subtle::Choice::from(0), |found, key| found | key.ct_eq(&presented)).into()
    }
}

fn hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// Query parameter names that would carry a key in a URL, where it ends up in logs and
/// browser history. They are refused outright, never tried.
const KEY_PARAMS: &[&str] = &["api_key", "apikey", "key", "access_token", "token"];

pub async fn require_key(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let unauthorized = |message: &str| ApiError::new(ErrorCode::Unauthorized, message).into_response();
    let query = req.uri().query().unwrap_or("");
    if url::form_urlencoded::parse(query.as_bytes()).any(|(name, _)| KEY_PARAMS.contains(&name.as_ref())) {
        return unauthorized("API keys are not accepted in the URL; send Authorization: Bearer <key>");
    }
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")));
    match bearer {
        None => unauthorized("this operation needs an API key: send Authorization: Bearer <key>"),
        Some(key) if state.keys.accepts(key.trim()) => next.run(req).await,
        Some(_) => unauthorized("the API key is not valid"),
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
    fn only_the_servers_own_origin_passes() {
        let policy = HostPolicy::new(8787, &[]);
        assert!(policy.origin_allowed("http://127.0.0.1:8787"));
        assert!(!policy.origin_allowed("http://evil.example"));
        assert!(!policy.origin_allowed("null"));
    }

    #[test]
    fn keys_are_matched_exactly() {
        let ring = KeyRing::from_secrets(["one", "two"]);
        assert!(ring.accepts("two"));
        assert!(!ring.accepts("tw"));
        assert!(!ring.accepts(""));
    }
}
