//! The HTTP client of the Petstore REST API: a [`Petstore`](crate::Petstore) backend that
//! talks to a remote server (remote mode of the app) with exactly the results the local
//! SQLite store gives. The contract suite (`tests/api/contract/`) holds it to that.
//!
//! - `base_url`: parsing the remote's address and joining operation paths to it;
//! - `transport`: one request and its answer, with the size limit and timeouts;
//! - `errors`: what went wrong, as the core [`Error`];
//! - `shop`: the `Petstore` operations as REST calls (the operations of openapi.yaml);
//! - `feed`: the change feed, read once or followed as it is pushed.

mod base_url;
mod errors;
mod feed;
mod once;
mod retry_after;
mod shop;
mod staff;
mod transport;

#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderName, HeaderValue};

use crate::error::{Error, Result};
use base_url::BaseUrl;
pub use feed::Follower;

/// The origin of a server address (scheme, host and port), checked as the client checks
/// an address: what a saved API key is tied to, so that it is never sent elsewhere.
pub fn origin_of(address: &str) -> Result<String> {
    Ok(BaseUrl::parse(address)?.origin())
}

/// How patient and how trusting the client is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientConfig {
    /// How long to wait for the TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// How long a whole request may take, reading the answer included.
    pub request_timeout: Duration,
    /// The largest answer body read. A Petstore page is at most 100 items, far below the
    /// default; anything bigger is not the Petstore API and must not fill the memory.
    pub max_response_bytes: u64,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(3),
            request_timeout: Duration::from_secs(10),
            max_response_bytes: 8 << 20,
        }
    }
}

impl ClientConfig {
    pub fn connect_timeout(self, connect_timeout: Duration) -> Self {
        Self { connect_timeout, ..self }
    }

    pub fn request_timeout(self, request_timeout: Duration) -> Self {
        Self { request_timeout, ..self }
    }

    pub fn max_response_bytes(self, max_response_bytes: u64) -> Self {
        Self { max_response_bytes, ..self }
    }
}

/// A remote Petstore. Cheap to clone: clones share one connection pool.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: BaseUrl,
    /// `Bearer <key>`, marked sensitive so the HTTP stack never prints it.
    authorization: HeaderValue,
    config: ClientConfig,
    /// Until when the server asked not to be sent anything more (`Retry-After` of a 503 or
    /// 429), shared by the clones.
    not_before: Arc<Mutex<Option<Instant>>>,
    /// Headers sent with every request: who a till's requests are for ([`Client::acting`]).
    acting: Arc<[(HeaderName, HeaderValue)]>,
}

impl Client {
    /// A client for the server at `base_url` (http or https, optionally with a path
    /// prefix) with the default [`ClientConfig`]. Nothing is sent yet.
    pub fn new(base_url: &str, api_key: &str) -> Result<Self> {
        Self::with_config(base_url, api_key, ClientConfig::default())
    }

    pub fn with_config(base_url: &str, api_key: &str, config: ClientConfig) -> Result<Self> {
        let base = BaseUrl::parse(base_url)?;
        let authorization = bearer(api_key)?;
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            // The API never redirects; following one would only hide a wrong base URL.
            .redirect(reqwest::redirect::Policy::none())
            // A Petstore server closes a connection idle for 10 s (src/server/connections.rs);
            // reusing one it is closing at that moment would fail a request for nothing.
            .pool_idle_timeout(Duration::from_secs(5))
            .user_agent(concat!("petstore-client/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(Error::internal)?;
        Ok(Self { http, base, authorization, config, not_before: Arc::default(), acting: Arc::new([]) })
    }

    /// This client (its connections shared), sending `headers` with every request too:
    /// who a till's requests are for, `Petstore-Staff` and `Petstore-Approval` sessions, or
    /// the proofs of a write the till took offline. Marked sensitive: never logged.
    pub fn acting(&self, headers: &[(&'static str, &str)]) -> Result<Self> {
        let acting = headers
            .iter()
            .map(|&(name, value)| {
                let mut value = HeaderValue::from_str(value)
                    .map_err(|_| Error::internal(format!("a {name} header that cannot be sent")))?;
                value.set_sensitive(true);
                Ok((HeaderName::from_static(name), value))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { acting: acting.into(), ..self.clone() })
    }

    /// The server's address as shown to people (no trailing slash).
    pub fn base_url(&self) -> String {
        self.base.to_string()
    }

    pub fn config(&self) -> ClientConfig {
        self.config
    }

    /// How long the server last asked to be left alone (`Retry-After`) from now, if it did
    /// and the time has not passed: a caller that retries waits at least this long.
    pub fn asked_to_wait(&self) -> Option<Duration> {
        let until = (*self.not_before.lock().expect("never poisoned"))?;
        until.checked_duration_since(Instant::now()).filter(|wait| !wait.is_zero())
    }
}

fn bearer(api_key: &str) -> Result<HeaderValue> {
    let key = api_key.trim();
    if key.is_empty() {
        return Err(Error::validation("the API key is empty; copy it from the server (petstore-server key)"));
    }
    // The message never repeats the key: it may end up in a log or on screen.
    let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
        Error::validation(
            "the API key contains characters that cannot be sent (line breaks or other control characters)",
        )
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// Written by hand so the key can never show up in a log line or a panic message.
impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base)
            .field("api_key", &"<redacted>")
            .field("config", &self.config)
            .finish()
    }
}
