//! The change feed: `GET /changes` to catch up or poll, `GET /events` to follow it as
//! Server-Sent Events. Both read the store's numbered changes (see `domain/feed.rs`); the
//! event streams are served from the one reader of `fanout.rs`, within the limits of
//! `streams.rs`.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::Stream;
use tokio::sync::watch;
use tokio::time::Instant;

use super::Routes;
use super::access::NamedKey;
use super::error::{ApiError, ApiResult};
use super::extract::Params;
use super::fanout::{Event, FeedHub, Lookup, POLL_EVERY, chunk};
use super::state::AppState;
use super::streams::{StreamKey, Ticket};
use crate::domain::{FeedPage, FeedScope, feed_limit, feed_position};
use crate::engine::Feed;
use crate::error::Error;

/// A comment line this often keeps proxies and clients from taking a quiet stream for a
/// dead one.
pub const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(15);

/// The least time between two chunks of events on one stream: the events committed
/// meanwhile go together in the next chunk. A reconnect storm commits thousands of changes
/// a second, each in a group of its own; sent one wake-up at a time to a thousand streams,
/// that was a million small writes a second, and a till that stayed online waited seconds
/// behind them for its sale's answer. Batched, the same bytes go in a few large writes per
/// stream a second; a change still reaches every stream well within a second, and the first
/// change after a quiet spell goes at once.
pub const EVENTS_GAP: Duration = Duration::from_millis(100);

/// A comment line: what a quiet stream sends every [`KEEP_ALIVE_EVERY`].
const KEEP_ALIVE: &[u8] = b":\n\n";

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/changes", changes).add(Method::GET, "/events", events)
}

/// Where a reader starts: the number it gives, else now (the feed's head in its scope), so
/// that a client that has just read everything follows on from there.
async fn start(store: &dyn Feed, given: Option<u64>, scope: FeedScope) -> Result<u64, Error> {
    match given {
        Some(since) => feed_position(since),
        None => Ok(store.feed_head(scope).await?),
    }
}

async fn changes(State(s): State<AppState>, params: Params) -> ApiResult<impl IntoResponse> {
    params.allow(&["since", "limit", "include"])?;
    let limit = feed_limit(params.one("limit")?)?;
    let scope = scope(params.one("include")?)?;
    let since = start(s.changes.as_ref(), params.one("since")?, scope).await?;
    Ok(Json(s.changes.changes_since(since, limit, scope).await?))
}

/// `include=activity` gives the activity log's entries too; without it, the shop's data
/// only, as the feed was before them.
fn scope(include: Option<String>) -> Result<FeedScope, Error> {
    match include.as_deref() {
        None => Ok(FeedScope::Data),
        Some("activity") => Ok(FeedScope::WithActivity),
        Some(other) => Err(Error::invalid_parameter(format!(
            "include must be activity (the activity log's entries), not {other:?}"
        ))),
    }
}

async fn events(
    State(s): State<AppState>,
    key: Option<Extension<NamedKey>>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    params: Params,
) -> ApiResult<Response> {
    params.allow(&["since", "include"])?;
    let scope = scope(params.one("include")?)?;
    let resumed = last_event_id(&headers)?;
    let given = match resumed.or(params.one("since")?) {
        Some(given) => Some(feed_position(given)?),
        None => None,
    };
    let key = key.map_or(StreamKey::Operator, |Extension(NamedKey(name, _))| StreamKey::Named(name));
    let address = peer.map_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED), |Extension(ConnectInfo(peer))| peer.ip());
    // Admitted first: a refused stream costs the database nothing.
    let ticket = match s.streams.admit(key, address) {
        Ok(ticket) => ticket,
        Err(refused) => return Ok(refused.into_response()),
    };
    let hub = s.feed.clone();
    hub.opened();
    // Subscribed before the first look: a change between the look and the wait is heard.
    let version = hub.subscribe();
    // A position in the ring is good as it is; any other is read first, so that a position
    // the feed no longer has is a plain 410 (and "now" is the feed's head).
    let head = hub.head_once_read().await;
    let since = match given.or(head) {
        Some(since) => since,
        None => hub.bounds().await?.head,
    };
    let first = if hub.covers(since) { None } else { Some(hub.read(since).await?) };
    let mut follower = Follower {
        hub,
        scope,
        position: since,
        pending: None,
        version,
        stopping: s.stopping.clone(),
        ended: false,
        ticket,
        quiet_until: Instant::now() + KEEP_ALIVE_EVERY,
        next_events: Instant::now(),
    };
    if let Some(page) = first {
        follower.take(page);
    }
    let mut response = Body::from_stream(follower.into_stream()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(response)
}

