//! The soak of remote mode's outbox (a sale taken offline reaches the server once): two tills in remote mode on one real `petstore-server`, each behind
//! a proxy of its own that the test switches between forwarding, refusing (the port
//! closed) and black-holing (connections accepted, nothing answered), the server itself
//! stopped and started, the tills SIGKILLed and restarted on their data, and sales all the
//! while from a few clients per till through its local API. At the end every sale a till
//! accepted must be on the server exactly once, or in that till's "needs attention", none
//! that it refused may be, and the stock must add up.
//!
//! Each client is a clerk of the shop, a cashier with a PIN on the server, signed in at
//! its till's local API (`POST /staff/sessions`) against the staff the till keeps, online or
//! not; signed in again when the till was restarted (its sessions' proof keys were in its
//! memory). Each sale is `POST /store/orders {petId, quantity, complete: true}` with the
//! clerk's `Petstore-Staff` session and an
//! `Idempotency-Key` of its own, sent again with the same key until it gets an answer (the
//! till killed under it, or not listening yet): `201` (the server took it), `202` with
//! `Petstore-Sync: pending` (queued, a provisional id), or `409` (out of stock or sold, as
//! the till saw it). So every key ends with one answer, and the check can be exact: each
//! accepted sale is followed to its order on the server, through the mirror's
//! `provisional_orders` for a queued one, or to its entry in the outbox's "needs attention"
//! (the server refused it on replay: the other till sold that stock). Every order on the
//! server must be one sale's, each sale at most one order, and placed by the clerk who
//! made the sale (the proofs the till sent with it, now or from its outbox, held on the
//! server). Some answered sales are also
//! sent again with their key, as a client that lost its answer would: the answer must
//! name the same order.
//!
//! `PETSTORE_OUTBOX_ROUNDS` rounds (3 by default, 50 in `make soak`); `PETSTORE_CRASH_SEED`
//! repeats the random choices (not the timing). Every 10th round and after the last, the
//! outages are lifted, both outboxes drained (read from the mirror files, read-only), and
//! everything checked, the mirrors too (each must come to hold the server's stock and
//! orders). A check prints what it found wrong and the rounds go on, so that one soak shows
//! every kind of problem; the run fails at its end.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::{free_port, kill, log_file, wait_for};
use crate::harness;

/// Orders the server numbers are below this; a till's provisional ones from it up.
const PROVISIONAL: i64 = 1 << 52;
const PETS: usize = 4;
const CLIENTS_PER_TILL: usize = 3;
/// The full settle and check, every this many rounds (and after the last).
const CHECK_EVERY: usize = 10;
/// How long after the outboxes are sent the mirrors may take to equal the server.
const CONVERGE_WITHIN: Duration = Duration::from_secs(20);
/// A sale that has no answer after this long fails the run.
const ANSWER_WITHIN: Duration = Duration::from_secs(90);

