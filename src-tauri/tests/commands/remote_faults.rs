//! Remote mode against remotes that fail in one specific way each: down, silent, slow,
//! 500s, answers that are not JSON or not HTTP, a huge body, a connection that breaks off.
//! A real Petstore server fails in none of these ways on its own, so a tiny HTTP/1.1
//! responder on a loopback port plays the broken remote. Every command must come back with
//! the error object within the app's 5 s remote timeout, and the app must stay usable.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::helpers::{TestApp, app, pet_query};

const KEY: &str = "remote-key-0123456789abcdefghij";

/// The app's remote request timeout (`REMOTE_REQUEST_TIMEOUT` in `remote_key.rs`), and what a
/// command may take at most.
const REMOTE_TIMEOUT: Duration = Duration::from_secs(5);
const GRACE: Duration = Duration::from_millis(1_500);

#[derive(Clone)]
enum Fault {
    /// A complete answer, as raw HTTP.
    Answer(String),
    /// Reads the request and never answers.
    Silent,
    /// Announces 1,000 bytes of body, sends a few, and closes.
    CutOff,
    /// Closes the connection without a word.
    HangUp,
    /// A chunked body that never ends.
    Endless,
}

/// A remote with `fault`, serving until the test process ends; returns its base URL.
fn remote(fault: Fault) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let fault = fault.clone();
            std::thread::spawn(move || misbehave(stream, fault));
        }
    });
    base
}

fn misbehave(mut stream: TcpStream, fault: Fault) {
    if !read_request(&mut stream) {
        return;
    }
    match fault {
        Fault::Answer(raw) => drop(stream.write_all(raw.as_bytes())),
        Fault::Silent => std::thread::sleep(Duration::from_secs(30)),
        Fault::CutOff => drop(stream.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-total-count: 3\r\ncontent-length: 1000\r\n\r\n[{\"id\": 1,",
        )),
        Fault::HangUp => {}
        Fault::Endless => {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
            let chunk = format!("4000\r\n{}\r\n", " ".repeat(0x4000));
            if stream.write_all(head.as_bytes()).is_ok() {
                while stream.write_all(chunk.as_bytes()).is_ok() {}
            }
        }
    }
}

/// Reads a request head and its `content-length` body; false if the client went away.
fn read_request(stream: &mut TcpStream) -> bool {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while seen.len() < end + length {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    true
}

fn http(status: &str, content_type: &str, body: &str) -> Fault {
    Fault::Answer(format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    ))
}

fn settings(backend: &str, base_url: &str, key: Option<&str>) -> Value {
    json!({ "settings": {
        "backend": backend, "baseUrl": base_url, "remoteKey": key,
        "localApi": { "enabled": false, "port": 8787 }
    } })
}

/// Runs `cmd` against the current remote; it must fail with `code` within the timeout.
/// Returns the error object and how long it took.
fn fails_in_time(app: &TestApp, cmd: &str, args: Value, code: &str) -> (Value, Duration) {
    let started = Instant::now();
    let error = app.fails(cmd, args);
    let took = started.elapsed();
    assert_eq!(error["code"], code, "{cmd}: {error}");
    assert!(error["message"].as_str().is_some_and(|m| !m.trim().is_empty()), "{cmd}: {error}");
    assert!(error["status"].as_u64().is_some_and(|s| s >= 400), "{cmd}: {error}");
    assert!(took < REMOTE_TIMEOUT + GRACE, "{cmd} took {took:?}");
    (error, took)
}

#[test]
fn remote_faults_are_error_objects_within_the_timeout_and_the_app_stays_usable() {
    let app = app();
    app.ok("create_pet", json!({ "pet": { "name": "Local Rex" } }));
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    app.ok("save_settings", settings("remote", &format!("http://{closed}"), Some(KEY)));

    let internal =
        r#"{"code":"internal","message":"internal error; the server log has the details","status":500}"#;
    let cases: Vec<(&str, Option<Fault>, &str)> = vec![
        ("down (port closed)", None, "unreachable"),
        (
            "500 with the Error object",
            Some(http("500 Internal Server Error", "application/json", internal)),
            "internal",
        ),
        (
            "500 with an HTML page",
            Some(http("500 Internal Server Error", "text/html", "<h1>Oops</h1>")),
            "bad_response",
        ),
        ("200 that is not JSON", Some(http("200 OK", "text/plain", "all good")), "bad_response"),
        ("200 with broken JSON", Some(http("200 OK", "application/json", "[{\"id\": 1,")), "bad_response"),
        ("not HTTP at all", Some(Fault::Answer("SSH-2.0-OpenSSH_9.2p1\r\n".into())), "bad_response"),
        (
            "a 100 MB body",
            Some(Fault::Answer(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000000\r\n\r\n["
                    .into(),
            )),
            "bad_response",
        ),
        ("a body that never ends", Some(Fault::Endless), "bad_response"),
        ("closed after the request", Some(Fault::HangUp), "unreachable"),
        ("closed mid-body", Some(Fault::CutOff), "unreachable"),
        ("no answer", Some(Fault::Silent), "timeout"),
    ];
    let mut timings = Vec::new();
    for (what, fault, code) in cases {
        let base = match fault {
            Some(fault) => remote(fault),
            None => format!("http://{closed}"),
        };
        // A new address takes the key typed again: the saved one goes only where it was saved for.
        app.ok("save_settings", settings("remote", &base, Some(KEY)));
        let (error, took) = fails_in_time(&app, "list_pets", pet_query(json!({})), code);
        if code != "internal" {
            assert!(error["message"].as_str().unwrap().contains(&base), "{what}: {error}");
        }
        timings.push(format!("{what}: {code} after {} ms", took.as_millis()));
    }

    // Writes fail the same way, and nothing is left half done in the app.
    let base = remote(Fault::CutOff);
    app.ok("save_settings", settings("remote", &base, Some(KEY)));
    fails_in_time(&app, "create_pet", json!({ "pet": { "name": "Lost Rex" } }), "unreachable");

    // The status bar says the remote is unreachable, with the reason, within its own wait.
    let base = remote(Fault::Silent);
    app.ok("save_settings", settings("remote", &base, Some(KEY)));
    let started = Instant::now();
    let status = app.ok("get_status", json!({}));
    let took = started.elapsed();
    assert_eq!((status["backend"].as_str(), status["reachable"].as_bool()), (Some("remote"), Some(false)));
    assert!(status["message"].as_str().is_some_and(|m| !m.is_empty()), "{status}");
    assert!(took < REMOTE_TIMEOUT + GRACE, "get_status took {took:?}");
    timings.push(format!("get_status on a silent remote: unreachable after {} ms", took.as_millis()));

    // Back to local mode, everything works as before.
    app.ok("save_settings", settings("local", &base, None));
    let pets = app.ok("list_pets", pet_query(json!({})));
    assert_eq!(pets["total"], 1);
    assert_eq!(pets["items"][0]["name"], "Local Rex");
    app.ok("create_pet", json!({ "pet": { "name": "Local Max" } }));
    assert_eq!(app.ok("list_pets", pet_query(json!({})))["total"], 2);
    eprintln!("app remote faults (remote timeout 5 s):\n  {}", timings.join("\n  "));
}
