//! A throwaway PostgreSQL server for tests, from the `postgresql` package (`make deps`).
//!
//! Any test crate includes this file with
//! `#[path = "../support/pg_server.rs"] mod pg_server;` (std only, no dependency).
//!
//! - [`database()`]: a fresh, empty database (`t_<n>`) on the test process's one shared
//!   server, started on first use; dropped (`DROP DATABASE ... WITH (FORCE)`) when the
//!   returned [`TestDatabase`] is. [`database_like`] copies a template instead, made once
//!   with [`Server::template`] (a migrated schema, say: a copy costs less than migrating).
//! - [`Server::start`]: a server of the test's own, e.g. for the crash tests, which stop it
//!   with [`Server::crash`] (`pg_ctl -m immediate`, as a killed postmaster) and start it
//!   again with [`Server::restart`]; stopped and removed when dropped.
//!
//! Each server lives in a temporary folder (`data/`, its log, its Unix socket) and listens on
//! a free loopback port; the URL is `postgres://petstore@127.0.0.1:PORT/DB` (trust
//! authentication: nothing but loopback reaches it). As root, initdb and pg_ctl run as the
//! `postgres` user (initdb refuses root), which owns the folder.
//!
//! Nothing is left behind: the shared server is stopped and its folder removed by an
//! `atexit` handler (libtest returns from `main` or calls `std::process::exit`, which both
//! run it, whether tests failed or not), and each server has a watchdog, a `sh` in a process
//! group of its own that ignores signals and waits for end-of-file on a pipe only the test
//! process holds: when that process dies, even by SIGKILL, the pipe closes and the watchdog
//! stops the server (`-m immediate`) and removes the folder.
//!
//! The shared server trades durability for speed ([`Options::fast`]: `fsync`,
//! `synchronous_commit` and `full_page_writes` off): its databases live for one test and
//! are never crashed, so nothing is lost by it. This does not weaken the crash tests: they
//! start their own server with [`Options::durable`], where all three keep PostgreSQL's
//! defaults (on), so what survives a crash there is what would survive in production.

#![allow(dead_code)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The superuser initdb creates; every test connects as it.
pub const USER: &str = "petstore";

const INSTALL: &str = "install the postgresql package: make deps (or .ci/install-deps)";

unsafe extern "C" {
    safe fn geteuid() -> u32;
    safe fn atexit(callback: extern "C" fn()) -> i32;
}

/// How a server is set up.
#[derive(Debug, Clone)]
pub struct Options {
    /// PostgreSQL's defaults for `fsync`, `synchronous_commit` and `full_page_writes` (on);
    /// otherwise all three off, for speed (see the module's comment).
    pub durable: bool,
    /// `max_connections`: every store holds a pool, and tests run side by side.
    pub max_connections: u32,
}

impl Options {
    /// For tests that never crash the server: durability off.
    pub fn fast() -> Self {
        Self { durable: false, max_connections: 300 }
    }

    /// For crash tests: committed means on disk, as in production.
    pub fn durable() -> Self {
        Self { durable: true, ..Self::fast() }
    }
}

impl Default for Options {
    fn default() -> Self {
        Self::fast()
    }
}

/// A running (or crashed) PostgreSQL server in a temporary folder of its own.
pub struct Server {
    dir: PathBuf,
    port: u16,
    bin: PathBuf,
    as_postgres: bool,
    /// The write end of the watchdog's pipe: closing it (by drop or by dying) sets it off.
    watchdog: Mutex<Option<(Child, ChildStdin)>>,
}

/// A fresh database, dropped with this guard.
pub struct TestDatabase {
    /// `postgres://petstore@127.0.0.1:PORT/t_N`
    pub url: String,
    /// `t_N`
    pub name: String,
    admin: Admin,
}

/// What runs SQL as the superuser: psql over the server's socket.
#[derive(Clone)]
struct Admin {
    psql: PathBuf,
    dir: PathBuf,
    port: u16,
}

static SHARED: OnceLock<Result<Server, String>> = OnceLock::new();
static NEXT_DATABASE: AtomicU64 = AtomicU64::new(1);
static NEXT_FOLDER: AtomicU64 = AtomicU64::new(1);

/// The test process's shared server ([`Options::fast`]), started on first use.
pub fn server() -> &'static Server {
    let shared = SHARED.get_or_init(|| {
        let server = Server::try_start(Options::fast())?;
        // Runs at exit whatever the tests' outcome; it reads SHARED, set by then.
        if atexit(stop_shared) != 0 {
            eprintln!("pg_server: atexit failed; the watchdog alone will stop the server");
        }
        Ok(server)
    });
    match shared {
        Ok(server) => server,
        Err(message) => panic!("{message}"),
    }
}

/// A fresh, empty database on the shared server.
pub fn database() -> TestDatabase {
    server().database()
}

/// A fresh copy of `template` on the shared server (see [`Server::template`]).
pub fn database_like(template: &str) -> TestDatabase {
    server().database_like(template)
}