#[test]
#[ignore = "needs the desktop binary and a display: make crash-test"]
fn sales_from_two_tills_reach_the_server_once_through_outages_and_kills() {
    let bin = std::env::var_os("PETSTORE_DESKTOP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(super::SERVER).with_file_name("petstore-desktop"));
    assert!(bin.is_file(), "no {}: build it first (cargo build -p petstore-desktop)", bin.display());
    assert!(
        std::env::var_os("DISPLAY").is_some() && std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some(),
        "run under xvfb-run -a dbus-run-session (make crash-test)"
    );
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let rounds = env("PETSTORE_OUTBOX_ROUNDS").map_or(3, |r| r as usize);
    let seed = env("PETSTORE_CRASH_SEED").unwrap_or_else(|| fastrand::u64(..));
    println!(
        "outbox soak: {rounds} rounds, 2 tills x {CLIENTS_PER_TILL} clients, {PETS} pets, seed {seed} \
         (PETSTORE_CRASH_SEED={seed} repeats its random choices)"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let started = Instant::now();
    runtime.block_on(soak(bin, rounds, seed));
    println!("outbox soak: {rounds} rounds passed in {:.0} s", started.elapsed().as_secs_f64());
}

// ---------------------------------------------------------------------------------------
// The network between a till and the server.

/// What a till's proxy does with its traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    /// Forwards both ways.
    Up,
    /// The port is closed: connecting is refused, and open connections are cut.
    Refused,
    /// Connections are accepted and nothing crosses, either way, until the link is up
    /// again (then what waited is delivered, late) or refused (then it is cut).
    BlackHole,
}

impl Link {
    fn random(rng: &mut fastrand::Rng) -> Self {
        match rng.u8(..4) {
            0 | 1 => Link::Up,
            2 => Link::Refused,
            _ => Link::BlackHole,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Link::Up => "up",
            Link::Refused => "refused",
            Link::BlackHole => "black hole",
        }
    }
}

/// A loopback TCP proxy in front of the server, one per till, on a port that stays the
/// till's whatever port the server has now (`upstream`).
struct Proxy {
    port: u16,
    link: watch::Sender<Link>,
    /// Connections, or bytes, waiting in the black hole now.
    held: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(upstream: Arc<AtomicU16>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (link, receiver) = watch::channel(Link::Up);
        let held = Arc::new(AtomicUsize::new(0));
        let task = tokio::spawn(listen(Some(listener), port, receiver, upstream, held.clone()));
        Self { port, link, held, task }
    }

    fn set(&self, link: Link) {
        self.link.send_replace(link);
    }

    fn held(&self) -> usize {
        self.held.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // The connections end with the sender (their `changed()` fails).
        self.task.abort();
    }
}

async fn listen(
    mut listener: Option<TcpListener>,
    port: u16,
    mut link: watch::Receiver<Link>,
    upstream: Arc<AtomicU16>,
    held: Arc<AtomicUsize>,
) {
    loop {
        let now = *link.borrow_and_update();
        if now == Link::Refused {
            // Closing the listening socket: a connect gets ECONNREFUSED.
            listener = None;
        } else if listener.is_none() {
            listener = Some(bind_again(port).await);
        }
        match &listener {
            None => {
                if link.changed().await.is_err() {
                    return;
                }
            }
            Some(open) => tokio::select! {
                changed = link.changed() => if changed.is_err() { return },
                accepted = open.accept() => if let Ok((socket, _)) = accepted {
                    tokio::spawn(connection(socket, link.clone(), upstream.clone(), held.clone()));
                },
            },
        }
    }
}

/// The proxy's own port again, after a refusal closed it.
async fn bind_again(port: u16) -> TcpListener {
    let since = Instant::now();
    loop {
        match TcpListener::bind(("127.0.0.1", port)).await {
            Ok(listener) => return listener,
            Err(e) if since.elapsed() > Duration::from_secs(10) => {
                panic!("the proxy could not listen on port {port} again: {e}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// Waits while the link is a black hole; answers whether it is up (else refused, or the
/// proxy is gone: cut).
async fn until_up(link: &mut watch::Receiver<Link>, held: &AtomicUsize) -> bool {
    if *link.borrow() == Link::Up {
        return true;
    }
    // Counted while it waits, also when the wait is dropped (the link refused meanwhile).
    struct Held<'a>(&'a AtomicUsize);
    impl Drop for Held<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
    held.fetch_add(1, Ordering::SeqCst);
    let _held = Held(held);
    link.wait_for(|l| *l != Link::BlackHole).await.is_ok_and(|l| *l == Link::Up)
}

async fn connection(
    client: TcpStream,
    mut link: watch::Receiver<Link>,
    upstream: Arc<AtomicU16>,
    held: Arc<AtomicUsize>,
) {
    if !until_up(&mut link, &held).await {
        return;
    }
    // The server stopped: the connection closes at once, as a server that is down answers.
    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream.load(Ordering::SeqCst))).await else {
        return;
    };
    let _ = (client.set_nodelay(true), server.set_nodelay(true));
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let out = pump(client_read, server_write, link.clone(), held.clone());
    let back = pump(server_read, client_write, link.clone(), held);
    tokio::select! {
        _ = async { tokio::join!(out, back) } => {}
        _ = link.wait_for(|l| *l == Link::Refused) => {}
    }
}

/// One direction: what is read waits in a black hole until the link is up again.
async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut link: watch::Receiver<Link>,
    held: Arc<AtomicUsize>,
) {
    let mut buffer = vec![0; 16 * 1024];
    loop {
        let n = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if !until_up(&mut link, &held).await || to.write_all(&buffer[..n]).await.is_err() {
            return;
        }
    }
    let _ = to.shutdown().await;
}

// ---------------------------------------------------------------------------------------
// The processes.

/// The real `petstore-server` on its own SQLite file, on a new loopback port at each start.
/// Requests reach it through the tills' proxies, with the proxy's port in their `Host`:
/// `--allowed-host 127.0.0.1` lets them in (a loopback name is allowed with the server's
/// own port only).
struct Server {
    dir: TempDir,
    child: Option<Child>,
}

impl Server {
    fn database(&self) -> PathBuf {
        self.dir.path().join("petstore.db")
    }

    /// Starts it and answers its base URL.
    fn start(&mut self) -> String {
        let port = free_port();
        let log = self.dir.path().join("server.log");
        let (out, err) = log_file(&log);
        let mut child = Command::new(super::SERVER)
            .arg("--db")
            .arg(self.database())
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--allowed-host", "127.0.0.1"])
            .env("PETSTORE_API_KEY", super::KEY)
            .env("RUST_LOG", "warn")
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap();
        wait_for(port, &mut child, &log, Duration::from_secs(20));
        self.child = Some(child);
        format!("http://127.0.0.1:{port}")
    }

    /// SIGKILL: a server that stops without a word.
    fn kill(&mut self) {
        kill(&mut self.child);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Where a till's local API is now (a new port at each start) and its key.
#[derive(Clone, Default)]
struct Endpoint {
    base: String,
    key: String,
}

/// The desktop app in remote mode on the server through its proxy, with its data in a
/// temporary directory kept across its restarts.
struct Till {
    number: usize,
    bin: PathBuf,
    dir: TempDir,
    remote: String,
    child: Option<Child>,
    endpoint: Arc<RwLock<Endpoint>>,
    /// Every local API key it had (one, unless a restart made another).
    keys: Vec<String>,
}

impl Till {
    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("app.log")
    }

    /// Starts the app and waits until its local API listens.
    fn start(&mut self) {
        let port = free_port();
        let home = self.dir.path().join("home");
        std::fs::create_dir_all(self.data()).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let (out, err) = log_file(&self.log());
        let mut child = super::desktop_app(&self.bin, &self.data(), port, &home)
            .env("PETSTORE_REMOTE_URL", &self.remote)
            .env("PETSTORE_REMOTE_KEY", super::KEY)
            .env_remove("PETSTORE_REMOTE_KEY_FILE")
            // The replay's refusals ("needs attention") are logged at info.
            .env("RUST_LOG", "warn,petstore::mirror=info")
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap();
        wait_for(port, &mut child, &self.log(), Duration::from_secs(60));
        self.child = Some(child);
        let key = std::fs::read_to_string(self.data().join("local-api.key")).expect("the app wrote its key");
        let key = key.trim().to_owned();
        if !self.keys.contains(&key) {
            self.keys.push(key.clone());
        }
        *self.endpoint.write().unwrap() = Endpoint { base: format!("http://127.0.0.1:{port}"), key };
    }

    fn kill(&mut self) {
        kill(&mut self.child);
    }

    /// The mirror of the one remote it has: `<data>/mirrors/*.db`.
    fn mirror(&self) -> Option<PathBuf> {
        let dir = self.data().join("mirrors");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "db"))
            .collect();
        assert!(files.len() <= 1, "till {}: more than one mirror: {files:?}", self.number);
        files.pop()
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.log()).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for Till {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What a till's mirror file holds about the outbox, read-only while the app runs.
#[derive(Default)]
struct MirrorView {
    /// The feed position: `None` until the first full copy ended.
    position: Option<i64>,
    pending: i64,
    /// Sales the server refused on replay: provisional id to (pet, quantity, reason).
    attention: HashMap<i64, (i64, i64, String)>,
    /// Anything else needing attention (this soak queues only sales).
    other_attention: Vec<String>,
    /// Provisional id to the server's.
    provisional: HashMap<i64, i64>,
    stock: BTreeMap<i64, i64>,
    orders: HashSet<i64>,
}

fn read_mirror(path: &Path) -> rusqlite::Result<MirrorView> {
    let c = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    c.busy_timeout(Duration::from_secs(5))?;
    let mut view = MirrorView::default();
    let tables: i64 = c.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name IN ('mirror_state', 'outbox')",
        [],
        |r| r.get(0),
    )?;
    if tables < 2 {
        return Ok(view);
    }
    view.position = c.query_row("SELECT position FROM mirror_state", [], |r| r.get(0)).unwrap_or(None);
    let mut entries =
        c.prepare("SELECT seq, state, command, pet_id, order_id, stock_delta, reason FROM outbox")?;
    let rows = entries.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<i64>>(3)?,
            r.get::<_, Option<i64>>(4)?,
            r.get::<_, i64>(5)?,
            r.get::<_, Option<String>>(6)?,
        ))
    })?;
    for row in rows {
        let (seq, state, command, pet, order, delta, reason) = row?;
        if state == "pending" {
            view.pending += 1;
            continue;
        }
        let parsed = serde_json::from_str::<Value>(&command).unwrap_or_default();
        // The quantity the sale asked for (a write queued unsure of the server reserved
        // no stock here, so its `stock_delta` is 0).
        let quantity = parsed["order"]["quantity"].as_i64().unwrap_or(-delta);
        match (parsed["kind"].as_str(), pet, order) {
            (Some("placeOrder"), Some(pet), Some(order)) => {
                view.attention.insert(order, (pet, quantity, reason.unwrap_or_default()));
            }
            _ => view.other_attention.push(format!("{seq}: {command} ({})", reason.unwrap_or_default())),
        }
    }
    view.provisional = c
        .prepare("SELECT provisional, server FROM provisional_orders")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    view.stock = c
        .prepare("SELECT id, stock FROM pets")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    view.orders =
        c.prepare("SELECT id FROM orders")?.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    Ok(view)
}

