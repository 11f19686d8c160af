//! Serving connections, with two limits that `axum::serve` does not set. Both are there
//! because connections that send half a request and wait locked everyone out: at the
//! common limit of 1,024 open files, 1,100 of them took every file the server could open,
//! it could accept nothing more, and `/health` went unanswered for as long as they stayed
//! (no answer within 40 s, measured; with these limits it answers in milliseconds).
//!
//! - **A request's head must arrive within [`HEADER_READ_TIMEOUT`]** of the connection
//!   opening or of its last answer, or the connection is closed. Once a second the server
//!   closes the connections that have waited that long, rather than setting hyper's
//!   `header_read_timeout` (which `axum::serve` leaves unset, giving hyper no timer): that
//!   arms a timer for every request, which cost 3 % of the server's CPU time per
//!   `GET /pets/{petId}` (paired runs, 12 rounds: +3.2 % median, +3.4 % best).
//! - **A request's body must keep coming**: a connection whose request body has been
//!   waited for [`BODY_STALL_TIMEOUT`] without a byte is closed (by the same sweeps). A
//!   request head with `Content-Length: 1000` and no body used to hold its connection for
//!   the whole edge timeout (30 s), counted as being answered, so nothing made room.
//! - **At most so many connections are open** (`open_files.rs`), which leaves files for the
//!   database. One beyond that is accepted, and another is closed to make room: first one
//!   that has shown no valid key (it sent no request yet, or its request has not passed the
//!   key check, or was refused), then an idle one whose last request passed it; the one
//!   that has waited longest first within each. A client that sends its request at once
//!   gets in however many others only hold connections open or send heads without a key. A
//!   connection answering a request that passed the key check is never closed this way;
//!   when every one is, the new connection is closed at once. And connections without a
//!   valid key may hold all but [`keyed_reserve`] of the connections: the rest are held only
//!   by connections whose request passed the key check, however many strangers come.
//!
//! Otherwise it serves as `axum::serve` did: HTTP/1.1 (axum is built without HTTP/2), the
//! peer's address as the request's `ConnectInfo` (the key check slows down guessing per
//! client), and at shutdown no new connections while the open ones finish their requests.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::time::{Interval, MissedTickBehavior};

use crate::api::{self, ApiService, KeyPassed, KeyWatch};

/// How long a client may take to send a request's head (its request line and headers),
/// counted from when the connection opened or its last answer was sent; an idle keep-alive
/// connection is closed after as long. A real client sends its head in one go, well within
/// a second even over a poor Wi-Fi link. Enforced to within [`SWEEP_EVERY`].
pub(super) const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the server waits for the next bytes of a request body it is reading before it
/// closes the connection. A client sends a body right after its head; a few seconds without
/// a byte means several lost retransmissions in a row (Linux starts at a 1 s timeout and
/// doubles it), a link too poor to finish an upload anyway. Enforced to within [`SWEEP_EVERY`].
pub(super) const BODY_STALL_TIMEOUT: Duration = Duration::from_secs(5);

/// How often the connections that waited too long for a request's head or body are closed.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// The connections kept for requests that passed the key check, of `most`: a few, at most
/// a quarter.
pub(super) fn keyed_reserve(most: usize) -> usize {
    (most / 4).min(32)
}

/// Serves `service` on the connections `listener` accepts, at most `most` at once, until
/// `shutdown` resolves; then answers the requests under way and returns once every
/// connection is closed.
pub(super) async fn serve(
    listener: TcpListener,
    service: ApiService,
    most: usize,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let open = Arc::new(Open::new(most));
    let (stop, stopping) = watch::channel(());
    let mut shutdown = pin!(shutdown);
    let mut sweeps = sweeps();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = sweeps.tick() => {
                open.close_silent(HEADER_READ_TIMEOUT, BODY_STALL_TIMEOUT);
                continue;
            }
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            // The client gave up before it was accepted; nothing to do.
            Err(e) if is_connection_error(&e) => continue,
            Err(error) => {
                // Out of files or memory. Accepting again at once would fail again at once;
                // the connections already open go on meanwhile.
                tracing::warn!(%error, "cannot accept a connection; trying again in a second");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let Some(slot) = open.admit() else {
            tracing::debug!(%peer, "every connection is being answered: shedding a new one at once");
            shed(&stream);
            continue;
        };
        let service =
            PerConnection { service: service.clone(), peer: ConnectInfo(peer), conn: slot.conn.clone() };
        tokio::spawn(serve_connection(stream, service, slot, stopping.clone()));
    }
    drop(listener);
    drop(stopping);
    // Every connection task holds a receiver; sending wakes them to finish and close. One
    // still waiting for a request's head is closed at once by hyper if nothing of it came,
    // else by the sweeps, which go on until the last connection is closed.
    stop.send_replace(());
    let mut all_closed = pin!(open.all_closed());
    loop {
        tokio::select! {
            () = &mut all_closed => return,
            _ = sweeps.tick() => open.close_silent(HEADER_READ_TIMEOUT, BODY_STALL_TIMEOUT),
        }
    }
}

