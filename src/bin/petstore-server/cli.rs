use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use petstore::Store;
use petstore::api::{FailureLimit, KeyRing, StreamLimits};
use petstore::server::{Application, DEFAULT_LISTEN, DEFAULT_WINDOW, ServerConfig, shutdown_signal};

use crate::database::Db;

/// The Petstore REST API over a SQLite file or a PostgreSQL database, without the desktop app.
#[derive(Debug, Parser)]
#[command(name = "petstore-server", version, about)]
pub struct Args {
    /// The database: a SQLite file (created if missing; default: petstore.db in the
    /// platform's data directory), or a PostgreSQL URL,
    /// postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME[?sslmode=disable|prefer|require|verify-ca|verify-full]
    /// (the password may come from PGPASSWORD instead).
    // Parsed after clap, and its value never shown in --help: it may carry a password.
    #[arg(long, global = true, env = "PETSTORE_DB", hide_env_values = true)]
    db: Option<String>,

    /// Log as human-readable text or as JSON lines for machines.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    #[command(subcommand)]
    command: Option<Action>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Serve the API (the default when no command is given).
    Serve(ServeArgs),
    /// Print the API key clients must send (creating it at first use).
    Key,
    /// Named API keys with a scope: create, list, revoke, rotate.
    #[command(subcommand)]
    Keys(crate::keys::KeysCommand),
    /// Fill the database with realistic demo data.
    Seed {
        /// How many pets to add.
        #[arg(long, default_value_t = 1000)]
        pets: u64,
    },
    /// Write a consistent copy of the database while it may be in use.
    Backup {
        /// The file to create; it must not exist yet.
        #[arg(long)]
        to: PathBuf,
    },
    /// Replace the database with a backup, after checking it (stop the server and the app first).
    Restore(crate::restore::RestoreArgs),
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Address to listen on. Anything but a loopback address exposes the API to the network.
    #[arg(long, default_value = DEFAULT_LISTEN, env = "PETSTORE_LISTEN")]
    listen: SocketAddr,

    /// A host name (besides localhost) clients may use to reach this server. Repeatable.
    #[arg(long = "allowed-host")]
    allowed_hosts: Vec<String>,

    /// Failed authentications one client may make per minute before its requests without a
    /// right key get 429 for the rest of that minute. Test tools that probe without keys
    /// (tests/schemathesis) raise it.
    #[arg(long, env = "PETSTORE_MAX_AUTH_FAILURES", default_value_t = FailureLimit::default().max_failures)]
    max_auth_failures: u32,

    /// How long the change feed (GET /changes, /events) keeps its changes, e.g. 7d, 36h,
    /// 90m; a client further behind reads everything again. At least 1s.
    #[arg(long, env = "PETSTORE_CHANGE_RETENTION", default_value = "7d", value_parser = parse_window)]
    change_retention: Duration,

    /// How long an Idempotency-Key is kept (a retry within it is answered, not placed), e.g.
    /// 7d; as long as a till may queue sales offline. At least 1s.
    #[arg(long, env = "PETSTORE_IDEMPOTENCY_WINDOW", default_value = "7d", value_parser = parse_window)]
    idempotency_window: Duration,

    /// Change-feed streams (GET /events) open at once, from everyone; held below half the
    /// connections the server can keep open. Over it, a stream is refused with 503.
    #[arg(long, env = "PETSTORE_MAX_STREAMS", default_value_t = StreamLimits::default().overall)]
    max_streams: usize,

    /// Streams of one named key (the operator's key has no such cap). Over it: 429.
    #[arg(long, env = "PETSTORE_MAX_STREAMS_PER_KEY", default_value_t = StreamLimits::default().per_key)]
    max_streams_per_key: usize,

    /// Streams from one client address; behind a reverse proxy, raise it to --max-streams.
    /// Over it: 429.
    #[arg(long, env = "PETSTORE_MAX_STREAMS_PER_ADDRESS", default_value_t = StreamLimits::default().per_address)]
    max_streams_per_address: usize,

    /// How long a stream lasts at most before the client resumes it with Last-Event-ID,
    /// e.g. 30m (each lasts between four fifths of it and all of it). At least 1s.
    #[arg(long, env = "PETSTORE_STREAM_LIFETIME", default_value = "30m", value_parser = parse_window)]
    stream_lifetime: Duration,
}

