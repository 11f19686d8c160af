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
        if let Some(t) = Self::parse_written(s) {
            return Ok(t);
        }
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

impl Timestamp {
    /// `YYYY-MM-DDTHH:MM:SSZ` written digit by digit, for the years 0 to 9999 (every
    /// timestamp this store makes). Every pet and order of a response has two or three of
    /// these, and going through `fmt` (or chrono's `to_rfc3339_opts`, which builds a
    /// String) for each was 6 % of serving a page of pets.
    fn rfc3339(&self) -> Option<[u8; 20]> {
        let (date, time) = (self.0.date_naive(), self.0.time());
        let year = u32::try_from(date.year()).ok().filter(|y| *y <= 9999)?;
        let mut out = *b"0000-00-00T00:00:00Z";
        let mut put = |at: usize, value: u32, digits: usize| {
            let mut value = value;
            for i in (at..at + digits).rev() {
                out[i] = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        put(0, year, 4);
        put(5, date.month(), 2);
        put(8, date.day(), 2);
        put(11, time.hour(), 2);
        put(14, time.minute(), 2);
        put(17, time.second(), 2);
        Some(out)
    }
}

impl Timestamp {
    /// The form [`Timestamp::rfc3339`] writes, which is how every stored timestamp reads:
    /// digit by digit, without chrono's general parser (every pet read has two).
    fn parse_written(s: &str) -> Option<Self> {
        let b: &[u8; 20] = s.as_bytes().try_into().ok()?;
        let separators = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':'), (19, b'Z')];
        if separators.iter().any(|&(at, c)| b[at] != c) {
            return None;
        }
        let number = |from: usize, to: usize| {
            b[from..to]
                .iter()
                .try_fold(0_u32, |n, d| d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0')))
        };
        let date = chrono::NaiveDate::from_ymd_opt(number(0, 4)? as i32, number(5, 7)?, number(8, 10)?)?;
        let time = chrono::NaiveTime::from_hms_opt(number(11, 13)?, number(14, 16)?, number(17, 19)?)?;
        Some(Self(date.and_time(time).and_utc()))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rfc3339() {
            // Only ASCII digits and separators were written.
            Some(text) => f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?),
            None => f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Secs, true)),
        }
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.rfc3339() {
            Some(text) => s.serialize_str(std::str::from_utf8(&text).map_err(serde::ser::Error::custom)?),
            None => s.collect_str(self),
        }
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
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
    fn the_quick_reading_of_the_written_form_agrees_with_chrono() {
        let texts = [
            "2026-11-22T10:15:00Z",
            "2026-02-30T10:00:00Z",
            "2026-11-22T24:00:00Z",
            "2026-12-31T23:59:60Z",
            "2026-11-22t10:15:00z",
            "+026-11-22T10:15:00Z",
            "2026-1a-22T10:15:00Z",
            "2026-11-22 10:15:00Z",
            "0000-01-01T00:00:00Z",
        ];
        for text in texts {
            let chrono =
                DateTime::parse_from_rfc3339(text).ok().map(|t| Timestamp::from(t.with_timezone(&Utc)));
            assert_eq!(Timestamp::parse(text).ok(), chrono, "{text}");
        }
    }

    #[test]
    fn the_written_form_is_chronos_rfc_3339_in_seconds() {
        let mut t = DateTime::parse_from_rfc3339("0001-01-01T00:00:00Z").unwrap().with_timezone(&Utc);
        let step = chrono::Duration::seconds(86_399 * 367 + 3_601);
        while t.year() <= 9999 {
            let expected = t.to_rfc3339_opts(SecondsFormat::Secs, true);
            assert_eq!(Timestamp::from(t).to_string(), expected);
            assert_eq!(serde_json::to_string(&Timestamp::from(t)).unwrap(), format!("\"{expected}\""));
            assert_eq!(Timestamp::parse(&expected), Ok(Timestamp::from(t)), "read back");
            t += step;
        }
        // Outside the years written digit by digit, chrono writes them.
        for (year, month, day) in [(10_000, 1, 1), (-1, 12, 31), (0, 1, 1)] {
            let t = chrono::TimeZone::with_ymd_and_hms(&Utc, year, month, day, 23, 59, 59).unwrap();
            let expected = t.to_rfc3339_opts(SecondsFormat::Secs, true);
            assert_eq!(Timestamp::from(t).to_string(), expected);
            assert_eq!(serde_json::to_string(&Timestamp::from(t)).unwrap(), format!("\"{expected}\""));
        }
    }
}
