//! Crash rounds that see a power cut. The SIGKILL rounds (`../harness.rs` with the real
//! server) keep the kernel's page cache, so they cannot catch a sync that does nothing,
//! writes that reach the disk out of order, or a torn sector. These rounds serve the real
//! API from a child process (this test binary run again, `child.rs`, which takes over
//! before libtest's `main` when its variables are set: it runs no test) whose SQLite goes
//! through a VFS that remembers every write since each file's last sync and, at the cut,
//! drops, reorders or tears them as a disk could (`vfs.rs` has the device model), then
//! kills the process at once.
//!
//! The rounds are the harness's: restock, concurrent clients placing, cancelling and
//! completing orders, the cut at a random moment, a restart on the same database, and every
//! check the SIGKILL rounds make (integrity, every acknowledged order there, stock + orders
//! = what was stocked, no negative stock, the audit trail, the status rules). The cut comes
//! either when the parent asks for it (the power goes whatever the process is doing) or
//! at the Nth sync after that (just before it takes effect: there is always something
//! unsynced). Three kinds of rounds:
//!
//! - the orders alone;
//! - beside a second connection in the child that keeps spilling a big transaction into
//!   the WAL and rolling it back;
//! - that, and a second process writing the same database: API keys created in a loop,
//!   one process each, as `petstore-server keys create` makes them (`Store::open`, then
//!   `create_key`; `child.rs`), with the VFS as a witness that logs each sync it starts;
//!   every key whose creation exited 0 must be there after the cut (`keys list` of the
//!   real binary). Its syncs matter: one of them makes durable what this process wrote
//!   before it began, such as pages a checkpoint here copied but did not sync, which the
//!   other process's checkpoint then finished and synced.
//!
//! `PETSTORE_POWERCUT_ROUNDS` sets the rounds of each kind (`make soak`), and
//! `PETSTORE_CRASH_SEED` repeats a run's random choices.

mod child;
mod vfs;

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::harness::{self, Settings, Target};

/// The rounds of each kind in `make test`: about 10 s a kind on a 2-core machine.
const ROUNDS: usize = 20;

#[derive(Debug, Clone, Copy)]
struct Kind {
    /// The child's second connection spills a transaction into the WAL and rolls it back.
    spills: bool,
    /// Another process creates API keys in the same database meanwhile.
    keys: bool,
}

#[test]
#[ignore = "crash rounds: make crash-test"]
fn power_cuts_during_concurrent_orders_lose_no_acknowledged_order() {
    run(Kind { spills: false, keys: false });
}

#[test]
#[ignore = "crash rounds: make crash-test"]
fn power_cuts_beside_a_transaction_spilling_into_the_wal_and_rolling_back_lose_no_acknowledged_order() {
    run(Kind { spills: true, keys: false });
}

#[test]
#[ignore = "crash rounds: make crash-test"]
fn power_cuts_with_another_process_writing_the_database_lose_no_acknowledged_order_or_key() {
    run(Kind { spills: true, keys: true });
}

fn run(kind: Kind) {
    let started = Instant::now();
    let mut settings = Settings::from_env("PETSTORE_POWERCUT_ROUNDS", ROUNDS);
    // Each round starts a process; a shorter load keeps the rounds many.
    settings.kill_after = (Duration::from_millis(50), Duration::from_millis(500));
    let mut target = PowerCut::new(kind, settings.seed);
    let figures = harness::run(&mut target, &settings);
    let cuts = &target.cuts;
    println!(
        "power cut ({kind:?}): {} rounds in {:.1} s, {} cuts ({} at a sync, {} asked for); {} writes synced by the \
         other process's syncs; {} writes unsynced at the cut touching {} sectors: {} kept, {} back as at the last sync, {} partly written, {} torn, {} garbled, \
         {} written by another process meanwhile (left); {} files cut short; {} bytes changed; {} keys created by \
         another process, all found",
        figures.rounds,
        started.elapsed().as_secs_f64(),
        target.count,
        cuts.at_sync,
        target.count - cuts.at_sync as usize,
        cuts.synced_by_other,
        cuts.unsynced_writes,
        cuts.sectors,
        cuts.kept,
        cuts.dropped,
        cuts.partial,
        cuts.torn,
        cuts.garbled,
        cuts.foreign,
        cuts.shortened,
        cuts.bytes_changed,
        target.keys_created.len(),
    );
    // A run whose cuts changed nothing was no more than a run of SIGKILLs.
    assert!(cuts.bytes_changed > 0, "no cut found anything unsynced to lose");
    if kind.keys {
        assert!(!target.keys_created.is_empty(), "the other process created no key");
    }
}

