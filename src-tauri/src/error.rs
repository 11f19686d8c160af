//! What a failed command gives the UI: the core error as the same `{code, message, status}`
//! object the REST API uses, so the UI handles one shape whichever backend failed.

use petstore::{Error, ErrorCode};
use serde::Serialize;

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    pub code: ErrorCode,
    pub message: String,
    pub status: u16,
}

impl From<Error> for CommandError {
    fn from(e: Error) -> Self {
        Self { status: e.status(), code: e.code, message: e.message }
    }
}

impl CommandError {
    pub fn validation(message: impl Into<String>) -> Self {
        Error::validation(message).into()
    }

    pub fn internal(detail: impl std::fmt::Display) -> Self {
        Error::internal(detail).into()
    }
}

pub type CommandResult<T> = Result<T, CommandError>;
