//! The process whose power is cut: this test binary run again by the power-cut rounds
//! (`std::env::current_exe`) with [`DB_VAR`] set. It installs the power-cut VFS as SQLite's
//! default before anything opens a connection, opens the real `Store` on the database and
//! serves the real API (`petstore::server::Application`) on a loopback port with
//! [`crate::KEY`], as `petstore-server serve` does. Its standard input is the parent's
//! remote control: `cut` cuts the power now, `sync N` at the Nth sync from then on; when
//! the parent goes away (end of input) the process kills itself.
//!
//! It is also the other process of the third kind of round: run with [`KEY_NAME_VAR`], it
//! does what `petstore-server keys create --scope read` does (`Store::open`, then
//! `create_key`) through the VFS installed as a witness, which logs its syncs for the cut
//! (the real binary's syncs could not be seen, and a sync of another process makes this
//! process's writes durable too).
//!
//! These helper processes are no tests: [`HELPER`] runs one before libtest's `main` when
//! its variables are set, and the process ends with it, so the test binary lists them
//! nowhere and never counts them as passed. (They were `#[test]` functions the parent ran
//! with `--exact`; `--include-ignored` then ran them in `make crash-test` too, where they
//! found no variables and passed without doing anything.)

use std::io::BufRead;
use std::path::PathBuf;
use std::time::Duration;

use petstore::Store;
use petstore::api::KeyRing;
use petstore::api_key::Scope;
use petstore::domain::Name;
use petstore::engine::Keys;
use petstore::server::{Application, ServerConfig};
use rusqlite::Connection;

use super::vfs;

/// The database to serve; set only in the child.
pub const DB_VAR: &str = "PETSTORE_POWERCUT_CHILD_DB";
/// Where the cut writes its report.
pub const REPORT_VAR: &str = "PETSTORE_POWERCUT_CHILD_REPORT";
/// The seed of the cut's random choices.
pub const SEED_VAR: &str = "PETSTORE_POWERCUT_CHILD_SEED";
/// The other process's log of syncs (see the VFS's device model).
pub const SYNCS_VAR: &str = "PETSTORE_POWERCUT_SYNCS";
/// The name of the key to create: set only in the other process.
pub const KEY_NAME_VAR: &str = "PETSTORE_POWERCUT_KEY_NAME";
/// Set to run a big transaction that spills into the WAL and rolls back, over and over.
pub const SPILLS_VAR: &str = "PETSTORE_POWERCUT_CHILD_SPILLS";
/// What the child prints when it listens, followed by its address.
pub const READY: &str = "power-cut child listening on ";
/// Runs before `main` (the C runtime calls every function of `.init_array` first, as for a
/// constructor in C): in a process started as a helper of the power-cut rounds, the helper,
/// and then the process exits; in any other (the test binary run as such), nothing.
#[used]
#[unsafe(link_section = ".init_array")]
static HELPER: extern "C" fn() = helper;

// The C library's, which std links already (as in vfs.rs: no `libc` crate for one call).
unsafe extern "C" {
    fn signal(signal: i32, handler: usize) -> usize;
}
const SIGPIPE: i32 = 13;
const SIG_IGN: usize = 1;

extern "C" fn helper() {
    let run: fn() = if std::env::var_os(KEY_NAME_VAR).is_some() {
        key_maker
    } else if std::env::var_os(DB_VAR).is_some() {
        served_child
    } else {
        return;
    };
    // What std's `main` would have done first: a write to a socket its peer closed is an
    // error, not a SIGPIPE that ends the process.
    // SAFETY: signal with SIG_IGN installs no handler of ours; SIGPIPE is 13 on Linux.
    unsafe { signal(SIGPIPE, SIG_IGN) };
    // A panic cannot unwind out of this `extern "C"` function: it ends the process as a
    // failed test would, its message on standard error (the child's log).
    let code = if std::panic::catch_unwind(run).is_ok() { 0 } else { 101 };
    std::process::exit(code);
}