// ---------------------------------------------------------------------------------------
// Sales.

#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    /// 201: the server took it; its id.
    Placed(i64),
    /// 202, `Petstore-Sync: pending`: queued at the till; the provisional id.
    Queued(i64),
    /// A 4xx: the status and the error's code.
    Refused(u16, String),
}

impl Answer {
    fn accepted(&self) -> bool {
        !matches!(self, Answer::Refused(..))
    }
}

struct Sale {
    round: usize,
    till: usize,
    /// The clerk who made it (a staff id on the server).
    clerk: i64,
    key: String,
    pet: i64,
    quantity: i64,
    answer: Answer,
}

/// One sale's requests: how many went unanswered before the one that was answered.
#[derive(Default, Clone, Copy)]
struct Tries {
    /// Sent, and the connection broke before the answer (the till killed under it).
    cut_off: usize,
    /// The till was not listening (killed, starting again).
    not_listening: usize,
}

/// A cashier of the shop, one per client, and their session at the till, if signed in.
#[derive(Clone)]
struct Clerk {
    id: i64,
    pin: String,
    session: Option<String>,
}

impl Clerk {
    /// Signs in at the till's local API; `None` while the till cannot say yes or no (not
    /// listening, cut off, not holding the server's staff yet): try again.
    async fn sign_in(
        &mut self,
        http: &reqwest::Client,
        base: &str,
        api_key: &str,
        till: usize,
    ) -> Option<()> {
        let reply = http
            .post(format!("{base}/staff/sessions"))
            .bearer_auth(api_key)
            .json(&json!({ "staffId": self.id, "pin": self.pin }))
            .send()
            .await
            .ok()?;
        let status = reply.status().as_u16();
        let body: Value = reply.json().await.ok()?;
        match status {
            201 => {
                let token = body["token"].as_str();
                self.session = Some(
                    token
                        .unwrap_or_else(|| panic!("till {till}: a sign-in without a token: {body}"))
                        .to_owned(),
                );
                Some(())
            }
            500.. => None,
            _ => panic!("till {till}: clerk {} could not sign in: {status} {body}", self.id),
        }
    }
}

