//! Domain values in and out of SQLite, and SQLite's errors as the core's: beside the engine
//! that needs them, so that the domain and the error type know no database crate (the
//! PostgreSQL twins are in `postgres/types.rs`).

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
use rusqlite::{ErrorCode as SqliteCode, ToSql};

use crate::domain::{Actor, AdjustmentId, CategoryId, OrderId, PetId, PetStatus, StaffId, Timestamp};
use crate::error::Error;

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            // SQLite gave up waiting for a lock (after the connection's busy timeout).
            Some(SqliteCode::DatabaseBusy | SqliteCode::DatabaseLocked) => Error::busy(e),
            _ => Error::internal(e),
        }
    }
}

/// A timestamp is stored as its one text form, which sorts as the moments do.
impl ToSql for Timestamp {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.to_string().into())
    }
}

impl FromSql for Timestamp {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        Timestamp::parse(v.as_str()?).map_err(|e| FromSqlError::Other(e.into()))
    }
}

impl ToSql for PetStatus {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for PetStatus {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        v.as_str()?.parse().map_err(|e: String| FromSqlError::Other(e.into()))
    }
}

/// Who made a record is kept as the [`Actor`]'s JSON, the same text the wire shows (NULL,
/// read as `None`, for what was made before the shop kept staff).
impl ToSql for Actor {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        let json =
            serde_json::to_string(self).map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
        Ok(json.into())
    }
}

impl FromSql for Actor {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        serde_json::from_str(v.as_str()?).map_err(|e| FromSqlError::Other(e.into()))
    }
}

macro_rules! id_sql {
    ($($id:ty),*) => {$(
        impl ToSql for $id {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(self.get().into())
            }
        }

        /// A stored id is positive (`AUTOINCREMENT` starts at 1); anything else is a
        /// damaged row, refused as PostgreSQL's reader refuses it.
        impl FromSql for $id {
            fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
                let n = i64::column_result(v)?;
                <$id>::try_from(n).map_err(|_| FromSqlError::OutOfRange(n))
            }
        }
    )*};
}

id_sql!(PetId, CategoryId, OrderId, AdjustmentId, StaffId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_come_back_as_they_went_in_and_a_stored_id_below_one_is_refused() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let (pet, at) = (PetId::try_from(7).unwrap(), Timestamp::parse("2026-11-22T10:15:00Z").unwrap());
        let back: (PetId, Timestamp, PetStatus) = conn
            .query_row("SELECT ?1, ?2, ?3", rusqlite::params![pet, at, PetStatus::Sold], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap();
        assert_eq!(back, (pet, at, PetStatus::Sold));
        assert_eq!(conn.query_row("SELECT typeof(?1)", [at], |r| r.get::<_, String>(0)).unwrap(), "text");
        let zero = conn.query_row("SELECT 0", [], |r| r.get::<_, OrderId>(0));
        assert!(
            matches!(
                zero,
                Err(rusqlite::Error::FromSqlConversionFailure(..)
                    | rusqlite::Error::IntegralValueOutOfRange(..))
            ),
            "{zero:?}"
        );
    }
}
