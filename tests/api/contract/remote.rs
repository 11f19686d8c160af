//! The failures only a remote has.

use std::time::Duration;

use petstore::client::Client;
use petstore::domain::*;
use petstore::{Error, ErrorCode, Petstore};

use super::support::*;
use ErrorCode::*;

#[tokio::test]
async fn a_client_of_a_closed_port_reports_unreachable_quickly() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}");
    let client = Client::new(&base, crate::support::KEY).unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), client.get_pet(pid(1))).await;
    let e = answer.expect("no answer within 5 s").unwrap_err();
    assert_eq!(e.code, Unreachable, "{e:?}");
    assert!(e.message.starts_with(&format!("cannot reach {base}: connection refused")), "{}", e.message);
}

#[tokio::test]
async fn a_client_with_a_wrong_key_is_unauthorized() {
    let app = crate::support::spawn_app().await;
    let client = Client::new(&app.base_url, "wrong-key-0123456789abcdefghij").unwrap();
    let e = client.list_pets(PetFilter::default(), all()).await.unwrap_err();
    assert_eq!(e, Error::new(Unauthorized, "the API key is not valid"));
    assert_eq!(client.create_pet(pet("Rex")).await.unwrap_err().code, Unauthorized);
    assert!(!format!("{client:?}").contains("wrong-key"));
}

#[tokio::test]
async fn a_trailing_slash_on_the_base_url_changes_nothing() {
    let app = crate::support::spawn_app().await;
    let client = Client::new(&format!("{}/", app.base_url), crate::support::KEY).unwrap();
    let rex = client.create_pet(pet("Rex")).await.unwrap();
    assert_eq!(client.get_pet(rex.id).await.unwrap(), rex);
    assert_eq!(client.base_url(), app.base_url);
}

