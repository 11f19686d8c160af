//! One request and its answer. Every call goes through [`Client::exchange`], which sends
//! the key, reads the body within the size limit and turns any failure into the core
//! [`Error`]; the [`Received`] then decodes the body into what the operation returns.

use reqwest::Method;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::Client;
use super::base_url::BaseUrl;
use super::errors::{self, Call};
use super::retry_after;
use crate::domain::Paged;
use crate::error::{Error, Result};
use crate::idempotency::IdempotencyKey;

/// A successful (2xx) answer, body read in full.
pub(super) struct Received {
    base: BaseUrl,
    method: Method,
    path: String,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Client {
    /// Sends a request without a body.
    pub(super) async fn send(
        &self,
        method: Method,
        segments: &[&str],
        query: &[(&str, String)],
    ) -> Result<Received> {
        self.exchange(method, segments, query, None).await
    }

    /// Sends `body` as JSON.
    pub(super) async fn send_json<B: Serialize>(
        &self,
        method: Method,
        segments: &[&str],
        body: &B,
    ) -> Result<Received> {
        let json = serde_json::to_vec(body).map_err(Error::internal)?;
        self.exchange(method, segments, &[], Some(json)).await
    }

    /// Sends a command, with `body` as JSON if it has one, under the `Idempotency-Key`
    /// `key`, so that the server runs it once however often it is sent (see `once.rs`).
    pub(super) async fn send_once<B: Serialize>(
        &self,
        method: Method,
        segments: &[&str],
        key: &str,
        body: Option<&B>,
    ) -> Result<Received> {
        let key = idempotency_key(key)?;
        let json = body.map(serde_json::to_vec).transpose().map_err(Error::internal)?;
        self.exchange_with(method, segments, &[], json, Some(key)).await
    }

    async fn exchange(
        &self,
        method: Method,
        segments: &[&str],
        query: &[(&str, String)],
        body: Option<Vec<u8>>,
    ) -> Result<Received> {
        self.exchange_with(method, segments, query, body, None).await
    }

    async fn exchange_with(
        &self,
        method: Method,
        segments: &[&str],
        query: &[(&str, String)],
        body: Option<Vec<u8>>,
        idempotency_key: Option<HeaderValue>,
    ) -> Result<Received> {
        let url = self.base.join(segments);
        let path = url.path().to_owned();
        let call = Call { base: &self.base, method: &method, path: &path };
        let mut request = self.http.request(method.clone(), url).header(ACCEPT, "application/json");
        if !query.is_empty() {
            request = request.query(query);
        }
        if let Some(key) = idempotency_key {
            request = request.header(IDEMPOTENCY_KEY, key);
        }
        if let Some(body) = body {
            request = request.header(CONTENT_TYPE, "application/json").body(body);
        }
        let mut response = self.open(&call, request).await?;
        let body = self.read_body(&call, &mut response).await?;
        let headers = response.headers().clone();
        if !response.status().is_success() {
            return Err(failed(&call, &response, &body));
        }
        Ok(Received { base: self.base.clone(), method, path, headers, body })
    }

    /// The whole body, within the size limit.
    pub(super) async fn read_body(
        &self,
        call: &Call<'_>,
        response: &mut reqwest::Response,
    ) -> Result<Vec<u8>> {
        // Refuse early when the server announces too much (Content-Length), and count
        // anyway, since a chunked body announces nothing.
        let limit = self.config.max_response_bytes;
        if let Some(length) = response.content_length().filter(|&length| length > limit) {
            return Err(call.bad_response(format_args!(
                "a body of {length} bytes, over the {} limit",
                errors::size(limit)
            )));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport(call, &e))? {
            if (body.len() + chunk.len()) as u64 > limit {
                return Err(call.bad_response(format_args!("a body over the {} limit", errors::size(limit))));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// `key` as the header's value: an RFC 8941 sf-string (the draft's form), in double quotes
/// with each `"` and `\` escaped by a `\`, so that any key the server accepts (1 to 255
/// printable ASCII characters, spaces and quotes included) arrives as it was given.
/// Another key is refused here, by the server's own rule, before anything is sent.
pub(super) fn idempotency_key(key: &str) -> Result<HeaderValue> {
    IdempotencyKey::new("", key).map_err(|why| Error::validation(format!("an Idempotency-Key {why}")))?;
    let mut quoted = String::with_capacity(key.len() + 2);
    quoted.push('"');
    for c in key.chars() {
        if c == '"' || c == '\\' {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    HeaderValue::from_str(&quoted).map_err(Error::internal)
}

/// The error a non-2xx answer with `body` stands for.
pub(super) fn failed(call: &Call<'_>, response: &reqwest::Response, body: &[u8]) -> Error {
    let content_type = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok());
    errors::status(call, response.status(), content_type, body)
}

impl Client {
    /// Sends `request` with the key and answers the response's head, or the error a failure
    /// to get one maps to; a redirect is refused.
    pub(super) async fn open(
        &self,
        call: &Call<'_>,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response> {
        let mut request = request.header(AUTHORIZATION, self.authorization.clone());
        for (name, value) in self.acting.iter() {
            request = request.header(name, value.clone());
        }
        let response = request.send().await.map_err(|e| self.transport(call, &e))?;
        let status = response.status();
        if let Some(wait) = retry_after::asked(&response) {
            *self.not_before.lock().expect("never poisoned") = Some(std::time::Instant::now() + wait);
        }
        // The path only: a log line never carries the query, let alone the key.
        tracing::debug!(method = %call.method, path = call.path, status = status.as_u16(), "petstore client request");
        if status.is_redirection() {
            let location = response.headers().get(LOCATION).and_then(|v| v.to_str().ok());
            return Err(errors::redirect(call, status, location));
        }
        Ok(response)
    }

    pub(super) fn transport(&self, call: &Call<'_>, e: &reqwest::Error) -> Error {
        errors::transport(call, e, self.config.connect_timeout, self.config.request_timeout)
    }
}

impl Received {
    fn call(&self) -> Call<'_> {
        Call { base: &self.base, method: &self.method, path: &self.path }
    }

    /// The body as the operation's JSON type, naming what did not fit.
    pub(super) fn json<T: DeserializeOwned>(&self) -> Result<T> {
        let content_type = self.headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok());
        if let Some(t) = content_type.filter(|t| !is_json(t)) {
            let what =
                if t.starts_with("text/html") { "an HTML page".to_owned() } else { format!("a {t} body") };
            return Err(self.call().bad_response(format_args!("{what} instead of JSON")));
        }
        if self.body.is_empty() {
            return Err(self.call().bad_response("an empty body instead of JSON"));
        }
        let mut deserializer = serde_json::Deserializer::from_slice(&self.body);
        serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
            let at = e.path().to_string();
            let inner = e.into_inner();
            if inner.is_syntax() || inner.is_eof() {
                self.call().bad_response(format_args!("a body that is not valid JSON ({inner})"))
            } else {
                self.call()
                    .bad_response(format_args!("JSON of another shape than expected (at {at}: {inner})"))
            }
        })
    }

    /// A list page: the JSON array and the `X-Total-Count` header.
    pub(super) fn paged<T: DeserializeOwned>(&self) -> Result<Paged<T>> {
        let items = self.json()?;
        let total = self
            .headers
            .get("x-total-count")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| self.call().bad_response("a list without a valid X-Total-Count header"))?;
        Ok(Paged { items, total })
    }
}

fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// `limit` and `offset` of a list request.
pub(super) fn paging(query: &mut Vec<(&'static str, String)>, page: crate::domain::Page) {
    query.push(("limit", page.limit().to_string()));
    query.push(("offset", page.offset().to_string()));
}