/// The position `Last-Event-ID` gives, if any. An empty one is no position, as if the
/// header were absent: an `EventSource` sends the id of the last event it saw, and one whose
/// last event had no id (or a client that resets it) sends an empty value or none.
fn last_event_id(headers: &HeaderMap) -> Result<Option<u64>, Error> {
    let Some(value) = headers.get("last-event-id") else { return Ok(None) };
    let value = value.to_str().map(str::trim).unwrap_or("\u{0}");
    if value.is_empty() {
        return Ok(None);
    }
    // Digits only: `u64::from_str` would also take a leading `+`, which the document's
    // pattern does not.
    let digits = value.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| value.parse::<u64>().ok()).flatten().map(Some).ok_or_else(|| {
        Error::invalid_parameter("Last-Event-ID must be the number of the last change received, or empty")
    })
}

/// One client following the feed: from the shared ring, or from the database while it is
/// behind the ring.
struct Follower {
    hub: Arc<FeedHub>,
    /// Whether it is sent the activity log's entries.
    scope: FeedScope,
    /// The last change sent, or the position it started after.
    position: u64,
    /// Events read from the database, not sent yet.
    pending: Option<Bytes>,
    version: watch::Receiver<u64>,
    /// Set when the server shuts down: the stream ends, so the connection can close.
    stopping: watch::Receiver<bool>,
    ended: bool,
    /// Its place among the streams: it ends with its lifetime, or when its key is revoked.
    ticket: Ticket,
    /// When a keep-alive comment is due if nothing else was sent.
    quiet_until: Instant,
    /// The earliest the next chunk of events may go ([`EVENTS_GAP`] after the last).
    next_events: Instant,
}

impl Follower {
    fn into_stream(self) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
        futures_util::stream::unfold(self, |mut f| async move {
            let chunk = f.next().await?;
            f.quiet_until = Instant::now() + KEEP_ALIVE_EVERY;
            Some((Ok(chunk), f))
        })
    }

    /// Keeps the changes of a page read from the database to send next.
    fn take(&mut self, page: FeedPage) {
        let events: Vec<Event> = page.changes.iter().map(Event::of).collect();
        let chunk = chunk(&events, self.scope);
        self.position = page.next;
        self.pending = (!chunk.is_empty()).then_some(chunk);
    }

    /// Waits until `at`, or answers `false` when the stream ends meanwhile (the server
    /// stops, its lifetime is over, its key is revoked).
    async fn wait_until(&mut self, at: Instant) -> bool {
        tokio::select! {
            () = tokio::time::sleep_until(at) => true,
            _ = self.stopping.wait_for(|stopping| *stopping) => false,
            () = tokio::time::sleep_until(self.ticket.ends_at) => false,
            () = self.ticket.wait_revoked() => false,
        }
    }

    /// The next bytes to send, or `None` when the stream ends.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if self.ended || self.ticket.revoked() {
                return None;
            }
            if Instant::now() < self.next_events && !self.wait_until(self.next_events).await {
                return None;
            }
            if let Some(chunk) = self.pending.take() {
                self.next_events = Instant::now() + EVENTS_GAP;
                return Some(chunk);
            }
            self.version.borrow_and_update();
            match self.hub.after(self.position, self.scope) {
                // Only changes this stream is not sent: past them, and look again.
                Lookup::Events(chunk, last) if chunk.is_empty() => {
                    self.position = last;
                    continue;
                }
                Lookup::Events(chunk, last) => {
                    // The reader ends a revoked key's streams before the ring has the changes
                    // made after the revocation: looked at after the ring, so as to see that.
                    if self.ticket.revoked() {
                        return None;
                    }
                    self.position = last;
                    self.next_events = Instant::now() + EVENTS_GAP;
                    return Some(chunk);
                }
                Lookup::Behind => match self.hub.read(self.position).await {
                    Ok(page) if !page.changes.is_empty() => {
                        // A key revoked before these changes were read sees none of them.
                        if self.hub.streams().any_named()
                            && self.hub.streams().check_keys(self.hub.keys()).await.is_err()
                        {
                            return None;
                        }
                        self.take(page);
                        continue;
                    }
                    Ok(_) => {}
                    Err(error) => {
                        // Fell behind the retention window, or the database failed: said once,
                        // as the body of an `error` event, and the client reconnects or resyncs.
                        self.ended = true;
                        return Some(error_event(&error));
                    }
                },
                Lookup::Wait => {}
            }
            tokio::select! {
                changed = self.version.changed() => {
                    if changed.is_err() {
                        // The hub is going away with the server.
                        return None;
                    }
                }
                // Should the reader be idle or late, a stream still moves on.
                () = tokio::time::sleep(POLL_EVERY) => {}
                () = tokio::time::sleep_until(self.quiet_until) => return Some(Bytes::from_static(KEEP_ALIVE)),
                _ = self.stopping.wait_for(|stopping| *stopping) => return None,
                // The client resumes with Last-Event-ID.
                () = tokio::time::sleep_until(self.ticket.ends_at) => return None,
                () = self.ticket.wait_revoked() => return None,
            }
        }
    }
}

