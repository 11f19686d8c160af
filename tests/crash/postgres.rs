//! The crash rounds on PostgreSQL (issue 18): a `petstore-server` replica on a PostgreSQL
//! database of a throwaway, durable server (`fsync` on, as in production), loaded with
//! concurrent orders and then
//!
//! - killed with SIGKILL (a replica dies; PostgreSQL goes on), or
//! - killed, and PostgreSQL with it by `pg_ctl -m immediate` (the postmaster and its
//!   children quit at once, no checkpoint: the next start replays the WAL, as after a crash
//!   of the database machine).
//!
//! Then started again and held against the ledger by the harness's checks: every
//! acknowledged order there, stock plus ordered quantities equal to what was stocked, the
//! audit trail explaining every unit, the kept pet counts right, the status by the rules.
//! The replica is killed first in the second kind, so that no request is answered with a
//! 5xx by a replica whose database just vanished: the harness counts an unanswered request
//! as "may or may not have happened", and a refusal as a refusal.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;

use crate::harness::{self, Settings, Snapshot, Target};
use crate::pg_server::{Options, Server, TestDatabase};
use crate::{KEY, SERVER, free_port, kill, log_file, wait_for};

struct Replica {
    postgres: Server,
    db: TestDatabase,
    /// Whether a kill takes PostgreSQL down too.
    crash_postgres: bool,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Replica {
    fn new(crash_postgres: bool) -> Self {
        let postgres = Server::start(Options::durable());
        let db = postgres.database();
        Self { postgres, db, crash_postgres, dir: tempfile::tempdir().unwrap(), child: None }
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    /// The rows `sql` selects, as psql prints them unaligned (`|` between columns).
    fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        self.db.sql(sql).lines().map(|line| line.split('|').map(str::to_owned).collect()).collect()
    }
}

impl Target for Replica {
    fn name(&self) -> &'static str {
        if self.crash_postgres {
            "petstore-server on PostgreSQL, PostgreSQL crashed"
        } else {
            "petstore-server on PostgreSQL"
        }
    }

    fn start(&mut self) -> (String, String) {
        if self.crash_postgres && self.child.is_none() && !self.postgres_running() {
            self.postgres.restart();
        }
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
        self.child = Some(child);
        (format!("http://127.0.0.1:{port}"), KEY.to_owned())
    }

    fn kill(&mut self) {
        kill(&mut self.child);
        if self.crash_postgres {
            self.postgres.crash();
        }
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
        Snapshot { damage, orders, pets }
    }
}

impl Replica {
    fn postgres_running(&self) -> bool {
        std::net::TcpStream::connect(("127.0.0.1", self.postgres.port())).is_ok()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        kill(&mut self.child);
    }
}

#[test]
fn a_replica_on_postgresql_keeps_every_acknowledged_order_through_sigkills() {
    let settings = Settings::from_env("PETSTORE_CRASH_PG_ROUNDS", 5);
    harness::run(&mut Replica::new(false), &settings);
}

#[test]
fn postgresql_stopped_at_once_mid_load_keeps_every_acknowledged_order() {
    let settings = Settings::from_env("PETSTORE_CRASH_PG_ROUNDS", 5);
    harness::run(&mut Replica::new(true), &settings);
}
