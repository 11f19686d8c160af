//! Where the shop's days begin and end in UTC, so that a database can count per day with
//! plain comparisons of stored timestamps: neither engine is asked to know time zones
//! (SQLite does not; PostgreSQL's zone data need not be chrono-tz's), and both count
//! exactly the orders that reading each completion time in the shop's zone would.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Offset as _, TimeDelta, TimeZone as _, Utc};

use super::{DayRange, TimeZone, Timestamp};

/// A stretch of time, `start` up to but not including `end`, every instant of which falls
/// on `day` in the shop's time zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DaySpan {
    pub day: NaiveDate,
    pub start: Timestamp,
    pub end: Timestamp,
}

/// The stretches of [`DayRange::instants`] in `zone`, in order, each on one day of `range`
/// (time that a change of clocks puts on a day outside the range is left out, as the
/// per-order reading left such orders out). Usually one span a day; a change of clocks
/// across midnight can split a day in two.
pub fn day_spans(range: DayRange, zone: TimeZone) -> Vec<DaySpan> {
    let (start, end) = range.instants(zone);
    let (mut at, end) = (start.as_datetime(), end.as_datetime());
    let mut spans: Vec<DaySpan> = Vec::with_capacity(range_days(range) + 2);
    while at < end {
        let offset = offset_at(zone, at);
        let day = (at.naive_utc() + offset).date();
        // Under this offset the day ends at the next local midnight, unless the offset
        // changes first.
        let midnight = (day.succ_opt().unwrap_or(NaiveDate::MAX).and_time(chrono::NaiveTime::MIN) - offset)
            .and_utc()
            .min(end);
        let next = next_change(zone, at, midnight, offset).unwrap_or(midnight);
        let (from, to) = (Timestamp::from(at), Timestamp::from(next));
        match spans.last_mut() {
            Some(last) if last.day == day && last.end == from => last.end = to,
            _ if day >= range.from() && day <= range.to() => {
                spans.push(DaySpan { day, start: from, end: to })
            }
            _ => {}
        }
        at = next;
    }
    spans
}

fn range_days(range: DayRange) -> usize {
    (range.to() - range.from()).num_days() as usize + 1
}

/// The zone's offset from UTC at `at`.
fn offset_at(zone: TimeZone, at: DateTime<Utc>) -> TimeDelta {
    TimeDelta::seconds(i64::from(zone.tz().offset_from_utc_datetime(&at.naive_utc()).fix().local_minus_utc()))
}

/// The first instant after `from` and before `until` whose offset is not `offset`. Zones
/// change their clocks months apart, so looking hour by hour misses none; the second of the
/// change is then found by halving.
fn next_change(
    zone: TimeZone,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
    offset: TimeDelta,
) -> Option<DateTime<Utc>> {
    let mut probe = from;
    while probe < until {
        let step = (probe + TimeDelta::hours(1)).min(until);
        if offset_at(zone, step) != offset {
            let (mut same, mut changed) = (probe, step);
            while changed - same > TimeDelta::seconds(1) {
                let middle = same + (changed - same) / 2;
                if offset_at(zone, middle) == offset {
                    same = middle;
                } else {
                    changed = middle;
                }
            }
            return Some(changed);
        }
        probe = step;
    }
    None
}

/// The first instant of `day` in `zone`: its midnight, or when a change of clocks skips
/// midnight, the first local time of the day that exists (looked for a quarter of an hour
/// at a time, as clocks change on the quarter hour; a day skipped whole, as Samoa skipped
/// 2011-12-30, begins where the next one does).
pub(super) fn first_instant(zone: TimeZone, day: NaiveDate) -> Timestamp {
    let midnight: NaiveDateTime = day.and_time(chrono::NaiveTime::MIN);
    let at = (0..=26 * 4)
        .find_map(|quarter| {
            zone.tz().from_local_datetime(&(midnight + TimeDelta::minutes(15 * quarter))).earliest()
        })
        .map(|at| at.with_timezone(&Utc))
        // No zone skips more than a day; were one to, its midnight read as UTC stands in.
        .unwrap_or_else(|| midnight.and_utc());
    Timestamp::from(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    /// Every instant of the range, a few minutes apart (and the seconds around each
    /// span's ends), falls in the span of the day it reads as in the zone, and nothing
    /// in the range outside every span reads as a day of the range: the spans count
    /// exactly what reading each order's time counted.
    #[test]
    fn spans_hold_exactly_the_instants_that_read_as_their_day() {
        let zones = [
            "UTC",
            "Europe/Madrid",
            "America/New_York",
            // Falls back at midnight to 23:00 of the day before: the repeated hour is the
            // day before's.
            "Asia/Beirut",
            // Springs forward at midnight: the day starts at 01:00.
            "America/Santiago",
            "America/Havana",
            // Half-hour change of clocks.
            "Australia/Lord_Howe",
            "Asia/Kathmandu",
            // Skipped 2011-12-30 whole.
            "Pacific/Apia",
            "Pacific/Kiritimati",
        ];
        for name in zones {
            let zone = TimeZone::parse(name).unwrap();
            for (from, to) in [("2011-12-01", "2012-01-31"), ("2026-01-01", "2026-12-31")] {
                let range = DayRange::new(day(from), day(to)).unwrap();
                let spans = day_spans(range, zone);
                let (start, end) = range.instants(zone);
                let reads_as = |at: DateTime<Utc>| at.with_timezone(&zone.tz()).date_naive();
                let span_of = |at: DateTime<Utc>| {
                    spans
                        .iter()
                        .find(|s| s.start.as_datetime() <= at && at < s.end.as_datetime())
                        .map(|s| s.day)
                };
                let mut samples: Vec<DateTime<Utc>> = Vec::new();
                let mut at = start.as_datetime();
                while at < end.as_datetime() {
                    samples.push(at);
                    at += TimeDelta::minutes(7);
                }
                for s in &spans {
                    for edge in [s.start.as_datetime(), s.end.as_datetime()] {
                        samples.extend([edge - TimeDelta::seconds(1), edge]);
                    }
                }
                for at in
                    samples.into_iter().filter(|at| *at >= start.as_datetime() && *at < end.as_datetime())
                {
                    let day = reads_as(at);
                    let expected = (day >= range.from() && day <= range.to()).then_some(day);
                    assert_eq!(span_of(at), expected, "{name} {from}..{to}: {at}");
                }
                assert!(spans.windows(2).all(|w| w[0].end <= w[1].start), "{name}: in order, apart");
            }
        }
    }

    #[test]
    fn a_day_skipped_whole_begins_where_the_next_one_does() {
        let apia = TimeZone::parse("Pacific/Apia").unwrap();
        assert_eq!(first_instant(apia, day("2011-12-30")), first_instant(apia, day("2011-12-31")));
        let santiago = TimeZone::parse("America/Santiago").unwrap();
        assert_eq!(first_instant(santiago, day("2026-09-06")).to_string(), "2026-09-06T04:00:00Z");
    }
}
