//! How long the mirror's task waits before it asks the server again. After a restart of
//! the server, every till of a chain finds it gone at the same moment: with fixed pauses
//! they would all come back in step, a thousand requests in the same millisecond, again
//! and again. So each pause is drawn at random up to a cap that doubles ("full jitter"),
//! and a server that asked for time (`Retry-After`) gets at least that, plus a share of
//! the cap, so that the tills it turned away do not return together either.

use std::time::Duration;

/// The cap of the first pause after a failure, and the largest cap.
pub(super) const FIRST: Duration = Duration::from_millis(250);
pub(super) const MOST: Duration = Duration::from_secs(5);

/// A full copy of the shop is the heaviest thing a till asks of the server. When the
/// server's feed sends every till to copy anew (a bulk load), each waits a random part of
/// this before it starts.
pub(super) const COPY_SPREAD: Duration = Duration::from_secs(20);

/// The pauses of one run of failures.
#[derive(Debug)]
pub(super) struct Backoff {
    failures: u32,
}

impl Backoff {
    pub fn new() -> Self {
        Self { failures: 0 }
    }

    /// Things worked: the next failure starts from the first cap again.
    pub fn reset(&mut self) {
        self.failures = 0;
    }

    /// The pause after one more failure, at least `asked` (the server's `Retry-After`).
    pub fn next(&mut self, asked: Option<Duration>) -> Duration {
        let cap = FIRST.saturating_mul(1 << self.failures.min(16)).min(MOST);
        self.failures = self.failures.saturating_add(1);
        asked.unwrap_or(Duration::ZERO) + random_up_to(cap)
    }
}

/// A random duration from zero to `most`.
pub(super) fn random_up_to(most: Duration) -> Duration {
    most.mul_f64(fastrand::f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_are_random_below_a_doubling_cap_and_honour_the_servers_wait() {
        let mut backoff = Backoff::new();
        let caps = [250, 500, 1000, 2000, 4000, 5000, 5000];
        for cap in caps {
            let pause = backoff.next(None);
            assert!(pause <= Duration::from_millis(cap), "{pause:?} over {cap} ms");
        }
        // Random, not in step: many draws under one cap are not all the same.
        let draws: std::collections::BTreeSet<_> = (0..50).map(|_| backoff.next(None)).collect();
        assert!(draws.len() > 40, "{} different pauses of 50", draws.len());
        let asked = Duration::from_secs(30);
        let pause = backoff.next(Some(asked));
        assert!(pause >= asked && pause <= asked + MOST, "{pause:?}");
        backoff.reset();
        assert!(backoff.next(None) <= FIRST);
    }
}