extern "C" fn stop_shared() {
    if let Some(Ok(server)) = SHARED.get() {
        server.remove();
    }
}

impl Server {
    /// Starts a server of its own, with `options`; panics with what went wrong.
    pub fn start(options: Options) -> Server {
        Self::try_start(options).unwrap_or_else(|message| panic!("{message}"))
    }

    fn try_start(options: Options) -> Result<Server, String> {
        let bin = bin_dir()?;
        let as_postgres = geteuid() == 0;
        let dir = make_folder(as_postgres)?;
        let mut server = Server { dir, port: 0, bin, as_postgres, watchdog: Mutex::new(None) };
        // From here on, a failure drops `server`, which removes the folder.
        server.arm_watchdog()?;
        server.initdb(&options)?;
        let mut last = String::new();
        for _ in 0..5 {
            server.port = free_port()?;
            match server.pg_ctl_start() {
                Ok(()) => return Ok(server),
                // Another process took the port between our look and the server's bind.
                Err(log) if log.contains("could not bind") || log.contains("already in use") => last = log,
                Err(log) => return Err(log),
            }
        }
        Err(format!("PostgreSQL found no free port in 5 tries: {last}"))
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The folder holding `data/`, the log and the socket.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The URL of `database` on this server.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{database}", self.port)
    }