/// The faults a remote can have that a real Petstore server never shows on its own: a
/// tiny HTTP/1.1 responder on a loopback port that misbehaves in exactly one way.
mod faulty {
    use std::net::SocketAddr;
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpSocket, TcpStream};

    #[derive(Debug, Clone)]
    pub enum Fault {
        /// A full, well-formed answer (status line, content type, body).
        Answer { status: &'static str, content_type: &'static str, body: String },
        /// Reads the request, then nothing: no answer at all.
        Silent,
        /// The head at once, then the body one byte every 100 ms.
        Trickle,
        /// Announces 1,000 bytes, sends 10, and closes.
        CutOff,
        /// Closes the connection as soon as the request has arrived.
        HangUp,
        /// Resets the connection (TCP RST) as soon as the request has arrived.
        Reset,
        /// Answers with something that is not HTTP.
        NotHttp,
        /// Announces a body of 100 MB.
        Huge,
        /// A chunked body that never ends.
        Endless,
    }

    /// Starts a remote with `fault`; it serves until the test's runtime ends.
    pub async fn remote(fault: Fault) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                tokio::spawn(misbehave(stream, fault.clone()));
            }
        });
        base
    }

    async fn misbehave(mut stream: TcpStream, fault: Fault) {
        if !read_request(&mut stream).await {
            return;
        }
        let head = |status: &str, content_type: &str, length: &str| {
            format!("HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n{length}\r\n")
        };
        match fault {
            Fault::Answer { status, content_type, body } => {
                let length = format!("content-length: {}\r\n", body.len());
                let _ = stream
                    .write_all(format!("{}{body}", head(status, content_type, &length)).as_bytes())
                    .await;
            }
            Fault::Silent => tokio::time::sleep(Duration::from_secs(60)).await,
            Fault::Trickle => {
                let body = "[".to_owned() + &" ".repeat(1_000) + "]";
                let length = format!("content-length: {}\r\nx-total-count: 0\r\n", body.len());
                let _ = stream.write_all(head("200 OK", "application/json", &length).as_bytes()).await;
                for byte in body.bytes() {
                    if stream.write_all(&[byte]).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            Fault::CutOff => {
                let head = head("200 OK", "application/json", "content-length: 1000\r\nx-total-count: 3\r\n");
                let _ = stream.write_all(format!("{head}[{{\"id\": 1,").as_bytes()).await;
            }
            Fault::HangUp => {}
            Fault::Reset => {
                let _ = stream.set_zero_linger();
            }
            Fault::NotHttp => {
                let _ = stream.write_all(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n").await;
            }
            Fault::Huge => {
                let head = head("200 OK", "application/json", "content-length: 100000000\r\n");
                let _ = stream.write_all(format!("{head}[").as_bytes()).await;
            }
            Fault::Endless => {
                let head = head("200 OK", "application/json", "transfer-encoding: chunked\r\n");
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = format!("4000\r\n{}\r\n", " ".repeat(0x4000));
                while stream.write_all(chunk.as_bytes()).await.is_ok() {}
            }
        }
        // Dropping the stream closes it (with a RST for `Reset`).
    }

    /// Reads one request head and its body (by `content-length`); false if the client left.
    async fn read_request(stream: &mut TcpStream) -> bool {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        let end = loop {
            if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            match stream.read(&mut buf).await {
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
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        true
    }

    /// A port that is listened on but takes no new connections: its accept queue is full, so
    /// the kernel drops further connection attempts, as a firewall or a host that is off
    /// the network does. The returned sockets must be kept alive.
    pub async fn unresponsive() -> (SocketAddr, Vec<TcpStream>, TcpListener) {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = socket.listen(1).unwrap();
        let addr = listener.local_addr().unwrap();
        // Connect until an attempt goes unanswered: then the queue is full.
        let mut fillers = Vec::new();
        loop {
            match tokio::time::timeout(Duration::from_millis(200), TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => fillers.push(stream),
                Ok(Err(e)) => panic!("connecting to the unresponsive port failed: {e}"),
                Err(_) => break,
            }
            assert!(fillers.len() < 64, "the accept queue never filled up");
        }
        (addr, fillers, listener)
    }
}

use std::time::Instant;

use faulty::Fault;
use petstore::client::ClientConfig;

/// Short timeouts, so that the slow faults cost the suite little.
fn impatient() -> ClientConfig {
    ClientConfig::default()
        .connect_timeout(Duration::from_millis(500))
        .request_timeout(Duration::from_millis(800))
        .max_response_bytes(1 << 20)
}

/// Lists pets at `base` and returns the error and how long it took to come.
async fn fails_against(base: &str) -> (Error, Duration) {
    let client = Client::with_config(base, crate::support::KEY, impatient()).unwrap();
    let started = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(5), client.list_pets(PetFilter::default(), all()))
        .await
        .unwrap_or_else(|_| panic!("{base}: the client hung for 5 s"));
    (answer.expect_err("a faulty remote must give an error"), started.elapsed())
}

/// The code as the Error object spells it.
fn code_name(code: ErrorCode) -> String {
    serde_json::to_value(code).unwrap().as_str().unwrap().to_owned()
}

fn answer(status: &'static str, content_type: &'static str, body: &str) -> Fault {
    Fault::Answer { status, content_type, body: body.to_owned() }
}

#[tokio::test]
async fn every_remote_fault_is_a_clear_error_within_the_timeout() {
    let internal =
        r#"{"code":"internal","message":"internal error; the server log has the details","status":500}"#;
    let cases: Vec<(&str, Fault, ErrorCode, &str)> = vec![
        (
            "500 with the Error object",
            answer("500 Internal Server Error", "application/json", internal),
            Internal,
            "internal error; the server log has the details",
        ),
        (
            "500 with an HTML page",
            answer("500 Internal Server Error", "text/html", "<h1>Oops</h1>"),
            BadResponse,
            "500 Internal Server Error and an HTML page",
        ),
        (
            "503 with plain text",
            answer("503 Service Unavailable", "text/plain", "down for maintenance"),
            BadResponse,
            "503 Service Unavailable and a text/plain body",
        ),
        (
            "502 with no body",
            answer("502 Bad Gateway", "text/plain", ""),
            BadResponse,
            "502 Bad Gateway and an empty body",
        ),
        (
            "200 with plain text",
            answer("200 OK", "text/plain", "all good"),
            BadResponse,
            "a text/plain body instead of JSON",
        ),
        (
            "200 with broken JSON",
            answer("200 OK", "application/json", "[{\"id\": 1,"),
            BadResponse,
            "not valid JSON",
        ),
        (
            "200 with JSON of another shape",
            answer("200 OK", "application/json", r#"{"pets": []}"#),
            BadResponse,
            "another shape",
        ),
        ("a 100 MB body", Fault::Huge, BadResponse, "over the 1 MiB limit"),
        ("a body that never ends", Fault::Endless, BadResponse, "over the 1 MiB limit"),
        ("not HTTP at all", Fault::NotHttp, BadResponse, "not HTTP"),
        ("no answer", Fault::Silent, Timeout, "did not answer within 800 ms"),
        ("a body trickling in", Fault::Trickle, Timeout, "did not answer within 800 ms"),
        ("closed after the request", Fault::HangUp, Unreachable, "broke off during GET /pets"),
        ("reset after the request", Fault::Reset, Unreachable, "broke off during GET /pets"),
        ("closed mid-body", Fault::CutOff, Unreachable, "broke off during GET /pets"),
    ];
    let mut timings = Vec::new();
    for (what, fault, code, mentions) in cases {
        let base = faulty::remote(fault).await;
        let (e, took) = fails_against(&base).await;
        assert_eq!(e.code, code, "{what}: {e:?}");
        assert!(e.message.contains(mentions), "{what}: {:?} should mention {mentions:?}", e.message);
        if code != Internal {
            assert!(e.message.contains(&base), "{what}: {:?} should name the server", e.message);
        }
        assert!(took < Duration::from_millis(2_000), "{what}: took {took:?}");
        timings.push(format!("{what}: {} after {} ms: {}", code_name(e.code), took.as_millis(), e.message));
    }
    eprintln!("remote faults (request timeout 800 ms):\n  {}", timings.join("\n  "));
}

#[tokio::test]
async fn a_remote_that_takes_no_connections_is_unreachable_after_the_connect_timeout() {
    let (addr, _fillers, _listener) = faulty::unresponsive().await;
    let base = format!("http://{addr}");
    let (e, took) = fails_against(&base).await;
    assert_eq!(e.code, Unreachable, "{e:?}");
    assert!(e.message.contains("no connection within 500 ms"), "{}", e.message);
    assert!(took >= Duration::from_millis(450) && took < Duration::from_millis(2_000), "took {took:?}");
    eprintln!("remote fault: no connection accepted: {} after {} ms", code_name(e.code), took.as_millis());
}

#[tokio::test]
async fn a_down_remote_is_unreachable_at_once_and_faults_leave_clients_usable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let (e, took) = fails_against(&format!("http://{addr}")).await;
    assert_eq!(e.code, Unreachable, "{e:?}");
    assert!(e.message.contains("connection refused"), "{}", e.message);
    assert!(took < Duration::from_millis(500), "took {took:?}");
    eprintln!("remote fault: down (port closed): {} after {} ms", code_name(e.code), took.as_millis());

    // After a timeout against a stuck remote, clients of a real server work as ever.
    let app = crate::support::spawn_app().await;
    let client = Client::with_config(&app.base_url, crate::support::KEY, impatient()).unwrap();
    let silent = faulty::remote(Fault::Silent).await;
    let stuck = Client::with_config(&silent, crate::support::KEY, impatient()).unwrap();
    assert_eq!(stuck.list_pets(PetFilter::default(), all()).await.unwrap_err().code, Timeout);
    assert_eq!(client.list_pets(PetFilter::default(), all()).await.unwrap().total, 0);
    assert_eq!(client.create_pet(pet("Rex")).await.unwrap().name, "Rex");
}
