//! `--db`: which engine and which database, decided once at the edge. A `postgres://` or
//! `postgresql://` URL is a PostgreSQL database (a chain's central server, several replicas
//! may share it); anything else is the path of a SQLite file, as it always was.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use petstore::engine::ShopDatabase;
use petstore::postgres::{PgStore, PgTarget};
use petstore::{Store, api_key};

pub enum Db {
    Sqlite(PathBuf),
    /// Boxed: a parsed connection config is large, and a `Db` is moved around whole.
    Postgres(Box<PgTarget>),
}

impl Db {
    /// `--db` as given, or the SQLite file in the platform's data directory.
    pub fn parse(given: Option<String>) -> Result<Self, String> {
        match given {
            Some(url) if PgTarget::is_url(&url) => {
                PgTarget::parse(&url).map(|target| Db::Postgres(Box::new(target)))
            }
            Some(path) => Ok(Db::Sqlite(PathBuf::from(path))),
            None => default_path().map(Db::Sqlite),
        }
    }

    /// Opens (creating and migrating as needed) the database.
    pub async fn open(&self) -> Result<Arc<dyn ShopDatabase>, String> {
        Ok(match self {
            Db::Sqlite(path) => Arc::new(Store::open(path).map_err(|e| e.to_string())?),
            Db::Postgres(target) => Arc::new(PgStore::connect(target).await.map_err(|e| e.to_string())?),
        })
    }

    /// The SQLite file, for the commands only SQLite has; on PostgreSQL, `what` is refused
    /// in one line naming the PostgreSQL tool that does it.
    pub fn sqlite_only(&self, what: &str, instead: &str) -> Result<&Path, String> {
        match self {
            Db::Sqlite(path) => Ok(path),
            Db::Postgres(_) => Err(format!(
                "{what} works on SQLite files only; on PostgreSQL use {instead} (see docs/GUIDE.md, \"Backups\")"
            )),
        }
    }

    /// Whether the database exists already, for commands that must not create one. A
    /// PostgreSQL database is created by its administrator, never by Petstore.
    pub fn exists(&self) -> bool {
        match self {
            Db::Sqlite(path) => path.exists(),
            Db::Postgres(_) => true,
        }
    }

    /// The key the server accepts and where it comes from: `PETSTORE_API_KEY`, else (on
    /// SQLite) the key file beside the database. PostgreSQL has no file beside it, and
    /// every replica must accept the same key, so there it comes from the environment.
    pub fn operator_key(&self) -> Result<(String, String), String> {
        if let Ok(key) = std::env::var("PETSTORE_API_KEY") {
            let key = api_key::from_operator(&key).map_err(|e| format!("PETSTORE_API_KEY: {e}"))?;
            return Ok((key.to_owned(), "the PETSTORE_API_KEY environment variable".into()));
        }
        match self {
            Db::Sqlite(path) => {
                let file = api_key::key_file_for(path);
                let key = api_key::load_or_create(&file).map_err(|e| e.to_string())?;
                Ok((key, format!("the key file {}", file.display())))
            }
            Db::Postgres(_) => {
                Err("on PostgreSQL the server's key comes from PETSTORE_API_KEY, the same on \
                                    every replica (make one with: openssl rand -hex 32); programs can also \
                                    use named keys: petstore-server keys create"
                    .into())
            }
        }
    }
}

/// The database for messages: the path, or the URL without its password.
impl fmt::Display for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Db::Sqlite(path) => write!(f, "{}", path.display()),
            Db::Postgres(target) => write!(f, "{target}"),
        }
    }
}

/// petstore.db in the platform data directory (created on first use, private: 0700).
fn default_path() -> Result<PathBuf, String> {
    let dir =
        dirs::data_dir().ok_or("this system has no data directory; pass --db PATH")?.join("petstore-server");
    petstore::private::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir.join("petstore.db"))
}