/// The child serving the API, the cut, and the other process of the third kind.
struct PowerCut {
    kind: Kind,
    dir: TempDir,
    child: Option<Child>,
    control: Option<ChildStdin>,
    rng: fastrand::Rng,
    /// Whether the clients' load started since the child did (a cut at a sync needs syncs).
    loaded: bool,
    keys: Option<KeyMaker>,
    next_key: Arc<AtomicUsize>,
    /// Keys whose `keys create` exited 0: each must be in the database from then on.
    keys_created: Vec<String>,
    /// Cuts made, and what they did.
    count: usize,
    cuts: vfs::Report,
}

impl PowerCut {
    fn database(&self) -> PathBuf {
        self.dir.path().join("petstore.db")
    }

    fn new(kind: Kind, seed: u64) -> Self {
        Self {
            kind,
            dir: tempfile::tempdir().unwrap(),
            child: None,
            control: None,
            rng: fastrand::Rng::with_seed(seed ^ 0x706f_7765_7263_7574),
            loaded: false,
            keys: None,
            next_key: Arc::default(),
            keys_created: Vec::new(),
            count: 0,
            cuts: vfs::Report::default(),
        }
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("child.log")
    }

    fn report(&self) -> PathBuf {
        self.dir.path().join("cut.report")
    }

    /// The other process's syncs, logged for the cut.
    fn syncs(&self) -> PathBuf {
        self.dir.path().join("syncs.log")
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.log()).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    }

    /// Ends the other process's loop (killing the `keys create` running, whose outcome is
    /// then unknown) and keeps the names of the keys it was told were created.
    fn stop_keys(&mut self) {
        if let Some(keys) = self.keys.take() {
            keys.stop.store(true, Ordering::SeqCst);
            self.keys_created.extend(keys.thread.join().expect("the key maker"));
        }
    }
}

