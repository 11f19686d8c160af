//! The durable-commit ceiling of this disk, for `make bench`: SQLite in WAL mode with
//! `synchronous = FULL` (the store's settings), one single-row INSERT per transaction, one
//! after another. Each commit waits for its own fsync of the WAL, so commits per second here
//! is what an order per transaction could reach at best; group commit is how the server
//! gets past it. The database is made afresh and removed afterwards.
//!
//! Usage: `fsync-ceiling --db PATH [--commits N]`. Prints a human line and then
//! `commits_per_sec=N` for the driver (tests/bench/run.py).

use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::{Connection, params};

/// Commits before the clock starts: the file and the WAL are created and grown by then.
const WARM_UP: u32 = 100;

fn main() -> Result<(), String> {
    let (db, commits) = args()?;
    remove(&db);
    let result = measure(&db, commits);
    remove(&db);
    let per_sec = result?;
    println!("{commits} durable commits (WAL, synchronous=FULL), {per_sec:.0} commits/s");
    println!("commits_per_sec={per_sec:.0}");
    Ok(())
}

fn args() -> Result<(PathBuf, u32), String> {
    let usage = "usage: fsync-ceiling --db PATH [--commits N]";
    let mut db = None;
    let mut commits = 2_000;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(usage)?;
        match flag.as_str() {
            "--db" => db = Some(PathBuf::from(value)),
            "--commits" => commits = value.parse().map_err(|e| format!("--commits {value}: {e}"))?,
            _ => return Err(usage.into()),
        }
    }
    if commits == 0 {
        return Err("--commits must be at least 1".into());
    }
    Ok((db.ok_or(usage)?, commits))
}

fn measure(db: &Path, commits: u32) -> Result<f64, String> {
    let conn = Connection::open(db).map_err(|e| format!("cannot open {}: {e}", db.display()))?;
    let sql = |e: rusqlite::Error| e.to_string();
    conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
    conn.pragma_update(None, "synchronous", "FULL").map_err(sql)?;
    conn.execute("CREATE TABLE commits (id INTEGER PRIMARY KEY, body TEXT NOT NULL)", []).map_err(sql)?;
    let mut insert = conn.prepare("INSERT INTO commits (body) VALUES (?1)").map_err(sql)?;
    // Autocommit: every execute is its own transaction, so its own fsync.
    for i in 0..WARM_UP {
        insert.execute(params![format!("warm-up {i}")]).map_err(sql)?;
    }
    let started = Instant::now();
    for i in 0..commits {
        insert.execute(params![format!("order {i}")]).map_err(sql)?;
    }
    Ok(f64::from(commits) / started.elapsed().as_secs_f64())
}

fn remove(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(name));
    }
}
