//! The change feed: `GET /changes` to catch up or poll, `GET /events` to follow it as
//! Server-Sent Events. Both read the store's numbered changes (see `domain/feed.rs`); the
//! events stream wakes on the engine's commit notices and, for commits it cannot hear of
//! (another process on the same SQLite file), every [`POLL_EVERY`].

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, Method};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::Stream;
use tokio::sync::{broadcast, watch};

use super::Routes;
use super::access::NamedKey;
use super::error::{ApiError, ApiResult};
use super::extract::Params;
use super::state::AppState;
use super::streams::{StreamKey, Streams, Ticket};
use crate::backend::{Change, Database};
use crate::domain::{FEED_MAX_LIMIT, FeedChange, feed_limit, feed_position};
use crate::error::Error;

/// A comment line this often keeps proxies and clients from taking a quiet stream for a
/// dead one.
pub const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(15);

/// How often a quiet stream reads the feed anyway: commits of other processes on the same
/// SQLite file send no notice here.
const POLL_EVERY: Duration = Duration::from_secs(1);

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::GET, "/changes", changes).add(Method::GET, "/events", events)
}

/// Where a reader starts: the number it gives, else now (the feed's head), so that a client
/// that has just read everything follows on from there.
async fn start(store: &dyn Database, given: Option<u64>) -> Result<u64, Error> {
    match given {
        Some(since) => feed_position(since),
        None => Ok(store.feed_bounds().await?.head),
    }
}

async fn changes(State(s): State<AppState>, params: Params) -> ApiResult<impl IntoResponse> {
    params.allow(&["since", "limit"])?;
    let limit = feed_limit(params.one("limit")?)?;
    let since = start(s.store.as_ref(), params.one("since")?).await?;
    Ok(Json(s.store.changes_since(since, limit).await?))
}

async fn events(
    State(s): State<AppState>,
    key: Option<Extension<NamedKey>>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    params: Params,
) -> ApiResult<Response> {
    params.allow(&["since"])?;
    let key = key.map_or(StreamKey::Operator, |Extension(NamedKey(name))| StreamKey::Named(name));
    let address = peer.map_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED), |Extension(ConnectInfo(peer))| peer.ip());
    // Admitted first: a refused stream costs the database nothing.
    let ticket = match s.streams.admit(key, address) {
        Ok(ticket) => ticket,
        Err(refused) => return Ok(refused.into_response()),
    };
    // Subscribed before the first read: a commit between the read and the wait is heard.
    let notices = s.store.feed_notices();
    let resumed = match headers.get("last-event-id") {
        Some(value) => {
            Some(value.to_str().ok().and_then(|v| v.trim().parse::<u64>().ok()).ok_or_else(|| {
                Error::invalid_parameter("Last-Event-ID must be the number of the last change received")
            })?)
        }
        None => None,
    };
    let since = start(s.store.as_ref(), resumed.or(params.one("since")?)).await?;
    // The first read here, so that a position the feed no longer has is a plain 410.
    let first = s.store.changes_since(since, FEED_MAX_LIMIT).await?;
    let follower = Follower {
        store: s.store.clone(),
        since: first.next,
        pending: first.changes.into(),
        notices,
        stopping: s.stopping.clone(),
        ended: false,
        streams: s.streams.clone(),
        ticket,
    };
    Ok(Sse::new(follower.into_stream())
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE_EVERY))
        .into_response())
}

/// One client following the feed.
struct Follower {
    store: Arc<dyn Database>,
    since: u64,
    pending: VecDeque<FeedChange>,
    notices: broadcast::Receiver<Change>,
    /// Set when the server shuts down: the stream ends, so the connection can close.
    stopping: watch::Receiver<bool>,
    ended: bool,
    streams: Arc<Streams>,
    /// Its place among the streams: it ends with its lifetime, or when its key is revoked.
    ticket: Ticket,
}

impl Follower {
    fn into_stream(self) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
        futures_util::stream::unfold(self, |mut f| async move {
            let event = f.next().await?;
            Some((Ok(event), f))
        })
    }

    /// The next event, or `None` when the stream ends.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if self.ended || self.ticket.revoked() {
                return None;
            }
            if let Some(change) = self.pending.pop_front() {
                return Some(change_event(&change));
            }
            match self.store.changes_since(self.since, FEED_MAX_LIMIT).await {
                Ok(page) if !page.changes.is_empty() => {
                    // A key revoked before these changes were read sees none of them.
                    if self.streams.any_named() && self.streams.check_keys(self.store.as_ref()).await.is_err()
                    {
                        self.ended = true;
                    }
                    if self.ticket.revoked() || self.ended {
                        return None;
                    }
                    self.since = page.next;
                    self.pending.extend(page.changes);
                    continue;
                }
                Ok(_) => {}
                Err(error) => {
                    // Fell behind the retention window, or the database failed: said once, as
                    // the body of an `error` event, and the client reconnects or resyncs.
                    self.ended = true;
                    return Some(error_event(&error));
                }
            }
            tokio::select! {
                notice = self.notices.recv() => {
                    if let Err(broadcast::error::RecvError::Closed) = notice {
                        // The store is going away: polls only from now on.
                        self.notices = broadcast::channel(1).1;
                    }
                }
                () = tokio::time::sleep(POLL_EVERY) => {}
                _ = self.stopping.wait_for(|stopping| *stopping) => return None,
                // The client resumes with Last-Event-ID.
                () = tokio::time::sleep_until(self.ticket.ends_at) => return None,
                () = self.ticket.wait_revoked() => return None,
            }
        }
    }
}

fn change_event(change: &FeedChange) -> Event {
    let data = serde_json::to_string(change).expect("a change serializes");
    Event::default().id(change.seq.to_string()).event("change").data(data)
}

fn error_event(error: &Error) -> Event {
    Event::default().event("error").data(ApiError::from(error.clone()).body().to_string())
}
