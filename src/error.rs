//! The one error type of the core. Every layer above (HTTP server, HTTP client, Tauri
//! commands) maps to or from it, so a failure keeps its `code` from the store to the UI.

use serde::{Deserialize, Serialize};

tokio::task_local! {
    /// The `X-Request-Id` of the request the current task answers (set by the API's
    /// middleware), so that a failure's log line names it. A task-local rather than a
    /// tracing span: a span per request cost a busy server a tenth of its time.
    pub static REQUEST_ID: String;
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Machine-readable error codes of the contract (the `code` of openapi.yaml's `Error` object;
/// docs/ARCHITECTURE.md, "Error codes", says where each is produced). The last three are
/// made only by the HTTP client, for a remote that cannot be used; a till's local API in
/// remote mode passes them on, so the document lists them too.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    InvalidJson,
    ValidationFailed,
    InvalidParameter,
    InvalidReference,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    RequestTimeout,
    InsufficientStock,
    PetNotAvailable,
    OrderCompleted,
    /// A cancelled order is kept for the record and can no longer change.
    OrderCancelled,
    CategoryInUse,
    PetHasOrders,
    DuplicateName,
    /// Another pet has this barcode (compared ignoring case).
    DuplicateSku,
    Gone,
    PayloadTooLarge,
    UnsupportedMediaType,
    /// An `Idempotency-Key` sent again, while it is kept (7 days unless configured), with a different request.
    IdempotencyKeyReused,
    /// Too many failed authentications from one client; the response says when to retry.
    RateLimited,
    Internal,
    /// The staff member signed in may not do what the request asks; the message names the
    /// permission, and a manager's approval may let the one action through.
    PermissionDenied,
    /// A till's key wrote without a staff member signed in: a till acts for its staff.
    StaffRequired,
    /// The staff member is deactivated and may not sign in.
    StaffInactive,
    /// A till's proof of who made a write it took offline (`Petstore-Staff-Proof`,
    /// `Petstore-Approval-Proof`) does not hold: not made with that member's PIN (changed
    /// since, or never typed at the server since it kept proof keys), or for another write.
    StaffProofInvalid,
    /// The PIN typed is not that staff member's.
    WrongPin,
    /// Too many wrong PINs in a row: the member may try again when the answer says.
    StaffLocked,
    /// The change would leave the shop without an active owner.
    LastOwner,
    /// A staff member would be added while an active one has no PIN (the owner every shop
    /// starts with): that member could no longer sign in, so a PIN comes first.
    PinRequired,
    /// Another program (a backup tool, a second server on the same file) held the
    /// database's write lock for longer than the database waits (5 s), or, on PostgreSQL,
    /// another session held a row past the lock limit or a statement ran past its limit
    /// (`postgres::SessionLimits`); nothing was changed, and the same request may simply
    /// be sent again.
    Busy,
    /// Client side: the remote could not be reached at all.
    Unreachable,
    /// Client side: the remote answered something that is not the Petstore API.
    BadResponse,
    /// Client side: the remote did not answer within the client's timeout.
    Timeout,
}

impl ErrorCode {
    /// The HTTP status that goes with the code. The client-side codes borrow the gateway
    /// statuses, which say the same thing about an upstream.
    pub fn status(self) -> u16 {
        use ErrorCode::*;
        match self {
            InvalidJson | ValidationFailed | InvalidParameter | InvalidReference => 400,
            Unauthorized | WrongPin => 401,
            Forbidden | PermissionDenied | StaffRequired | StaffInactive | StaffProofInvalid => 403,
            NotFound => 404,
            MethodNotAllowed => 405,
            RequestTimeout => 408,
            InsufficientStock | PetNotAvailable | OrderCompleted | OrderCancelled | CategoryInUse
            | PetHasOrders | DuplicateName | DuplicateSku | LastOwner | PinRequired => 409,
            Gone => 410,
            PayloadTooLarge => 413,
            UnsupportedMediaType => 415,
            IdempotencyKeyReused => 422,
            RateLimited | StaffLocked => 429,
            Internal => 500,
            BadResponse => 502,
            Busy | Unreachable => 503,
            Timeout => 504,
        }
    }
}

/// A failure with a code and a message meant for people: it names the offending field or
/// id and never carries SQL or other internals.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{message}")]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }

    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ValidationFailed, message)
    }

    pub fn invalid_parameter(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidParameter, message)
    }

    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Gone, message)
    }

    pub fn not_found(what: &str, id: i64) -> Self {
        Self::new(ErrorCode::NotFound, format!("{what} {id} does not exist"))
    }

    pub fn conflict(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(code, message)
    }

    /// An unexpected failure. The detail goes to the log, with the id of the request being
    /// answered when there is one; the caller only learns that something went wrong.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        if REQUEST_ID.try_with(|id| tracing::error!(id, error = %detail, "internal error")).is_err() {
            tracing::error!(error = %detail, "internal error");
        }
        Self::new(ErrorCode::Internal, "internal error; the server log has the details")
    }

    /// The database's write lock was held by another connection for longer than the busy
    /// timeout. Not a fault of ours or the client's, so it is logged as a warning, not as an
    /// internal error.
    pub fn busy(detail: impl std::fmt::Display) -> Self {
        let warn = |id: Option<&str>| {
            tracing::warn!(id, error = %detail, "the database stayed locked by another connection");
        };
        if REQUEST_ID.try_with(|id| warn(Some(id))).is_err() {
            warn(None);
        }
        Self::new(
            ErrorCode::Busy,
            "the database is locked by another program (a backup, another Petstore); nothing was \
             changed; try again in a moment",
        )
    }

    pub fn status(&self) -> u16 {
        self.code.status()
    }
}
