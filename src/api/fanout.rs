//! One reader of the change feed per server process, for every event stream.
//!
//! Each stream used to read the feed itself on every commit notice and every second: with
//! 1,000 streams a commit cost 1,000 reads, counter sales on SQLite fell from 7,174/s with
//! no stream to 116/s with 2,000, and on PostgreSQL each order cost 56 transactions. Now
//! [`FeedHub::run`] reads each page of changes once, serializes each event once (as the
//! bytes of its Server-Sent Event), and keeps the most recent in a ring that every stream
//! reads from memory; a version on a `watch` channel wakes them. A stream reads the
//! database itself only while it is behind the ring (a client resuming from an old
//! position, or one too slow to keep up): so N streams cost the database what one does.
//!
//! The reader runs only while some stream is open; otherwise the ring is dropped, and the
//! next stream's first read starts it again.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use axum::body::Bytes;
use tokio::sync::{Notify, broadcast, watch};

use super::streams::Streams;
use crate::domain::{Entity, FEED_MAX_LIMIT, FeedBounds, FeedChange, FeedPage, FeedScope};
use crate::engine::{Feed, Keys};
use crate::error::Result;

/// How many recent events the ring keeps: at 200 changes a second, some 20 s of them, so a
/// stream that falls behind for a moment still reads from memory.
const RING_EVENTS: usize = 4096;

/// The most events one chunk of a stream carries.
const CHUNK_EVENTS: usize = 1000;

/// How often the reader reads the feed anyway: commits of other processes on the same
/// SQLite file send no notice here, and a PostgreSQL notice can be lost.
pub const POLL_EVERY: Duration = Duration::from_secs(1);

/// The shared reader's state: the ring of recent events, and what wakes the streams.
pub struct FeedHub {
    feed: Arc<dyn Feed>,
    /// Read for the streams of keys revoked or rotated since they opened.
    keys: Arc<dyn Keys>,
    streams: Arc<Streams>,
    ring: RwLock<Ring>,
    /// Bumped whenever the ring changes.
    version: watch::Sender<u64>,
    /// Wakes the reader when a stream opens while it is idle.
    wake: Notify,
    /// The feed's database reads made for event streams, by the reader and by streams
    /// behind it: the figure that must not grow with the number of streams.
    reads: AtomicU64,
}

/// The recent events: every change numbered after `base` up to `head`, serialized.
#[derive(Default)]
struct Ring {
    /// `None` while the reader is idle: nothing is known, every stream reads for itself.
    base: Option<u64>,
    head: u64,
    events: VecDeque<Event>,
}

/// A change as the streams send it: its event's bytes, serialized once for all of them,
/// and whether it is an entry of the activity log, which goes only to the streams that
/// asked for those (`FeedScope`).
pub struct Event {
    seq: u64,
    activity: bool,
    bytes: Bytes,
}

impl Event {
    /// `change` as an `activity` event for an entry of the activity log, a `change` event
    /// for the rest.
    pub fn of(change: &FeedChange) -> Self {
        let data = serde_json::to_string(change).expect("a change serializes");
        let activity = change.entity == Entity::Activity;
        let name = if activity { "activity" } else { "change" };
        let bytes = Bytes::from(format!("id: {}\nevent: {name}\ndata: {data}\n\n", change.seq));
        Self { seq: change.seq, activity, bytes }
    }

    fn is_for(&self, scope: FeedScope) -> bool {
        !self.activity || scope.with_activity()
    }
}

/// The events of `events` that go to a stream in `scope`, as one chunk.
pub fn chunk<'a>(events: impl IntoIterator<Item = &'a Event>, scope: FeedScope) -> Bytes {
    let sent: Vec<&Event> = events.into_iter().filter(|e| e.is_for(scope)).collect();
    let mut chunk = Vec::with_capacity(sent.iter().map(|e| e.bytes.len()).sum());
    for event in sent {
        chunk.extend_from_slice(&event.bytes);
    }
    Bytes::from(chunk)
}

/// What the ring has for a stream at a position.
pub enum Lookup {
    /// The events after the position, as one chunk, and the number of the last (past those
    /// the stream was not sent: the chunk may be empty).
    Events(Bytes, u64),
    /// Nothing yet: wait for the ring to change.
    Wait,
    /// The ring does not reach back so far: read the database.
    Behind,
}

impl FeedHub {
    pub fn new(feed: Arc<dyn Feed>, keys: Arc<dyn Keys>, streams: Arc<Streams>) -> Self {
        Self {
            feed,
            keys,
            streams,
            ring: RwLock::default(),
            version: watch::channel(0).0,
            wake: Notify::new(),
            reads: AtomicU64::new(0),
        }
    }

