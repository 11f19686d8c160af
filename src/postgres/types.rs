//! Domain values read from PostgreSQL rows. Values are bound as plain `i64`, `&str` and
//! `String` (a timestamp as its one text form), so only reading needs these.

use std::error::Error as StdError;

use tokio_postgres::Row;
use tokio_postgres::types::{FromSql, Type};

use crate::domain::{
    AdjustmentId, CategoryId, Name, OrderId, PetId, PetStatus, Price, Role, StaffId, Timestamp,
};
use crate::error::{Error, Result};

type Boxed = Box<dyn StdError + Sync + Send>;

impl<'a> FromSql<'a> for Timestamp {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Boxed> {
        Ok(Timestamp::parse(<&str>::from_sql(ty, raw)?)?)
    }
    fn accepts(ty: &Type) -> bool {
        <&str as FromSql>::accepts(ty)
    }
}

impl<'a> FromSql<'a> for PetStatus {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Boxed> {
        Ok(<&str>::from_sql(ty, raw)?.parse::<PetStatus>()?)
    }
    fn accepts(ty: &Type) -> bool {
        <&str as FromSql>::accepts(ty)
    }
}

impl<'a> FromSql<'a> for Role {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Boxed> {
        Ok(<&str>::from_sql(ty, raw)?.parse::<Role>()?)
    }
    fn accepts(ty: &Type) -> bool {
        <&str as FromSql>::accepts(ty)
    }
}

impl<'a> FromSql<'a> for Name {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Boxed> {
        Ok(Name::parse(<&str>::from_sql(ty, raw)?)?)
    }
    fn accepts(ty: &Type) -> bool {
        <&str as FromSql>::accepts(ty)
    }
}

impl<'a> FromSql<'a> for Price {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Boxed> {
        Ok(Price::from_cents(i64::from_sql(ty, raw)?)?)
    }
    fn accepts(ty: &Type) -> bool {
        <i64 as FromSql>::accepts(ty)
    }
}

macro_rules! id_from_sql {
    ($($id:ty),*) => {$(
        impl<'a> FromSql<'a> for $id {
            fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Boxed> {
                Ok(<$id>::try_from(i64::from_sql(ty, raw)?)?)
            }
            fn accepts(ty: &Type) -> bool {
                <i64 as FromSql>::accepts(ty)
            }
        }
    )*};
}

id_from_sql!(PetId, CategoryId, OrderId, AdjustmentId, StaffId);

/// Column `i` of `row`; a value that does not read is an internal error, not a panic.
pub(super) fn col<'a, T: FromSql<'a>>(row: &'a Row, i: usize) -> Result<T> {
    row.try_get(i).map_err(|e| Error::internal(format!("PostgreSQL row, column {i}: {e}")))
}
