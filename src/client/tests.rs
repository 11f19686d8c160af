//! The client against remotes that misbehave in specific ways, which the real server never
//! does: a tiny HTTP/1.1 responder on a loopback port that answers every request with a
//! canned reply (or not at all) and reports the request it got. The happy paths and the
//! server's own errors are covered by the contract suite against a real server.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{Client, ClientConfig};
use crate::domain::{Page, PetId};
use crate::engine::Petstore;
use crate::error::{Error, ErrorCode};

const KEY: &str = "secret-key-0123456789abcdef";

/// What the fake remote does with each request.
#[derive(Clone)]
enum Reply {
    Bytes(Vec<u8>),
    /// Reads the request and keeps the connection open without answering.
    Silence,
    /// A chunked body that never ends, until the client hangs up.
    Endless,
}

/// Starts the fake remote; returns its base URL and the request heads it receives.
fn fake_remote(reply: Reply) -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (seen, requests) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let (reply, seen) = (reply.clone(), seen.clone());
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = seen.send(String::from_utf8_lossy(&head).into_owned());
                match reply {
                    Reply::Bytes(bytes) => drop(stream.write_all(&bytes)),
                    Reply::Silence => std::thread::sleep(Duration::from_secs(30)),
                    Reply::Endless => {
                        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n");
                        let chunk = format!("4000\r\n{}\r\n", " ".repeat(0x4000));
                        while stream.write_all(chunk.as_bytes()).is_ok() {}
                    }
                }
            });
        }
    });
    (base, requests)
}

fn http(status: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut text = format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\n", body.len());
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    Reply::Bytes(text.into_bytes())
}

const JSON: (&str, &str) = ("content-type", "application/json");

async fn list_pets(client: &Client) -> Result<(), Error> {
    client.list_pets(Default::default(), Page::default()).await.map(drop)
}

fn assert_bad_response(result: Result<(), Error>, mentions: &str) {
    let e = result.unwrap_err();
    assert_eq!(e.code, ErrorCode::BadResponse, "{e:?}");
    assert!(e.message.contains(mentions), "{:?} should mention {mentions:?}", e.message);
}

#[tokio::test]
async fn the_key_travels_only_in_the_authorization_header() {
    let (base, requests) = fake_remote(http("200 OK", &[JSON, ("x-total-count", "0")], "[]"));
    let client = Client::new(&format!("{base}/prefix/"), KEY).unwrap();
    list_pets(&client).await.unwrap();
    let head = requests.recv().unwrap();
    let request_line = head.lines().next().unwrap();
    assert!(request_line.starts_with("GET /prefix/pets?"), "{request_line}");
    assert!(!request_line.contains(KEY));
    assert!(
        head.to_ascii_lowercase().contains(&format!("authorization: bearer {}", KEY.to_ascii_lowercase()))
    );
    assert!(!format!("{client:?}").contains(KEY), "{client:?}");
}

#[tokio::test]
async fn get_pet_asks_the_successor_operation_and_an_empty_list_is_not_found() {
    let (base, requests) = fake_remote(http("200 OK", &[JSON, ("x-total-count", "0")], "[]"));
    let client = Client::new(&base, KEY).unwrap();
    let e = client.get_pet(PetId::try_from(7).unwrap()).await.unwrap_err();
    assert_eq!(e, Error::not_found(PetId::WHAT, 7));
    let head = requests.recv().unwrap();
    assert!(head.starts_with("GET /pets?id=7 HTTP/1.1"), "{head}");
}

#[tokio::test]
async fn an_html_page_is_a_bad_response() {
    let page = "<!doctype html><title>Router login</title>";
    let (base, _) = fake_remote(http("200 OK", &[("content-type", "text/html")], page));
    assert_bad_response(list_pets(&Client::new(&base, KEY).unwrap()).await, "an HTML page instead of JSON");

    let (base, _) = fake_remote(http("502 Bad Gateway", &[("content-type", "text/html")], page));
    assert_bad_response(
        list_pets(&Client::new(&base, KEY).unwrap()).await,
        "502 Bad Gateway and an HTML page",
    );
}

