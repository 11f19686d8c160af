//! Extractors that parse at the edge and turn every rejection into the project's own
//! error (axum's `examples/error-handling` habit): the JSON body, path ids and query
//! parameters.

use std::str::FromStr;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde::de::{DeserializeOwned, IgnoredAny};

use super::error::ApiError;
use crate::domain::Page;
use crate::error::{Error, ErrorCode};

/// Largest request body accepted, as openapi.yaml promises integrators: a Petstore body is
/// a few hundred bytes, and a bound keeps one client from filling the server's memory.
pub const BODY_LIMIT: usize = 64 * 1024;

/// The one route with a larger body: a CSV file of up to 100,000 pets.
pub const IMPORT_PATH: &str = "/imports/pets";
pub const IMPORT_LIMIT: usize = 10 * 1024 * 1024;

/// The largest body a request to `path` may have.
pub fn body_limit(path: &str) -> usize {
    if path == IMPORT_PATH { IMPORT_LIMIT } else { BODY_LIMIT }
}

/// A JSON object body deserialized into a domain type, which validates it.
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        if !is_json(req.headers().get(header::CONTENT_TYPE)) {
            return Err(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                "the request body must be JSON, sent with Content-Type: application/json",
            ));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                too_large(BODY_LIMIT)
            } else {
                ApiError::new(ErrorCode::InvalidJson, format!("could not read the request body: {rejection}"))
            }
        })?;
        parse_body(&bytes).map(JsonBody).map_err(ApiError)
    }
}

pub fn too_large(limit: usize) -> ApiError {
    ApiError::new(ErrorCode::PayloadTooLarge, format!("the request body is larger than {} KiB", limit / 1024))
}

fn is_json(content_type: Option<&header::HeaderValue>) -> bool {
    let Some(value) = content_type.and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// JSON text to a domain type, naming the offending field when the shape is wrong.
///
/// One pass, straight into the type: every order's body went through a
/// `serde_json::Value` first, a map of strings built only to be taken apart again. What
/// that first pass decided is kept: text that is not JSON at all, or JSON that is not an
/// object, is `invalid_json`; a well-formed object of the wrong shape is
/// `validation_failed`.
pub fn parse_body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(match serde_json::from_slice::<IgnoredAny>(bytes) {
            Err(e) => not_json(&e),
            Ok(_) => Error::new(ErrorCode::InvalidJson, "the request body must be a JSON object"),
        });
    }
    let mut json = serde_json::Deserializer::from_slice(bytes);
    let parsed = serde_path_to_error::deserialize(&mut json);
    match parsed {
        // Trailing text after the object.
        Ok(value) => json.end().map(|()| value).map_err(|e| not_json(&e)),
        Err(e) if !e.inner().is_data() => Err(not_json(e.inner())),
        // A wrong shape seen before a syntax error further on: the body is still not JSON.
        Err(e) => match serde_json::from_slice::<IgnoredAny>(bytes) {
            Err(syntax) => Err(not_json(&syntax)),
            Ok(_) => {
                let path = e.path().to_string();
                let inner = without_position(e.inner());
                Err(if path == "." {
                    Error::validation(inner)
                } else {
                    Error::validation(format!("{path}: {inner}"))
                })
            }
        },
    }
}

fn not_json(e: &serde_json::Error) -> Error {
    Error::new(ErrorCode::InvalidJson, format!("the request body is not valid JSON: {e}"))
}

/// A shape error's message without the " at line 1 column 27" the parser adds: the field
/// path already says where, and a client's body is seldom laid out in lines.
fn without_position(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    message.strip_suffix(&position).map_or_else(|| message.clone(), str::to_owned)
}

/// A positive id from the last path segment, e.g. `petId` in `/pets/{petId}`.
pub struct PathId<T>(pub T);

impl<S: Send + Sync, T: FromStr<Err = String> + Send> FromRequestParts<S> for PathId<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let params = axum::extract::RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::new(ErrorCode::InvalidParameter, e.to_string()))?;
        let (_, raw) =
            params.iter().next().ok_or_else(|| ApiError(Error::internal("route without a path id")))?;
        raw.parse().map(PathId).map_err(|e| ApiError::new(ErrorCode::InvalidParameter, e))
    }
}