    /// The server's log so far, for a failing test's message.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default()
    }

    /// A fresh, empty database on this server, dropped with the guard.
    pub fn database(&self) -> TestDatabase {
        self.database_like("template1")
    }

    /// A fresh database on this server, a copy of `template` (a database nobody is
    /// connected to, e.g. one made once with a schema in it; see [`Server::template`]),
    /// dropped with the guard.
    pub fn database_like(&self, template: &str) -> TestDatabase {
        let name = format!("t_{}", NEXT_DATABASE.fetch_add(1, Ordering::Relaxed));
        let admin = self.admin();
        admin
            .sql(&format!("CREATE DATABASE {name} TEMPLATE {template}"))
            .unwrap_or_else(|e| panic!("{e}\n{}", self.log()));
        TestDatabase { url: self.url(&name), name, admin }
    }

    /// Makes the database `name` (dropping any of that name first) and calls `fill` with its
    /// URL to put something in it, e.g. a schema; then closes it to connections, so that
    /// [`Server::database_like`] can copy it, which is much faster than filling each copy.
    pub fn template(&self, name: &str, fill: impl FnOnce(&str)) {
        self.sql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        self.sql(&format!("CREATE DATABASE {name}"));
        fill(&self.url(name));
        // A copy needs its template to have no sessions: none can start, and any left over
        // from `fill` are ended (CREATE DATABASE waits for them to go).
        self.sql(&format!("ALTER DATABASE {name} WITH ALLOW_CONNECTIONS false"));
        self.sql(&format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '{name}'"
        ));
    }

    /// Runs `sql` as the superuser in the `postgres` database; panics if it fails.
    pub fn sql(&self, sql: &str) -> String {
        self.admin().sql(sql).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Kills the server as a crash would: `pg_ctl -m immediate` (the postmaster and its
    /// children quit at once, no checkpoint; the next start replays the WAL).
    pub fn crash(&self) {
        let out = self.pg_ctl().args(["-m", "immediate", "-w", "stop"]).output();
        check(out, "pg_ctl stop -m immediate").unwrap_or_else(|e| panic!("{e}"));
    }

    /// Starts the server again on the same folder and port, after [`Server::crash`].
    pub fn restart(&self) {
        self.pg_ctl_start().unwrap_or_else(|log| panic!("{log}"));
    }

    fn admin(&self) -> Admin {
        Admin { psql: self.bin.join("psql"), dir: self.dir.clone(), port: self.port }
    }

    /// A command run as the owner of the folder (`postgres` when we are root).
    fn as_owner(&self, program: &str) -> Command {
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(self.bin.join(program));
            c
        } else {
            Command::new(self.bin.join(program))
        };
        // Not the test's working directory, which `postgres` may not be allowed to enter.
        command.current_dir(&self.dir).stdin(Stdio::null());
        command
    }

    fn pg_ctl(&self) -> Command {
        let mut command = self.as_owner("pg_ctl");
        command.arg("-D").arg(self.data_dir());
        command
    }

    fn initdb(&self, options: &Options) -> Result<(), String> {
        let out = self
            .as_owner("initdb")
            .arg("-D")
            .arg(self.data_dir())
            .args(["-A", "trust", "-U", USER, "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
            .args(["--no-instructions"])
            .output();
        check(out, "initdb")?;
        let mut settings = format!(
            "\n# pg_server.rs\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
             max_connections = {}\n",
            self.dir.display(),
            options.max_connections
        );
        if !options.durable {
            settings.push_str("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\njit = off\n");
        }
        fs::OpenOptions::new()
            .append(true)
            .open(self.data_dir().join("postgresql.conf"))
            .and_then(|mut f| f.write_all(settings.as_bytes()))
            .map_err(|e| format!("writing postgresql.conf: {e}"))
    }

    /// `pg_ctl start`, waiting until the server accepts connections; the log on failure.
    fn pg_ctl_start(&self) -> Result<(), String> {
        let log = self.dir.join("postgres.log");
        let out = self
            .pg_ctl()
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", "60", "-o"])
            .arg(format!("-p {}", self.port))
            .arg("start")
            .output();
        check(out, "pg_ctl start").map(drop).map_err(|e| format!("{e}\nserver log:\n{}", self.log()))
    }

    fn arm_watchdog(&self) -> Result<(), String> {
        use std::os::unix::process::CommandExt;
        // Ignores the terminal's signals (a ^C meant for the tests) and waits for end of
        // file on stdin, which only comes when the test process has closed the pipe, by
        // exiting, by dropping the server, or by being killed.
        const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT PIPE
cat >/dev/null
if [ -f "$1/data/postmaster.pid" ]; then
  if [ "$3" = yes ]; then runuser -u postgres -- "$2" -D "$1/data" -m immediate -w stop
  else "$2" -D "$1/data" -m immediate -w stop; fi
fi >/dev/null 2>&1
rm -rf "$1""#;
        let mut child = Command::new("sh")
            .args(["-c", SCRIPT, "pg_server-watchdog"])
            .arg(&self.dir)
            .arg(self.bin.join("pg_ctl"))
            .arg(if self.as_postgres { "yes" } else { "no" })
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("starting the watchdog (sh): {e}"))?;
        let stdin = child.stdin.take().expect("piped");
        *self.watchdog.lock().unwrap() = Some((child, stdin));
        Ok(())
    }

    /// Stops the server at once and removes its folder; the watchdog then has nothing to do.
    fn remove(&self) {
        if self.data_dir().join("postmaster.pid").exists() {
            let _ = self.pg_ctl().args(["-m", "immediate", "-w", "stop"]).output();
        }
        let _ = fs::remove_dir_all(&self.dir);
        let watchdog = self.watchdog.lock().map(|mut w| w.take()).unwrap_or(None);
        if let Some((mut child, stdin)) = watchdog {
            drop(stdin);
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.remove();
    }
}

impl Admin {
    fn sql(&self, sql: &str) -> Result<String, String> {
        self.sql_in("postgres", sql)
    }

    fn sql_in(&self, database: &str, sql: &str) -> Result<String, String> {
        let out = Command::new(&self.psql)
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-U", USER, "-d", database])
            .arg("-h")
            .arg(&self.dir)
            .arg("-p")
            .arg(self.port.to_string())
            .arg("-c")
            .arg(sql)
            .env_remove("PGSERVICE")
            .env_remove("PGOPTIONS")
            .stdin(Stdio::null())
            .output();
        check(out, sql)
    }
}

impl TestDatabase {
    /// Runs `sql` as the superuser in this database (psql's unaligned output).
    pub fn sql(&self, sql: &str) -> String {
        self.admin.sql_in(&self.name, sql).unwrap_or_else(|e| panic!("{e}"))
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // FORCE: a store's pool may still hold connections (a server task not yet stopped).
        // A failure only leaves the database to the server's removal at exit.
        let _ = self.admin.sql(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
    }
}

/// The stdout of a command that must succeed, or a message with its stderr.
fn check(out: std::io::Result<Output>, what: &str) -> Result<String, String> {
    let out = out.map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(format!(
            "{what}: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// PostgreSQL's programs: `$PETSTORE_PG_BIN`, else the newest /usr/lib/postgresql/N/bin
/// (Debian's layout), else wherever `initdb` is on PATH.
fn bin_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("PETSTORE_PG_BIN") {
        let dir = PathBuf::from(dir);
        return if dir.join("initdb").is_file() {
            Ok(dir)
        } else {
            Err(format!("PETSTORE_PG_BIN={}: no initdb there", dir.display()))
        };
    }
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Ok(bin);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
        .ok_or_else(|| {
            format!("PostgreSQL is missing (no initdb in /usr/lib/postgresql/*/bin or on PATH): {INSTALL}")
        })
}

/// A new empty folder under the temporary directory, owned by `postgres` when we are root.
fn make_folder(as_postgres: bool) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let base = std::env::temp_dir();
    loop {
        let n = NEXT_FOLDER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("petstore-pg-{}-{n}", std::process::id()));
        match fs::create_dir(&dir) {
            Ok(()) => {
                let _ = fs::set_permissions(&dir, fs::Permissions::from_mode(0o700));
                if as_postgres {
                    let out = Command::new("chown").arg("postgres:").arg(&dir).output();
                    if let Err(e) = check(out, "chown postgres") {
                        let _ = fs::remove_dir(&dir);
                        return Err(format!(
                            "{e}\nas root, initdb runs as the postgres user, which the postgresql package \
                             creates: {INSTALL}"
                        ));
                    }
                }
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("creating {}: {e}", dir.display())),
        }
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("finding a free loopback port: {e}"))
}