impl Target for PowerCut {
    fn name(&self) -> &'static str {
        match (self.kind.spills, self.kind.keys) {
            (false, _) => "power cut",
            (true, false) => "power cut, spilling transactions",
            (true, true) => "power cut, spilling transactions, keys from another process",
        }
    }

    fn start(&mut self) -> (Vec<String>, String) {
        let log = File::options().create(true).append(true).open(self.log()).unwrap();
        let _ = std::fs::remove_file(self.report());
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .env(child::DB_VAR, self.database())
            .env(child::REPORT_VAR, self.report())
            .env(child::SYNCS_VAR, self.syncs())
            .env(child::SEED_VAR, self.rng.u64(..).to_string())
            .env("RUST_LOG", "warn")
            // The log's tail is shown when the child fails: the message, not a backtrace.
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log);
        if self.kind.spills {
            command.env(child::SPILLS_VAR, "1");
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (ready, listening) = mpsc::channel();
        // Reads the child's output to its end, so that it never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some((_, addr)) = line.split_once(child::READY) {
                    let _ = ready.send(addr.trim().to_owned());
                }
            }
        });
        let Ok(addr) = listening.recv_timeout(Duration::from_secs(30)) else {
            let _ = child.kill();
            let status = child.wait().unwrap();
            panic!("the power-cut child did not listen within 30 s ({status}):\n{}", self.log_tail());
        };
        self.control = child.stdin.take();
        self.child = Some(child);
        self.loaded = false;
        (vec![format!("http://{addr}")], crate::KEY.to_owned())
    }

    fn load_started(&mut self) {
        self.loaded = true;
        if self.kind.keys {
            self.keys = Some(KeyMaker::start(
                self.database(),
                self.syncs(),
                self.dir.path().join("keys.log"),
                self.next_key.clone(),
            ));
        }
    }

    /// The power cut: now, or at one of the next few syncs (only under load: without
    /// writes there may be no sync to wait for).
    fn kill(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        let mut control = self.control.take().expect("the child's input");
        let at_sync = self.loaded && self.rng.bool();
        let command = if at_sync { format!("sync {}\n", self.rng.u64(1..=8)) } else { "cut\n".to_owned() };
        let _ = control.write_all(command.as_bytes());
        let asked = Instant::now();
        let mut waiting_for_sync = at_sync;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            // A sync that never comes (the load ended, or syncs were turned off): now, then.
            if waiting_for_sync && asked.elapsed() > Duration::from_secs(3) {
                let _ = control.write_all(b"cut\n");
                waiting_for_sync = false;
            }
            assert!(
                asked.elapsed() < Duration::from_secs(30),
                "the power-cut child did not die:\n{}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(1));
        };
        // Everything dies with the power: the other process too.
        self.stop_keys();
        assert_eq!(
            status.signal(),
            Some(vfs::SIGKILL),
            "the power-cut child ended otherwise than by its cut ({status}):\n{}",
            self.log_tail()
        );
        let line = std::fs::read_to_string(self.report())
            .unwrap_or_else(|e| panic!("no report of the cut ({e}):\n{}", self.log_tail()));
        let report = vfs::Report::parse(&line).unwrap_or_else(|| panic!("a cut's report: {line:?}"));
        self.cuts.add(report);
        self.count += 1;
    }

    fn snapshot(&self) -> harness::Snapshot {
        harness::sqlite_snapshot(&self.database())
    }

    /// Every key the other process was told it created is there (listed by `keys list`).
    fn check(&mut self, round: usize) {
        if self.keys_created.is_empty() {
            return;
        }
        let output = Command::new(crate::SERVER)
            .arg("--db")
            .arg(self.database())
            .args(["keys", "list"])
            .env("RUST_LOG", "warn")
            .output()
            .unwrap();
        let listing = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "round {round}: keys list: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let names: Vec<&str> = listing.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
        for key in &self.keys_created {
            assert!(names.contains(&key.as_str()), "round {round}: the key {key}, created (exit 0), is lost");
        }
    }
}

impl Drop for PowerCut {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(keys) = self.keys.take() {
            keys.stop.store(true, Ordering::SeqCst);
            let _ = keys.thread.join();
        }
    }
}

/// API keys created one process after another (`child.rs`'s key maker), until stopped.
struct KeyMaker {
    stop: Arc<AtomicBool>,
    /// Answers the names of the keys whose creation exited 0.
    thread: JoinHandle<Vec<String>>,
}

impl KeyMaker {
    fn start(db: PathBuf, syncs: PathBuf, log: PathBuf, next: Arc<AtomicUsize>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut created = Vec::new();
            while !stopped.load(Ordering::SeqCst) {
                let name = format!("powercut-{}", next.fetch_add(1, Ordering::SeqCst));
                if create_key(&db, &syncs, &log, &name, &stopped) {
                    created.push(name);
                }
            }
            created
        });
        Self { stop, thread }
    }
}

/// One `keys create`; true if it exited 0 before `stop` was set (then it is killed).
fn create_key(db: &Path, syncs: &Path, log: &Path, name: &str, stop: &AtomicBool) -> bool {
    let log = File::options().create(true).append(true).open(log).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(child::DB_VAR, db)
        .env(child::SYNCS_VAR, syncs)
        .env(child::KEY_NAME_VAR, name)
        .env("RUST_LOG", "warn")
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.success();
        }
        if stop.load(Ordering::SeqCst) {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}