fn sweeps() -> Interval {
    let mut sweeps = tokio::time::interval(SWEEP_EVERY);
    sweeps.set_missed_tick_behavior(MissedTickBehavior::Delay);
    sweeps
}

/// Serves one connection until it ends, is closed to make room or for silence, or has
/// finished its request after the server was told to stop.
async fn serve_connection(
    stream: TcpStream,
    service: PerConnection,
    slot: Slot,
    mut stopping: watch::Receiver<()>,
) {
    let mut builder = hyper::server::conn::http1::Builder::new();
    // The sweeps enforce it, without a timer per request.
    builder.header_read_timeout(None);
    let mut connection = pin!(builder.serve_connection(TokioIo::new(stream), service));
    let mut finishing = false;
    loop {
        tokio::select! {
            served = connection.as_mut() => {
                if let Err(error) = served {
                    // A client that went away or never sent a whole head: nothing to report.
                    tracing::trace!(%error, "connection ended");
                }
                break;
            }
            () = slot.conn.close.notified() => {
                tracing::debug!("closing a connection that waited too long for a request or made way for another");
                break;
            }
            _ = stopping.changed(), if !finishing => {
                connection.as_mut().graceful_shutdown();
                finishing = true;
            }
        }
    }
}

/// What a connection the server has no room for is told before it is closed: `503 busy`
/// with `Retry-After`, 5 to 15 s, different for each so that shed clients do not come back
/// together. Written without waiting (a new connection's send buffer is empty, and the
/// answer is far smaller), and before its request is read, which a client reads as the
/// answer to its request.
const SHED_BODY: &str = r#"{"code":"busy","message":"the server is answering as many requests as it can hold; nothing was done; try again after Retry-After seconds","status":503}"#;

fn shed(stream: &TcpStream) {
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: {}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{SHED_BODY}",
        fastrand::u64(5..=15),
        SHED_BODY.len()
    );
    let _ = stream.try_write(answer.as_bytes());
}

/// Errors that concern one connection only.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset)
}

/// The open connections.
struct Open {
    most: usize,
    /// Most connections that have not shown a valid key: all but [`keyed_reserve`].
    most_unkeyed: usize,
    /// When the server started: activity times are milliseconds since.
    started: Instant,
    connections: Mutex<Connections>,
    /// Told when the last connection closes.
    closed: Notify,
}

#[derive(Default)]
struct Connections {
    next: u64,
    by_id: HashMap<u64, Arc<Conn>>,
    /// When the server last said it is full, so that it says so once a minute at most.
    said_full: Option<Instant>,
}

/// One open connection, as the server sees it.
struct Conn {
    /// Its requests being answered: from the request's head until its answer's body has
    /// been handed to hyper in full.
    answering: AtomicUsize,
    /// Its last request passed the key check: from then until its next request begins.
    keyed: AtomicBool,
    /// When the server began to wait for its request body's next bytes, in milliseconds
    /// since `started` plus one; 0 while it waits for none.
    body_waited_since: AtomicU64,
    /// When it last began to wait for a request (it opened, or an answer was sent), in
    /// milliseconds since `started`.
    waiting_since: AtomicU64,
    /// When the server started (a copy, so that a request need not reach the server's
    /// shared state, whose counts every connection would touch).
    started: Instant,
    /// Told when it is to close to make room.
    close: Notify,
}