/// The child process of the power-cut rounds (see the module's docs).
fn served_child() {
    let db = PathBuf::from(std::env::var_os(DB_VAR).expect("the database"));
    let report = PathBuf::from(std::env::var_os(REPORT_VAR).expect("the report path"));
    let seed = std::env::var(SEED_VAR).ok().and_then(|s| s.parse().ok()).expect("the seed");
    let syncs = PathBuf::from(std::env::var_os(SYNCS_VAR).expect("the log of syncs"));
    // Before any connection: Store::open then goes through it.
    vfs::install(seed, report, &syncs);
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();

    std::thread::spawn(|| {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            match line.split_whitespace().collect::<Vec<_>>()[..] {
                ["cut"] => vfs::cut(vfs::Cause::Command),
                ["sync", n] if n.parse::<u64>().is_ok_and(|n| n > 0) => vfs::cut_at_sync(n.parse().unwrap()),
                _ => {
                    eprintln!("power-cut child: unknown command {line:?}");
                    break;
                }
            }
        }
        // The parent is gone (it failed, or was killed), or lost its way: no orphan keeps
        // serving.
        vfs::die();
    });

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let store = Store::open(&db).expect("the store opens");
        if std::env::var_os(SPILLS_VAR).is_some() {
            spill_and_roll_back(db.clone());
        }
        let config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), KeyRing::from_secrets([crate::KEY]));
        let app = Application::bind(petstore::Served::all_of(std::sync::Arc::new(store)), config)
            .await
            .expect("the server binds");
        println!("{READY}{}", app.local_addr());
        app.run_until(std::future::pending()).await;
    });
}

/// A second connection beside the store's, looping over a big transaction that spills
/// into the WAL before it is committed (300 rows of 1.5 KB through a cache of 10 pages)
/// and then rolls back. Spilled frames are written to the WAL without a commit, past the
/// last committed frame: after the rollback, the next commit (the store's) is written over
/// them. The connection goes through the same VFS as the store's own connections, the
/// power-cut VFS. (The WAL-writes VFS the store once had held such frames and
/// wrote them after the rollback, over frames committed since: this is the round that
/// caught it.)
fn spill_and_roll_back(db: PathBuf) {
    let conn = Connection::open(&db).expect("a second connection");
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    conn.execute_batch(
        "PRAGMA synchronous = FULL; PRAGMA cache_size = 10;
         CREATE TABLE IF NOT EXISTS powercut_spills (b BLOB NOT NULL)",
    )
    .expect("the spill table");
    std::thread::spawn(move || {
        let mut rng = fastrand::Rng::new();
        loop {
            let outcome = conn.execute_batch(
                "BEGIN IMMEDIATE;
                 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
                 INSERT INTO powercut_spills (b) SELECT randomblob(1536) FROM n;
                 ROLLBACK",
            );
            if let Err(e) = outcome {
                tracing::warn!("the spilling transaction failed: {e}");
                let _ = conn.execute_batch("ROLLBACK");
            }
            // Room for the store's writer to commit between two of them.
            std::thread::sleep(Duration::from_millis(rng.u64(..20)));
        }
    });
}

/// The other process of the power-cut rounds, which makes one API key as `petstore-server
/// keys create --name NAME --scope read` does, and exits 0 once it is committed.
fn key_maker() {
    let name = std::env::var_os(KEY_NAME_VAR).expect("the key's name");
    let db = PathBuf::from(std::env::var_os(DB_VAR).expect("the database"));
    let syncs = PathBuf::from(std::env::var_os(SYNCS_VAR).expect("the log of syncs"));
    vfs::install_witness(&syncs);
    let name = Name::parse(name.to_str().expect("a UTF-8 name")).expect("a valid name");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let store = Store::open(&db).expect("the store opens");
        store.create_key(name, Scope::Read).await.expect("the key is created");
    });
}
