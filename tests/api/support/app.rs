//! `spawn_app()`: a real server on a free loopback port with its own database on the engine
//! under test (`PETSTORE_TEST_ENGINE`, see [`super::engine`]), and a request helper that
//! holds every response against the OpenAPI document.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use petstore::api::{FailureLimit, KeyRing};
use petstore::clock::Clock;
use petstore::server::{Application, ServerConfig};
use reqwest::{Method, RequestBuilder, StatusCode, header::HeaderMap};
use serde_json::Value;
use tokio::sync::oneshot;

use super::engine::TestDb;
use super::openapi;

pub const KEY: &str = "test-key-0123456789abcdefghijklmnop";
/// A second operator key, for a second client of the same server.
pub const OTHER_KEY: &str = "test-key-other-0123456789abcdefghijk";

/// How long the tests' client waits to connect, and then for each read of an answer: a
/// server that stops answering fails the test that asked, instead of hanging the suite.
/// Above the server's own request timeout (30 s), which some tests wait out, and above the
/// event streams' keep-alive (every 15 s), so only a silent server trips it.
pub const CLIENT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
pub const CLIENT_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The client every [`TestApp`] sends with: see [`CLIENT_READ_TIMEOUT`].
pub fn test_client() -> reqwest::Client {
    test_client_with(CLIENT_CONNECT_TIMEOUT, CLIENT_READ_TIMEOUT)
}

/// [`test_client`] with other bounds, for the test of the bounds themselves.
pub fn test_client_with(connect: Duration, read: Duration) -> reqwest::Client {
    reqwest::Client::builder().connect_timeout(connect).read_timeout(read).build().unwrap()
}

pub struct TestApp {
    pub addr: SocketAddr,
    pub base_url: String,
    /// The database it serves; [`TestDb::open`] opens it again as another process would.
    pub db: TestDb,
    pub http: reqwest::Client,
    served: Served,
}