#[tokio::test]
async fn json_of_the_wrong_shape_or_no_json_is_a_bad_response() {
    let (base, _) =
        fake_remote(http("200 OK", &[JSON, ("x-total-count", "1")], r#"[{"id": 1, "name": "Rex"}]"#));
    assert_bad_response(list_pets(&Client::new(&base, KEY).unwrap()).await, "at [0]");

    let (base, _) = fake_remote(http("200 OK", &[JSON, ("x-total-count", "0")], "OK, pets follow"));
    assert_bad_response(list_pets(&Client::new(&base, KEY).unwrap()).await, "not valid JSON");

    let (base, _) = fake_remote(http("200 OK", &[JSON], "[]"));
    assert_bad_response(list_pets(&Client::new(&base, KEY).unwrap()).await, "X-Total-Count");

    let (base, _) = fake_remote(http("418 I'm a teapot", &[], ""));
    assert_bad_response(list_pets(&Client::new(&base, KEY).unwrap()).await, "418");
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let (base, _) =
        fake_remote(http("301 Moved Permanently", &[("location", "https://elsewhere.example/pets")], ""));
    assert_bad_response(list_pets(&Client::new(&base, KEY).unwrap()).await, "https://elsewhere.example/pets");
}

#[tokio::test]
async fn an_oversized_answer_is_refused() {
    let config = ClientConfig::default().max_response_bytes(64 << 10);
    let announced = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000000\r\n\r\n[";
    let (base, _) = fake_remote(Reply::Bytes(announced.as_bytes().to_vec()));
    let client = Client::with_config(&base, KEY, config).unwrap();
    assert_bad_response(list_pets(&client).await, "over the 64 KiB limit");

    let (base, _) = fake_remote(Reply::Endless);
    let client = Client::with_config(&base, KEY, config).unwrap();
    assert_bad_response(list_pets(&client).await, "over the 64 KiB limit");
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let (base, _) = fake_remote(Reply::Silence);
    let config = ClientConfig::default().request_timeout(Duration::from_millis(300));
    let client = Client::with_config(&base, KEY, config).unwrap();
    let started = Instant::now();
    let e = list_pets(&client).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(e.code, ErrorCode::Timeout, "{e:?}");
    assert_eq!(e.message, format!("{base} did not answer within 300 ms"));
}

#[tokio::test]
async fn an_unknown_host_is_unreachable() {
    // `.invalid` is reserved (RFC 6761): it never resolves, and fails fast offline too.
    let client = Client::new("http://no-such-host.invalid:8787", KEY).unwrap();
    let e = list_pets(&client).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::Unreachable, "{e:?}");
    assert!(e.message.starts_with("cannot reach http://no-such-host.invalid:8787: "), "{}", e.message);
}

#[test]
fn a_blank_or_unsendable_key_is_refused_without_echoing_it() {
    assert_eq!(Client::new("http://h", "  ").unwrap_err().code, ErrorCode::ValidationFailed);
    let e = Client::new("http://h", "abc\ndef").unwrap_err();
    assert_eq!(e.code, ErrorCode::ValidationFailed);
    assert!(!e.message.contains("abc"));
}

/// An `/events` stream on loopback whose one event never ends: `data:` lines without the
/// blank line that closes an event, as fast as the connection takes them.
async fn endless_event_server() -> String {
    use axum::body::{Body, Bytes};
    let line = Bytes::from(format!("data: {}\n", "x".repeat(16 << 10)));
    let app = axum::Router::new().route(
        "/events",
        axum::routing::get(move || {
            let line = line.clone();
            async move {
                let body = Body::from_stream(futures_util::stream::repeat_with(move || {
                    Ok::<_, std::convert::Infallible>(line.clone())
                }));
                ([("content-type", "text/event-stream")], body)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_that_never_ends_is_refused_at_a_megabyte_and_a_timeout_around_it_fires() {
    let base = endless_event_server().await;
    // The follower on a thread of its own with a one-thread runtime, as a till's task may
    // be: a loop that never yields would keep the 20 s timeout from ever firing there, and
    // this thread would then wait in vain.
    let (done, outcome) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let result = runtime.block_on(async {
            let mut follower = Client::new(&base, KEY).unwrap().follow(Some(0));
            tokio::time::timeout(Duration::from_secs(20), follower.next()).await
        });
        let _ = done.send(result.map(|next| next.map(|change| change.seq)));
    });
    let result = outcome.recv_timeout(Duration::from_secs(60)).expect("the follower gives up within 60 s");
    let e = result.expect("refused before the 20 s timeout").unwrap_err();
    assert_eq!(e.code, ErrorCode::BadResponse, "{e:?}");
    assert!(e.message.contains("an event of more than 1024 KiB"), "{}", e.message);
}
