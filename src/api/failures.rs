//! Slowing down key guessing: a client (IP address) that fails to authenticate too often
//! within a window is answered `429 rate_limited` until the window has passed, but only
//! for requests without a right key. On loopback every program shares 127.0.0.1, so a
//! misbehaving script must never lock out the till that holds a good key.
//!
//! Written by hand, a fixed-window counter per client: `governor`, the maintained choice,
//! keeps an unbounded map of keys (pruned only on request) and its own clock, while this
//! needs a hard cap on the clients it remembers and the server's injectable [`Clock`].
//!
//! [`Clock`]: crate::clock::Clock

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Mutex;
use std::time::Duration;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};

use super::error::ApiError;
use crate::error::ErrorCode;

/// How many failed authentications one client may make within `window` before it is
/// refused (a server setting; tests lower or raise it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailureLimit {
    pub max_failures: u32,
    pub window: Duration,
}

impl Default for FailureLimit {
    fn default() -> Self {
        Self { max_failures: 10, window: Duration::from_secs(60) }
    }
}

/// Clients remembered at most; past it, finished windows go first, then the oldest.
const MAX_CLIENTS: usize = 4096;

pub struct FailedAuth {
    limit: FailureLimit,
    clients: Mutex<HashMap<IpAddr, Window>>,
}

#[derive(Debug, Clone, Copy)]
struct Window {
    started: DateTime<Utc>,
    failures: u32,
}

impl Default for FailedAuth {
    fn default() -> Self {
        Self::new(FailureLimit::default())
    }
}

impl FailedAuth {
    pub fn new(limit: FailureLimit) -> Self {
        Self { limit, clients: Mutex::new(HashMap::new()) }
    }

    /// Counts a failed authentication by `client`. Returns how long it must wait when
    /// this failure is over the limit.
    pub fn record(&self, client: IpAddr, now: DateTime<Utc>) -> Option<Duration> {
        let client = group(client);
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if !clients.contains_key(&client) && clients.len() >= MAX_CLIENTS {
            self.make_room(&mut clients, now);
        }
        let window = clients.entry(client).or_insert(Window { started: now, failures: 0 });
        if self.remaining(window, now).is_none() {
            *window = Window { started: now, failures: 0 };
        }
        window.failures = window.failures.saturating_add(1);
        if window.failures == self.limit.max_failures.saturating_add(1) {
            tracing::warn!(
                %client,
                "{} failed authentications within {} s: refusing this client's requests without \
                 a right API key until the window ends",
                self.limit.max_failures,
                self.limit.window.as_secs()
            );
        }
        self.wait(window, now)
    }

    /// How long `client` must still wait, without counting anything (a request that
    /// carries no key at all is no guess).
    pub fn blocked(&self, client: IpAddr, now: DateTime<Utc>) -> Option<Duration> {
        let clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        clients.get(&group(client)).and_then(|window| self.wait(window, now))
    }

    fn wait(&self, window: &Window, now: DateTime<Utc>) -> Option<Duration> {
        if window.failures > self.limit.max_failures { self.remaining(window, now) } else { None }
    }

    /// The time left in `window`, `None` once it has ended (or the clock went backwards).
    fn remaining(&self, window: &Window, now: DateTime<Utc>) -> Option<Duration> {
        let elapsed = (now - window.started).to_std().ok()?;
        self.limit.window.checked_sub(elapsed).filter(|left| !left.is_zero())
    }

    fn make_room(&self, clients: &mut HashMap<IpAddr, Window>, now: DateTime<Utc>) {
        clients.retain(|_, window| self.remaining(window, now).is_some());
        if clients.len() >= MAX_CLIENTS {
            let oldest = clients.iter().min_by_key(|(_, w)| w.started).map(|(ip, _)| *ip);
            if let Some(ip) = oldest {
                clients.remove(&ip);
            }
        }
    }
}

/// One IPv6 host usually holds a whole /64, so that is what counts as one client; an
/// IPv4 address mapped into IPv6 is the IPv4 client it stands for.
fn group(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & (u128::MAX << 64))),
        },
        v4 => v4,
    }
}

/// The answer to a client that must wait `wait` before a request without a right key is
/// answered again: `429 rate_limited` with `Retry-After`.
pub fn too_many(wait: Duration) -> Response {
    let secs = retry_after_secs(wait);
    let message = format!(
        "too many failed authentications from this address; requests without a valid API key \
         are refused for {secs} s more"
    );
    let mut response = ApiError::new(ErrorCode::RateLimited, message).into_response();
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

/// `Retry-After` in whole seconds, rounded up so that a client that waits that long is
/// let through.
fn retry_after_secs(wait: Duration) -> u64 {
    wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    #[test]
    fn the_failure_after_the_limit_waits_for_the_window_to_end() {
        let limiter = FailedAuth::new(FailureLimit { max_failures: 3, window: Duration::from_secs(60) });
        for second in 0..3 {
            assert_eq!(limiter.record(ME, at(second)), None);
        }
        assert_eq!(limiter.blocked(ME, at(3)), None, "three failures are allowed");
        assert_eq!(limiter.record(ME, at(10)), Some(Duration::from_secs(50)));
        assert_eq!(limiter.blocked(ME, at(59)), Some(Duration::from_secs(1)));
        assert_eq!(limiter.blocked(ME, at(60)), None, "the window has passed");
        assert_eq!(limiter.record(ME, at(60)), None, "a new window starts");
    }

    #[test]
    fn clients_are_counted_apart_and_ipv6_by_its_64_prefix() {
        let limiter = FailedAuth::new(FailureLimit { max_failures: 1, window: Duration::from_secs(60) });
        limiter.record(ME, at(0));
        assert!(limiter.record(ME, at(1)).is_some());
        assert_eq!(limiter.blocked("10.0.0.2".parse().unwrap(), at(1)), None);
        limiter.record("2001:db8::1".parse().unwrap(), at(0));
        assert!(limiter.record("2001:db8::2".parse().unwrap(), at(0)).is_some(), "same /64");
        assert!(limiter.blocked("::ffff:127.0.0.1".parse().unwrap(), at(2)).is_some(), "mapped IPv4");
    }

    #[test]
    fn memory_is_bounded_and_the_oldest_client_goes_first() {
        let limiter = FailedAuth::new(FailureLimit { max_failures: 0, window: Duration::from_secs(60) });
        limiter.record(ME, at(0));
        for n in 0..MAX_CLIENTS as u32 {
            limiter.record(IpAddr::V4((0x0a00_0000 + n).into()), at(1));
        }
        assert_eq!(limiter.clients.lock().unwrap().len(), MAX_CLIENTS);
        assert_eq!(limiter.blocked(ME, at(2)), None, "the oldest was forgotten");
        assert!(limiter.blocked(IpAddr::V4(0x0a00_0000.into()), at(2)).is_some());
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_secs(Duration::from_secs(7)), 7);
    }
}
