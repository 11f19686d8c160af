//! `GET /pets/{petId}` is deprecated in favour of `GET /pets?id={petId}`. Every response of
//! that operation, whatever produced it (auth, a bad id, the handler), carries the
//! deprecation headers, so the edge (`edge.rs`) applies them in front of
//! everything else; after the sunset the operation answers 410.

use axum::extract::Request;
use std::sync::LazyLock;

use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, TimeZone, Utc};

use super::error::ApiError;
use crate::clock::Clock;
use crate::error::ErrorCode;

/// When the deprecation was announced: 2026-11-01T00:00:00Z (RFC 9745 wants a Unix time).
pub fn deprecated_since() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap()
}

/// The last instant the operation is served: the end of 2027-06-30 (RFC 8594).
pub fn sunset() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2027, 6, 30, 23, 59, 59).unwrap()
}

/// Where the request is `GET /pets/{petId}`: its raw `{petId}` segment, which every
/// response of the operation names in its headers (see [`add_headers`]).
pub fn target(req: &Request) -> Option<String> {
    deprecated_target(req.method(), req.uri().path())
}

/// The answer once the operation is retired, in place of serving it.
pub fn retired(clock: &Clock, pet: &str) -> Option<Response> {
    (clock.now() > sunset()).then(|| {
        ApiError::new(
            ErrorCode::Gone,
            format!("GET /pets/{{petId}} was retired on 2027-06-30; use GET /pets?id={pet}"),
        )
        .into_response()
    })
}

/// The raw `{petId}` segment when the request is `GET /pets/{petId}`.
fn deprecated_target(method: &Method, path: &str) -> Option<String> {
    if method != Method::GET {
        return None;
    }
    let segment = path.strip_prefix("/pets/")?;
    (!segment.is_empty() && !segment.contains('/')).then(|| segment.to_owned())
}

/// The two headers that never change, formatted once: this runs on every `GET /pets/{id}`.
static FIXED_HEADERS: LazyLock<[(HeaderName, HeaderValue); 2]> = LazyLock::new(|| {
    let since = format!("@{}", deprecated_since().timestamp());
    let sunset = sunset().format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    [
        (HeaderName::from_static("deprecation"), HeaderValue::from_str(&since).expect("ASCII header")),
        (HeaderName::from_static("sunset"), HeaderValue::from_str(&sunset).expect("ASCII header")),
    ]
});

pub fn add_headers(headers: &mut HeaderMap, pet: &str) {
    for (name, value) in FIXED_HEADERS.iter() {
        headers.insert(name.clone(), value.clone());
    }
    // Pushed piece by piece: `format!` and its machinery cost more than the rest of this.
    let mut successor = String::with_capacity(pet.len() + 40);
    successor.push_str("</pets?id=");
    successor.push_str(pet);
    successor.push_str(">; rel=\"successor-version\"");
    if let Ok(link) = HeaderValue::from_maybe_shared(axum::body::Bytes::from(successor)) {
        headers.append(header::LINK, link);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_carry_the_contracts_dates() {
        let mut headers = HeaderMap::new();
        add_headers(&mut headers, "42");
        assert_eq!(headers["deprecation"], "@1793491200");
        assert_eq!(headers["sunset"], "Wed, 30 Jun 2027 23:59:59 GMT");
        assert_eq!(headers["link"], "</pets?id=42>; rel=\"successor-version\"");
    }

    #[test]
    fn only_get_of_one_pet_is_deprecated() {
        assert_eq!(deprecated_target(&Method::GET, "/pets/7").as_deref(), Some("7"));
        assert_eq!(deprecated_target(&Method::PUT, "/pets/7"), None);
        assert_eq!(deprecated_target(&Method::GET, "/pets"), None);
        assert_eq!(deprecated_target(&Method::GET, "/pets/7/x"), None);
    }
}
