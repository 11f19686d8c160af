//! The crash rounds on PostgreSQL (a chain's replicas must lose no acknowledged order either): `petstore-server` replicas on a PostgreSQL
//! database of a throwaway, durable server (`fsync` on, as in production), loaded with
//! concurrent orders, and then, by kind of round:
//!
//! - a replica killed with SIGKILL (PostgreSQL goes on); the snapshot waits until every
//!   session the dead replica had in PostgreSQL has ended (`pg_stat_activity`): a
//!   statement it sent may still commit after the kill, and until it has, what the
//!   database holds is not settled. In every other round another session holds one pet's
//!   row locked (`FOR UPDATE`) from the start of the load until [`LOCK_HELD`] later, past
//!   the kill, as a slow transaction of another replica would: the dead replica's
//!   statements waiting on it commit after the kill;
//! - the replica killed, and PostgreSQL with it by `pg_ctl -m immediate` (the postmaster
//!   and its children quit at once, no checkpoint: the next start replays the WAL, as
//!   after a crash of the database machine);
//! - PostgreSQL stopped the same way under two live replicas, which answer what was in
//!   flight with 5xx (it may or may not have committed), and must serve again once
//!   PostgreSQL is back, without a restart of their own.
//!
//! Then started again and held against the ledger by the harness's checks: every
//! acknowledged order there, stock plus ordered quantities equal to what was stocked, the
//! audit trail explaining every unit, the kept pet counts right, the status by the rules.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::harness::{self, Settings, Snapshot, Target};
use crate::pg_server::{Options, Server, TestDatabase};
use crate::{KEY, SERVER, free_port, kill, log_file, wait_for};

/// What a round's kill stops.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kill {
    /// The one replica (SIGKILL).
    Replica,
    /// The one replica, then PostgreSQL.
    ReplicaAndPostgres,
    /// PostgreSQL alone, under two replicas that go on running.
    PostgresUnderReplicas,
}

/// How long a killed replica's sessions may take to end. A statement of a dead client
/// runs until it is done, waits on a lock, or meets its session's `lock_timeout` or
/// `statement_timeout` (`postgres/config.rs`, `SessionLimits`), whichever comes first; the locks it could wait on are those of other sessions of the same dead replica, which
/// end in turn.
const SESSIONS_END_WITHIN: Duration = Duration::from_secs(60);

/// A session of the dead replica that outlived it by more than this is told of.
const LINGERED: Duration = Duration::from_millis(200);

/// How long the lock of a round of [`Kill::Replica`] is held from the start of its load:
/// past the kill (0.1 to 0.9 s into the load).
const LOCK_HELD: Duration = Duration::from_millis(1500);

struct Replicas {
    postgres: Server,
    db: TestDatabase,
    kill: Kill,
    dir: tempfile::TempDir,
    /// The replica processes and their base URLs.
    children: Vec<(Child, String)>,
    /// How long the dead replica's sessions outlived it in the last kill (kind
    /// [`Kill::Replica`]), and how many there were.
    lingered: Option<(Duration, usize)>,
    /// The longest of those over the run.
    longest: Duration,
    /// Loads started, and the session holding a pet's row in this one, if it does.
    loads: usize,
    lock: Option<std::thread::JoinHandle<()>>,
    /// In kind [`Kill::PostgresUnderReplicas`], how long PostgreSQL took to start again
    /// (with its recovery), and the replicas to serve after that.
    back: Option<(Duration, Duration)>,
}

impl Replicas {
    fn new(kill: Kill) -> Self {
        let postgres = Server::start(Options::durable());
        let db = postgres.database();
        let dir = tempfile::tempdir().unwrap();
        Self {
            postgres,
            db,
            kill,
            dir,
            children: Vec::new(),
            lingered: None,
            longest: Duration::ZERO,
            loads: 0,
            lock: None,
            back: None,
        }
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    /// The rows `sql` selects, as psql prints them unaligned (`|` between columns).
    fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        self.db.sql(sql).lines().map(|line| line.split('|').map(str::to_owned).collect()).collect()
    }

    fn postgres_running(&self) -> bool {
        std::net::TcpStream::connect(("127.0.0.1", self.postgres.port())).is_ok()
    }

