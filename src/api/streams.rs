//! How many change-feed streams (`GET /events`) the server holds, and for how long.
//!
//! A stream holds its connection for as long as it lasts, and a connection being answered
//! is never closed to make room (`server/connections.rs`): 10,000 streams opened with one
//! `read` key took every connection the server could hold, and `/health` with the
//! operator's key went unanswered. So streams are capped overall (well below the
//! connections, which leaves room for everything else), per named key (one leaked key
//! cannot take them all) and per client address; a stream over a cap is refused at once,
//! with `Retry-After`. Each stream also ends after a lifetime, a little different for each
//! so that streams opened together do not end together, and the client resumes with
//! `Last-Event-ID` (no change is lost): a cap freed is soon used by whoever waits.
//!
//! The streams of a named key end when the key is revoked or rotated: [`Streams::check_keys`]
//! reads the keys once for all streams, every second and before each page of changes is
//! handed out, so that no change committed after a revocation reaches its streams.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::watch;
use tokio::time::Instant;

use super::error::ApiError;
use crate::domain::Timestamp;
use crate::engine::Keys;
use crate::error::{ErrorCode, Result};

/// The limits on event streams; see the module's comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// Streams open at once, from everyone. Also held below half the connections the
    /// server can keep open (see `Application::bind`).
    pub overall: usize,
    /// Streams of one named key. The operator's keys have no such cap (they may do
    /// everything); the others still apply.
    pub per_key: usize,
    /// Streams from one client address. Behind a reverse proxy every client has the
    /// proxy's address: raise it to `overall` there.
    pub per_address: usize,
    /// How long a stream lasts at most; each lasts between four fifths of it and all of it.
    pub lifetime: Duration,
}

impl Default for StreamLimits {
    /// For a chain of a thousand tills on one server, with room to spare: the tills may
    /// share one key, or have one each; a shop's tills behind one router share an address.
    fn default() -> Self {
        Self { overall: 2_000, per_key: 1_100, per_address: 64, lifetime: Duration::from_secs(30 * 60) }
    }
}

/// Who opened a stream.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StreamKey {
    /// One of the operator's keys: never revoked through the API.
    Operator,
    /// A named key, by name (names are unique without regard to case, and never reused).
    Named(String),
}

/// The open streams of a server.
pub struct Streams {
    limits: StreamLimits,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
    by_key: HashMap<String, KeyStreams>,
}

/// The streams of one named key, and how its streams learn that they must end.
struct KeyStreams {
    /// Tells this entry from a later one of the same name (after a revocation).
    id: u64,
    count: usize,
    ended: watch::Sender<bool>,
    /// When the key's secret was last replaced, as first seen after its streams opened.
    rotated_at: Option<Option<Timestamp>>,
}

impl Streams {
    pub fn new(limits: StreamLimits) -> Self {
        Self { limits, open: Mutex::default() }
    }

    pub fn limits(&self) -> StreamLimits {
        self.limits
    }

    fn open(&self) -> MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many streams are open.
    pub fn count(&self) -> usize {
        self.open().total
    }

    /// Admits a stream of `key` from `address`, or refuses it: `503 busy` when the server
    /// holds all the streams it may, `429 rate_limited` when the key or the address does.
    pub fn admit(self: &Arc<Self>, key: StreamKey, address: IpAddr) -> std::result::Result<Ticket, Refused> {
        let mut open = self.open();
        if open.total >= self.limits.overall {
            return Err(refusal(
                ErrorCode::Busy,
                format!(
                    "the server already holds the most event streams it may ({}); reconnect after Retry-After \
                     seconds with Last-Event-ID, or poll GET /changes meanwhile",
                    self.limits.overall
                ),
            ));
        }
        if open.by_address.get(&address).copied().unwrap_or(0) >= self.limits.per_address {
            return Err(refusal(
                ErrorCode::RateLimited,
                format!(
                    "this address already holds {} event streams, the most it may",
                    self.limits.per_address
                ),
            ));
        }
        if let StreamKey::Named(name) = &key
            && open.by_key.get(name).is_some_and(|k| k.count >= self.limits.per_key)
        {
            return Err(refusal(
                ErrorCode::RateLimited,
                format!(
                    "the API key {name:?} already holds {} event streams, the most it may",
                    self.limits.per_key
                ),
            ));
        }
        open.total += 1;
        *open.by_address.entry(address).or_default() += 1;
        let ended = match &key {
            StreamKey::Operator => None,
            StreamKey::Named(name) => {
                let entry = open.by_key.entry(name.clone()).or_insert_with(|| KeyStreams {
                    id: fastrand::u64(..),
                    count: 0,
                    ended: watch::channel(false).0,
                    rotated_at: None,
                });
                entry.count += 1;
                Some((entry.id, entry.ended.subscribe()))
            }
        };
        let lifetime = self.limits.lifetime.mul_f64(0.8 + 0.2 * fastrand::f64());
        Ok(Ticket { streams: self.clone(), key, address, ends_at: Instant::now() + lifetime, ended })
    }