/// Where the server runs.
enum Served {
    /// In this process, on this runtime: stopped through `shutdown`.
    InProcess {
        /// The server's change-feed reader, with its count of database reads.
        feed: std::sync::Arc<petstore::api::FeedHub>,
        shutdown: Option<oneshot::Sender<()>>,
        task: Option<tokio::task::JoinHandle<()>>,
    },
    /// A `petstore-server serve` process of its own.
    Process(Child),
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // The process would outlive the test otherwise; one in this process stops when its
        // `shutdown` sender goes.
        if let Served::Process(child) = &mut self.served {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What came back, already checked against the document.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    /// The Error object's code, for error replies.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    /// The reply, after asserting its status (with the body in the message). For a test's
    /// setup steps: one that went wrong fails where it happened, instead of leaving the
    /// test to check something other than what it says.
    #[track_caller]
    pub fn expect_status(self, status: u16) -> Self {
        assert_eq!(self.status.as_u16(), status, "{:?}", self.body);
        self
    }
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(Clock::system()).await
}

pub async fn spawn_app_with(clock: Clock) -> TestApp {
    spawn_app_limited(clock, FailureLimit::default()).await
}

/// A server that slows clients down after `limit` wrong keys.
pub async fn spawn_app_limited(clock: Clock, limit: FailureLimit) -> TestApp {
    spawn_app_configured(|config| {
        config.clock = clock;
        config.failed_auth = limit;
    })
    .await
}

/// A server with the test's own settings, e.g. a short request timeout.
pub async fn spawn_app_configured(configure: impl FnOnce(&mut ServerConfig)) -> TestApp {
    serve(TestDb::new(), configure).await
}

/// A server on a SQLite file whatever the engine under test, for the tests about SQLite
/// itself (its file, its write lock).
pub async fn spawn_sqlite_app_configured(configure: impl FnOnce(&mut ServerConfig)) -> TestApp {
    serve(TestDb::sqlite(), configure).await
}

/// A server on PostgreSQL whatever the engine under test, for the tests about PostgreSQL
/// itself (its row locks, its sessions, its transactions, its cluster).
pub async fn spawn_postgres_app_configured(configure: impl FnOnce(&mut ServerConfig)) -> TestApp {
    serve(TestDb::postgres(), configure).await
}

/// [`spawn_postgres_app_configured`] with the defaults.
pub async fn spawn_postgres_app() -> TestApp {
    serve(TestDb::postgres(), |_| {}).await
}

pub async fn spawn_sqlite_app() -> TestApp {
    spawn_sqlite_app_configured(|_| {}).await
}

async fn serve(db: TestDb, configure: impl FnOnce(&mut ServerConfig)) -> TestApp {
    let mut config =
        ServerConfig::new("127.0.0.1:0".parse().unwrap(), KeyRing::from_secrets([KEY, OTHER_KEY]));
    configure(&mut config);
    let store = db.open_for_edge(config.request_timeout).await;
    let app = Application::bind(petstore::Served::all_of(store), config).await.unwrap();
    let addr = app.local_addr();
    let feed = app.feed();
    let (tx, rx) = oneshot::channel();
    let served = tokio::spawn(async move {
        app.run_until(async {
            let _ = rx.await;
        })
        .await;
    });
    TestApp {
        addr,
        base_url: format!("http://{addr}"),
        db,
        http: test_client(),
        served: Served::InProcess { feed, shutdown: Some(tx), task: Some(served) },
    }
}

/// `petstore-server serve` on `db` in a process of its own, with [`KEY`] as its operator
/// key, once it answers `/health`.
pub async fn spawn_app_process(db: TestDb) -> TestApp {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let target = match &db {
        TestDb::Sqlite { path, .. } => path.display().to_string(),
        TestDb::Postgres(pg) => pg.url.clone(),
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_petstore-server"))
        .args(["--db", &target, "serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("PETSTORE_API_KEY", KEY)
        .env_remove("PETSTORE_DB")
        // Its warnings and errors beside the test's output, not every request it served.
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("petstore-server starts");
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let http = test_client();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("petstore-server serve --db {target} exited with {status} before it answered");
        }
        if let Ok(reply) = http.get(format!("http://{addr}/health")).send().await
            && reply.status() == 200
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "petstore-server did not answer /health in 30 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    TestApp { addr, base_url: format!("http://{addr}"), db, http, served: Served::Process(child) }
}

impl TestApp {
    /// A second server in this process on this one's database, with a store of its own
    /// (another pool of connections, another change feed), which is not another process:
    /// see [`TestApp::replica_process`] for that.
    pub async fn replica(&self) -> TestApp {
        serve(self.db.clone(), |_| {}).await
    }

    /// A second server on this one's database in a process of its own (`petstore-server
    /// serve`, accepting [`KEY`]), as another replica behind a load balancer runs, or
    /// another program on the same SQLite file.
    pub async fn replica_process(&self) -> TestApp {
        spawn_app_process(self.db.clone()).await
    }

    /// The server's change-feed reader, with its count of database reads; a server in
    /// this process only.
    #[track_caller]
    pub fn feed(&self) -> &petstore::api::FeedHub {
        match &self.served {
            Served::InProcess { feed, .. } => feed,
            Served::Process(child) => {
                panic!("the server is process {}: its feed is not in this one", child.id())
            }
        }
    }

    /// [`TestApp::replica`] with the test's own settings, e.g. other operator keys.
    pub async fn replica_configured(&self, configure: impl FnOnce(&mut ServerConfig)) -> TestApp {
        serve(self.db.clone(), configure).await
    }

    /// A request with the right key.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.anonymous(method, path).bearer_auth(KEY)
    }

    /// A request with no key at all.
    pub fn anonymous(&self, method: Method, path: &str) -> RequestBuilder {
        self.http.request(method, format!("{}{path}", self.base_url))
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send(self.request(Method::GET, path)).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send(self.request(Method::POST, path).json(&body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Reply {
        self.send(self.request(Method::PUT, path).json(&body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> Reply {
        self.send(self.request(Method::PATCH, path).json(&body)).await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.send(self.request(Method::DELETE, path)).await
    }

    /// `POST /store/orders/{order}/cancel`: cancels the order and keeps it.
    pub async fn cancel(&self, order: impl std::fmt::Display) -> Reply {
        self.send(self.request(Method::POST, &format!("/store/orders/{order}/cancel"))).await
    }

    /// Sends `request` and checks the reply against the OpenAPI document: the status must
    /// be documented for the operation and the body must match its schema. Every HTTP test
    /// therefore also tests the document.
    pub async fn send(&self, request: RequestBuilder) -> Reply {
        let request = request.build().unwrap();
        let method = request.method().clone();
        let path = request.url().path().to_owned();
        let response = self.http.execute(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let content_type = |prefix: &str| {
            headers.get("content-type").is_some_and(|v| v.to_str().unwrap_or("").starts_with(prefix))
        };
        // An event stream goes on until the server ends it: its head only, its events are
        // read by the tests of the feed.
        if content_type("text/event-stream") {
            let body = Value::String(String::new());
            openapi::check_response(&method, &path, status.as_u16(), &headers, &body);
            return Reply { status, headers, body };
        }
        let bytes = response.bytes().await.unwrap();
        let is_json = content_type("application/json");
        let body = if bytes.is_empty() {
            Value::Null
        } else if is_json {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{method} {path} -> {status}: body is not JSON ({e})"))
        } else {
            Value::String(String::from_utf8_lossy(&bytes).into_owned())
        };
        openapi::check_response(&method, &path, status.as_u16(), &headers, &body);
        Reply { status, headers, body }
    }

    /// Stops the server and opens a new one on the same database, as after a restart.
    pub async fn restart(mut self) -> TestApp {
        self.stop().await;
        serve(self.db.clone(), |_| {}).await
    }

    /// The SQLite file it serves; panics on PostgreSQL (see [`TestDb::sqlite_path`]).
    #[track_caller]
    pub fn db_path(&self) -> &Path {
        self.db.sqlite_path()
    }

    pub async fn stop(&mut self) {
        match &mut self.served {
            Served::InProcess { shutdown, task, .. } => {
                if let Some(tx) = shutdown.take() {
                    let _ = tx.send(());
                }
                if let Some(served) = task.take() {
                    served.await.unwrap();
                }
            }
            Served::Process(child) => {
                // SIGTERM, as a service manager stops it: it finishes what it was answering.
                // SAFETY: kill(2) on the process this test started and has not reaped.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
                let status = child.wait().unwrap();
                assert!(status.success(), "petstore-server stopped with {status}");
            }
        }
    }

    /// Creates a category and returns its id.
    pub async fn category(&self, name: &str) -> i64 {
        let reply = self.post("/categories", serde_json::json!({ "name": name })).await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        reply.body["id"].as_i64().unwrap()
    }

    /// Creates a pet with `stock` in stock and returns its id.
    pub async fn pet_with_stock(&self, name: &str, stock: i64) -> i64 {
        let reply = self.post("/pets", serde_json::json!({ "name": name })).await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        let id = reply.body["id"].as_i64().unwrap();
        if stock > 0 {
            let reply =
                self.put(&format!("/store/inventory/{id}"), serde_json::json!({ "quantity": stock })).await;
            assert_eq!(reply.status, 200, "{:?}", reply.body);
        }
        id
    }
}