    fn spawn(&self) -> (Child, String) {
        let port = free_port();
        let (out, err) = log_file(&self.log());
        let mut child = Command::new(SERVER)
            .arg("--db")
            .arg(&self.db.url)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .env("PETSTORE_API_KEY", KEY)
            .env("RUST_LOG", "warn")
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap();
        wait_for(port, &mut child, &self.log(), Duration::from_secs(30));
        (child, format!("http://127.0.0.1:{port}"))
    }

    /// Waits until every live replica reads the database again (PostgreSQL came back
    /// under them): its pool must drop the connections the crash broke and make new ones.
    fn until_serving(&mut self) {
        let log = self.log();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
        let since = Instant::now();
        for (child, base) in &mut self.children {
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    panic!("a replica exited ({status}) while PostgreSQL was down:\n{}", log_tail(&log));
                }
                let request = http.get(format!("{base}/store/orders?limit=1")).bearer_auth(KEY);
                if runtime.block_on(async { request.send().await }).is_ok_and(|a| a.status().is_success()) {
                    break;
                }
                assert!(
                    since.elapsed() < Duration::from_secs(30),
                    "a replica did not read the database within 30 s of PostgreSQL's restart:\n{}",
                    log_tail(&log)
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// Waits until no session of the killed replica is left in PostgreSQL: each ends when
    /// its backend, done with its statement, finds the connection closed.
    fn until_sessions_end(&mut self) {
        const SESSIONS: &str =
            "SELECT pid, state, now() - query_start, left(query, 120) FROM pg_stat_activity
            WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
              AND application_name <> 'crash-test-lock'";
        let killed = Instant::now();
        let mut at_kill = None;
        loop {
            let sessions = self.rows(SESSIONS);
            let sessions: Vec<&Vec<String>> = sessions.iter().filter(|r| !r[0].is_empty()).collect();
            let count = sessions.len();
            at_kill.get_or_insert(count);
            if count == 0 {
                break;
            }
            assert!(
                killed.elapsed() < SESSIONS_END_WITHIN,
                "{count} sessions of the killed replica still in PostgreSQL {} s after the kill: {sessions:?}",
                SESSIONS_END_WITHIN.as_secs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let lingered = killed.elapsed();
        if let Some(lock) = self.lock.take() {
            lock.join().expect("the session holding a pet's row");
        }
        self.longest = self.longest.max(lingered);
        self.lingered = Some((lingered, at_kill.unwrap_or(0)));
    }
}

/// Locks the row of the pet with the smallest id for `held`, in a transaction of its own.
fn hold_a_pet(url: &str, held: Duration) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("a session");
        tokio::spawn(connection);
        client
            .batch_execute("BEGIN; SELECT 1 FROM pets WHERE id = (SELECT min(id) FROM pets) FOR UPDATE")
            .await
            .unwrap();
        tokio::time::sleep(held).await;
        client.batch_execute("COMMIT").await.unwrap();
    });
}

/// The last lines of the replicas' log.
fn log_tail(log: &std::path::Path) -> String {
    let log = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

impl Target for Replicas {
    fn name(&self) -> &'static str {
        match self.kill {
            Kill::Replica => "petstore-server on PostgreSQL, the replica killed",
            Kill::ReplicaAndPostgres => "petstore-server on PostgreSQL, the replica and PostgreSQL killed",
            Kill::PostgresUnderReplicas => {
                "petstore-server on PostgreSQL, PostgreSQL killed under two live replicas"
            }
        }
    }

    fn start(&mut self) -> (Vec<String>, String) {
        let started = Instant::now();
        if !self.postgres_running() {
            self.postgres.restart();
        }
        if self.kill == Kill::PostgresUnderReplicas && !self.children.is_empty() {
            let restarted = started.elapsed();
            self.until_serving();
            self.back = Some((restarted, started.elapsed() - restarted));
        } else {
            let replicas = if self.kill == Kill::PostgresUnderReplicas { 2 } else { 1 };
            self.children = (0..replicas).map(|_| self.spawn()).collect();
        }
        (self.children.iter().map(|(_, base)| base.clone()).collect(), KEY.to_owned())
    }

    /// In every other round of [`Kill::Replica`], a session that locks one pet's row for
    /// [`LOCK_HELD`].
    fn load_started(&mut self) {
        self.loads += 1;
        if self.kill == Kill::Replica && self.loads.is_multiple_of(2) {
            let url = format!("{}?application_name=crash-test-lock", self.db.url);
            self.lock = Some(std::thread::spawn(move || hold_a_pet(&url, LOCK_HELD)));
        }
    }

    fn kill(&mut self) {
        if self.kill != Kill::PostgresUnderReplicas {
            for (child, _) in self.children.drain(..) {
                kill(&mut Some(child));
            }
        }
        match self.kill {
            Kill::Replica => self.until_sessions_end(),
            Kill::ReplicaAndPostgres | Kill::PostgresUnderReplicas => self.postgres.crash(),
        }
    }

    fn outlives_the_kill(&self) -> bool {
        self.kill == Kill::PostgresUnderReplicas
    }

    fn snapshot(&self) -> Snapshot {
        // After a PostgreSQL crash the snapshot is read once it is back (recovered).
        if !self.postgres_running() {
            self.postgres.restart();
        }
        let int = |s: &str| s.parse::<i64>().unwrap_or_else(|_| panic!("not a number: {s:?}"));
        let mut damage = Vec::new();
        let miscounted = int(self.db.sql(harness::MISCOUNTED).trim());
        if miscounted > 0 {
            damage.push(format!("the kept pet counts disagree with the pets in {miscounted} rows"));
        }
        let orders: HashMap<i64, (i64, i64, bool)> = self
            .rows(harness::ORDERS)
            .iter()
            .map(|r| (int(&r[0]), (int(&r[1]), int(&r[2]), r[3] == "t")))
            .collect();
        let pets = self
            .rows(harness::PETS)
            .iter()
            .map(|r| (int(&r[0]), (int(&r[1]), r[2].clone(), int(&r[3]))))
            .collect();
        let changes = self
            .rows(harness::CHANGES)
            .iter()
            .filter(|r| r.len() == 2)
            .map(|r| (int(&r[0]), int(&r[1])))
            .collect();
        Snapshot { damage, orders, pets, changes }
    }

    fn check(&mut self, round: usize) {
        if let Some((postgres, replicas)) = self.back.take() {
            println!(
                "  round {round}: PostgreSQL back in {} ms, both replicas serving {} ms after that",
                postgres.as_millis(),
                replicas.as_millis()
            );
        }
        if let Some((lingered, sessions)) = self.lingered.take()
            && lingered > LINGERED
        {
            println!(
                "  round {round}: the killed replica's {sessions} sessions ended {} ms after the kill",
                lingered.as_millis()
            );
        }
    }
}

impl Drop for Replicas {
    fn drop(&mut self) {
        for (child, _) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        if self.kill == Kill::Replica {
            println!(
                "{}: the killed replicas' sessions ended at most {} ms after a kill",
                self.name(),
                self.longest.as_millis()
            );
        }
    }
}

#[test]
#[ignore = "crash rounds: make crash-test"]
fn a_replica_on_postgresql_keeps_every_acknowledged_order_through_sigkills() {
    let settings = Settings::from_env("PETSTORE_CRASH_PG_ROUNDS", 5);
    harness::run(&mut Replicas::new(Kill::Replica), &settings);
}

#[test]
#[ignore = "crash rounds: make crash-test"]
fn postgresql_stopped_at_once_with_its_replica_keeps_every_acknowledged_order() {
    let settings = Settings::from_env("PETSTORE_CRASH_PG_ROUNDS", 5);
    harness::run(&mut Replicas::new(Kill::ReplicaAndPostgres), &settings);
}

#[test]
#[ignore = "crash rounds: make crash-test"]
fn postgresql_stopped_at_once_under_live_replicas_keeps_every_acknowledged_order() {
    let settings = Settings::from_env("PETSTORE_CRASH_PG_ROUNDS", 5);
    harness::run(&mut Replicas::new(Kill::PostgresUnderReplicas), &settings);
}