/// Sends one sale until it gets an answer, always with the same key and body, as `clerk`
/// (signing them in first, and again when the till forgot them).
async fn sell(
    http: &reqwest::Client,
    endpoint: &RwLock<Endpoint>,
    till: usize,
    clerk: &mut Clerk,
    key: &str,
    pet: i64,
    quantity: i64,
) -> (Answer, Tries) {
    let body = json!({ "petId": pet, "quantity": quantity, "complete": true });
    let mut tries = Tries::default();
    let since = Instant::now();
    loop {
        assert!(
            since.elapsed() < ANSWER_WITHIN,
            "till {till}: sale {key} got no answer within {ANSWER_WITHIN:?} ({} cut off, {} not listening)",
            tries.cut_off,
            tries.not_listening
        );
        let Endpoint { base, key: api_key } = endpoint.read().unwrap().clone();
        let Some(session) = clerk.session.clone() else {
            if clerk.sign_in(http, &base, &api_key, till).await.is_none() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            continue;
        };
        let request = http
            .post(format!("{base}/store/orders"))
            .bearer_auth(&api_key)
            .header("Petstore-Staff", session)
            .header("Idempotency-Key", key)
            .json(&body);
        let reply = match request.send().await {
            Ok(reply) => reply,
            Err(e) => {
                assert!(!e.is_timeout(), "till {till}: sale {key}: the local API did not answer: {e}");
                if e.is_connect() {
                    tries.not_listening += 1;
                } else {
                    tries.cut_off += 1;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let status = reply.status().as_u16();
        let sync = reply.headers().get("petstore-sync").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let bytes = match reply.bytes().await {
            Ok(bytes) => bytes,
            Err(_) => {
                tries.cut_off += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let reply: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let order = || {
            let id =
                reply["id"].as_i64().unwrap_or_else(|| panic!("till {till}: sale {key}: {status} {reply}"));
            assert_eq!(
                (reply["petId"].as_i64(), reply["quantity"].as_i64(), reply["complete"].as_bool()),
                (Some(pet), Some(quantity), Some(true)),
                "till {till}: sale {key}: {status} names another order: {reply}"
            );
            id
        };
        let answer = match status {
            201 => {
                let id = order();
                assert!(id < PROVISIONAL, "till {till}: sale {key}: 201 with a provisional id: {reply}");
                Answer::Placed(id)
            }
            202 => {
                let id = order();
                assert!(id >= PROVISIONAL, "till {till}: sale {key}: 202 with a server id: {reply}");
                assert_eq!(
                    sync.as_deref(),
                    Some("pending"),
                    "till {till}: sale {key}: 202 without Petstore-Sync"
                );
                Answer::Queued(id)
            }
            503 => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            // The session is gone (the till restarted): nothing was written; sign in again
            // and send the same sale.
            401 => {
                clerk.session = None;
                continue;
            }
            // The shop's refusals (a fresh sale may only be out of stock, `client` checks).
            400 | 404 | 409 => Answer::Refused(status, reply["code"].as_str().unwrap_or("").to_owned()),
            _ => panic!("till {till}: sale {key} ({quantity} of pet {pet}): {status} {reply}"),
        };
        return (answer, tries);
    }
}

/// A till's share of a round.
#[derive(Default)]
struct TillRound {
    sales: Vec<Sale>,
    tries: Tries,
    slowest: Duration,
}

#[allow(clippy::too_many_arguments)]
async fn client(
    http: reqwest::Client,
    endpoint: Arc<RwLock<Endpoint>>,
    pets: Vec<i64>,
    mut clerk: Clerk,
    round: usize,
    till: usize,
    client: usize,
    seed: u64,
    until: Instant,
) -> (usize, TillRound) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut mine = TillRound::default();
    let mut n = 0;
    while Instant::now() < until {
        n += 1;
        let key = format!("soak-{seed:016x}-r{round}-t{till}-c{client}-{n}");
        let pet = pets[rng.usize(..pets.len())];
        let quantity = rng.i64(1..=3);
        let asked = Instant::now();
        let (answer, tries) = sell(&http, &endpoint, till, &mut clerk, &key, pet, quantity).await;
        if let Answer::Refused(status, code) = &answer {
            assert!(
                *status == 409 && (code == "insufficient_stock" || code == "pet_not_available"),
                "till {till}: sale {key} ({quantity} of pet {pet}) refused: {status} {code}"
            );
        }
        mine.slowest = mine.slowest.max(asked.elapsed());
        mine.tries.cut_off += tries.cut_off;
        mine.tries.not_listening += tries.not_listening;
        // A clerk told "sold out" turns to another customer a little later.
        let pause = if answer.accepted() { rng.u64(10..=60) } else { rng.u64(100..=300) };
        mine.sales.push(Sale { round, till, clerk: clerk.id, key, pet, quantity, answer });
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
    (till, mine)
}

// ---------------------------------------------------------------------------------------
// The soak.

/// A round's random choices.
struct Plan {
    /// Each till's link, in the first and the second part of the round.
    links: [[Link; 2]; 2],
    /// Whether the server runs, in each part.
    server: [bool; 2],
    load: Duration,
    switch_at: Duration,
    /// Which till is killed (and started again at once), when.
    kill: Option<(usize, Duration)>,
}

fn plan(round: usize, rng: &mut fastrand::Rng) -> Plan {
    let load = Duration::from_millis(rng.u64(1500..=3500));
    let mut plan = Plan {
        links: [[Link::random(rng), Link::random(rng)], [Link::random(rng), Link::random(rng)]],
        server: [rng.u8(..5) > 0, rng.u8(..5) > 0],
        load,
        switch_at: load.mul_f64(0.3 + 0.4 * rng.f64()),
        kill: rng.bool().then(|| (rng.usize(..2), load.mul_f64(0.1 + 0.85 * rng.f64()))),
    };
    // The first rounds cover each kind of outage and a kill of each till, so that even the
    // short run of `make test` has them.
    match round {
        // Till 1 killed while its clients wait in the black hole: answers cut off.
        1 => {
            plan.links[0] = [Link::BlackHole, Link::Refused];
            plan.server[0] = true;
            plan.switch_at = load.mul_f64(0.7);
            plan.kill = Some((0, load.mul_f64(0.5)));
        }
        // The server stopped mid-round, till 2 killed.
        2 => {
            plan.server = [true, false];
            plan.kill = Some((1, load.mul_f64(0.5)));
        }
        _ => {}
    }
    plan
}

struct Soak {
    http: reqwest::Client,
    server: Arc<Mutex<Server>>,
    server_up: bool,
    /// The server's base URL now (a new port at each start), which the proxies follow.
    server_base: String,
    upstream: Arc<AtomicU16>,
    tills: Vec<Arc<Mutex<Till>>>,
    endpoints: Vec<Arc<RwLock<Endpoint>>>,
    proxies: Vec<Proxy>,
    pets: Vec<i64>,
    /// Each till's clerks, one per client: signed in at the start of each round.
    clerks: Vec<Vec<Clerk>>,
    /// Every unit the test counted in, per pet.
    stocked: BTreeMap<i64, i64>,
    sales: Vec<Sale>,
    /// Answered sales sent again with their key: the sale's index and the answer.
    resent: Vec<(usize, Answer, String)>,
    kills: usize,
    /// Answers lost to kills over the run, every one of them sent again.
    cut_off: usize,
    /// What the checks found wrong, each once.
    problems: Vec<String>,
}

async fn soak(bin: PathBuf, rounds: usize, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
    let server = Server { dir: tempfile::tempdir().unwrap(), child: None };
    let server = Arc::new(Mutex::new(server));
    let server_base = blocking(&server, Server::start).await;
    let upstream = Arc::new(AtomicU16::new(port_of(&server_base)));
    let mut soak = Soak {
        http,
        server,
        server_up: true,
        server_base,
        upstream: upstream.clone(),
        tills: Vec::new(),
        endpoints: Vec::new(),
        proxies: Vec::new(),
        pets: Vec::new(),
        clerks: Vec::new(),
        stocked: BTreeMap::new(),
        sales: Vec::new(),
        resent: Vec::new(),
        kills: 0,
        cut_off: 0,
        problems: Vec::new(),
    };
    for i in 0..PETS {
        let (status, pet) = soak
            .server_call(reqwest::Method::POST, "/pets", Some(json!({ "name": format!("Soak pet {i}") })))
            .await;
        assert_eq!(status, 201, "{pet}");
        let id = pet["id"].as_i64().unwrap();
        soak.pets.push(id);
        soak.stocked.insert(id, 0);
    }
    soak.restock(&mut rng).await;
    // The shop's staff: its owner needs a PIN before anyone else joins.
    let owner_pin = Some(json!({ "pin": "9999" }));
    let (status, owner) = soak.server_call(reqwest::Method::PATCH, "/staff/1", owner_pin).await;
    assert_eq!(status, 200, "{owner}");
    for till in 1..=2 {
        let mut clerks = Vec::new();
        for client in 1..=CLIENTS_PER_TILL {
            let pin = format!("{till}{client}{till}{client}");
            let member =
                json!({ "name": format!("Till {till} clerk {client}"), "role": "cashier", "pin": pin });
            let (status, member) = soak.server_call(reqwest::Method::POST, "/staff", Some(member)).await;
            assert_eq!(status, 201, "{member}");
            clerks.push(Clerk { id: member["id"].as_i64().unwrap(), pin, session: None });
        }
        soak.clerks.push(clerks);
    }

    for number in 1..=2 {
        let proxy = Proxy::start(upstream.clone()).await;
        let endpoint = Arc::new(RwLock::new(Endpoint::default()));
        let till = Till {
            number,
            bin: bin.clone(),
            dir: tempfile::tempdir().unwrap(),
            remote: format!("http://127.0.0.1:{}", proxy.port),
            child: None,
            endpoint: endpoint.clone(),
            keys: Vec::new(),
        };
        let till = Arc::new(Mutex::new(till));
        blocking(&till, Till::start).await;
        soak.tills.push(till);
        soak.endpoints.push(endpoint);
        soak.proxies.push(proxy);
    }
    // Each till's first copy of the shop, before anything goes wrong.
    let since = Instant::now();
    for till in 0..2 {
        loop {
            let view = soak.mirror(till);
            if view.is_some_and(|v| v.position.is_some()) {
                break;
            }
            assert!(
                since.elapsed() < Duration::from_secs(60),
                "till {}: no first copy of the shop within 60 s:\n{}",
                till + 1,
                soak.tills[till].lock().unwrap().log_tail()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    println!("  both tills have their first copy of the shop after {} ms", since.elapsed().as_millis());

    for round in 1..=rounds {
        let plan = plan(round, &mut rng);
        soak.round(round, &plan, rng.u64(..)).await;
        if round % CHECK_EVERY == 0 || round == rounds {
            soak.settle_and_check(round).await;
        }
    }

    let accepted = soak.sales.iter().filter(|s| s.answer.accepted()).count();
    let queued = soak.sales.iter().filter(|s| matches!(s.answer, Answer::Queued(_))).count();
    println!(
        "outbox soak: {} sales, {accepted} accepted ({queued} of them queued), {} refused; {} kills, {} answers \
         cut off by them and sent again; {} answered sales sent again",
        soak.sales.len(),
        soak.sales.len() - accepted,
        soak.kills,
        soak.cut_off,
        soak.resent.len()
    );
    let problems = &soak.problems;
    assert!(
        problems.is_empty(),
        "{} problems over the run (each printed under the check that found it){}:\n{}",
        problems.len(),
        if problems.len() > 40 { ", the first 40" } else { "" },
        problems[..problems.len().min(40)].join("\n")
    );
    // A run that queued nothing or killed nothing would pass whatever the outbox does.
    assert!(queued > 0, "no sale was queued: the outages never reached a till");
    assert!(soak.kills > 0 && soak.cut_off > 0, "no kill cut an answer off");
    for till in &soak.tills {
        till.lock().unwrap().kill();
    }
    blocking(&soak.server, |s| s.kill()).await;
}

/// Runs `f` on the process behind `what` on the blocking pool (starting one waits).
async fn blocking<T: Send + 'static, R: Send + 'static>(
    what: &Arc<Mutex<T>>,
    f: impl FnOnce(&mut T) -> R + Send + 'static,
) -> R {
    let what = what.clone();
    tokio::task::spawn_blocking(move || f(&mut what.lock().unwrap())).await.unwrap()
}

fn port_of(base: &str) -> u16 {
    base.rsplit(':').next().and_then(|p| p.parse().ok()).unwrap_or_else(|| panic!("no port in {base}"))
}

impl Soak {
    /// A request to the server itself (not through a proxy).
    async fn server_call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request =
            self.http.request(method, format!("{}{path}", self.server_base)).bearer_auth(super::KEY);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let reply = request.send().await.unwrap_or_else(|e| panic!("the server: {path}: {e}"));
        let status = reply.status().as_u16();
        (status, reply.json().await.unwrap_or(Value::Null))
    }

    async fn start_server(&mut self) {
        if !self.server_up {
            let base = blocking(&self.server, Server::start).await;
            self.upstream.store(port_of(&base), Ordering::SeqCst);
            self.server_base = base;
            self.server_up = true;
        }
    }

    async fn stop_server(&mut self) {
        if self.server_up {
            blocking(&self.server, |s| s.kill()).await;
            self.server_up = false;
        }
    }

    /// Brings some pets' stock up, on the server (the tills hear of it when they can);
    /// answers the units added.
    async fn restock(&mut self, rng: &mut fastrand::Rng) -> i64 {
        let mut added = 0;
        for &pet in &self.pets.clone() {
            let (status, item) =
                self.server_call(reqwest::Method::GET, &format!("/store/inventory/{pet}"), None).await;
            assert_eq!(status, 200, "{item}");
            let target = rng.i64(20..=60);
            let delta = target - item["quantity"].as_i64().unwrap();
            if delta <= 0 {
                continue;
            }
            let body = json!({ "delta": delta, "reason": "Soak delivery" });
            let (status, item) = self
                .server_call(
                    reqwest::Method::POST,
                    &format!("/store/inventory/{pet}/adjustments"),
                    Some(body),
                )
                .await;
            assert_eq!(status, 200, "restock pet {pet} by {delta}: {item}");
            *self.stocked.get_mut(&pet).unwrap() += delta;
            added += delta;
        }
        added
    }

    fn mirror(&self, till: usize) -> Option<MirrorView> {
        let path = self.tills[till].lock().unwrap().mirror()?;
        read_mirror(&path).ok()
    }

    async fn apply(&mut self, links: [Link; 2], server: bool) {
        for (proxy, link) in self.proxies.iter().zip(links) {
            proxy.set(link);
        }
        if server {
            self.start_server().await;
        } else {
            self.stop_server().await;
        }
    }

    async fn round(&mut self, round: usize, plan: &Plan, seed: u64) {
        let began = Instant::now();
        let mut rng = fastrand::Rng::with_seed(seed);
        // The restock needs the server; it may stop again straight after.
        self.start_server().await;
        let restocked = self.restock(&mut rng).await;
        self.apply(plan.links[0], plan.server[0]).await;

        let start = Instant::now();
        let until = start + plan.load;
        let mut clients = JoinSet::new();
        for till in 0..2 {
            for c in 0..CLIENTS_PER_TILL {
                let args = (self.http.clone(), self.endpoints[till].clone(), self.pets.clone());
                let clerk = self.clerks[till][c].clone();
                clients.spawn(client(
                    args.0,
                    args.1,
                    args.2,
                    clerk,
                    round,
                    till + 1,
                    c + 1,
                    rng.u64(..),
                    until,
                ));
            }
        }
        let mut events = vec![(plan.switch_at, None)];
        if let Some((till, at)) = plan.kill {
            events.push((at, Some(till)));
        }
        events.sort_by_key(|e| e.0);
        let mut restart = None;
        for (at, event) in events {
            tokio::time::sleep_until((start + at).into()).await;
            match event {
                None => self.apply(plan.links[1], plan.server[1]).await,
                Some(till) => {
                    let handle = self.tills[till].clone();
                    restart = Some((
                        till,
                        tokio::task::spawn_blocking(move || {
                            let mut till = handle.lock().unwrap();
                            till.kill();
                            let started = Instant::now();
                            till.start();
                            started.elapsed()
                        }),
                    ));
                    self.kills += 1;
                }
            }
        }
        let restarted = match restart {
            Some((till, task)) => Some((till, task.await.unwrap())),
            None => None,
        };
        let mut tills = [TillRound::default(), TillRound::default()];
        while let Some(done) = clients.join_next().await {
            let (till, done) = done.expect("a client saw something it must not");
            let share = &mut tills[till - 1];
            share.tries.cut_off += done.tries.cut_off;
            share.tries.not_listening += done.tries.not_listening;
            share.slowest = share.slowest.max(done.slowest);
            share.sales.extend(done.sales);
        }

        // A client that lost an answer it had, sending the sale again: the same order.
        // It happens in the round's last state, which the failure's message names.
        let mut resent = Vec::new();
        for (till, share) in tills.iter().enumerate() {
            let mut accepted: Vec<&Sale> = share.sales.iter().filter(|s| s.answer.accepted()).collect();
            rng.shuffle(&mut accepted);
            for sale in accepted.into_iter().take(2) {
                let endpoint = &self.endpoints[till];
                let mut clerk = self.clerks[till].iter().find(|c| c.id == sale.clerk).unwrap().clone();
                let (answer, _) =
                    sell(&self.http, endpoint, till + 1, &mut clerk, &sale.key, sale.pet, sale.quantity)
                        .await;
                let when = format!(
                    "in round {round}, its link {}, the server {}",
                    plan.links[1][till].name(),
                    if plan.server[1] { "up" } else { "stopped" }
                );
                resent.push((sale.key.clone(), answer, when));
            }
        }

        let mut line = format!("round {round}: links");
        for till in 0..2 {
            let (a, b) = (plan.links[0][till], plan.links[1][till]);
            let _ = write!(
                line,
                " till {} {}{},",
                till + 1,
                a.name(),
                if a == b { String::new() } else { format!(" -> {}", b.name()) }
            );
        }
        let server = |up: bool| if up { "up" } else { "stopped" };
        let _ = write!(line, " server {}", server(plan.server[0]));
        if plan.server[0] != plan.server[1] {
            let _ = write!(line, " -> {}", server(plan.server[1]));
        }
        let _ =
            write!(line, " (switch at {} ms of {} ms)", plan.switch_at.as_millis(), plan.load.as_millis());
        if let (Some((till, at)), Some((_, took))) = (plan.kill, restarted) {
            let _ = write!(
                line,
                "; till {} killed at {} ms, listening again {} ms later",
                till + 1,
                at.as_millis(),
                took.as_millis()
            );
        }
        let _ = write!(line, "; restocked +{restocked}");
        for (till, share) in tills.iter().enumerate() {
            let count = |f: &dyn Fn(&Answer) -> bool| share.sales.iter().filter(|s| f(&s.answer)).count();
            let _ = write!(
                line,
                "\n    till {}: {} sales: {} placed (201), {} queued (202), {} refused (409); {} answers cut off and sent again, {} tries while not listening; slowest answer {} ms",
                till + 1,
                share.sales.len(),
                count(&|a| matches!(a, Answer::Placed(_))),
                count(&|a| matches!(a, Answer::Queued(_))),
                count(&|a| matches!(a, Answer::Refused(..))),
                share.tries.cut_off,
                share.tries.not_listening,
                share.slowest.as_millis()
            );
            self.cut_off += share.tries.cut_off;
        }
        let _ = write!(
            line,
            "\n    {} answered sales sent again with their key; round took {} ms",
            resent.len(),
            began.elapsed().as_millis()
        );
        println!("{line}");

        let [one, two] = tills;
        let first = self.sales.len();
        self.sales.extend(one.sales);
        self.sales.extend(two.sales);
        let index: HashMap<&str, usize> =
            self.sales[first..].iter().enumerate().map(|(i, s)| (s.key.as_str(), first + i)).collect();
        let resent: Vec<(usize, Answer, String)> =
            resent.into_iter().map(|(key, answer, when)| (index[key.as_str()], answer, when)).collect();
        self.resent.extend(resent);
    }

    /// Lifts every outage, waits until both outboxes are sent and the server stops taking
    /// orders, then checks everything sold so far.
    async fn settle_and_check(&mut self, round: usize) {
        let began = Instant::now();
        self.apply([Link::Up, Link::Up], true).await;
        let mut quiet_since: Option<(Instant, i64)> = None;
        loop {
            let views: Vec<Option<MirrorView>> = (0..2).map(|t| self.mirror(t)).collect();
            let pending: Vec<i64> = views.iter().map(|v| v.as_ref().map_or(-1, |v| v.pending)).collect();
            let held: usize = self.proxies.iter().map(Proxy::held).sum();
            let orders = server_order_count(&self.server_db());
            if pending == [0, 0] && held == 0 {
                match quiet_since {
                    Some((since, count)) if count == orders => {
                        if since.elapsed() > Duration::from_millis(1500) {
                            break;
                        }
                    }
                    _ => quiet_since = Some((Instant::now(), orders)),
                }
            } else {
                quiet_since = None;
            }
            if began.elapsed() > Duration::from_secs(120) {
                let tails: Vec<String> = self.tills.iter().map(|t| t.lock().unwrap().log_tail()).collect();
                panic!(
                    "check after round {round}: the outboxes still hold {pending:?} writes, {held} connections wait in \
                     a proxy, 120 s after every outage was lifted\n--- till 1:\n{}\n--- till 2:\n{}",
                    tails[0], tails[1]
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let drained = began.elapsed();
        let views: Vec<MirrorView> =
            (0..2).map(|t| self.mirror(t).unwrap_or_else(|| panic!("till {}: no mirror", t + 1))).collect();
        let snapshot = harness::sqlite_snapshot(&self.server_db());
        let (report, problems) = check(self, &views, &snapshot);

        // The mirrors come to show the server's shop: its stock, its orders, nothing queued.
        let converging = Instant::now();
        let mut problems = problems;
        loop {
            let snapshot = harness::sqlite_snapshot(&self.server_db());
            let stock: BTreeMap<i64, i64> = snapshot.pets.iter().map(|(id, p)| (*id, p.0)).collect();
            let orders: HashSet<i64> = snapshot.orders.keys().copied().collect();
            let views: Vec<MirrorView> = (0..2).filter_map(|t| self.mirror(t)).collect();
            let differ: Vec<String> = views
                .iter()
                .enumerate()
                .filter(|(_, v)| v.stock != stock || v.orders != orders)
                .map(|(t, v)| {
                    format!(
                        "till {}'s mirror differs from the server {} s after the outboxes were sent (check after \
                         round {round}): stock {:?} (server {stock:?}), {} orders not on the server {:?}, {} server \
                         orders missing",
                        t + 1,
                        CONVERGE_WITHIN.as_secs(),
                        v.stock,
                        v.orders.difference(&orders).count(),
                        v.orders.difference(&orders).take(5).collect::<Vec<_>>(),
                        orders.difference(&v.orders).count()
                    )
                })
                .collect();
            if differ.is_empty() && views.len() == 2 {
                break;
            }
            if converging.elapsed() > CONVERGE_WITHIN {
                if views.len() < 2 {
                    problems.push(format!("check after round {round}: a till's mirror could not be read"));
                }
                problems.extend(differ);
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        println!(
            "  check after round {round}: outboxes sent {} ms after the outages were lifted, mirrors compared with \
             the server {} ms after that\n{report}",
            drained.as_millis(),
            converging.elapsed().as_millis()
        );
        // The run goes on, so that one soak shows every kind of problem; it fails at the end.
        let new: Vec<String> = problems.into_iter().filter(|p| !self.problems.contains(p)).collect();
        for problem in new.iter().take(40) {
            println!("    PROBLEM: {problem}");
        }
        if new.len() > 40 {
            println!("    ... and {} more new problems", new.len() - 40);
        }
        self.problems.extend(new);
    }

    fn server_db(&self) -> PathBuf {
        self.server.lock().unwrap().database()
    }
}

fn server_order_count(db: &Path) -> i64 {
    let c = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    c.busy_timeout(Duration::from_secs(5)).unwrap();
    c.query_row("SELECT count(*) FROM orders", [], |r| r.get(0)).unwrap()
}

/// Where an accepted sale ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// The server's order.
    Order(i64),
    /// Refused by the server on replay: the provisional id, in "needs attention".
    Attention(i64),
}

/// Holds every sale so far against the server's database and the mirrors; answers the
/// figures, or fails with every discrepancy found.
fn check(soak: &Soak, views: &[MirrorView], snapshot: &harness::Snapshot) -> (String, Vec<String>) {
    let mut problems: Vec<String> =
        snapshot.damage.iter().map(|d| format!("the server's database: {d}")).collect();
    for (t, view) in views.iter().enumerate() {
        if !view.other_attention.is_empty() {
            problems.push(format!(
                "till {}: writes need attention that no sale made: {:?}",
                t + 1,
                view.other_attention
            ));
        }
    }
    let resolve = |till: usize, answer: &Answer| -> Result<Outcome, String> {
        let view = &views[till - 1];
        match answer {
            Answer::Placed(id) => Ok(Outcome::Order(*id)),
            Answer::Queued(p) => match (view.provisional.get(p), view.attention.contains_key(p)) {
                (Some(id), false) => Ok(Outcome::Order(*id)),
                (None, true) => Ok(Outcome::Attention(*p)),
                (Some(id), true) => {
                    Err(format!("provisional order {p} became order {id} and also needs attention"))
                }
                (None, false) => {
                    Err(format!("provisional order {p} neither reached the server nor needs attention"))
                }
            },
            Answer::Refused(..) => Err("refused".to_owned()),
        }
    };
    let describe = |s: &Sale| {
        format!(
            "sale {} (round {}, till {}, clerk {}, {} of pet {}, answered {:?})",
            s.key, s.round, s.till, s.clerk, s.quantity, s.pet, s.answer
        )
    };
    let makers = server_makers(&soak.server_db());

    // Every accepted sale: one order on the server, with its pet and quantity, completed; or
    // needing attention.
    let mut claimed: HashMap<i64, usize> = HashMap::new();
    let mut attention: HashSet<(usize, i64)> = HashSet::new();
    let mut outcomes: HashMap<usize, Outcome> = HashMap::new();
    #[derive(Default)]
    struct PetFigures {
        accepted: i64,
        attention: i64,
        units: i64,
        refused: i64,
    }
    let mut per_pet: BTreeMap<i64, PetFigures> = BTreeMap::new();
    for (i, sale) in soak.sales.iter().enumerate() {
        let figures = per_pet.entry(sale.pet).or_default();
        if !sale.answer.accepted() {
            figures.refused += 1;
            continue;
        }
        figures.accepted += 1;
        match resolve(sale.till, &sale.answer) {
            Err(why) => problems.push(format!("{}: {why}", describe(sale))),
            Ok(Outcome::Attention(p)) => {
                figures.attention += 1;
                attention.insert((sale.till, p));
                let (pet, quantity, reason) = &views[sale.till - 1].attention[&p];
                if (*pet, *quantity) != (sale.pet, sale.quantity) {
                    problems.push(format!("{}: needs attention as {quantity} of pet {pet}", describe(sale)));
                }
                // Only for the stock the other till sold (`domain::status_rules`' words), never
                // for who made it: the clerk's proofs must hold on the server.
                if !(reason.contains("in stock;") || reason.contains(", not available")) {
                    problems
                        .push(format!("{}: needs attention for another reason: {reason}", describe(sale)));
                }
                outcomes.insert(i, Outcome::Attention(p));
            }
            Ok(Outcome::Order(id)) => {
                figures.units += sale.quantity;
                outcomes.insert(i, Outcome::Order(id));
                if let Some(other) = claimed.insert(id, i) {
                    problems.push(format!(
                        "{} and {} are both order {id}",
                        describe(&soak.sales[other]),
                        describe(sale)
                    ));
                }
                match snapshot.orders.get(&id) {
                    None => problems.push(format!("{}: order {id} is not on the server", describe(sale))),
                    Some(&(pet, quantity, complete))
                        if (pet, quantity, complete) != (sale.pet, sale.quantity, true) =>
                    {
                        problems.push(format!(
                            "{}: order {id} on the server is {quantity} of pet {pet}, complete {complete}",
                            describe(sale)
                        ))
                    }
                    Some(_) => {}
                }
                // Who the server says placed it: the clerk, proved by the till's proofs.
                match makers.get(&id) {
                    Some(Some(clerk)) if *clerk == sale.clerk => {}
                    Some(maker) => problems.push(format!(
                        "{}: order {id} on the server was placed by staff member {maker:?}, not the clerk",
                        describe(sale)
                    )),
                    None => {}
                }
            }
        }
    }

    // Every order on the server is one accepted sale's: nothing twice, no refused sale.
    let unexplained: Vec<i64> =
        snapshot.orders.keys().filter(|id| !claimed.contains_key(id)).copied().collect();
    if !unexplained.is_empty() {
        let keys = server_keys(&soak.server_db());
        let forwarded = forwarded_keys(soak);
        for id in &unexplained {
            let (pet, quantity, _) = snapshot.orders[id];
            let whose = match keys.get(id) {
                None => "no Idempotency-Key record names it".to_owned(),
                Some(key) => match forwarded.get(key) {
                    Some(&i) => format!("its Idempotency-Key is that of {}", describe(&soak.sales[i])),
                    None => format!(
                        "placed under Idempotency-Key {key}, which is no sale's key as the local API forwards it"
                    ),
                },
            };
            problems.push(format!(
                "order {id} ({quantity} of pet {pet}) on the server is no accepted sale's: {whose}"
            ));
        }
    }
    // Everything needing attention is an accepted sale's.
    for (t, view) in views.iter().enumerate() {
        for (p, (pet, quantity, reason)) in &view.attention {
            if !attention.contains(&(t + 1, *p)) {
                problems.push(format!(
                    "till {}: provisional order {p} ({quantity} of pet {pet}) needs attention ({reason}) but no accepted sale is it",
                    t + 1
                ));
            }
        }
    }
    // A sale sent again with its key is answered as the first time: the same order, or, a
    // queued one sent since, the server's order it became; once the server refused it on
    // replay, a refusal. Not a new queued write, even one that the server's own
    // Idempotency-Key record turns into the same order on replay: meanwhile the till
    // answered another id and took the stock twice.
    for (i, answer, when) in &soak.resent {
        let sale = &soak.sales[*i];
        let first = outcomes.get(i).copied();
        let again = resolve(sale.till, answer);
        let same = match (&sale.answer, answer) {
            (first_answer, answer) if first_answer == answer => true,
            (Answer::Queued(_), Answer::Placed(_)) => first.is_some() && first == again.clone().ok(),
            (_, Answer::Refused(..)) => matches!(first, Some(Outcome::Attention(_))),
            _ => false,
        };
        if !same {
            problems.push(format!(
                "{} sent again {when} answered {answer:?}, which is {again:?}; the first answer is {first:?}",
                describe(sale)
            ));
        }
    }

    // Stock: never below zero, what was counted in less what the server's orders took.
    let mut table = String::new();
    // The counts per pet follow from the order-by-order checks above; held apart only when
    // those found nothing, so that a failure is told once, by its orders.
    let explained = problems.is_empty();
    for (&pet, &stocked) in &soak.stocked {
        let Some(&(stock, ref status, audited)) = snapshot.pets.get(&pet) else {
            problems.push(format!("pet {pet} is gone from the server"));
            continue;
        };
        let ordered: i64 = snapshot.orders.values().filter(|o| o.0 == pet).map(|o| o.1).sum();
        let orders = snapshot.orders.values().filter(|o| o.0 == pet).count() as i64;
        let figures = per_pet.remove(&pet).unwrap_or_default();
        if stock < 0 || stock + ordered != stocked || audited != stocked {
            problems.push(format!(
                "pet {pet}: stock {stock} + ordered {ordered} != stocked {stocked} (audit trail {audited})"
            ));
        }
        if explained && (orders != figures.accepted - figures.attention || ordered != figures.units) {
            problems.push(format!(
                "pet {pet}: {orders} orders ({ordered} units) on the server, {} sales accepted less {} needing attention ({} units)",
                figures.accepted, figures.attention, figures.units
            ));
        }
        let expected = if stock > 0 { "available" } else { "sold" };
        if status != expected {
            problems.push(format!("pet {pet}: status {status} with stock {stock} and no open orders"));
        }
        let _ = writeln!(
            table,
            "    pet {pet}: {} sales accepted - {} needing attention = {orders} orders on the server ({ordered} units); \
             {} refused; stocked {stocked} - sold {ordered} = stock {stock}",
            figures.accepted, figures.attention, figures.refused
        );
    }
    let accepted = soak.sales.iter().filter(|s| s.answer.accepted()).count();
    let verdict = if problems.is_empty() {
        format!(
            "none twice, no refused sale placed, each placed by its clerk ({} clerks); {} answered sales sent \
             again named the same order",
            soak.clerks.iter().flatten().count(),
            soak.resent.len()
        )
    } else {
        format!("{} problems", problems.len())
    };
    let _ = write!(
        table,
        "    {} sales: {accepted} accepted, {} needing attention, {} orders on the server; {verdict}",
        soak.sales.len(),
        attention.len(),
        snapshot.orders.len(),
    );
    (table, problems)
}

/// The server's order id to the Idempotency-Key it was placed under (for a failure's message).
fn server_keys(db: &Path) -> HashMap<i64, String> {
    let c = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut statement = c.prepare("SELECT key, body FROM idempotency_keys WHERE status = 201").unwrap();
    statement
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|(key, body)| Some((serde_json::from_str::<Value>(&body).ok()?["id"].as_i64()?, key)))
        .collect()
}

/// Each order's maker on the server: the staff member its `placed_by` names (`None`: the
/// key's own write).
fn server_makers(db: &Path) -> HashMap<i64, Option<i64>> {
    let c = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut statement = c.prepare("SELECT id, json_extract(placed_by, '$.staff.id') FROM orders").unwrap();
    statement.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().filter_map(Result::ok).collect()
}

/// Each sale's key as a till passes it on to the server (`IdempotencyKey::forwarded`), to
/// the sale's index: only to name the sale behind an order in a failure's message.
fn forwarded_keys(soak: &Soak) -> HashMap<String, usize> {
    let mut keys = HashMap::new();
    for till in &soak.tills {
        let till = till.lock().unwrap();
        for credential in &till.keys {
            let scope = Sha256::new()
                .chain_update(b"petstore idempotency scope\0")
                .chain_update(credential.as_bytes())
                .finalize();
            for (i, sale) in soak.sales.iter().enumerate().filter(|(_, s)| s.till == till.number) {
                let forwarded = Sha256::new()
                    .chain_update(b"petstore forwarded key\0")
                    .chain_update(scope)
                    .chain_update(sale.key.as_bytes())
                    .finalize();
                keys.insert(hex::encode(forwarded), i);
            }
        }
    }
    keys
}