impl Open {
    fn new(most: usize) -> Self {
        Self {
            most,
            most_unkeyed: most - keyed_reserve(most),
            started: Instant::now(),
            connections: Mutex::default(),
            closed: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Connections> {
        self.connections.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now(&self) -> u64 {
        millis_since(self.started)
    }

    /// Counts a new connection in, closing another to make room when there would be one
    /// too many, or one too many without a valid key ([`Open::make_room`]); `None` when
    /// there is none to close.
    fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut connections = self.lock();
        // Below the stricter limit nothing need be counted: the common case costs nothing.
        if connections.by_id.len() >= self.most_unkeyed {
            self.make_room(&mut connections)?;
        }
        let id = connections.next;
        connections.next += 1;
        let conn = Arc::new(Conn {
            answering: AtomicUsize::new(0),
            keyed: AtomicBool::new(false),
            body_waited_since: AtomicU64::new(0),
            waiting_since: AtomicU64::new(self.now()),
            started: self.started,
            close: Notify::new(),
        });
        connections.by_id.insert(id, conn.clone());
        Some(Slot { id, conn, open: self.clone() })
    }

    /// Closes a connection if a new one would make one too many, or one too many without a
    /// valid key: one without a key first, then one idle since a request that passed the
    /// key check; the one that has waited longest first within each. `None` when one must
    /// be closed and none may be.
    fn make_room(&self, connections: &mut Connections) -> Option<()> {
        let mut unkeyed = 0;
        // (has shown a key, waiting since), the least first; and its id.
        let mut first: Option<((bool, u64), u64)> = None;
        for (id, conn) in &connections.by_id {
            let keyed = conn.keyed.load(Ordering::Acquire);
            if !keyed {
                unkeyed += 1;
            } else if conn.answering.load(Ordering::Acquire) > 0 {
                continue;
            }
            let rank = (keyed, conn.waiting_since.load(Ordering::Relaxed));
            if first.is_none_or(|(least, _)| rank < least) {
                first = Some((rank, *id));
            }
        }
        let full = connections.by_id.len() >= self.most;
        if !full && unkeyed < self.most_unkeyed {
            return Some(());
        }
        let now = Instant::now();
        if connections.said_full.is_none_or(|said| now - said > Duration::from_secs(60)) {
            connections.said_full = Some(now);
            tracing::warn!(
                connections = self.most,
                kept_for_keyed_requests = self.most - self.most_unkeyed,
                "as many connections open as the limit of open files allows: closing those \
                 without a valid key first to make room for new ones"
            );
        }
        let ((keyed, _), id) = first?;
        // Below the limit, only a connection without a key makes room for another.
        if keyed && !full {
            return Some(());
        }
        let conn = connections.by_id.remove(&id)?;
        // Stored if the connection's task is not waiting for it yet.
        conn.close.notify_one();
        Some(())
    }

    /// Closes the connections that have waited `for_head` or longer for a request's head,
    /// or `for_body` or longer for the next bytes of a request body.
    fn close_silent(&self, for_head: Duration, for_body: Duration) {
        let now = self.now();
        let head_since = now.checked_sub(millis(for_head));
        // Stored plus one (0 is "not waiting"), so compared plus one.
        let body_since = now.checked_sub(millis(for_body)).map(|since| since + 1);
        let mut connections = self.lock();
        connections.by_id.retain(|_, conn| {
            let head_silent = conn.answering.load(Ordering::Acquire) == 0
                && head_since.is_some_and(|since| conn.waiting_since.load(Ordering::Relaxed) <= since);
            let body_waited = conn.body_waited_since.load(Ordering::Relaxed);
            let body_silent = body_waited != 0 && body_since.is_some_and(|since| body_waited <= since);
            let silent = head_silent || body_silent;
            if silent {
                conn.close.notify_one();
            }
            !silent
        });
        if connections.by_id.is_empty() {
            self.closed.notify_waiters();
        }
    }

    async fn all_closed(&self) {
        loop {
            let mut closed = pin!(self.closed.notified());
            closed.as_mut().enable();
            if self.lock().by_id.is_empty() {
                return;
            }
            closed.await;
        }
    }
}

/// A connection's place among the open ones, given up when its task ends.
struct Slot {
    id: u64,
    conn: Arc<Conn>,
    open: Arc<Open>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut connections = self.open.lock();
        connections.by_id.remove(&self.id);
        if connections.by_id.is_empty() {
            self.open.closed.notify_waiters();
        }
    }
}

fn millis_since(started: Instant) -> u64 {
    millis(started.elapsed())
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// One request being answered on a connection, until dropped.
struct Answering(Arc<Conn>);

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.waiting_since.store(millis_since(self.0.started), Ordering::Relaxed);
        self.0.answering.fetch_sub(1, Ordering::Release);
    }
}

