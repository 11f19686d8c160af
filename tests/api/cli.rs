//! The `petstore-server` binary as an operator uses it.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_petstore-server");

fn run(db: &Path, args: &[&str]) -> Output {
    Command::new(BIN).arg("--db").arg(db).args(args).env_remove("PETSTORE_API_KEY").output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).trim().to_owned()
}

#[test]
fn key_creates_a_private_key_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    let first = run(&db, &["key"]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(stdout(&run(&db, &["key"])), stdout(&first));
    assert!(stdout(&first).len() >= 64, "a 256-bit key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("shop.db.key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn operator_errors_are_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = run(&dir.path().join("no/such/dir.db"), &["seed", "--pets", "1"]);
    assert!(!missing.status.success());
    assert!(stderr(&missing).contains("does not exist"), "{}", stderr(&missing));

    let future = dir.path().join("future.db");
    rusqlite::Connection::open(&future).unwrap().execute_batch("PRAGMA user_version = 999;").unwrap();
    let newer = run(&future, &["serve", "--listen", "127.0.0.1:0"]);
    assert!(!newer.status.success());
    let message = stderr(&newer);
    assert!(message.contains("newer") && message.lines().count() == 1, "{message}");

    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let taken = run(&dir.path().join("ok.db"), &["serve", "--listen", &format!("127.0.0.1:{port}")]);
    assert!(!taken.status.success());
    assert!(stderr(&taken).contains("already in use"), "{}", stderr(&taken));
}

#[test]
fn seed_then_backup_makes_a_consistent_copy() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    let seeded = run(&db, &["seed", "--pets", "2500"]);
    assert!(seeded.status.success(), "{}", stderr(&seeded));
    assert!(stdout(&seeded).contains("2500 pets"), "{}", stdout(&seeded));

    let copy = dir.path().join("copy.db");
    let backup = run(&db, &["backup", "--to", copy.to_str().unwrap()]);
    assert!(backup.status.success(), "{}", stderr(&backup));
    let conn = rusqlite::Connection::open(&copy).unwrap();
    let pets: i64 = conn.query_row("SELECT count(*) FROM pets", [], |r| r.get(0)).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!((pets, check.as_str()), (2500, "ok"));

    let again = run(&db, &["backup", "--to", copy.to_str().unwrap()]);
    assert!(!again.status.success(), "an existing file is never overwritten");
}

#[test]
fn serve_answers_and_stops_gracefully_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new(BIN)
        .arg("--db")
        .arg(dir.path().join("shop.db"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("PETSTORE_API_KEY", "a-long-enough-operator-key-123")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let health = loop {
        match std::net::TcpStream::connect(("127.0.0.1", port)) {
            Ok(_) => break raw_http::get_health(port),
            Err(_) if started.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => panic!("the server never listened: {e}"),
        }
    };
    assert!(health.contains("\"ok\""), "{health}");
    Command::new("kill").args(["-TERM", &server.id().to_string()]).status().unwrap();
    let status = server.wait().unwrap();
    assert!(status.success(), "a SIGTERM ends the server cleanly: {status}");
}

mod raw_http {
    /// A plain HTTP/1.1 GET of /health, enough for a liveness check without a runtime.
    pub fn get_health(port: u16) -> String {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(stream, "GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        reply
    }
}
