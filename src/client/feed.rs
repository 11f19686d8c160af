//! The change feed from the client's side: one read of it (`GET /changes`), and a
//! [`Follower`] that reads `GET /events` as the server pushes it and, after a dropped
//! connection, resumes after the last change it gave (`Last-Event-ID`), so that nothing
//! is missed or given twice.

use std::time::Duration;

use reqwest::Method;
use reqwest::header::ACCEPT;

use super::Client;
use super::errors::Call;
use super::transport::failed;
use crate::domain::{FeedChange, FeedPage};
use crate::error::{Error, ErrorCode, Result};

/// No byte for this long means the connection is dead: the server writes a comment every
/// 15 s on a quiet stream (`api::feed::KEEP_ALIVE_EVERY`).
const SILENCE: Duration = Duration::from_secs(40);

/// A stream has no end to wait for, so the client's request timeout cannot apply; the
/// silence check does its work. Past this a stream is simply opened again.
const STREAM_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

/// The largest event taken from the stream. A change event is a few hundred bytes; an
/// event that has not ended by this size is not the Petstore's, and buffering it further
/// would let a server fill the till's memory.
pub(super) const MAX_EVENT_BYTES: usize = 1 << 20;

impl Client {
    /// `GET /changes`: up to `limit` changes after `since`, or, without `since`, none and
    /// the feed's position now (to follow it from, after reading everything).
    pub async fn changes(&self, since: Option<u64>, limit: u32) -> Result<FeedPage> {
        let mut query = vec![("limit", limit.to_string())];
        if let Some(since) = since {
            query.push(("since", since.to_string()));
        }
        self.send(Method::GET, &["changes"], &query).await?.json()
    }

    /// Follows the feed after `since`, or from now.
    pub fn follow(&self, since: Option<u64>) -> Follower {
        Follower { client: self.clone(), since, stream: None, buffer: Vec::new(), scanned: 0 }
    }
}

/// A reader of `GET /events`. Each [`Follower::next`] gives the next change; a failure
/// (the server unreachable, the stream cut) is given as an error, and the next call
/// connects again after the last change given.
pub struct Follower {
    client: Client,
    since: Option<u64>,
    stream: Option<reqwest::Response>,
    /// Bytes received and not yet made into events.
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no event's end: each byte is scanned once,
    /// however many chunks an event comes in.
    scanned: usize,
}

/// One event of the stream, as the SSE format spells it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Event {
    kind: String,
    data: String,
}

impl Follower {
    /// The last change given (or where it started), to resume from another time.
    pub fn position(&self) -> Option<u64> {
        self.since
    }

    /// Whether a stream is open now.
    pub fn is_connected(&self) -> bool {
        self.stream.is_some()
    }

    /// The next change. `Err` with the code of what went wrong: `gone` (the feed no longer
    /// has the position: read everything again, then follow from now), `unauthorized` and
    /// `forbidden` (the key), or a transport code (`unreachable`, `timeout`,
    /// `bad_response`), after which calling again connects anew.
    pub async fn next(&mut self) -> Result<FeedChange> {
        loop {
            if let Some(event) = take_event(&mut self.buffer, &mut self.scanned) {
                match event.kind.as_str() {
                    "change" => {
                        let change: FeedChange = serde_json::from_str(&event.data)
                            .map_err(|e| self.bad(format_args!("a change that does not parse ({e})")))?;
                        self.since = Some(change.seq);
                        return Ok(change);
                    }
                    "error" => {
                        self.disconnect();
                        let error: Error = serde_json::from_str(&event.data).map_err(|e| {
                            self.bad(format_args!("an error event that does not parse ({e})"))
                        })?;
                        return Err(error);
                    }
                    _ => continue,
                }
            }
            if self.buffer.len() > MAX_EVENT_BYTES {
                // No event ends in what is held: it is over the limit (a chunk is bounded
                // by the HTTP stack's read buffer, so this holds little more than it).
                return Err(self.bad(format_args!(
                    "an event of more than {} KiB without an end",
                    MAX_EVENT_BYTES >> 10
                )));
            }
            if self.stream.is_none() {
                self.connect().await?;
            }
            let stream = self.stream.as_mut().expect("connected");
            let chunk = match tokio::time::timeout(SILENCE, stream.chunk()).await {
                Ok(Ok(Some(bytes))) => bytes,
                Ok(Ok(None)) => return Err(self.cut("the server ended the stream")),
                Ok(Err(e)) => return Err(self.cut(&format!("the stream broke ({e})"))),
                Err(_) => return Err(self.cut(&format!("nothing came for {} s", SILENCE.as_secs()))),
            };
            self.buffer.extend_from_slice(&chunk);
            // A server that sends without pause makes every chunk ready at once: give the
            // runtime its turn, so that time-outs around this call fire and other tasks run.
            tokio::task::coop::consume_budget().await;
        }
    }

