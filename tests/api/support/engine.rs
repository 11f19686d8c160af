//! Which database engine the suite runs on: `PETSTORE_TEST_ENGINE=sqlite` (the default) or
//! `postgres`. [`TestDb::new`] makes a fresh database on it: a SQLite file in a temporary
//! folder, or a fresh database on the test process's throwaway PostgreSQL server
//! (`tests/support/pg_server.rs`). `spawn_app` serves one, and the contract suite runs its
//! scenarios on one, so the same tests hold either engine to the same answers.
//!
//! Tests about SQLite itself (its file, backups and restores, its write lock, its
//! migrations and upgrade fixtures) ask for [`TestDb::sqlite`] whatever the engine, and the
//! Makefile's PostgreSQL run skips them (`SQLITE_ONLY_TESTS`, the one list, with the
//! reasons).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use petstore::Store;
use petstore::engine::ShopDatabase;
use petstore::postgres::{PgStore, PgTarget};
use tempfile::TempDir;

use super::pg_server::{self, TestDatabase};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// `PETSTORE_TEST_ENGINE`, read once; anything but `sqlite`, `postgres` or nothing fails.
pub fn engine() -> Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    *ENGINE.get_or_init(|| match std::env::var("PETSTORE_TEST_ENGINE").as_deref() {
        Err(_) | Ok("") | Ok("sqlite") => Engine::Sqlite,
        Ok("postgres") | Ok("postgresql") => Engine::Postgres,
        Ok(other) => panic!("PETSTORE_TEST_ENGINE={other:?}: use sqlite (the default) or postgres"),
    })
}

/// The database every PostgreSQL test database is copied from: made once per test process
/// and migrated by `PgStore::connect` itself, so copies start at the latest schema and a
/// test's store finds nothing to migrate: a copy saves the 60-80 ms that migrating each of
/// the suite's few hundred databases took (measured on this 2-core machine). Migrating an
/// empty database is still how the template is made, and src/postgres's own tests migrate
/// replicas concurrently.
fn pg_template() -> &'static str {
    const NAME: &str = "petstore_template";
    static MADE: OnceLock<()> = OnceLock::new();
    MADE.get_or_init(|| {
        pg_server::server().template(NAME, |url| {
            let url = url.to_owned();
            // Its own thread and runtime: the caller may be inside a runtime already.
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                runtime.block_on(async {
                    let target = PgTarget::parse(&url).unwrap();
                    let store = PgStore::connect(&target).await.unwrap_or_else(|e| panic!("{url}: {e}"));
                    drop(store);
                });
            })
            .join()
            .unwrap_or_else(|_| panic!("migrating the template database {NAME} failed (see above)"));
        });
    });
    NAME
}

/// A test's own database, removed when the last clone goes (the folder of the SQLite file,
/// or `DROP DATABASE`).
#[derive(Clone)]
pub enum TestDb {
    Sqlite { path: PathBuf, _dir: Arc<TempDir> },
    Postgres(Arc<TestDatabase>),
}

impl TestDb {
    /// A fresh database on the engine under test.
    pub fn new() -> Self {
        match engine() {
            Engine::Sqlite => Self::sqlite(),
            Engine::Postgres => Self::postgres(),
        }
    }

    /// A fresh SQLite file, whatever the engine: for the tests about SQLite itself.
    pub fn sqlite() -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self::Sqlite { path: dir.path().join("petstore.db"), _dir: Arc::new(dir) }
    }

    /// A fresh PostgreSQL database, whatever the engine: a copy of one that `PgStore` has
    /// migrated (see [`pg_template`]).
    pub fn postgres() -> Self {
        Self::Postgres(Arc::new(pg_server::database_like(pg_template())))
    }

    pub fn engine(&self) -> Engine {
        match self {
            Self::Sqlite { .. } => Engine::Sqlite,
            Self::Postgres(_) => Engine::Postgres,
        }
    }

    /// A store on this database, as another process (the CLI, a second server) would open
    /// it; on PostgreSQL the first one runs the migrations.
    pub async fn open(&self) -> Arc<dyn ShopDatabase> {
        self.open_for_edge(petstore::server::DEFAULT_REQUEST_TIMEOUT).await
    }

    /// [`TestDb::open`] for a server whose request timeout is `edge`: on PostgreSQL every
    /// session's limits are set below it, as `petstore-server` sets them.
    pub async fn open_for_edge(&self, edge: std::time::Duration) -> Arc<dyn ShopDatabase> {
        match self {
            Self::Sqlite { path, .. } => Arc::new(Store::open(path).unwrap()),
            Self::Postgres(db) => {
                let target = PgTarget::parse(&db.url).unwrap().bounded_by(edge);
                let store = PgStore::connect(&target).await.unwrap_or_else(|e| panic!("{}: {e}", db.url));
                Arc::new(store)
            }
        }
    }

    /// The SQLite file; panics on PostgreSQL, where a test that reads the file has no place.
    #[track_caller]
    pub fn sqlite_path(&self) -> &Path {
        match self {
            Self::Sqlite { path, .. } => path,
            Self::Postgres(db) => panic!(
                "this test reads the SQLite file but runs on PostgreSQL ({}): make it use \
                 TestDb::sqlite (spawn_sqlite_app) or read through the API or TestDb::query",
                db.name
            ),
        }
    }

    /// The rows `sql` selects, every column as text (NULL as an empty string), read
    /// directly from the database of either engine. Plain SQL only: both engines must
    /// understand it.
    pub fn query(&self, sql: &str) -> Vec<Vec<String>> {
        match self {
            Self::Sqlite { path, .. } => {
                let conn = rusqlite::Connection::open(path).unwrap();
                let mut statement = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
                let columns = statement.column_count();
                statement
                    .query_map([], |row| {
                        (0..columns)
                            .map(|i| {
                                Ok(match row.get_ref(i)? {
                                    rusqlite::types::ValueRef::Null => String::new(),
                                    rusqlite::types::ValueRef::Integer(n) => n.to_string(),
                                    rusqlite::types::ValueRef::Real(x) => x.to_string(),
                                    rusqlite::types::ValueRef::Text(t)
                                    | rusqlite::types::ValueRef::Blob(t) => {
                                        String::from_utf8_lossy(t).into_owned()
                                    }
                                })
                            })
                            .collect()
                    })
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap_or_else(|e| panic!("{sql}: {e}"))
            }
            // psql's unaligned output: `|` between columns, a row a line.
            Self::Postgres(db) => db
                .sql(sql)
                .lines()
                .filter(|line| !line.is_empty())
                .map(|line| line.split('|').map(str::to_owned).collect())
                .collect(),
        }
    }

    /// The single integer `sql` selects.
    #[track_caller]
    pub fn one_i64(&self, sql: &str) -> i64 {
        let rows = self.query(sql);
        assert_eq!(rows.len(), 1, "{sql}: {rows:?}");
        rows[0][0].parse().unwrap_or_else(|e| panic!("{sql}: {:?}: {e}", rows[0][0]))
    }

    /// The integers of the first column of what `sql` selects.
    pub fn i64s(&self, sql: &str) -> Vec<i64> {
        self.query(sql)
            .iter()
            .map(|row| row[0].parse().unwrap_or_else(|e| panic!("{sql}: {row:?}: {e}")))
            .collect()
    }
}

impl Default for TestDb {
    fn default() -> Self {
        Self::new()
    }
}
