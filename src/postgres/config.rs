//! Where the PostgreSQL database is and how to reach it: a `postgres://` or `postgresql://`
//! URL, parsed once at the edge into a connection config, the TLS it asks for, and a form
//! of itself safe to log (never the password).
//!
//! `sslmode` follows libpq: `disable`, `prefer` (the default: TLS when the server offers
//! it, unverified), `require` (TLS, unverified, as libpq does without a root certificate),
//! `verify-ca` (TLS, certificate chain checked) and `verify-full` (chain and host name
//! checked). `sslrootcert=FILE` adds a PEM root certificate to trust. tokio-postgres knows
//! only the first three modes, so the checking is set on the TLS connector here.

use std::fmt;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use postgres_native_tls::MakeTlsConnector;
use tokio_postgres::config::{Host, SslMode};

/// How long connecting may take before the server gives up with a clear message.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The limits PostgreSQL enforces on every session of this store, all below the edge's
/// request timeout, so that no statement of a request outlives the request: the edge
/// answers at its timeout, and what PostgreSQL still does for that request after it must
/// end on its own even when nobody is left to cancel it (a replica killed, a network cut).
///
/// - `lock_timeout`, a third of the edge: a row held by another session (an operator's
///   `psql`, a stuck replica) fails the waiting statement with `55P03`, nothing changed,
///   answered `503 busy` while the request is still being waited for, and its connection
///   goes back to others instead of waiting out the edge.
/// - `statement_timeout` and `idle_in_transaction_session_timeout`, two thirds of the edge:
///   no statement, and no transaction left open by a client that stopped talking, lasts
///   past the request it served.
/// - `client_connection_check_interval`, a second (less for a shorter edge): a backend
///   running a statement for a replica that is gone (killed, its connection closed) notices
///   within a second and rolls back, instead of committing that replica's order when the
///   lock it waited for goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    pub lock: Duration,
    pub statement: Duration,
    pub idle_in_transaction: Duration,
    pub check_client: Duration,
}

impl SessionLimits {
    /// The limits for an edge that abandons a request after `edge`.
    pub fn below(edge: Duration) -> Self {
        let at_least_1ms = |d: Duration| d.max(Duration::from_millis(1));
        Self {
            lock: at_least_1ms(edge / 3),
            statement: at_least_1ms(edge * 2 / 3),
            idle_in_transaction: at_least_1ms(edge * 2 / 3),
            check_client: at_least_1ms((edge / 4).min(Duration::from_secs(1))),
        }
    }

    /// The settings as the `options` of the connection's startup message (`-c name=ms`):
    /// set on every connection as it is made, at no round trip.
    fn options(&self) -> String {
        let ms = |d: Duration| d.as_millis();
        format!(
            "-c lock_timeout={} -c statement_timeout={} -c idle_in_transaction_session_timeout={} \
             -c client_connection_check_interval={}",
            ms(self.lock),
            ms(self.statement),
            ms(self.idle_in_transaction),
            ms(self.check_client)
        )
    }
}

/// A PostgreSQL database to connect to.
#[derive(Clone)]
pub struct PgTarget {
    config: tokio_postgres::Config,
    tls: MakeTlsConnector,
    /// The URL without its password, for messages and logs.
    shown: String,
    /// The `options` the URL gave, to which the session limits are added.
    options: Option<String>,
    limits: SessionLimits,
}

