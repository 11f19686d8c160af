//! Turning what went wrong on the wire into the core [`Error`]. A Petstore Error object
//! keeps its code and the server's message, so the UI shows the same text as in local
//! mode; everything else becomes one of the client-side codes with a message a shop
//! assistant can act on (which server, what happened, what to check).

use std::error::Error as _;
use std::io;
use std::time::Duration;

use reqwest::StatusCode;
use serde::Deserialize;

use super::base_url::BaseUrl;
use crate::error::{Error, ErrorCode};

/// Which request failed, for messages: the server and the operation.
pub(super) struct Call<'a> {
    pub base: &'a BaseUrl,
    pub method: &'a reqwest::Method,
    /// The URL path only: queries are long and say nothing a person needs here.
    pub path: &'a str,
}

impl Call<'_> {
    pub fn bad_response(&self, what: impl std::fmt::Display) -> Error {
        Error::new(
            ErrorCode::BadResponse,
            format!(
                "{} answered {} {} with {what}; is it a Petstore server, and is the base URL right?",
                self.base, self.method, self.path
            ),
        )
    }
}

/// A request that got no usable HTTP answer at all.
pub(super) fn transport(call: &Call<'_>, e: &reqwest::Error, connect: Duration, total: Duration) -> Error {
    let base = call.base;
    // A connect timeout is both "connect" and "timeout"; it means the server could not be
    // reached, so "connect" is asked first.
    if e.is_connect() {
        return Error::new(
            ErrorCode::Unreachable,
            format!("cannot reach {base}: {}", connect_cause(e, connect)),
        );
    }
    if e.is_timeout() {
        return Error::new(ErrorCode::Timeout, format!("{base} did not answer within {}", seconds(total)));
    }
    if e.is_builder() {
        // Our own request could not be built: a bug, not the remote's fault.
        return Error::internal(format!("cannot build {} {}: {e}", call.method, call.path));
    }
    if is_not_http(e) {
        // Something answered, but not in HTTP: another service on that port (SSH, a
        // database) or a TLS-only port asked in plain http.
        return call.bad_response(format_args!("something that is not HTTP ({})", innermost(e)));
    }
    Error::new(
        ErrorCode::Unreachable,
        format!("the connection to {base} broke off during {} {}: {}", call.method, call.path, innermost(e)),
    )
}

/// Why a connection could not be made, in words for people.
fn connect_cause(e: &reqwest::Error, connect: Duration) -> String {
    if e.is_dns() {
        return "the host name could not be found (check the address and the network)".into();
    }
    if e.is_timeout() {
        return format!(
            "no connection within {} (is the address right and the network up?)",
            seconds(connect)
        );
    }
    let mut source = e.source();
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<io::Error>() {
            match io.kind() {
                io::ErrorKind::ConnectionRefused => {
                    return "connection refused (is the Petstore server running on that port?)".into();
                }
                io::ErrorKind::TimedOut => return format!("no connection within {}", seconds(connect)),
                _ => {}
            }
        }
        source = err.source();
    }
    innermost(e)
}

/// Whether the answer could not be parsed as HTTP at all.
fn is_not_http(e: &reqwest::Error) -> bool {
    let mut source = e.source();
    while let Some(err) = source {
        if err.downcast_ref::<hyper::Error>().is_some_and(hyper::Error::is_parse) {
            return true;
        }
        source = err.source();
    }
    false
}

/// The deepest cause's text, which is the specific one ("certificate has expired").
fn innermost(e: &reqwest::Error) -> String {
    let mut last: &dyn std::error::Error = e;
    while let Some(next) = last.source() {
        last = next;
    }
    last.to_string()
}

/// "10 s", or "250 ms" for the short timeouts of tests.
pub(super) fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 { format!("{} s", d.as_secs()) } else { format!("{} ms", d.as_millis()) }
}

/// "8 MiB", or whatever unit divides the limit exactly.
pub(super) fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// The contract's Error object, read loosely so an unknown `code` is still recognised as
/// one (and its message kept).
#[derive(Deserialize)]
struct WireError {
    code: String,
    message: String,
}

