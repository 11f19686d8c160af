//! Crash safety: the real `petstore-server` binary, and the real desktop app, killed with
//! SIGKILL in the middle of concurrent order placement, round after round, on one
//! database (see harness.rs for what is checked after each restart).
//!
//! Every test here is a set of crash rounds, ignored by default so that `cargo test
//! --workspace` (make test-rust) does not run them: `make crash-test` runs them all, once,
//! with `--include-ignored`, the app's under Xvfb (they need its binary and a display).
//! `cargo test --test crash -- --ignored --nocapture the_server_keeps` runs the server's alone.
//!
//! - main.rs: the server (10 rounds; `PETSTORE_CRASH_ROUNDS` for more) and the app
//!   (3 rounds; `PETSTORE_CRASH_APP_ROUNDS`).
//! - `postgres.rs`: the rounds on PostgreSQL: a replica killed; a replica killed and
//!   PostgreSQL with it; PostgreSQL stopped at once under two live replicas (5 rounds
//!   each; `PETSTORE_CRASH_PG_ROUNDS`).
//! - `powercut/`: SIGKILL keeps the kernel's page cache; these run the same rounds through
//!   a power cut that loses what was not synced (20 rounds of each of its three kinds;
//!   `PETSTORE_POWERCUT_ROUNDS`).
//! - `outbox.rs`: remote mode's soak (sales taken offline reach the server once): two tills on one server through proxies
//!   that refuse or black-hole, the server stopped, the tills killed, sales all the while;
//!   every sale accepted reaches the server once (3 rounds; `PETSTORE_OUTBOX_ROUNDS`; it
//!   needs the app and a display, like the app's rounds).
//!
//! `make soak` runs many more of each.

mod harness;
mod outbox;
#[path = "../support/pg_server.rs"]
mod pg_server;
mod postgres;
mod powercut;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use harness::{Settings, Target};
use tempfile::TempDir;

const SERVER: &str = env!("CARGO_BIN_EXE_petstore-server");
const KEY: &str = "crash-test-key-0123456789abcdefghij";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until something listens on `port`, or fails with the process's log.
fn wait_for(port: u16, child: &mut Child, log: &Path, within: Duration) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "the process exited ({status}) before it listened:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        assert!(started.elapsed() < within, "nothing listened on port {port} within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill(child: &mut Option<Child>) {
    if let Some(mut child) = child.take() {
        // std's kill() is SIGKILL on Unix: no shutdown hook, no final checkpoint.
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Appends to the log across restarts, so a failure shows every run.
/// The desktop app on its data folder `data`, its local API on `port`, everything else it
/// writes (WebKit's caches) under `home`.
fn desktop_app(bin: &Path, data: &Path, port: u16, home: &Path) -> Command {
    let mut command = Command::new(bin);
    command
        .env("PETSTORE_DATA_DIR", data)
        .env("PETSTORE_LOCAL_API_PORT", port.to_string())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        // No accessibility bus in this session; without it GTK waits for one.
        .env("NO_AT_BRIDGE", "1");
    command
}

fn log_file(path: &Path) -> (Stdio, Stdio) {
    let file = File::options().create(true).append(true).open(path).unwrap();
    (Stdio::from(file.try_clone().unwrap()), Stdio::from(file))
}

struct Server {
    dir: TempDir,
    child: Option<Child>,
}

impl Target for Server {
    fn name(&self) -> &'static str {
        "petstore-server"
    }

    fn start(&mut self) -> (Vec<String>, String) {
        let port = free_port();
        let log = self.dir.path().join("server.log");
        let (out, err) = log_file(&log);
        let mut child = Command::new(SERVER)
            .arg("--db")
            .arg(self.database())
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .env("PETSTORE_API_KEY", KEY)
            .env("RUST_LOG", "warn")
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap();
        wait_for(port, &mut child, &log, Duration::from_secs(20));
        self.child = Some(child);
        (vec![format!("http://127.0.0.1:{port}")], KEY.to_owned())
    }

    fn kill(&mut self) {
        kill(&mut self.child);
    }

    fn snapshot(&self) -> harness::Snapshot {
        harness::sqlite_snapshot(&self.database())
    }
}

impl Server {
    fn database(&self) -> PathBuf {
        self.dir.path().join("petstore.db")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        kill(&mut self.child);
    }
}

#[test]
#[ignore = "a crash round: make crash-test"]
fn the_server_keeps_every_acknowledged_order_through_sigkills() {
    let settings = Settings::from_env("PETSTORE_CRASH_ROUNDS", 10);
    let mut server = Server { dir: tempfile::tempdir().unwrap(), child: None };
    harness::run(&mut server, &settings);
}

/// The desktop app, started as a shop starts it, with its data in a temporary directory;
/// orders go through its local API. The process killed is the app itself (a direct child
/// of this test), not a wrapper; the display and D-Bus session come from `xvfb-run` and
/// `dbus-run-session` around the whole test run.
struct App {
    bin: PathBuf,
    dir: TempDir,
    child: Option<Child>,
}

impl App {
    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

impl Target for App {
    fn name(&self) -> &'static str {
        "petstore-desktop"
    }

    fn start(&mut self) -> (Vec<String>, String) {
        let port = free_port();
        let home = self.dir.path().join("home");
        std::fs::create_dir_all(self.data()).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let log = self.dir.path().join("app.log");
        let (out, err) = log_file(&log);
        let mut child = desktop_app(&self.bin, &self.data(), port, &home)
            .env("RUST_LOG", "warn")
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap();
        wait_for(port, &mut child, &log, Duration::from_secs(60));
        self.child = Some(child);
        let key = std::fs::read_to_string(self.data().join("local-api.key")).expect("the app wrote its key");
        (vec![format!("http://127.0.0.1:{port}")], key.trim().to_owned())
    }

    fn kill(&mut self) {
        kill(&mut self.child);
    }

    fn snapshot(&self) -> harness::Snapshot {
        harness::sqlite_snapshot(&self.data().join("petstore.db"))
    }
}

impl Drop for App {
    fn drop(&mut self) {
        kill(&mut self.child);
    }
}

#[test]
#[ignore = "needs the desktop binary and a display: make crash-test"]
fn the_app_keeps_every_acknowledged_order_through_sigkills() {
    let bin = std::env::var_os("PETSTORE_DESKTOP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(SERVER).with_file_name("petstore-desktop"));
    assert!(bin.is_file(), "no {}: build it first (cargo build -p petstore-desktop)", bin.display());
    assert!(
        std::env::var_os("DISPLAY").is_some() && std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some(),
        "run under xvfb-run -a dbus-run-session (make crash-test)"
    );
    let mut settings = Settings::from_env("PETSTORE_CRASH_APP_ROUNDS", 3);
    // The app takes a second or two to start; a longer load per round makes up for it.
    settings.kill_after = (Duration::from_millis(300), Duration::from_millis(1500));
    let mut app = App { bin, dir: tempfile::tempdir().unwrap(), child: None };
    harness::run(&mut app, &settings);
}