/// The libpq TLS modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tls {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl PgTarget {
    /// Whether `db` (a `--db` value) names a PostgreSQL database rather than a SQLite file.
    pub fn is_url(db: &str) -> bool {
        db.starts_with("postgres://") || db.starts_with("postgresql://")
    }

    /// Parses `url`; a password missing from it comes from `PGPASSWORD`, as with libpq.
    pub fn parse(url: &str) -> Result<Self, String> {
        Self::parse_with_password(url, std::env::var("PGPASSWORD").ok())
    }

    /// [`PgTarget::parse`] with the fallback password given, for tests.
    pub fn parse_with_password(url: &str, fallback_password: Option<String>) -> Result<Self, String> {
        let mut parsed = url::Url::parse(url).map_err(|e| format!("the database URL is not valid: {e}"))?;
        if !Self::is_url(url) {
            return Err("the database URL must start with postgres:// or postgresql://".into());
        }
        let mut tls = Tls::Prefer;
        let mut root = None;
        let mut kept = Vec::new();
        for (name, value) in parsed.query_pairs() {
            match name.as_ref() {
                "sslmode" => {
                    tls = match value.as_ref() {
                        "disable" => Tls::Disable,
                        "prefer" | "allow" => Tls::Prefer,
                        "require" => Tls::Require,
                        "verify-ca" => Tls::VerifyCa,
                        "verify-full" => Tls::VerifyFull,
                        other => {
                            return Err(format!(
                                "sslmode {other:?} is not one of disable, prefer, require, verify-ca, verify-full"
                            ));
                        }
                    }
                }
                "sslrootcert" => root = Some(value.into_owned()),
                _ => kept.push((name.into_owned(), value.into_owned())),
            }
        }
        if kept.is_empty() {
            parsed.set_query(None);
        } else {
            parsed.query_pairs_mut().clear().extend_pairs(&kept);
        }
        let mut config: tokio_postgres::Config = parsed.as_str().parse().map_err(|e| {
            // tokio-postgres's message names the part at fault, never the password.
            format!("the database URL is not valid: {e}")
        })?;
        if config.get_password().is_none()
            && let Some(password) = fallback_password
        {
            config.password(password);
        }
        if config.get_dbname().is_none() {
            return Err("the database URL names no database: postgres://USER@HOST:PORT/DBNAME".into());
        }
        config.ssl_mode(match tls {
            Tls::Disable => SslMode::Disable,
            Tls::Prefer => SslMode::Prefer,
            Tls::Require | Tls::VerifyCa | Tls::VerifyFull => SslMode::Require,
        });
        config.connect_timeout(CONNECT_TIMEOUT);
        config.application_name("petstore-server");

        let mut connector = native_tls::TlsConnector::builder();
        if matches!(tls, Tls::Prefer | Tls::Require) {
            connector.danger_accept_invalid_certs(true).danger_accept_invalid_hostnames(true);
        }
        if tls == Tls::VerifyCa {
            connector.danger_accept_invalid_hostnames(true);
        }
        if let Some(file) = root {
            let pem = std::fs::read(&file).map_err(|e| format!("cannot read sslrootcert {file}: {e}"))?;
            let cert = native_tls::Certificate::from_pem(&pem)
                .map_err(|e| format!("sslrootcert {file} is not a PEM certificate: {e}"))?;
            connector.add_root_certificate(cert);
        }
        let connector = connector.build().map_err(|e| format!("cannot set up TLS: {e}"))?;

        let _ = parsed.set_password(None);
        let options = config.get_options().map(str::to_owned);
        let target = Self {
            config,
            tls: MakeTlsConnector::new(connector),
            shown: parsed.to_string(),
            options,
            limits: SessionLimits::below(crate::server::DEFAULT_REQUEST_TIMEOUT),
        };
        Ok(target.bounded_by(crate::server::DEFAULT_REQUEST_TIMEOUT))
    }

    /// This target for a server whose edge abandons a request after `edge`: every session
    /// gets the [`SessionLimits`] below it. The server's own request timeout must be given
    /// here (the default is the server's default, 30 s).
    pub fn bounded_by(mut self, edge: Duration) -> Self {
        self.limits = SessionLimits::below(edge);
        let options = match &self.options {
            Some(given) => format!("{given} {}", self.limits.options()),
            None => self.limits.options(),
        };
        self.config.options(&options);
        self
    }

    /// The limits every session of this target has.
    pub fn limits(&self) -> SessionLimits {
        self.limits
    }

    /// The TLS connector, for the cancel requests of abandoned queries.
    pub(super) fn tls(&self) -> MakeTlsConnector {
        self.tls.clone()
    }

    /// The server's address as `host:port`, for messages.
    pub fn address(&self) -> String {
        let host = match self.config.get_hosts().first() {
            Some(Host::Tcp(name)) => name.clone(),
            #[cfg(unix)]
            Some(Host::Unix(path)) => path.display().to_string(),
            None => "localhost".into(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        format!("{host}:{port}")
    }

    pub fn database(&self) -> &str {
        self.config.get_dbname().unwrap_or_default()
    }

    pub fn user(&self) -> &str {
        self.config.get_user().unwrap_or_default()
    }

    /// A pool of at most `size` connections, each made on first need. Connections are
    /// checked only for being closed when handed out (deadpool's `Fast`): a query on a
    /// connection that died fails once and the connection is dropped.
    pub fn pool(&self, size: usize) -> Result<Pool, String> {
        let manager = Manager::from_config(
            self.config.clone(),
            self.tls.clone(),
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        Pool::builder(manager)
            .max_size(size)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(Duration::from_secs(30)))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| format!("cannot set up the connection pool: {e}"))
    }

    /// One connection of its own (for `LISTEN`, which needs a connection that stays), with
    /// the task that drives it.
    pub async fn connect(
        &self,
    ) -> Result<
        (
            tokio_postgres::Client,
            tokio_postgres::Connection<
                tokio_postgres::Socket,
                postgres_native_tls::TlsStream<tokio_postgres::Socket>,
            >,
        ),
        tokio_postgres::Error,
    > {
        self.config.connect(self.tls.clone()).await
    }

    /// One line saying why connecting failed, naming the server and the database but never
    /// the password.
    pub fn describe(&self, error: &tokio_postgres::Error) -> String {
        if let Some(db) = error.as_db_error() {
            return format!("PostgreSQL at {} refused the connection: {}", self.address(), db.message());
        }
        let mut cause = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(inner) = source {
            cause = inner.to_string();
            source = inner.source();
        }
        format!("cannot reach PostgreSQL at {} (database {}): {cause}", self.address(), self.database())
    }
}