/// A non-2xx answer.
pub(super) fn status(call: &Call<'_>, status: StatusCode, content_type: Option<&str>, body: &[u8]) -> Error {
    let wire = serde_json::from_slice::<WireError>(body).ok();
    if let Some(wire) = wire {
        let code = serde_json::from_value::<ErrorCode>(serde_json::Value::String(wire.code.clone()));
        let message = if wire.message.trim().is_empty() { describe(status) } else { wire.message };
        return match code {
            Ok(code) => Error::new(code, message),
            // A newer server may have codes this app does not know; its words still help.
            Err(_) => Error::new(
                ErrorCode::BadResponse,
                format!(
                    "{message} ({} answered {} with the unknown error code {:?})",
                    call.base,
                    describe(status),
                    wire.code
                ),
            ),
        };
    }
    if status == StatusCode::UNAUTHORIZED {
        // Something in front of the server (a proxy) refused the key in its own format.
        return Error::new(
            ErrorCode::Unauthorized,
            format!("{} refused the API key ({})", call.base, describe(status)),
        );
    }
    let what = match content_type {
        Some(t) if t.starts_with("text/html") => "an HTML page".to_owned(),
        _ if body.is_empty() => "an empty body".to_owned(),
        Some(t) => format!("a {t} body"),
        None => "a body without a content type".to_owned(),
    };
    call.bad_response(format_args!("{} and {what} instead of a Petstore error", describe(status)))
}

/// "404 Not Found".
fn describe(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// A redirect: the Petstore API never redirects, so the base URL points somewhere else
/// (often `http://` where the server wants `https://`).
pub(super) fn redirect(call: &Call<'_>, status: StatusCode, location: Option<&str>) -> Error {
    let to = location.map(|l| format!(" to {l}")).unwrap_or_default();
    call.bad_response(format_args!("a redirect ({}){to}", describe(status)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call_on<'a>(base: &'a BaseUrl, method: &'a reqwest::Method) -> Call<'a> {
        Call { base, method, path: "/pets" }
    }

    #[test]
    fn a_petstore_error_keeps_its_code_and_message() {
        let base = BaseUrl::parse("http://127.0.0.1:8787").unwrap();
        let call = call_on(&base, &reqwest::Method::GET);
        let body =
            br#"{"code":"pet_not_available","message":"Nemo (#3) is sold, not available","status":409}"#;
        let e = status(&call, StatusCode::CONFLICT, Some("application/json"), body);
        assert_eq!(e, Error::new(ErrorCode::PetNotAvailable, "Nemo (#3) is sold, not available"));

        let body = br#"{"code":"unauthorized","message":"the API key is not valid","status":401}"#;
        let e = status(&call, StatusCode::UNAUTHORIZED, Some("application/json"), body);
        assert_eq!(e, Error::new(ErrorCode::Unauthorized, "the API key is not valid"));
    }

    #[test]
    fn anything_else_is_a_bad_response_that_says_what_came() {
        let base = BaseUrl::parse("http://shop.example/api").unwrap();
        let call = call_on(&base, &reqwest::Method::GET);
        let e =
            status(&call, StatusCode::BAD_GATEWAY, Some("text/html; charset=utf-8"), b"<html>oops</html>");
        assert_eq!(e.code, ErrorCode::BadResponse);
        assert!(e.message.contains("http://shop.example/api"), "{}", e.message);
        assert!(e.message.contains("502 Bad Gateway and an HTML page"), "{}", e.message);

        let e = status(&call, StatusCode::NOT_FOUND, None, b"");
        assert!(e.message.contains("GET /pets with 404 Not Found and an empty body"), "{}", e.message);

        let e = status(
            &call,
            StatusCode::TOO_MANY_REQUESTS,
            None,
            br#"{"code":"too_many_cats","message":"slow down"}"#,
        );
        assert_eq!(e.code, ErrorCode::BadResponse);
        assert!(e.message.starts_with("slow down"), "{}", e.message);

        let e = status(&call, StatusCode::UNAUTHORIZED, Some("text/plain"), b"go away");
        assert_eq!(e.code, ErrorCode::Unauthorized);
    }

    #[test]
    fn durations_and_sizes_read_naturally() {
        assert_eq!(seconds(Duration::from_secs(10)), "10 s");
        assert_eq!(seconds(Duration::from_millis(250)), "250 ms");
        assert_eq!(size(8 << 20), "8 MiB");
        assert_eq!(size(64 << 10), "64 KiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
