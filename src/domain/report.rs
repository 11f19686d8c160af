//! The sales report (`GET /store/reports/sales`): one row per day of the shop's time zone,
//! counted from the orders completed that day. An order counts on the day its completion
//! time reads as in the shop's zone; [`day_spans`](super::day_spans) turns that rule into
//! stretches of UTC time, and each engine adds up the orders of each stretch in SQL, so a
//! report holds one row per stretch in memory, however many orders its range has
//! (tests/api/reports.rs holds both engines to the per-order reading).

use chrono::{Days, NaiveDate};
use serde::{Deserialize, Serialize};

use super::shop_days::first_instant;
use super::{Money, TimeZone, Timestamp};

/// The longest report, in days.
pub const MAX_REPORT_DAYS: u64 = 366;

/// A range of the shop's days, `from` to `to` inclusive, at most [`MAX_REPORT_DAYS`] long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayRange {
    from: NaiveDate,
    to: NaiveDate,
}

impl DayRange {
    pub fn new(from: NaiveDate, to: NaiveDate) -> Result<Self, String> {
        if to < from {
            return Err(format!("to ({to}) is before from ({from})"));
        }
        let days = (to - from).num_days() as u64 + 1;
        if days > MAX_REPORT_DAYS {
            return Err(format!("a report covers at most {MAX_REPORT_DAYS} days; {from} to {to} is {days}"));
        }
        Ok(Self { from, to })
    }

    /// `from` to `to` of any length (an export's range).
    pub fn any(from: NaiveDate, to: NaiveDate) -> Result<Self, String> {
        if to < from {
            return Err(format!("to ({to}) is before from ({from})"));
        }
        Ok(Self { from, to })
    }

    pub fn from(&self) -> NaiveDate {
        self.from
    }

    pub fn to(&self) -> NaiveDate {
        self.to
    }

    /// The instants the range covers in `zone`: from the first day's midnight up to, not
    /// including, the midnight after the last day.
    pub fn instants(&self, zone: TimeZone) -> (Timestamp, Timestamp) {
        (first_instant(zone, self.from), first_instant(zone, self.to + Days::new(1)))
    }
}

/// The first and last day a report or an export may name. Every instant of these days, in
/// any zone, is a timestamp of years 0 to 9999, the ones stored timestamps are written in
/// (and compared as text); a day beyond them overflowed the date arithmetic (a panic).
pub const FIRST_DAY: NaiveDate = NaiveDate::from_ymd_opt(1, 1, 1).expect("a date");
pub const LAST_DAY: NaiveDate = NaiveDate::from_ymd_opt(9999, 12, 30).expect("a date");

/// A `from` or `to` parameter: `YYYY-MM-DD`, from [`FIRST_DAY`] to [`LAST_DAY`]. `name`
/// is the parameter's, for the message.
pub fn parse_day(name: &str, raw: &str) -> Result<NaiveDate, String> {
    let day = NaiveDate::parse_from_str(raw, "%Y-%m-%d")
        .map_err(|_| format!("{name} must be a date like 2026-11-24, got {raw:?}"))?;
    if !(FIRST_DAY..=LAST_DAY).contains(&day) {
        return Err(format!("{name} must be a date from {FIRST_DAY} to {LAST_DAY}, got {raw:?}"));
    }
    Ok(day)
}

/// One day of the report.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SalesDay {
    /// `YYYY-MM-DD` in the shop's time zone.
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub date: NaiveDate,
    /// Orders completed that day.
    pub orders: i64,
    /// Units they took.
    pub units: i64,
    /// What they earned: the sum of their totals (an order without a price adds none).
    pub revenue: Money,
}

/// What the orders completed in one [`DaySpan`](super::DaySpan) add up to, as a database
/// counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanTotals {
    pub day: NaiveDate,
    pub orders: i64,
    pub units: i64,
    /// The sum of quantity times unit price (an order without a price adds none).
    pub revenue_cents: i64,
}