/// The API as hyper calls it for one connection.
struct PerConnection {
    service: ApiService,
    peer: ConnectInfo<SocketAddr>,
    conn: Arc<Conn>,
}

impl hyper::service::Service<hyper::Request<Incoming>> for PerConnection {
    type Response = Response<CountedBody>;
    type Error = Infallible;
    type Future = WatchedResponse;

    fn call(&self, req: hyper::Request<Incoming>) -> WatchedResponse {
        self.conn.answering.fetch_add(1, Ordering::AcqRel);
        self.conn.keyed.store(false, Ordering::Release);
        let answering = Answering(self.conn.clone());
        let mut req: Request = req.map(|body| {
            // A request without a body, most of them, is not wrapped (a box less).
            if body.is_end_stream() {
                Body::new(body)
            } else {
                Body::new(WatchedBody { body, conn: self.conn.clone() })
            }
        });
        req.extensions_mut().insert(self.peer);
        req.extensions_mut().insert(KeyPassed(self.conn.clone()));
        WatchedResponse { future: self.service.answer(req), answering: Some(answering) }
    }
}

impl KeyWatch for Conn {
    fn key_passed(&self) {
        self.keyed.store(true, Ordering::Release);
    }
}

/// A request body that tells its connection when the server waits for its next bytes, so
/// that the sweeps can close a connection whose body stopped coming.
struct WatchedBody {
    body: Incoming,
    conn: Arc<Conn>,
}

impl HttpBody for WatchedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        let waited = &this.conn.body_waited_since;
        if polled.is_pending() {
            if waited.load(Ordering::Relaxed) == 0 {
                waited.store(millis_since(this.conn.started) + 1, Ordering::Relaxed);
            }
        } else {
            waited.store(0, Ordering::Relaxed);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for WatchedBody {
    fn drop(&mut self) {
        self.conn.body_waited_since.store(0, Ordering::Relaxed);
    }
}

/// The edge's answer, whose body keeps the request counted as being answered.
struct WatchedResponse {
    future: api::ResponseFuture,
    answering: Option<Answering>,
}

impl Future for WatchedResponse {
    type Output = Result<Response<CountedBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let response = ready!(this.future.as_mut().poll(cx)).unwrap_or_else(|never| match never {});
        let answering = this.answering.take();
        Poll::Ready(Ok(response.map(|body| CountedBody { body, _answering: answering })))
    }
}

/// A response body that counts its request as being answered until hyper has taken all of
/// it (and drops it), so that a connection is not closed to make room in the middle of
/// sending a long answer.
struct CountedBody {
    body: Body,
    _answering: Option<Answering>,
}