    /// Whether some open stream was opened with a named key.
    pub fn any_named(&self) -> bool {
        !self.open().by_key.is_empty()
    }

    /// Ends the streams of every named key that was revoked, or rotated, since its streams
    /// opened: one read of the keys, whatever the number of streams.
    pub async fn check_keys(&self, store: &dyn Keys) -> Result<()> {
        if !self.any_named() {
            return Ok(());
        }
        let keys = store.list_keys().await?;
        let mut open = self.open();
        open.by_key.retain(|name, streams| {
            let key = keys.iter().find(|k| k.name.eq_ignore_ascii_case(name));
            let rotated_at = key.map(|k| k.rotated_at);
            let gone = match (key, &streams.rotated_at) {
                (None, _) => true,
                (Some(k), _) if !k.is_active() => true,
                (Some(_), Some(seen)) => Some(seen) != rotated_at.as_ref(),
                (Some(_), None) => false,
            };
            if gone {
                tracing::info!(key = %name, streams = streams.count, "ending the event streams of a revoked or rotated key");
                streams.ended.send_replace(true);
                return false;
            }
            streams.rotated_at = rotated_at;
            true
        });
        Ok(())
    }
}

/// An admitted stream's place; given back when dropped.
pub struct Ticket {
    streams: Arc<Streams>,
    key: StreamKey,
    address: IpAddr,
    /// When the stream ends, for the client to resume.
    pub ends_at: Instant,
    /// Its key's entry, and what turns true when the key is revoked or rotated.
    ended: Option<(u64, watch::Receiver<bool>)>,
}

impl Ticket {
    /// Whether the stream's key was revoked or rotated: it must send nothing more.
    pub fn revoked(&self) -> bool {
        self.ended.as_ref().is_some_and(|(_, e)| *e.borrow())
    }

    /// Resolves when the stream's key is revoked or rotated; never for the operator's.
    pub async fn wait_revoked(&mut self) {
        match &mut self.ended {
            Some((_, ended)) => {
                // A dropped sender is a key that ended too (its entry was removed).
                let _ = ended.wait_for(|ended| *ended).await;
            }
            None => std::future::pending().await,
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut open = self.streams.open();
        open.total -= 1;
        if let Some(n) = open.by_address.get_mut(&self.address) {
            *n -= 1;
            if *n == 0 {
                open.by_address.remove(&self.address);
            }
        }
        if let StreamKey::Named(name) = &self.key
            && let Some(streams) = open.by_key.get_mut(name)
            // A revoked key's entry was removed, and a new one may have the same name.
            && self.ended.as_ref().is_some_and(|(id, _)| *id == streams.id)
        {
            streams.count -= 1;
            if streams.count == 0 {
                open.by_key.remove(name);
            }
        }
    }
}

/// How long a refused stream's client waits before it tries again: long enough for other
/// streams to end, and different for each client so that they do not come back together.
fn retry_after() -> u64 {
    fastrand::u64(5..=15)
}

/// A stream refused for a cap: `503 busy` or `429 rate_limited`, with `Retry-After`.
#[derive(Debug)]
pub struct Refused(ApiError);

fn refusal(code: ErrorCode, message: String) -> Refused {
    Refused(ApiError::new(code, message))
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let mut response = self.0.into_response();
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after()));
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streams(overall: usize, per_key: usize, per_address: usize) -> Arc<Streams> {
        Arc::new(Streams::new(StreamLimits {
            overall,
            per_key,
            per_address,
            lifetime: Duration::from_secs(60),
        }))
    }

    fn status(refused: std::result::Result<Ticket, Refused>) -> u16 {
        refused.err().expect("refused").into_response().status().as_u16()
    }

    #[test]
    fn each_cap_refuses_one_more_and_a_closed_stream_makes_room() {
        let (a, b) = ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        let s = streams(3, 1, 2);
        let first = s.admit(StreamKey::Named("till".into()), a).unwrap();
        assert_eq!(status(s.admit(StreamKey::Named("TILL".to_lowercase()), b)), 429, "per key");
        let _second = s.admit(StreamKey::Operator, a).unwrap();
        assert_eq!(status(s.admit(StreamKey::Operator, a)), 429, "per address");
        let _third = s.admit(StreamKey::Operator, b).unwrap();
        assert_eq!(status(s.admit(StreamKey::Operator, b)), 503, "overall");
        drop(first);
        assert_eq!(s.count(), 2);
        assert!(s.admit(StreamKey::Named("till".into()), b).is_ok());
        assert_eq!(s.count(), 2, "the ticket was dropped again at once");
    }

    #[test]
    fn a_stream_lasts_between_four_fifths_of_its_lifetime_and_all_of_it() {
        let s = streams(100, 100, 100);
        for _ in 0..50 {
            let ticket = s.admit(StreamKey::Operator, "127.0.0.1".parse().unwrap()).unwrap();
            let left = ticket.ends_at - Instant::now();
            assert!(left <= Duration::from_secs(60) && left >= Duration::from_secs(47), "{left:?}");
        }
    }
}
