//! `Retry-After` (RFC 9110, section 10.2.3): how long a server that sheds load (503) or
//! limits a client (429) asks to be left alone. Read in both of its forms, and bounded,
//! since a server could ask for anything.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::RETRY_AFTER;

/// The longest wait a server is obeyed for: past this the till tries again anyway, so that
/// a wrong header cannot keep it away for days.
pub(super) const MOST: Duration = Duration::from_secs(10 * 60);

/// The wait `response` asks for, if it is a 503 or 429 that says one.
pub(super) fn asked(response: &reqwest::Response) -> Option<Duration> {
    if !matches!(response.status(), StatusCode::SERVICE_UNAVAILABLE | StatusCode::TOO_MANY_REQUESTS) {
        return None;
    }
    let value = response.headers().get(RETRY_AFTER)?.to_str().ok()?;
    parse(value, chrono::Utc::now())
}

/// `value` as a wait from `now`: delay-seconds, or an HTTP-date.
fn parse(value: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let value = value.trim();
    let wait = if let Ok(seconds) = value.parse::<u64>() {
        Duration::from_secs(seconds)
    } else {
        let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
        (at.with_timezone(&chrono::Utc) - now).to_std().unwrap_or(Duration::ZERO)
    };
    Some(wait.min(MOST))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_are_read_and_bounded() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-27T06:00:00Z").unwrap().to_utc();
        assert_eq!(parse("3", now), Some(Duration::from_secs(3)));
        assert_eq!(parse("Fri, 27 Nov 2026 06:00:30 GMT", now), Some(Duration::from_secs(30)));
        assert_eq!(parse("Fri, 27 Nov 2026 05:00:00 GMT", now), Some(Duration::ZERO), "a date past");
        assert_eq!(parse("99999999999", now), Some(MOST));
        assert_eq!(parse("soon", now), None);
    }
}
