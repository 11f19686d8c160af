//! Connections that send half a request and wait must not lock everyone else out. With
//! the common limit of 1,024 open files, 1,100 of them used to take every file the server
//! could open: it could accept nothing more, and `/health` went unanswered for as long as
//! they stayed (no answer within 40 s).

#![cfg(unix)]

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_petstore-server");
pub(crate) const KEY: &str = "a-long-enough-operator-key-0123456789";

/// The limit of open files many systems still give a process by default.
const FILES: libc::rlim_t = 1024;
const IDLE_CONNECTIONS: usize = 1100;

/// Raises this process's own soft limit of open files to at least `needed` (the test holds
/// more connections than the common default allows), or fails the test: one that cannot
/// hold its connections has tested nothing, and must not pass as if it had.
pub(crate) fn raise_own_limit(needed: libc::rlim_t) {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit read and write the one struct passed.
    unsafe {
        assert_eq!(
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit),
            0,
            "getrlimit: {}",
            std::io::Error::last_os_error()
        );
        assert!(
            limit.rlim_max >= needed,
            "this test holds connections for which it needs {needed} open files, and this process may \
             open at most {} (its hard limit, `ulimit -Hn`): raise it to run the test",
            limit.rlim_max
        );
        limit.rlim_cur = limit.rlim_cur.max(needed);
        assert_eq!(
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit),
            0,
            "setrlimit: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// The real server with soft and hard limits of `FILES` open files, on a free port.
fn spawn_server(dir: &std::path::Path) -> (Child, u16) {
    spawn_server_with_files(dir, FILES)
}

/// The real server with soft and hard limits of `files` open files, on a free port.
pub(crate) fn spawn_server_with_files(dir: &std::path::Path, files: libc::rlim_t) -> (Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut command = Command::new(BIN);
    command
        .arg("--db")
        .arg(dir.join("shop.db"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("PETSTORE_API_KEY", KEY)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: only setrlimit, which is async-signal-safe, runs between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit { rlim_cur: files, rlim_max: files };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let server = command.spawn().unwrap();
    let started = Instant::now();
    while get(port, "/health", Duration::from_secs(1)).is_none() {
        assert!(started.elapsed() < Duration::from_secs(10), "the server never answered");
        std::thread::sleep(Duration::from_millis(20));
    }
    (server, port)
}

/// One GET on a new connection, with `Connection: close`; `None` when the connection is
/// refused or closed, or no whole answer comes within `patience`.
pub(crate) fn get(port: u16, path: &str, patience: Duration) -> Option<String> {
    let mut stream =
        TcpStream::connect_timeout(&std::net::SocketAddr::from(([127, 0, 0, 1], port)), patience).ok()?;
    stream.set_read_timeout(Some(patience)).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {KEY}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok()?;
    (!reply.is_empty()).then_some(reply)
}

/// A connection that sends the start of a request and then nothing.
fn half_a_request(port: u16) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stream, "GET /pets HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bea").unwrap();
    stream
}

/// Whether the server has closed `stream` (or reset it).
pub(crate) fn closed_by_server(stream: &mut TcpStream) -> bool {
    stream.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
    match stream.read(&mut [0; 512]) {
        Ok(0) => true,
        Ok(_) => true, // an answer (408/400) before closing
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}

#[test]
fn health_answers_within_seconds_while_1100_connections_hold_half_a_request_at_1024_open_files() {
    raise_own_limit(IDLE_CONNECTIONS as libc::rlim_t + 512);
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = spawn_server(dir.path());

    let mut idle: Vec<TcpStream> = (0..IDLE_CONNECTIONS).map(|_| half_a_request(port)).collect();
    let asked = Instant::now();
    let health = loop {
        if let Some(reply) = get(port, "/health", Duration::from_secs(1)) {
            break Some(reply);
        }
        if asked.elapsed() > Duration::from_secs(5) {
            break None;
        }
    };
    let latency = asked.elapsed();
    eprintln!("/health under {IDLE_CONNECTIONS} idle connections: {latency:?}");
    let pets = get(port, "/pets", Duration::from_secs(5));

    // The ones left are closed once they have had their time to send a request's head.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !idle.is_empty() && Instant::now() < deadline {
        idle.retain_mut(|stream| !closed_by_server(stream));
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = idle.len();
    drop(idle);
    let _ = server.kill();
    let _ = server.wait();

    let health = health.unwrap_or_else(|| panic!("/health did not answer within {latency:?}"));
    assert!(health.starts_with("HTTP/1.1 200") && health.contains("\"ok\""), "{health}");
    assert!(pets.is_some_and(|reply| reply.starts_with("HTTP/1.1 200")), "a keyed request is served too");
    assert_eq!(left, 0, "{left} of the half-request connections were still open after 20 s");
}