    async fn connect(&mut self) -> Result<()> {
        let client = &self.client;
        let url = client.base.join(&["events"]);
        let path = url.path().to_owned();
        let call = Call { base: &client.base, method: &Method::GET, path: &path };
        let mut request = client.http.get(url).header(ACCEPT, "text/event-stream").timeout(STREAM_LIFETIME);
        if let Some(since) = self.since {
            request = request.header("last-event-id", since.to_string());
        }
        let mut response = client.open(&call, request).await?;
        if !response.status().is_success() {
            let body = client.read_body(&call, &mut response).await?;
            return Err(failed(&call, &response, &body));
        }
        let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
        if !content_type.starts_with("text/event-stream") {
            return Err(call.bad_response(format_args!("a {content_type:?} body instead of an event stream")));
        }
        self.buffer.clear();
        self.scanned = 0;
        self.stream = Some(response);
        Ok(())
    }

    fn disconnect(&mut self) {
        self.stream = None;
        self.buffer.clear();
        self.scanned = 0;
    }

    /// The stream is gone: an `unreachable` error (the next call connects again).
    fn cut(&mut self, why: &str) -> Error {
        self.disconnect();
        Error::new(ErrorCode::Unreachable, format!("lost the change feed of {}: {why}", self.client.base))
    }

    fn bad(&mut self, what: std::fmt::Arguments<'_>) -> Error {
        self.disconnect();
        let path = "/events";
        Call { base: &self.client.base, method: &Method::GET, path }.bad_response(what)
    }
}

/// Takes the first whole event out of `buffer` (comments and unknown fields skipped), if
/// one has arrived: lines up to a blank line, each `field: value`. The search starts where
/// the last one left off (`scanned`), so a long event costs one pass, not one per chunk.
fn take_event(buffer: &mut Vec<u8>, scanned: &mut usize) -> Option<Event> {
    loop {
        // One byte back: the first `\n` of the pair may have ended the last chunk.
        let from = scanned.saturating_sub(1);
        let Some(end) = buffer[from..].windows(2).position(|w| w == b"\n\n").map(|at| from + at) else {
            *scanned = buffer.len();
            return None;
        };
        let block: Vec<u8> = buffer.drain(..end + 2).collect();
        *scanned = 0;
        let block = String::from_utf8_lossy(&block);
        let mut event = Event { kind: "message".to_owned(), data: String::new() };
        let mut fields = 0;
        for line in block.lines() {
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => event.kind = value.to_owned(),
                "data" => {
                    if !event.data.is_empty() {
                        event.data.push('\n');
                    }
                    event.data.push_str(value);
                }
                "" => continue, // a comment (the keep-alive)
                _ => {}
            }
            fields += 1;
        }
        if fields > 0 {
            return Some(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_cut_at_blank_lines_and_comments_are_skipped() {
        let mut buffer =
            b": keep-alive\n\nid: 7\nevent: change\ndata: {\"a\":1}\n\nid: 8\nevent: ch".to_vec();
        let mut scanned = 0;
        assert_eq!(
            take_event(&mut buffer, &mut scanned),
            Some(Event { kind: "change".into(), data: "{\"a\":1}".into() })
        );
        assert_eq!(take_event(&mut buffer, &mut scanned), None, "the rest has not arrived yet");
        assert_eq!(scanned, buffer.len());
        buffer.extend_from_slice(b"ange\ndata: x\ndata: y\n");
        assert_eq!(take_event(&mut buffer, &mut scanned), None);
        // The blank line's `\n` comes in the next chunk, right after the one that ended it.
        buffer.extend_from_slice(b"\n");
        assert_eq!(
            take_event(&mut buffer, &mut scanned),
            Some(Event { kind: "change".into(), data: "x\ny".into() })
        );
        assert!(buffer.is_empty());
    }
}
