//! `POST /imports/pets`: a CSV file of pets, all or nothing (see `domain/import.rs` for the
//! file, and the stores' `imports.rs` for what is checked against the shop).
//!
//! The file is parsed as it arrives, on a blocking thread, and never held whole: reading it
//! into memory first let 150 connections with no key take a server from 332 MB to 2.2 GB.
//! The key is checked before a byte of it is read (`require_key.rs`), and at most
//! [`IMPORTS_AT_ONCE`](super::permits::IMPORTS_AT_ONCE) imports run at once; one more is answered `503` with `Retry-After`
//! at once rather than queued, so that a file waits in its client, not in the server.

use axum::Json;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::State;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

use super::Routes;
use super::actor::Acting;
use super::error::{ApiError, ApiResult};
use super::extract::{IMPORT_LIMIT, IMPORT_PATH, Params, too_large};
use super::state::AppState;
use crate::domain::{ImportRow, Operation, read_pets_csv};
use crate::error::{Error, ErrorCode};

/// Chunks of the body handed to the parser ahead of it: with hyper's chunks of up to some
/// tens of KB, well under a MB in flight.
const CHUNKS_AHEAD: usize = 8;

pub(super) fn routes(r: Routes) -> Routes {
    r.add(Method::POST, IMPORT_PATH, pets)
}

async fn pets(
    State(s): State<AppState>,
    headers: HeaderMap,
    params: Params,
    who: Acting,
    body: Body,
) -> ApiResult<Response> {
    let by = who.may(Operation::ImportPets)?;
    params.allow(&["createCategories", "dryRun"])?;
    let create_categories = params.one("createCategories")?.unwrap_or(false);
    let dry_run = params.one("dryRun")?.unwrap_or(false);
    let csv = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("text/csv"));
    if !csv {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "the file must be sent as CSV, with Content-Type: text/csv",
        ));
    }
    let length = headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if length.is_some_and(|n| n > IMPORT_LIMIT as u64) {
        return Err(too_large(IMPORT_LIMIT));
    }
    let _permit = s.import_permit()?;
    let rows = parse_as_it_arrives(body).await?;
    let status = if dry_run { StatusCode::OK } else { StatusCode::CREATED };
    Ok((
        status,
        Json(s.imports.get()?.imports_acting(by).import_pets(rows, create_categories, dry_run).await?),
    )
        .into_response())
}

/// Hands the body to the parser on a blocking thread chunk by chunk as it arrives, so that
/// neither the text nor the parsing is held by an async worker. A body larger than
/// [`IMPORT_LIMIT`] is refused as soon as it is; reading stops once the parser has refused
/// the file.
async fn parse_as_it_arrives(mut body: Body) -> Result<Vec<ImportRow>, Error> {
    let (chunks, arriving) = mpsc::channel(CHUNKS_AHEAD);
    let parser = tokio::task::spawn_blocking(move || {
        read_pets_csv(Arriving { chunks: arriving, chunk: Bytes::new() })
    });
    let mut seen = 0usize;
    while let Some(frame) = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await {
        let chunk = match frame {
            Ok(frame) => match frame.into_data() {
                Ok(data) => Ok(data),
                Err(_) => continue,
            },
            Err(_) => Err(Error::validation("the file broke off before its end")),
        };
        let ends = chunk.is_err();
        seen = seen.saturating_add(chunk.as_ref().map_or(0, Bytes::len));
        let chunk = if seen > IMPORT_LIMIT { Err(too_large(IMPORT_LIMIT).0) } else { chunk };
        let stop = ends || chunk.is_err();
        // The parser is gone once it has refused the file: its answer is the one.
        if chunks.send(chunk).await.is_err() || stop {
            break;
        }
    }
    drop(chunks);
    parser.await.map_err(|e| Error::internal(format!("the import's parser failed: {e}")))?
}

/// The body as the parser reads it: the chunks as they come, an error as the input's own.
struct Arriving {
    chunks: mpsc::Receiver<Result<Bytes, Error>>,
    chunk: Bytes,
}

impl std::io::Read for Arriving {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.chunk.is_empty() {
            match self.chunks.blocking_recv() {
                None => return Ok(0),
                Some(Ok(chunk)) => self.chunk = chunk,
                Some(Err(error)) => return Err(std::io::Error::other(error)),
            }
        }
        let n = buf.len().min(self.chunk.len());
        buf[..n].copy_from_slice(&self.chunk.split_to(n));
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    use super::*;

    /// On a runtime of one thread, another task keeps running while a large file is parsed:
    /// the parsing holds no async worker.
    #[test]
    fn a_file_is_parsed_off_the_async_workers() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let mut file = String::from("name,category,description\n");
        for _ in 0..90_000 {
            file.push_str("Rex,Dogs,a good dog who likes long walks by the river and sleeps a lot\n");
        }
        let (rows, turns) = runtime.block_on(async {
            let parsing = Arc::new(AtomicBool::new(true));
            let turns = Arc::new(AtomicU64::new(0));
            let other = tokio::spawn({
                let (parsing, turns) = (parsing.clone(), turns.clone());
                async move {
                    while parsing.load(Ordering::Relaxed) {
                        turns.fetch_add(1, Ordering::Relaxed);
                        tokio::task::yield_now().await;
                    }
                }
            });
            // The other task starts first.
            tokio::task::yield_now().await;
            let before = turns.load(Ordering::Relaxed);
            let rows = parse_as_it_arrives(Body::from(file)).await.unwrap().len();
            let during = turns.load(Ordering::Relaxed) - before;
            parsing.store(false, Ordering::Relaxed);
            other.await.unwrap();
            (rows, during)
        });
        assert_eq!(rows, 90_000);
        assert!(turns >= 100, "the other task ran {turns} times while the file was parsed");
    }
}
