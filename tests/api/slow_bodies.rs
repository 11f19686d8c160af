//! Strangers who send request heads and no body must not lock the API out. A head with
//! `Content-Length: 1000` and no body held its connection for the whole edge timeout (30 s)
//! and counted as being answered, so nothing made room for others: 10,050 of them, with no
//! key, and `/health` with the operator's key failed 35 times of 35 in 45 s. Here the same at
//! a small scale: a limit of 512 open files, so 256 connections.

#![cfg(unix)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::idle_connections::{KEY, closed_by_server, get, raise_own_limit, spawn_server_with_files};

const FILES: libc::rlim_t = 512;
/// Well past the 256 connections the server may hold at that limit.
const STRANGERS: usize = 400;
/// Uploads with the operator's key under way while the strangers come.
const UPLOADS: usize = 12;

fn connect(port: u16) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream
}

/// A stranger: a request head with `Content-Length: 1000` and no key, then no body; to an
/// operation that needs a key, or to one that needs none.
fn stranger(port: u16, i: usize) -> TcpStream {
    let mut stream = connect(port);
    let target = if i.is_multiple_of(2) { "/store/orders" } else { "/health" };
    write!(
        stream,
        "POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: 1000\r\n\r\n"
    )
    .unwrap();
    stream
}

/// An order with the operator's key whose head and first bytes of body are sent, once the
/// server has asked for the body (`Expect: 100-continue`): it asks when the handler starts
/// reading it, after the head was read and the key checked, so the upload is under way.
fn upload(port: u16, body: &str) -> TcpStream {
    let mut stream = connect(port);
    write!(
        stream,
        "POST /store/orders HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {KEY}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    let mut interim = Vec::new();
    let mut byte = [0; 1];
    while !interim.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => interim.push(byte[0]),
            other => {
                panic!("no 100 Continue for an upload ({other:?}): {:?}", String::from_utf8_lossy(&interim))
            }
        }
    }
    assert!(interim.starts_with(b"HTTP/1.1 100 Continue"), "{:?}", String::from_utf8_lossy(&interim));
    stream.write_all(&body.as_bytes()[..5]).unwrap();
    stream
}

#[test]
fn health_answers_with_400_heads_without_body_or_key_and_keyed_uploads_finish() {
    raise_own_limit(1024);
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = spawn_server_with_files(dir.path(), FILES);

    let body = r#"{"petId": 999999, "quantity": 1}"#;
    // Each upload under way (its head read, its key checked) before the strangers come.
    let mut uploads: Vec<TcpStream> = (0..UPLOADS).map(|_| upload(port, body)).collect();
    let strangers: Vec<TcpStream> = (0..STRANGERS).map(|i| stranger(port, i)).collect();

    let mut answered = 0;
    let mut slowest = Duration::ZERO;
    for _ in 0..10 {
        let asked = Instant::now();
        let health = get(port, "/health", Duration::from_secs(2));
        slowest = slowest.max(asked.elapsed());
        answered += usize::from(health.is_some_and(|reply| reply.starts_with("HTTP/1.1 200")));
    }
    eprintln!("/health with {STRANGERS} heads without body: {answered} of 10 answered, slowest {slowest:?}");

    // The uploads were never closed to make room: each finishes and is answered.
    let mut finished = 0;
    for stream in &mut uploads {
        let _ = stream.write_all(&body.as_bytes()[5..]);
        let mut reply = String::new();
        let _ = stream.read_to_string(&mut reply);
        // The order's own answer: its whole body was read.
        finished +=
            usize::from(reply.starts_with("HTTP/1.1 400") && reply.contains("petId 999999 names no pet"));
    }

    // A body that stops coming closes its connection within seconds, key or not.
    let mut stalled = connect(port);
    write!(
        stalled,
        "POST /store/orders HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {KEY}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"
    )
    .unwrap();
    let waited = Instant::now();
    let mut closed = false;
    while !closed && waited.elapsed() < Duration::from_secs(15) {
        closed = closed_by_server(&mut stalled);
        std::thread::sleep(Duration::from_millis(100));
    }
    let stall = waited.elapsed();
    drop(strangers);
    let _ = server.kill();
    let _ = server.wait();

    assert_eq!(answered, 10, "/health answered {answered} of 10 times within 2 s under the strangers");
    assert_eq!(finished, UPLOADS, "{finished} of {UPLOADS} keyed uploads were answered");
    assert!(closed && stall < Duration::from_secs(10), "a stalled body held its connection for {stall:?}");
}