/// Every day of `range`, each with the totals of its spans (days without sales too, so
/// that a chart has no gaps).
pub fn sales_days(range: DayRange, totals: impl IntoIterator<Item = SpanTotals>) -> Vec<SalesDay> {
    let days = (range.to - range.from).num_days() as usize + 1;
    let mut out: Vec<SalesDay> = (0..days)
        .map(|i| SalesDay {
            date: range.from + Days::new(i as u64),
            orders: 0,
            units: 0,
            revenue: Money::ZERO,
        })
        .collect();
    for span in totals {
        let Some(row) =
            out.get_mut((span.day - range.from).num_days() as usize).filter(|_| span.day >= range.from)
        else {
            continue;
        };
        row.orders += span.orders;
        row.units += span.units;
        row.revenue =
            Money::from_cents(row.revenue.cents().saturating_add(span.revenue_cents)).unwrap_or(row.revenue);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn a_range_is_at_most_366_days_and_in_order() {
        assert!(DayRange::new(day("2026-01-01"), day("2026-12-31")).is_ok());
        assert!(DayRange::new(day("2024-01-01"), day("2024-12-31")).is_ok(), "a leap year: 366");
        let long = DayRange::new(day("2026-01-01"), day("2027-01-02")).unwrap_err();
        assert!(long.contains("at most 366"), "{long}");
        assert!(DayRange::new(day("2026-02-02"), day("2026-02-01")).is_err());
    }

    #[test]
    fn orders_count_on_the_shops_day_and_every_day_has_a_row() {
        let madrid = TimeZone::parse("Europe/Madrid").unwrap();
        let range = DayRange::new(day("2026-11-23"), day("2026-11-25")).unwrap();
        let (start, end) = range.instants(madrid);
        assert_eq!(
            (start.to_string(), end.to_string()),
            ("2026-11-22T23:00:00Z".into(), "2026-11-25T23:00:00Z".into())
        );
        let spans = crate::domain::day_spans(range, madrid);
        let days: Vec<String> = spans.iter().map(|s| format!("{} {}..{}", s.day, s.start, s.end)).collect();
        assert_eq!(
            days,
            [
                "2026-11-23 2026-11-22T23:00:00Z..2026-11-23T23:00:00Z",
                "2026-11-24 2026-11-23T23:00:00Z..2026-11-24T23:00:00Z",
                "2026-11-25 2026-11-24T23:00:00Z..2026-11-25T23:00:00Z",
            ]
        );
        let totals = [SpanTotals { day: day("2026-11-24"), orders: 2, units: 3, revenue_cents: 2500 }];
        let figures: Vec<(String, i64, i64, String)> = sales_days(range, totals)
            .iter()
            .map(|r| (r.date.to_string(), r.orders, r.units, r.revenue.to_string()))
            .collect();
        assert_eq!(
            figures,
            [
                ("2026-11-23".into(), 0, 0, "0.00".into()),
                ("2026-11-24".into(), 2, 3, "25.00".into()),
                ("2026-11-25".into(), 0, 0, "0.00".into()),
            ]
        );
    }

    #[test]
    fn a_day_is_bounded_where_it_is_parsed() {
        assert_eq!(parse_day("to", "2026-11-24"), Ok(day("2026-11-24")));
        for raw in ["+262142-12-31", "9999-12-31", "0000-12-31", "-0001-01-01"] {
            let refused = parse_day("to", raw).unwrap_err();
            assert!(refused.starts_with("to must be a date"), "{raw}: {refused}");
        }
        let last = DayRange::any(FIRST_DAY, LAST_DAY).unwrap();
        for zone in ["Pacific/Kiritimati", "Etc/GMT+12"] {
            let (start, end) = last.instants(TimeZone::parse(zone).unwrap());
            assert!(start.to_string().len() == 20 && end.to_string().len() == 20, "{zone}: {start} {end}");
        }
    }
}