fn error_event(error: &Error) -> Bytes {
    let data = ApiError::from(error.clone()).body().to_string();
    Bytes::from(format!("event: error\ndata: {data}\n\n"))
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;
    use crate::api::streams::{StreamKey, Streams};
    use crate::store::Store;

    fn event(seq: u64) -> Bytes {
        Bytes::from(format!("id: {seq}\nevent: change\ndata: {{}}\n\n"))
    }

    /// A stream sends the first change after a quiet spell at once, then no second chunk
    /// of events sooner than `EVENTS_GAP` after it: what was committed meanwhile goes
    /// together. (In the runtime's paused clock, so the times are exact.)
    #[tokio::test(start_paused = true)]
    async fn a_stream_batches_the_changes_of_a_rush_and_sends_after_a_quiet_spell_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path().join("f.db")).unwrap());
        let streams = Arc::new(Streams::new(Default::default()));
        let hub = Arc::new(FeedHub::new(store.clone(), store, streams.clone()));
        hub.start_ring_at(0);
        let ticket = streams.admit(StreamKey::Operator, Ipv4Addr::LOCALHOST.into()).unwrap();
        let (_running, stopping) = watch::channel(false);
        let mut follower = Follower {
            version: hub.subscribe(),
            hub: hub.clone(),
            scope: FeedScope::Data,
            position: 0,
            pending: None,
            stopping,
            ended: false,
            ticket,
            quiet_until: Instant::now() + KEEP_ALIVE_EVERY,
            next_events: Instant::now(),
        };

        hub.push_event(1, event(1));
        let started = Instant::now();
        assert_eq!(follower.next().await.unwrap(), event(1));
        assert_eq!(started.elapsed(), Duration::ZERO, "the first change goes at once");

        hub.push_event(2, event(2));
        hub.push_event(3, event(3));
        let chunk = follower.next().await.unwrap();
        assert_eq!(started.elapsed(), EVENTS_GAP, "the next chunk waits for the gap");
        assert_eq!(chunk, [event(2), event(3)].concat(), "and carries every change made meanwhile");

        tokio::time::sleep(Duration::from_secs(1)).await;
        hub.push_event(4, event(4));
        let quiet = Instant::now();
        assert_eq!(follower.next().await.unwrap(), event(4));
        assert_eq!(quiet.elapsed(), Duration::ZERO, "after a quiet spell, at once again");
    }
}