/// The query string as name/value pairs, read with the rules of the contract: each name
/// must be one the operation knows, single-valued names appear once, and every value parses.
pub struct Params(Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        Ok(Params(url::form_urlencoded::parse(query.as_bytes()).into_owned().collect()))
    }
}

impl Params {
    /// Refuses names the operation does not know: a typo in a filter must not silently
    /// return everything.
    pub fn allow(&self, known: &[&str]) -> Result<&Self, Error> {
        match self.0.iter().find(|(name, _)| !known.contains(&name.as_str())) {
            Some((name, _)) => Err(Error::invalid_parameter(format!(
                "unknown query parameter {name:?}; this operation takes {}",
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            ))),
            None => Ok(self),
        }
    }

    pub fn one<T: FromStr>(&self, name: &str) -> Result<Option<T>, Error>
    where
        T::Err: std::fmt::Display,
    {
        let mut values = self.0.iter().filter(|(n, _)| n == name);
        let Some((_, value)) = values.next() else { return Ok(None) };
        if values.next().is_some() {
            return Err(Error::invalid_parameter(format!("{name} may be given only once")));
        }
        parse_value(name, value).map(Some)
    }

    pub fn many<T: FromStr>(&self, name: &str) -> Result<Vec<T>, Error>
    where
        T::Err: std::fmt::Display,
    {
        self.0.iter().filter(|(n, _)| n == name).map(|(_, v)| parse_value(name, v)).collect()
    }

    pub fn page(&self) -> Result<Page, Error> {
        Page::new(self.one("limit")?.unwrap_or(Page::DEFAULT_LIMIT), self.one("offset")?.unwrap_or(0))
    }

    /// The pairs other than paging, in their order, to build `Link` targets from.
    pub fn without_paging(&self) -> impl Iterator<Item = &(String, String)> {
        self.0.iter().filter(|(n, _)| n != "limit" && n != "offset")
    }
}

fn parse_value<T: FromStr>(name: &str, value: &str) -> Result<T, Error>
where
    T::Err: std::fmt::Display,
{
    value.parse().map_err(|e| Error::invalid_parameter(format!("{name}={value:?} is not valid: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::NewOrder;

    fn refusal(body: &str) -> Error {
        parse_body::<NewOrder>(body.as_bytes()).expect_err(body)
    }

    #[test]
    fn an_object_of_the_right_shape_is_parsed() {
        let order: NewOrder = parse_body(b" {\"petId\": 7, \"quantity\": 2} \n").unwrap();
        assert_eq!((order.pet_id.get(), order.quantity.get()), (7, 2));
    }

    #[test]
    fn text_that_is_not_a_json_object_is_invalid_json_wherever_it_goes_wrong() {
        for body in [
            "",
            "   ",
            "[1, 2]",
            "\"Rex\"",
            "{\"petId\": 7",
            "{\"petId\": 7} and more",
            // A wrong shape first, then broken JSON: the syntax decides.
            "{\"petId\": \"seven\", \"quantity\": }",
            "{\"colour\": 1,,}",
        ] {
            assert_eq!(refusal(body).code, ErrorCode::InvalidJson, "{body:?}");
        }
        assert_eq!(refusal("[1]").message, "the request body must be a JSON object");
    }

    #[test]
    fn a_wrong_shape_names_the_field_without_a_text_position() {
        let wrong = refusal("{\"petId\": 7,\n \"quantity\": \"two\"}");
        assert_eq!(wrong.code, ErrorCode::ValidationFailed);
        assert!(wrong.message.starts_with("quantity: invalid type"), "{}", wrong.message);
        assert!(!wrong.message.contains("line"), "{}", wrong.message);

        let missing = refusal("{\"quantity\": 1}");
        assert_eq!(
            (missing.code, missing.message.as_str()),
            (ErrorCode::ValidationFailed, "missing field `petId`")
        );

        // A field given twice is ambiguous, so it is refused rather than one of them kept.
        let twice = refusal("{\"petId\": 7, \"petId\": 8}");
        assert_eq!(twice.code, ErrorCode::ValidationFailed);
        assert!(twice.message.contains("duplicate field `petId`"), "{}", twice.message);
    }
}