/// The URL without its password.
impl fmt::Display for PgTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PgTarget").field(&self.shown).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_never_shown() {
        let target =
            PgTarget::parse_with_password("postgres://shop:s3cret@db.example:6432/chain", None).unwrap();
        assert_eq!(target.to_string(), "postgres://shop@db.example:6432/chain");
        assert!(!format!("{target:?}").contains("s3cret"));
        assert_eq!(target.config.get_password(), Some(&b"s3cret"[..]));
        assert_eq!(target.address(), "db.example:6432");
        assert_eq!(target.database(), "chain");
    }

    #[test]
    fn a_password_missing_from_the_url_comes_from_pgpassword() {
        let target =
            PgTarget::parse_with_password("postgresql://shop@localhost/chain", Some("from-env".into()))
                .unwrap();
        assert_eq!(target.config.get_password(), Some(&b"from-env"[..]));
        let target =
            PgTarget::parse_with_password("postgresql://shop:url@localhost/chain", Some("from-env".into()))
                .unwrap();
        assert_eq!(target.config.get_password(), Some(&b"url"[..]), "the URL's password wins");
    }

    #[test]
    fn sslmode_takes_the_libpq_modes_and_refuses_others() {
        for mode in ["disable", "prefer", "require", "verify-ca", "verify-full"] {
            let url = format!("postgres://u@h/d?sslmode={mode}&connect_timeout=3");
            let target = PgTarget::parse_with_password(&url, None).unwrap();
            assert!(!target.to_string().contains("sslmode"), "{target}");
            let expected = match mode {
                "disable" => SslMode::Disable,
                "prefer" => SslMode::Prefer,
                _ => SslMode::Require,
            };
            assert_eq!(target.config.get_ssl_mode(), expected, "{mode}");
        }
        let error = PgTarget::parse_with_password("postgres://u@h/d?sslmode=sometimes", None).unwrap_err();
        assert!(error.contains("\"sometimes\""), "{error}");
    }

    #[test]
    fn a_url_without_a_database_or_of_another_scheme_is_refused() {
        assert!(
            PgTarget::parse_with_password("postgres://u@h", None).unwrap_err().contains("names no database")
        );
        assert!(PgTarget::parse_with_password("mysql://u@h/d", None).unwrap_err().contains("postgres://"));
        assert!(PgTarget::is_url("postgresql://u@h/d"));
        assert!(!PgTarget::is_url("/var/lib/petstore/petstore.db"));
    }

    #[test]
    fn every_session_is_limited_below_the_edge_and_keeps_the_urls_options() {
        let target = PgTarget::parse_with_password("postgres://u@h/d?options=-cwork_mem%3D8MB", None)
            .unwrap()
            .bounded_by(Duration::from_secs(30));
        let options = target.config.get_options().unwrap();
        assert!(options.starts_with("-cwork_mem=8MB "), "{options}");
        for set in [
            "lock_timeout=10000",
            "statement_timeout=20000",
            "idle_in_transaction_session_timeout=20000",
            "client_connection_check_interval=1000",
        ] {
            assert!(options.contains(&format!("-c {set}")), "{set} in {options}");
        }
        let short = SessionLimits::below(Duration::from_millis(1200));
        assert!(short.lock < short.statement && short.statement < Duration::from_millis(1200));
        assert_eq!(short.check_client, Duration::from_millis(300));
    }
}
