//! Timestamps: RFC 3339 in UTC with whole seconds (`2026-11-22T10:15:00Z`), the one format
//! used on the wire and in the database, where it also sorts correctly as text.

use std::fmt;

use chrono::{DateTime, Datelike, SecondsFormat, SubsecRound, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    pub fn now() -> Self {
        Self::from(Utc::now())
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        DateTime::parse_from_rfc3339(s)
            .map(|t| Self::from(t.with_timezone(&Utc)))
            .map_err(|_| format!("{s:?} is not an RFC 3339 date-time like 2026-11-22T10:15:00Z"))
    }

    pub fn as_datetime(self) -> DateTime<Utc> {
        self.0
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(t: DateTime<Utc>) -> Self {
        Self(t.trunc_subsecs(0))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Written field by field: every pet and order in a response has two or three of
        // these, and `to_rfc3339_opts` builds a String for each.
        let (date, time) = (self.0.date_naive(), self.0.time());
        if !(0..=9999).contains(&date.year()) {
            return f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Secs, true));
        }
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            date.year(),
            date.month(),
            date.day(),
            time.hour(),
            time.minute(),
            time.second()
        )
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl rusqlite::ToSql for Timestamp {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.to_string().into())
    }
}

impl rusqlite::types::FromSql for Timestamp {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let s = v.as_str()?;
        Self::parse(s).map_err(|e| rusqlite::types::FromSqlError::Other(e.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_normalised_to_utc_seconds() {
        let t = Timestamp::parse("2026-11-22T11:15:00.750+01:00").unwrap();
        assert_eq!(t.to_string(), "2026-11-22T10:15:00Z");
        assert!(Timestamp::parse("22/11/2026").is_err());
    }

    #[test]
    fn the_written_form_is_chronos_rfc_3339_in_seconds() {
        let mut t = DateTime::parse_from_rfc3339("0001-01-01T00:00:00Z").unwrap().with_timezone(&Utc);
        let step = chrono::Duration::seconds(86_399 * 367 + 3_601);
        while t.year() <= 9999 {
            assert_eq!(Timestamp::from(t).to_string(), t.to_rfc3339_opts(SecondsFormat::Secs, true));
            t += step;
        }
    }
}
