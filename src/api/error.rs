//! The HTTP face of [`Error`]: every failure leaves the server as the contract's Error
//! object, `{"code", "message", "status"}`, with `Content-Type: application/json`.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::{Error, ErrorCode};

/// `Retry-After` of a `503 busy`. Short: the retry itself waits up to the database's busy
/// timeout (5 s) for the lock before it is refused again, so the client need not add much.
const BUSY_RETRY_AFTER_SECS: u64 = 1;

/// Wraps the core error so it can be returned from handlers.
#[derive(Debug)]
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        Self(e)
    }
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self(Error::new(code, message))
    }

    fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The contract's Error object, also sent as the data of an event stream's `error`.
    pub fn body(&self) -> serde_json::Value {
        json!({ "code": self.0.code, "message": self.0.message, "status": self.status().as_u16() })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), Json(self.body())).into_response();
        match self.0.code {
            // Every 401 names its scheme (RFC 9110): a wrong PIN is one too.
            ErrorCode::Unauthorized | ErrorCode::WrongPin => {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"petstore\""));
            }
            ErrorCode::Busy => {
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(BUSY_RETRY_AFTER_SECS));
            }
            _ => {}
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