impl HttpBody for CountedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    /// A connection in a given state: waiting since `since` ms, answering or not, its
    /// request past the key check or not.
    fn set(slot: &Slot, since: u64, answering: bool, keyed: bool) {
        slot.conn.waiting_since.store(since, Ordering::Relaxed);
        slot.conn.answering.store(usize::from(answering), Ordering::Release);
        slot.conn.keyed.store(keyed, Ordering::Release);
    }

    fn is_open(open: &Open, slot: &Slot) -> bool {
        open.lock().by_id.contains_key(&slot.id)
    }

    #[test]
    fn connections_without_a_key_make_room_first_the_longest_waiting_and_never_a_keyed_answer() {
        // 8 connections, 2 of them kept for keyed requests.
        let open = Arc::new(Open::new(8));
        // New connections wait since later than the states set here.
        std::thread::sleep(Duration::from_millis(30));
        let slots: Vec<Slot> = (0..6).map(|_| open.admit().unwrap()).collect();
        set(&slots[0], 1, true, true); // a keyed request under way, the oldest
        set(&slots[1], 2, false, true); // idle since a keyed request
        set(&slots[2], 3, true, true);
        set(&slots[3], 9, true, false); // a request under way that has not passed the key check
        set(&slots[4], 5, false, false); // no request yet, or a refused one
        set(&slots[5], 6, false, false);
        let more: Vec<Slot> = (0..2).map(|_| open.admit().unwrap()).collect();
        assert!(slots.iter().chain(&more).all(|s| is_open(&open, s)), "8 are open");
        set(&more[0], 7, false, false);
        set(&more[1], 8, false, false);

        let new1 = open.admit().expect("room is made");
        assert!(!is_open(&open, &slots[4]), "the connection without a key that waited longest made room");
        let new2 = open.admit().expect("room is made");
        assert!(!is_open(&open, &slots[5]));
        more.iter().for_each(|slot| set(slot, 10, true, true));
        let new3 = open.admit().expect("room is made");
        assert!(!is_open(&open, &slots[3]), "a request that has not passed the key check makes room");
        // Every other connection answers a keyed request: the idle keyed one goes.
        [&new1, &new2, &new3].iter().for_each(|slot| set(slot, 40, true, true));
        let _new4 = open.admit().expect("room is made");
        assert!(!is_open(&open, &slots[1]), "then one idle since a keyed request");
        for slot in [&slots[0], &slots[2], &more[0], &more[1], &new1, &new2, &new3] {
            assert!(is_open(&open, slot), "a keyed request under way is never closed for room");
        }
    }

    #[test]
    fn connections_without_a_key_hold_all_but_the_reserve() {
        let open = Arc::new(Open::new(8));
        assert_eq!(keyed_reserve(8), 2);
        let slots: Vec<Slot> = (0..20).map(|_| open.admit().unwrap()).collect();
        assert_eq!(open.lock().by_id.len(), 6, "strangers hold 6 of 8, however many come");
        // Two of them pass the key check: the reserve is theirs, and strangers keep their 6.
        let open_ones: Vec<&Slot> = slots.iter().filter(|s| is_open(&open, s)).collect();
        set(open_ones[0], 0, true, true);
        set(open_ones[1], 0, true, true);
        let _more: Vec<Slot> = (0..20).map(|_| open.admit().unwrap()).collect();
        assert_eq!(open.lock().by_id.len(), 8);
        assert!(is_open(&open, open_ones[0]) && is_open(&open, open_ones[1]));
    }

    #[test]
    fn a_new_connection_is_closed_when_every_other_answers_a_keyed_request() {
        let open = Arc::new(Open::new(4));
        let slots: Vec<Slot> = (0..4)
            .map(|_| {
                let slot = open.admit().unwrap();
                set(&slot, 0, true, true);
                slot
            })
            .collect();
        assert!(slots.iter().all(|s| is_open(&open, s)));
        assert!(open.admit().is_none());
    }

    #[test]
    fn a_body_that_stops_coming_is_closed_and_one_that_nobody_reads_is_not() {
        let open = Arc::new(Open::new(4));
        let stalled = open.admit().unwrap();
        let unread = open.admit().unwrap();
        set(&stalled, open.now(), true, true);
        set(&unread, open.now(), true, true);
        stalled.conn.body_waited_since.store(open.now() + 1, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(30));
        open.close_silent(Duration::from_secs(10), Duration::from_millis(20));
        assert!(!is_open(&open, &stalled));
        assert!(is_open(&open, &unread));
    }

    #[tokio::test]
    async fn a_shed_connection_is_told_503_busy_with_retry_after() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        shed(&accepted);
        drop(accepted);
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").expect("a whole answer");
        assert!(head.starts_with("HTTP/1.1 503 "), "{head}");
        let retry: u64 = head
            .lines()
            .find_map(|l| l.strip_prefix("Retry-After: "))
            .and_then(|v| v.parse().ok())
            .expect("Retry-After");
        assert!((5..=15).contains(&retry));
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!((body["code"].as_str(), body["status"].as_u64()), (Some("busy"), Some(503)));
    }
}