/// A length of time as a number and a unit: `s`, `m`, `h` or `d` (`7d`, `36h`).
fn parse_window(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let unit_at = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (number, unit) = s.split_at(unit_at);
    let seconds: u64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 60 * 60,
        "d" => 24 * 60 * 60,
        _ => return Err(format!("{s:?} is not a length of time like 7d, 36h, 90m or 30s")),
    };
    let number: u64 = number.parse().map_err(|_| format!("{s:?} does not start with a whole number"))?;
    // A hundred years is longer than anyone means; chrono takes no more than some 292,000.
    match number.checked_mul(seconds) {
        Some(total @ 1..=3_155_760_000) => Ok(Duration::from_secs(total)),
        _ => Err(format!("{s:?} must be between 1s and 36525d")),
    }
}

impl Default for ServeArgs {
    fn default() -> Self {
        Self {
            listen: DEFAULT_LISTEN.parse().expect("a valid default"),
            allowed_hosts: Vec::new(),
            max_auth_failures: FailureLimit::default().max_failures,
            change_retention: DEFAULT_WINDOW,
            idempotency_window: DEFAULT_WINDOW,
            max_streams: StreamLimits::default().overall,
            max_streams_per_key: StreamLimits::default().per_key,
            max_streams_per_address: StreamLimits::default().per_address,
            stream_lifetime: StreamLimits::default().lifetime,
        }
    }
}

pub fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

pub async fn run(args: Args) -> Result<(), String> {
    let db = Db::parse(args.db)?;
    match args.command.unwrap_or(Action::Serve(ServeArgs::default())) {
        Action::Serve(serve_args) => serve(&db, serve_args).await,
        Action::Key => {
            println!("{}", db.operator_key()?.0);
            Ok(())
        }
        Action::Keys(command) => crate::keys::run(&db, command).await,
        Action::Seed { pets } => seed(&db, pets).await,
        Action::Backup { to } => {
            backup(db.sqlite_only("backup", "pg_dump -Fc --dbname=URL --file=FILE")?, &to).await
        }
        Action::Restore(args) => {
            crate::restore::run(db.sqlite_only("restore", "pg_restore --clean --dbname=URL FILE")?, args)
                .await
        }
    }
}

async fn serve(db: &Db, args: ServeArgs) -> Result<(), String> {
    // The key first: a missing one is a mistake to hear of before connecting anywhere.
    let (key, source) = db.operator_key()?;
    let store = db.open().await?;
    let mut config = ServerConfig::new(args.listen, KeyRing::from_secrets([key.as_str()]));
    config.allowed_hosts = args.allowed_hosts;
    config.failed_auth.max_failures = args.max_auth_failures;
    config.change_retention = args.change_retention;
    config.idempotency_window = args.idempotency_window;
    config.streams = StreamLimits {
        overall: args.max_streams,
        per_key: args.max_streams_per_key,
        per_address: args.max_streams_per_address,
        lifetime: args.stream_lifetime,
    };
    let app = Application::bind(petstore::Served::all_of(store), config).await.map_err(|e| e.to_string())?;
    tracing::info!(database = %db, "API key is in {source}");
    println!("Petstore API on http://{} (database {db}, key in {source})", app.local_addr());
    app.run_until(shutdown_signal()).await;
    Ok(())
}

async fn seed(db: &Db, pets: u64) -> Result<(), String> {
    let store = db.open().await?;
    let bar = ProgressBar::new(pets).with_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {human_pos}/{human_len} pets ({per_sec}, {eta} left)")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message("seeding");
    let started = Instant::now();
    let progress = bar.clone();
    let report = store
        .seed(pets, Box::new(move |done| progress.set_position(done)))
        .await
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    println!(
        "Added {} pets in {} categories to {db} in {:.1} s",
        report.pets,
        report.categories,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

async fn backup(db: &Path, to: &Path) -> Result<(), String> {
    if !db.exists() {
        return Err(format!("the database {} does not exist", db.display()));
    }
    let store = Store::open(db).map_err(|e| e.to_string())?;
    store.backup(to).await.map_err(|e| e.to_string())?;
    println!("Backed up {} to {}", db.display(), to.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_a_whole_number_and_a_unit() {
        assert_eq!(parse_window("7d"), Ok(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse_window("36h"), Ok(Duration::from_secs(36 * 3_600)));
        assert_eq!(parse_window("90m"), Ok(Duration::from_secs(5_400)));
        assert_eq!(parse_window("1s"), Ok(Duration::from_secs(1)));
        for bad in ["", "7", "d", "0s", "1.5h", "7 days", "-1d", "99999999d"] {
            assert!(parse_window(bad).is_err(), "{bad:?}");
        }
    }
}
