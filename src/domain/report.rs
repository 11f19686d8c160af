//! The sales report (`GET /store/reports/sales`): one row per day of the shop's time zone,
//! counted from the orders completed that day. Both engines hand over the completed orders
//! of the range as they are stored (completion time, quantity, unit price) and
//! [`sales_days`] counts them, so the rules (which day an order falls on, what it earned)
//! are written once.

use chrono::{Days, NaiveDate, TimeZone as _};
use serde::{Deserialize, Serialize};

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
        let midnight = |day: NaiveDate| {
            // A midnight that a change of clocks skips begins the day at the first
            // instant it has.
            let local = day.and_hms_opt(0, 0, 0).expect("midnight");
            let at = zone.tz().from_local_datetime(&local).earliest().unwrap_or_else(|| {
                zone.tz()
                    .from_local_datetime(&(local + chrono::TimeDelta::hours(1)))
                    .earliest()
                    .expect("an hour later")
            });
            Timestamp::from(at.with_timezone(&chrono::Utc))
        };
        (midnight(self.from), midnight(self.to + Days::new(1)))
    }
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

/// A completed order as the report needs it.
pub struct Completed {
    pub at: Timestamp,
    pub quantity: i64,
    pub unit_price_cents: Option<i64>,
}

/// Every day of `range`, each with what was completed on it in `zone` (days without sales
/// too, so that a chart has no gaps).
pub fn sales_days(
    range: DayRange,
    zone: TimeZone,
    completed: impl IntoIterator<Item = Completed>,
) -> Vec<SalesDay> {
    let days = (range.to - range.from).num_days() as usize + 1;
    let mut out: Vec<SalesDay> = (0..days)
        .map(|i| SalesDay {
            date: range.from + Days::new(i as u64),
            orders: 0,
            units: 0,
            revenue: Money::ZERO,
        })
        .collect();
    for order in completed {
        let day = order.at.as_datetime().with_timezone(&zone.tz()).date_naive();
        let Some(row) = out.get_mut((day - range.from).num_days() as usize).filter(|_| day >= range.from)
        else {
            continue;
        };
        row.orders += 1;
        row.units += order.quantity;
        let earned = order.unit_price_cents.unwrap_or(0).saturating_mul(order.quantity);
        row.revenue = Money::from_cents(row.revenue.cents().saturating_add(earned)).unwrap_or(row.revenue);
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
        let at = |s: &str| Timestamp::parse(s).unwrap();
        let rows = sales_days(
            range,
            madrid,
            [
                // 23:30 UTC on the 23rd is 00:30 on the 24th in Madrid.
                Completed { at: at("2026-11-23T23:30:00Z"), quantity: 2, unit_price_cents: Some(1250) },
                Completed { at: at("2026-11-24T10:00:00Z"), quantity: 1, unit_price_cents: None },
                Completed { at: at("2026-11-23T09:00:00Z"), quantity: 3, unit_price_cents: Some(100) },
            ],
        );
        let figures: Vec<(String, i64, i64, String)> =
            rows.iter().map(|r| (r.date.to_string(), r.orders, r.units, r.revenue.to_string())).collect();
        assert_eq!(
            figures,
            [
                ("2026-11-23".into(), 1, 3, "3.00".into()),
                ("2026-11-24".into(), 2, 3, "25.00".into()),
                ("2026-11-25".into(), 0, 0, "0.00".into()),
            ]
        );
    }
}