    fn ring(&self) -> RwLockReadGuard<'_, Ring> {
        self.ring.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn ring_mut(&self) -> RwLockWriteGuard<'_, Ring> {
        self.ring.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The feed's database reads made for event streams since the server started.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    pub fn keys(&self) -> &dyn Keys {
        self.keys.as_ref()
    }

    /// The feed it reads, whose notices say when something was committed and numbered.
    pub fn feed(&self) -> &dyn Feed {
        self.feed.as_ref()
    }

    pub fn streams(&self) -> &Streams {
        &self.streams
    }

    /// A stream opened: the reader starts if it was idle.
    pub fn opened(&self) {
        self.wake.notify_one();
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// The position the ring has read up to, if the reader runs.
    pub fn head(&self) -> Option<u64> {
        let ring = self.ring();
        ring.base.map(|_| ring.head)
    }

    /// [`FeedHub::head`], once the reader has read: a stream opened while the reader is
    /// starting waits for its first read (at most [`POLL_EVERY`]) rather than reading the
    /// database itself, so that a thousand tills reconnecting at once after a restart cost
    /// the reader's reads and not two each. `None` if the reader has still not read.
    pub async fn head_once_read(&self) -> Option<u64> {
        let mut version = self.subscribe();
        let deadline = tokio::time::Instant::now() + POLL_EVERY;
        loop {
            if let Some(head) = self.head() {
                return Some(head);
            }
            tokio::select! {
                changed = version.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
                () = tokio::time::sleep_until(deadline) => return self.head(),
            }
        }
    }

    /// Whether a stream at `position` can be served from the ring: then the position is
    /// good (no need to ask the database whether it was purged).
    pub fn covers(&self, position: u64) -> bool {
        let ring = self.ring();
        ring.base.is_some_and(|base| base <= position && position <= ring.head)
    }

    /// What the ring has after `position` for a stream in `scope`.
    pub fn after(&self, position: u64, scope: FeedScope) -> Lookup {
        let ring = self.ring();
        let Some(base) = ring.base else { return Lookup::Behind };
        if position < base {
            return Lookup::Behind;
        }
        let from = ring.events.partition_point(|e| e.seq <= position);
        let events = ring.events.range(from..).take(CHUNK_EVENTS);
        let Some(last) = events.clone().last().map(|e| e.seq) else { return Lookup::Wait };
        Lookup::Events(chunk(events, scope), last)
    }

    /// A read of the feed, counted.
    pub async fn read(&self, since: u64) -> Result<FeedPage> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.feed.changes_since(since, FEED_MAX_LIMIT, FeedScope::WithActivity).await
    }

    pub async fn bounds(&self) -> Result<FeedBounds> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.feed.feed_bounds().await
    }

    /// Ends the streams of revoked keys; counted as a read when it reads.
    async fn check_keys(&self) {
        if !self.streams.any_named() {
            return;
        }
        self.reads.fetch_add(1, Ordering::Relaxed);
        if let Err(error) = self.streams.check_keys(self.keys.as_ref()).await {
            tracing::warn!(%error, "checking the keys of the event streams failed; trying again in a second");
        }
    }

    /// Forgets the ring: every stream reads for itself until the reader has read again.
    fn reset(&self) {
        *self.ring_mut() = Ring::default();
        self.version.send_modify(|v| *v += 1);
    }

    /// The reader, until `stopping`.
    pub async fn run(self: Arc<Self>, mut stopping: watch::Receiver<bool>) {
        let mut notices = self.feed.feed_notices();
        loop {
            if self.streams.count() == 0 {
                if self.ring().base.is_some() {
                    self.reset();
                }
                tokio::select! {
                    () = self.wake.notified() => {}
                    _ = stopping.wait_for(|stopping| *stopping) => return,
                }
                continue;
            }
            if let Err(error) = self.read_through().await {
                // Purged past the ring, a restored database, or a failure: the streams read
                // for themselves, and say so to their clients if it is theirs too.
                tracing::warn!(%error, "the change feed's reader failed; starting again");
                self.reset();
            }
            let quiet = tokio::select! {
                notice = notices.recv() => {
                    if let Err(broadcast::error::RecvError::Closed) = notice {
                        notices = broadcast::channel(1).1;
                    }
                    // Every notice queued meanwhile is answered by the one read.
                    while notices.try_recv().is_ok() {}
                    false
                }
                () = tokio::time::sleep(POLL_EVERY) => true,
                // Not woken by streams opening while it runs: they read from the ring, and a
                // read for each would cost the database one per stream again. (The wake
                // left meanwhile is taken, harmlessly, when it next goes idle.)
                _ = stopping.wait_for(|stopping| *stopping) => return,
            };
            if quiet {
                // A revoked key's quiet streams end within a second too.
                self.check_keys().await;
            }
        }
    }

    /// Reads every change after the ring's head into it.
    async fn read_through(&self) -> Result<()> {
        let mut head = match self.head() {
            Some(head) => head,
            None => {
                let head = self.bounds().await?.head;
                *self.ring_mut() = Ring { base: Some(head), head, events: VecDeque::new() };
                // The streams waiting for the reader's first read (`head_once_read`).
                self.version.send_modify(|v| *v += 1);
                head
            }
        };
        loop {
            let page = self.read(head).await?;
            if page.changes.is_empty() {
                return Ok(());
            }
            // A key revoked before these changes were read sees none of them: its streams
            // are told before the ring has them.
            self.check_keys().await;
            let full = page.changes.len() == FEED_MAX_LIMIT as usize;
            {
                let mut ring = self.ring_mut();
                for change in &page.changes {
                    ring.events.push_back(Event::of(change));
                }
                ring.head = page.next;
                while ring.events.len() > RING_EVENTS {
                    if let Some(event) = ring.events.pop_front() {
                        ring.base = Some(event.seq);
                    }
                }
            }
            self.version.send_modify(|v| *v += 1);
            head = page.next;
            if !full {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
impl FeedHub {
    /// Starts the ring at `position`, as the reader does when it starts.
    pub(super) fn start_ring_at(&self, position: u64) {
        *self.ring_mut() = Ring { base: Some(position), head: position, events: VecDeque::new() };
    }

    /// Puts an event in the ring, as the reader does after a read.
    pub(super) fn push_event(&self, seq: u64, bytes: Bytes) {
        let mut ring = self.ring_mut();
        ring.events.push_back(Event { seq, activity: false, bytes });
        ring.head = seq;
        drop(ring);
        self.version.send_modify(|v| *v += 1);
    }
}
