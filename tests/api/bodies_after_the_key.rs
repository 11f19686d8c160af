//! No request body is read before its key is checked, none larger than its limit is read at
//! all, and imports are parsed as they arrive, a few at a time. `/imports/pets` used to read
//! up to 10 MiB of every request before the key check: 150 connections with no key took a
//! server from 332 MB to 2.2 GB.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{KEY, TestApp, spawn_app};

/// A request head sent on a new connection, with no byte of its body.
async fn head_only(app: &TestApp, head: &str) -> TcpStream {
    let mut stream = TcpStream::connect(app.addr).await.unwrap();
    let head = format!("{head}Host: {}\r\n\r\n", app.addr);
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// The answer's head and body, or `None` when none comes within `patience`.
async fn answer_within(stream: &mut TcpStream, patience: Duration) -> Option<String> {
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            let n = stream.read(&mut buf).await.unwrap_or(0);
            answer.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&answer);
            let complete = text.split_once("\r\n\r\n").is_some_and(|(head, body)| {
                let length = head
                    .lines()
                    .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(str::to_owned))
                    .and_then(|l| l.trim().parse::<usize>().ok());
                length.is_some_and(|length| body.len() >= length)
            });
            if n == 0 || complete {
                break;
            }
        }
    };
    tokio::time::timeout(patience, read).await.ok()?;
    (!answer.is_empty()).then(|| String::from_utf8_lossy(&answer).into_owned())
}

/// Well within what a server that waits for the body takes (the edge timeout, 30 s), and
/// far longer than a server that answers at once needs.
const AT_ONCE: Duration = Duration::from_secs(5);

#[tokio::test]
async fn a_request_without_a_valid_key_is_refused_while_its_body_is_still_unsent() {
    let app = spawn_app().await;
    for (head, why) in [
        (
            "POST /imports/pets HTTP/1.1\r\nContent-Type: text/csv\r\nContent-Length: 5000000\r\n",
            "an import with no key",
        ),
        (
            "POST /imports/pets HTTP/1.1\r\nContent-Type: text/csv\r\nContent-Length: 5000000\r\n\
             Authorization: Bearer not-a-key-of-this-shop-0123456789\r\n",
            "an import with a wrong key",
        ),
        (
            "POST /store/orders HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n",
            "an order with no key",
        ),
    ] {
        let mut stream = head_only(&app, head).await;
        let answer = answer_within(&mut stream, AT_ONCE).await;
        let answer =
            answer.unwrap_or_else(|| panic!("{why}: no answer within {AT_ONCE:?} while the body is unsent"));
        assert!(answer.starts_with("HTTP/1.1 401"), "{why}: {answer}");
    }
}

#[tokio::test]
async fn a_body_declared_larger_than_its_limit_is_refused_at_once_without_reading_it() {
    let app = spawn_app().await;
    for (head, why) in [
        (
            format!(
                "POST /imports/pets HTTP/1.1\r\nContent-Type: text/csv\r\nContent-Length: {}\r\n\
                 Authorization: Bearer {KEY}\r\n",
                10 * 1024 * 1024 + 1
            ),
            "an import of 10 MiB and a byte",
        ),
        (
            "POST /imports/pets HTTP/1.1\r\nContent-Type: text/csv\r\nContent-Length: 999999999999\r\n"
                .to_owned(),
            "an import of a terabyte with no key",
        ),
        (
            format!(
                "POST /store/orders HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Authorization: Bearer {KEY}\r\n",
                64 * 1024 + 1
            ),
            "an order of 64 KiB and a byte",
        ),
    ] {
        let mut stream = head_only(&app, &head).await;
        let answer = answer_within(&mut stream, AT_ONCE).await;
        let answer = answer.unwrap_or_else(|| panic!("{why}: no answer within {AT_ONCE:?}"));
        assert!(answer.starts_with("HTTP/1.1 413"), "{why}: {answer}");
        assert!(answer.contains("payload_too_large"), "{why}: {answer}");
    }
}

#[tokio::test]
async fn imports_beyond_two_at_once_are_answered_503_with_retry_after() {
    let app = spawn_app().await;
    // Two imports under way: their heads and the start of their files, then nothing yet.
    let mut under_way = Vec::new();
    for _ in 0..2 {
        let mut stream = head_only(
            &app,
            &format!(
                "POST /imports/pets?dryRun=true HTTP/1.1\r\nContent-Type: text/csv\r\nContent-Length: 1000\r\n\
                 Authorization: Bearer {KEY}\r\n"
            ),
        )
        .await;
        stream.write_all(b"name,category\n").await.unwrap();
        under_way.push(stream);
    }
    let file = "name,category\nRex,Dogs\n";
    let import = || {
        app.request(reqwest::Method::POST, "/imports/pets?createCategories=true&dryRun=true")
            .header("Content-Type", "text/csv")
            .body(file)
            .send()
    };
    // The two may take a moment to reach the import; a third is refused once they have.
    let mut third = None;
    for _ in 0..100 {
        let reply = import().await.unwrap();
        if reply.status() == 503 {
            third = Some(reply);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let third = third.expect("a third import at once was not refused");
    assert_eq!(third.headers()["retry-after"], "1");
    let body: Value = third.json().await.unwrap();
    assert_eq!(body["code"], "busy", "{body}");

    // Once they end, an import runs again.
    drop(under_way);
    let mut status = 0;
    for _ in 0..100 {
        status = import().await.unwrap().status().as_u16();
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 200, "an import after the others ended");
}

#[tokio::test]
async fn a_bad_cell_of_10_mb_is_refused_in_a_few_hundred_bytes() {
    let app = spawn_app().await;
    let file = format!("name,category,price\nRex,Dogs,{}\n", "\u{1}".repeat(10_000_000));
    let reply = app
        .request(reqwest::Method::POST, "/imports/pets?createCategories=true")
        .header("Content-Type", "text/csv")
        .body(file)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 400);
    let bytes = reply.bytes().await.unwrap();
    assert!(bytes.len() < 1_000, "a refusal of {} bytes", bytes.len());
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    let message = body["message"].as_str().unwrap();
    assert!(message.starts_with("line 2, column price") && message.contains('…'), "{message}");
    assert_eq!(app.get("/pets").await.header("x-total-count"), "0", "nothing was written");
}
