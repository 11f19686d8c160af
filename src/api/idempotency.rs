//! The `Idempotency-Key` request header (IETF httpapi draft "The Idempotency-Key HTTP Header
//! Field"), parsed at the edge into the store's key and scoped to the identity of the API
//! key the request authenticated with (stable across its rotation; see
//! [`KeyIdentity`]). What a key does is the store's business
//! ([`Database::once`](crate::engine::Database::once), which runs a counter write once
//! per key). Taken by `POST /store/orders`, `PATCH` and `DELETE
//! /store/orders/{orderId}`, `POST /store/orders/{orderId}/cancel` and `POST
//! /store/inventory/{petId}/adjustments`.

use axum::extract::FromRequestParts;
use axum::http::header::HeaderName;
use axum::http::request::Parts;
use chrono::{DateTime, Utc};

use super::access::bearer_key;
use super::error::ApiError;
use super::state::AppState;
use crate::api_key::KeyIdentity;
use crate::error::{Error, Result};
use crate::idempotency::Once;
use crate::store::IdempotencyKey;

const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// The request's key, if it sent one.
pub struct Idempotency(pub Option<IdempotencyKey>);

impl Idempotency {
    /// The key, kept for the server's `--idempotency-window`, and the time the request is
    /// run at; `None` without the header, when the command is simply run.
    pub fn in_window(self, s: &AppState) -> Option<(IdempotencyKey, DateTime<Utc>)> {
        self.0.map(|key| (key.kept_for(s.idempotency_window), s.clock.now()))
    }
}

/// What a command run under a key answers: the first request's outcome, refusal or not,
/// which the handler renders with its own code, so that a replay is the first response.
pub fn first_outcome<T>(once: Once<T>) -> Result<T> {
    if once.replayed {
        tracing::info!("replayed the first response to an Idempotency-Key");
    }
    once.outcome
}

impl<S: Send + Sync> FromRequestParts<S> for Idempotency {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let mut values = parts.headers.get_all(IDEMPOTENCY_KEY).into_iter();
        let Some(value) = values.next() else { return Ok(Self(None)) };
        if values.next().is_some() {
            return Err(invalid("may be given only once"));
        }
        let key = value.to_str().ok().and_then(unquote).ok_or_else(|| {
            invalid("must be a bare token or a quoted string (RFC 8941) of 1 to 255 printable ASCII characters, like 8e03978e-40d5-43e8-bc93-6894a57f9324")
        })?;
        // Scoped to the identity of the key the request authenticated with (the key check
        // has passed when this runs and said who it is); the secret only recognises the
        // records kept before keys were scoped by identity.
        let identity = parts.extensions.get::<KeyIdentity>().copied().ok_or_else(|| {
            ApiError(Error::internal("an Idempotency-Key on a request that passed no key check"))
        })?;
        let credential = bearer_key(&parts.headers).unwrap_or("");
        let key =
            IdempotencyKey::new(&identity.label(), &key).map_err(|e| invalid(&e))?.recognising(credential);
        Ok(Self(Some(key)))
    }
}

/// The request's `Idempotency-Key` as its sender wrote the key (unquoted), if it sent one
/// well-formed: what a till's proof of a write taken offline was made over (`actor.rs`).
pub(super) fn key_as_sent(headers: &axum::http::HeaderMap) -> Option<String> {
    let mut values = headers.get_all(IDEMPOTENCY_KEY).into_iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok().and_then(unquote)
}

fn invalid(why: &str) -> ApiError {
    ApiError(Error::invalid_parameter(format!("the Idempotency-Key header {why}")))
}

/// The key in the header's value. The draft makes the field an RFC 8941 sf-string: `"`,
/// printable ASCII with `\"` and `\\` escapes, `"`. Many clients send a bare UUID instead,
/// so a bare value of visible ASCII without `"` is taken as it is. Lengths are checked by
/// [`IdempotencyKey::new`]. openapi.yaml gives the same grammar as a pattern.
fn unquote(value: &str) -> Option<String> {
    let value = value.trim_matches([' ', '\t']);
    let Some(quoted) = value.strip_prefix('"') else {
        return value.bytes().all(|b| b.is_ascii_graphic() && b != b'"').then(|| value.to_owned());
    };
    let mut key = String::new();
    let mut chars = quoted.chars();
    loop {
        match chars.next()? {
            '"' => return chars.as_str().is_empty().then_some(key),
            '\\' => match chars.next()? {
                c @ ('"' | '\\') => key.push(c),
                _ => return None,
            },
            c if c == ' ' || c.is_ascii_graphic() => key.push(c),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::unquote;

    #[test]
    fn bare_tokens_and_sf_strings_are_keys() {
        assert_eq!(unquote("8e03978e-40d5").as_deref(), Some("8e03978e-40d5"));
        assert_eq!(unquote("\"8e03978e-40d5\"").as_deref(), Some("8e03978e-40d5"));
        assert_eq!(unquote(r#""a \"b\" \\c""#).as_deref(), Some(r#"a "b" \c"#));
        assert_eq!(unquote(r"a\b").as_deref(), Some(r"a\b"));
        assert_eq!(unquote(" k ").as_deref(), Some("k"));
        assert_eq!(unquote("\"\"").as_deref(), Some(""), "empty, refused by the length check");
    }

    #[test]
    fn anything_else_is_not() {
        for bad in [
            "a b",
            "a\"b",
            "\"open",
            "\"a\"b",
            "\"a\\x\"",
            "\"a\";p=1",
            "\"caf\u{e9}\"",
            "caf\u{e9}",
            "\"\t\"",
        ] {
            assert_eq!(unquote(bad), None, "{bad:?}");
        }
    }
}
