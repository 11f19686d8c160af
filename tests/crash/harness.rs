//! The crash rounds, whatever process serves the API: start it, let concurrent clients
//! place orders, change their quantities, cancel and complete them, kill it (or its
//! database) at a random moment, start it again, and hold the database against what the
//! clients were told.
//!
//! What was acknowledged must be there (a 201 order with its pet and quantity, a 200
//! quantity change, a 204 cancellation gone, a 200 completion complete); what was in flight
//! at the kill may or may not be, but only that: an order nobody was told about must be one
//! of the placements in flight, with its pet, quantity and completion; an order's quantity
//! is the acknowledged one or the one a change in flight asked for. For every pet, stock
//! plus ordered quantities must equal what the test stocked, the audit trail's counts
//! must add up to the same figure and its quantity changes explain every order's, and the
//! status must follow the rules of docs/ARCHITECTURE.md ("Pet status and stock rules").
//! What was stocked is the sum of the deltas the server applied to each pet (relative
//! adjustments, each in the server's own transaction), never a figure the test read first.
//!
//! Every round must have tested something: some placements acknowledged before the kill
//! (or the round fails), and at least one request sent before the kill and left without an
//! answer by it. A kill that cut nothing off is run again, a few times at most.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};
use tokio::task::JoinSet;

/// A process that serves the Petstore API over one database and can be killed.
pub trait Target {
    fn name(&self) -> &'static str;
    /// Starts the process (or brings back what the kill stopped) and waits until its API
    /// answers; returns the base URLs of its API (one per process serving it) and its key.
    fn start(&mut self) -> (Vec<String>, String);
    /// SIGKILL: no shutdown, no flush, no checkpoint (or worse: a power cut, or the
    /// database stopped at once). Returns once what was killed is gone.
    fn kill(&mut self);
    /// Whether the server outlives the kill (the kill stops its database): requests in
    /// flight are then answered with a 5xx, which says nothing of whether they happened.
    fn outlives_the_kill(&self) -> bool {
        false
    }
    /// What the database holds now (the process is stopped or killed).
    fn snapshot(&self) -> Snapshot;
    /// The clients' load begins (the kill comes later in the round).
    fn load_started(&mut self) {}
    /// The target's own checks of the restarted database, after the harness's.
    fn check(&mut self, _round: usize) {}
}

pub struct Settings {
    pub rounds: usize,
    pub clients: usize,
    pub pets: usize,
    /// Stock each pet is brought up to before each round's load.
    pub restock: i64,
    /// The kill comes this long after the load starts, at random in the range (and not
    /// before the first placement was acknowledged).
    pub kill_after: (Duration, Duration),
    pub seed: u64,
}

impl Settings {
    /// `rounds` by default; `PETSTORE_CRASH_ROUNDS` (or `rounds_var`) and
    /// `PETSTORE_CRASH_SEED` from the environment.
    pub fn from_env(rounds_var: &str, rounds: usize) -> Self {
        let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        Self {
            rounds: env(rounds_var).map_or(rounds, |r| r as usize),
            clients: 8,
            pets: 6,
            restock: 60,
            kill_after: (Duration::from_millis(100), Duration::from_millis(900)),
            seed: env("PETSTORE_CRASH_SEED").unwrap_or_else(|| fastrand::u64(..)),
        }
    }
}

/// Kills in a row that cut no request off, for one round, before the run fails: such a
/// kill is rare (see [`run`]), several in a row mean the load or the kill is broken.
const QUIET_KILLS_IN_A_ROW: usize = 3;

/// A placement as sent: an order nobody was told about must be one of those in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Placement {
    pet: i64,
    quantity: i64,
    complete: bool,
}

/// What the clients were told, and what remains uncertain until the next check.
#[derive(Default)]
struct Ledger {
    /// Every unit the server added to each pet at the test's request (the deltas of its
    /// acknowledged adjustments).
    stocked: HashMap<i64, i64>,
    /// Orders known to exist unless cancelled: acknowledged 201s, and in-flight placements
    /// a check found committed. Id to (pet, quantity now).
    orders: HashMap<i64, (i64, i64)>,
    /// Each of those orders' quantity when it was placed.
    placed: HashMap<i64, i64>,
    /// The ids of the 201s among them.
    acknowledged: HashSet<i64>,
    cancelled: HashSet<i64>,
    completed: HashSet<i64>,
    /// Requests the kill left without an answer: they may or may not have happened.
    placing: Vec<Placement>,
    cancelling: HashSet<i64>,
    completing: HashSet<i64>,
    /// Order id to the quantity a change in flight asked for.
    changing: HashMap<i64, i64>,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct Figures {
    pub rounds: usize,
    /// Placements answered 201.
    pub acknowledged: usize,
    /// Of those, still there at the end (all but the acknowledged cancellations).
    pub found: usize,
    pub cancelled: usize,
    pub completed: usize,
    /// Quantity changes answered 200.
    pub changed: usize,
    /// Acknowledged and not found: must stay 0.
    pub lost: usize,
    /// Requests sent before a kill and left without an answer by it, and of the
    /// placements among them, those committed.
    pub in_flight: usize,
    /// Of the requests the kill left uncertain, those a server that outlived it answered
    /// with a 5xx (its database died under it).
    pub server_errors: usize,
    pub committed_unacknowledged: usize,
    /// Rounds run again because their kill cut no request off.
    pub redone: usize,
    /// Placements and quantity changes refused with 409 (out of stock): nothing changed.
    pub refused: usize,
    pub max_restart: Duration,
}

pub fn run(target: &mut dyn Target, settings: &Settings) -> Figures {
    println!(
        "crash test ({}): {} rounds, {} clients, seed {} (PETSTORE_CRASH_SEED={} repeats its random choices)",
        target.name(),
        settings.rounds,
        settings.clients,
        settings.seed,
        settings.seed
    );
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut rng = fastrand::Rng::with_seed(settings.seed);
    let mut ledger = Ledger::default();
    let mut figures = Figures::default();
    let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let name = target.name();
    let who = |round: &str| format!("{name} {round}, PETSTORE_CRASH_SEED={}", settings.seed);

    let (mut bases, mut key) = target.start();
    let pets: Vec<i64> = runtime.block_on(async {
        let mut pets = Vec::new();
        for i in 0..settings.pets {
            let pet = send(
                &key,
                http.post(format!("{}/pets", bases[0])).json(&json!({ "name": format!("Crash pet {i}") })),
            )
            .await
            .expect("the server answers");
            assert_eq!(pet.0, 201, "{}", pet.1);
            let id = pet.1["id"].as_i64().unwrap();
            ledger.stocked.insert(id, 0);
            pets.push(id);
        }
        pets
    });

    let mut round = 1;
    let mut quiet_in_a_row = 0;
    while round <= settings.rounds {
        let label = if quiet_in_a_row == 0 {
            format!("round {round}")
        } else {
            format!("round {round}, attempt {}", quiet_in_a_row + 1)
        };
        runtime.block_on(restock(&http, &bases[0], &key, &pets, settings.restock, &mut ledger));
        let kill_after = settings.kill_after.0
            + Duration::from_millis(
                rng.u64(..=(settings.kill_after.1 - settings.kill_after.0).as_millis() as u64),
            );
        let round_figures =
            runtime.block_on(load(&http, &bases, &key, &pets, settings, rng.u64(..), kill_after, target));
        // A round that killed nothing, or killed a process that had done nothing, proves
        // nothing: it would pass whatever the store does.
        assert!(
            round_figures.acknowledged > 0,
            "{}: no placement was acknowledged before the kill",
            who(&label)
        );
        figures.acknowledged += round_figures.acknowledged;
        figures.changed += round_figures.changed;
        figures.in_flight += round_figures.in_flight;
        figures.server_errors += round_figures.server_errors;
        figures.refused += round_figures.refused;
        merge(&mut ledger, round_figures.ledger);

        let started = Instant::now();
        (bases, key) = target.start();
        figures.max_restart = figures.max_restart.max(started.elapsed());
        // What a kill left is checked whether or not it cut anything off.
        let committed = check(&target.snapshot(), &mut ledger, &who(&label));
        target.check(round);
        figures.committed_unacknowledged += committed;

        // A kill that cut nothing off happens: the writer answers every waiting order in one
        // group, and the kill can land before the clients, just woken, have sent the next
        // ones (CI saw it in round 1, where the kill follows the first acknowledgment). Such
        // a round proves only that acknowledged work survives a kill between requests, which
        // any store passes: it does not count, and runs again.
        if round_figures.in_flight == 0 {
            quiet_in_a_row += 1;
            figures.redone += 1;
            assert!(
                quiet_in_a_row <= QUIET_KILLS_IN_A_ROW,
                "{}: {quiet_in_a_row} kills in a row cut no request off (nothing was in flight)",
                who(&format!("round {round}"))
            );
            println!(
                "  {label}: the kill {} ms into the load cut no request off; the round runs again",
                kill_after.as_millis()
            );
            continue;
        }
        quiet_in_a_row = 0;
        figures.rounds = round;
        if round % 10 == 0 || round == settings.rounds {
            println!(
                "  round {round}: {} placements acknowledged so far, {} orders in the database, killed after {} ms",
                figures.acknowledged,
                ledger.orders.len() - ledger.cancelled.len(),
                kill_after.as_millis()
            );
        }
        round += 1;
    }
    target.kill();
    let last = target.snapshot();
    check(&last, &mut ledger, &who("after the last round"));
    target.check(settings.rounds + 1);

    figures.cancelled = ledger.acknowledged.iter().filter(|id| ledger.cancelled.contains(id)).count();
    figures.completed = ledger.completed.len();
    let present: HashSet<i64> = last.orders.keys().copied().collect();
    let kept: Vec<&i64> = ledger.acknowledged.iter().filter(|id| !ledger.cancelled.contains(id)).collect();
    figures.found = kept.iter().filter(|id| present.contains(id)).count();
    figures.lost = kept.len() - figures.found;
    assert_eq!(figures.acknowledged, ledger.acknowledged.len());
    println!(
        "crash test ({}): {} rounds survived, each cutting requests off ({} more run again: their kill cut nothing \
         off); {} placements acknowledged, {} of them cancelled by acknowledged requests, {} expected and {} found, \
         {} lost; {} quantity changes, {} completions; {} requests cut off by a kill, {} placements among them had \
         committed; {} requests answered 5xx by a server whose database the kill stopped; {} refusals (409); slowest \
         restart {} ms",
        target.name(),
        figures.rounds,
        figures.redone,
        figures.acknowledged,
        figures.cancelled,
        kept.len(),
        figures.found,
        figures.lost,
        figures.changed,
        figures.completed,
        figures.in_flight,
        figures.committed_unacknowledged,
        figures.server_errors,
        figures.refused,
        figures.max_restart.as_millis()
    );
    assert_eq!(figures.lost, 0);
    figures
}

/// Why a request got no answer.
#[derive(Debug)]
enum Unanswered {
    /// Nothing listened: the request never reached the process, so it did not happen.
    Refused,
    /// It was sent (or was being sent) and the answer never came: the kill cut it off,
    /// and it may or may not have happened.
    CutOff,
}

/// One request, and its status and body.
async fn send(key: &str, request: reqwest::RequestBuilder) -> Result<(u16, Value), Unanswered> {
    let cut_off = |e: reqwest::Error| if e.is_connect() { Unanswered::Refused } else { Unanswered::CutOff };
    let reply = request.bearer_auth(key).send().await.map_err(cut_off)?;
    let status = reply.status().as_u16();
    let bytes = reply.bytes().await.map_err(cut_off)?;
    Ok((status, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
}

/// Brings every pet up to `level` with a relative adjustment (before the load, through the
/// server): what was stocked grows by the delta the server applied in its transaction,
/// whatever the stock is meanwhile (a statement of a killed replica may still commit, and
/// a count read first and then set would miss it).
async fn restock(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    pets: &[i64],
    level: i64,
    ledger: &mut Ledger,
) {
    for pet in pets {
        let (status, item) = send(key, http.get(format!("{base}/store/inventory/{pet}"))).await.unwrap();
        assert_eq!(status, 200, "{item}");
        let delta = level - item["quantity"].as_i64().unwrap();
        if delta <= 0 {
            continue;
        }
        let body = json!({ "delta": delta, "reason": "Crash round delivery" });
        let post = http.post(format!("{base}/store/inventory/{pet}/adjustments")).json(&body);
        let (status, item) = send(key, post).await.unwrap();
        assert_eq!(status, 200, "restock pet {pet} by {delta}: {item}");
        *ledger.stocked.get_mut(pet).unwrap() += delta;
    }
}

struct Round {
    acknowledged: usize,
    changed: usize,
    in_flight: usize,
    server_errors: usize,
    refused: usize,
    ledger: Ledger,
}

/// A client's request and what became of it.
enum Outcome {
    Answered(u16, Value),
    /// Nothing listened: it did not happen, and the client stops.
    NotSent,
    /// It may or may not have happened; the client stops.
    Uncertain,
}

/// What every client of a round shares.
struct Load {
    key: String,
    /// Set just before the kill: a 5xx answered after it (by a server that outlives the
    /// kill) is uncertain.
    killing: AtomicBool,
    outlives_the_kill: bool,
    /// When each request answered so was sent, and when the first such answer came: the
    /// database was gone by then, so a request sent before it was in flight when it died
    /// (the kill takes a while to stop a database: requests sent as it began often come
    /// back answered).
    server_errors: Mutex<(Vec<Instant>, Option<Instant>)>,
    round: Mutex<Round>,
}

impl Load {
    async fn request(&self, request: reqwest::RequestBuilder) -> Outcome {
        let sent = Instant::now();
        match send(&self.key, request).await {
            Err(Unanswered::Refused) => Outcome::NotSent,
            // Only the kill breaks connections (a power cut may come a few syncs after it
            // was asked for: a request sent meanwhile is cut off by it too).
            Err(Unanswered::CutOff) => {
                self.round.lock().unwrap().in_flight += 1;
                Outcome::Uncertain
            }
            // A server whose database died under it can say no more than that.
            Ok((status, _))
                if status >= 500 && self.outlives_the_kill && self.killing.load(Ordering::SeqCst) =>
            {
                let mut errors = self.server_errors.lock().unwrap();
                errors.0.push(sent);
                errors.1.get_or_insert_with(Instant::now);
                Outcome::Uncertain
            }
            Ok((status, body)) => Outcome::Answered(status, body),
        }
    }
}

/// One client's work until the kill stops it: place orders (some as counter sales), and
/// change the quantity of, cancel or complete its own open orders.
async fn client(http: reqwest::Client, base: String, pets: Vec<i64>, load: Arc<Load>, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    // This client's open orders and their quantities: only it changes, cancels or completes
    // them, so any refusal of those (but for stock) is a bug, not a race.
    let mut open: Vec<(i64, i64)> = Vec::new();
    loop {
        let choice = rng.u8(..10);
        if choice < 2 && !open.is_empty() {
            let (id, _) = open.swap_remove(rng.usize(..open.len()));
            match load.request(http.delete(format!("{base}/store/orders/{id}"))).await {
                Outcome::NotSent => return,
                Outcome::Uncertain => {
                    load.round.lock().unwrap().ledger.cancelling.insert(id);
                    return;
                }
                Outcome::Answered(status, body) => {
                    assert_eq!(status, 204, "cancel {id}: {body}");
                    load.round.lock().unwrap().ledger.cancelled.insert(id);
                }
            }
        } else if choice < 4 && !open.is_empty() {
            let (id, _) = open.swap_remove(rng.usize(..open.len()));
            let request = http.patch(format!("{base}/store/orders/{id}")).json(&json!({ "complete": true }));
            match load.request(request).await {
                Outcome::NotSent => return,
                Outcome::Uncertain => {
                    load.round.lock().unwrap().ledger.completing.insert(id);
                    return;
                }
                Outcome::Answered(status, body) => {
                    assert_eq!(status, 200, "complete {id}: {body}");
                    load.round.lock().unwrap().ledger.completed.insert(id);
                }
            }
        } else if choice < 5 && !open.is_empty() {
            let at = rng.usize(..open.len());
            let (id, was) = open[at];
            let quantity = (1..=4).filter(|q| *q != was).nth(rng.usize(..3)).unwrap();
            let request =
                http.patch(format!("{base}/store/orders/{id}")).json(&json!({ "quantity": quantity }));
            match load.request(request).await {
                Outcome::NotSent => return,
                Outcome::Uncertain => {
                    load.round.lock().unwrap().ledger.changing.insert(id, quantity);
                    return;
                }
                Outcome::Answered(200, body) => {
                    assert_eq!(
                        body["quantity"].as_i64(),
                        Some(quantity),
                        "change {id} to {quantity}: {body}"
                    );
                    open[at].1 = quantity;
                    let mut round = load.round.lock().unwrap();
                    round.changed += 1;
                    round.ledger.orders.get_mut(&id).expect("an order of this round").1 = quantity;
                }
                Outcome::Answered(status, body) => {
                    let code = body["code"].as_str().unwrap_or("");
                    assert!(
                        status == 409 && (code == "insufficient_stock" || code == "pet_not_available"),
                        "change {id} from {was} to {quantity}: {status} {body}"
                    );
                    load.round.lock().unwrap().refused += 1;
                }
            }
        } else {
            let pet = pets[rng.usize(..pets.len())];
            let quantity = rng.i64(1..=3);
            let complete = rng.u8(..10) == 0;
            let body = json!({ "petId": pet, "quantity": quantity, "complete": complete });
            let (status, reply) =
                match load.request(http.post(format!("{base}/store/orders")).json(&body)).await {
                    Outcome::NotSent => return,
                    Outcome::Uncertain => {
                        load.round.lock().unwrap().ledger.placing.push(Placement { pet, quantity, complete });
                        return;
                    }
                    Outcome::Answered(status, reply) => (status, reply),
                };
            let mut round = load.round.lock().unwrap();
            match status {
                201 => {
                    let id = reply["id"].as_i64().unwrap();
                    assert_eq!(
                        (reply["petId"].as_i64(), reply["quantity"].as_i64()),
                        (Some(pet), Some(quantity))
                    );
                    round.acknowledged += 1;
                    round.ledger.orders.insert(id, (pet, quantity));
                    round.ledger.placed.insert(id, quantity);
                    round.ledger.acknowledged.insert(id);
                    if complete {
                        round.ledger.completed.insert(id);
                    } else {
                        open.push((id, quantity));
                    }
                }
                409 => {
                    let code = reply["code"].as_str().unwrap_or("");
                    assert!(code == "insufficient_stock" || code == "pet_not_available", "{reply}");
                    round.refused += 1;
                }
                _ => panic!("place {body}: {status} {reply}"),
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn load(
    http: &reqwest::Client,
    bases: &[String],
    key: &str,
    pets: &[i64],
    settings: &Settings,
    seed: u64,
    kill_after: Duration,
    target: &mut dyn Target,
) -> Round {
    let load = Arc::new(Load {
        key: key.to_owned(),
        killing: AtomicBool::new(false),
        outlives_the_kill: target.outlives_the_kill(),
        server_errors: Mutex::default(),
        round: Mutex::new(Round {
            acknowledged: 0,
            changed: 0,
            in_flight: 0,
            server_errors: 0,
            refused: 0,
            ledger: Ledger::default(),
        }),
    });
    let mut clients = JoinSet::new();
    for c in 0..settings.clients {
        let base = bases[c % bases.len()].clone();
        let seed = seed ^ ((c as u64) << 32);
        clients.spawn(client(http.clone(), base, pets.to_vec(), load.clone(), seed));
    }
    target.load_started();
    tokio::time::sleep(kill_after).await;
    // Not before the first acknowledgment: on a slow, busy machine the first answers can
    // take longer than the shortest delay, and a round must have something to lose.
    let waiting = Instant::now();
    while load.round.lock().unwrap().acknowledged == 0 && waiting.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    load.killing.store(true, Ordering::SeqCst);
    target.kill();
    while let Some(done) = clients.join_next().await {
        done.expect("a client saw something it must not");
    }
    let load = Arc::into_inner(load).unwrap();
    let mut round = load.round.into_inner().unwrap();
    let (sent, first) = load.server_errors.into_inner().unwrap();
    round.server_errors = sent.len();
    round.in_flight += first.map_or(0, |first| sent.iter().filter(|s| **s < first).count());
    round
}

fn merge(into: &mut Ledger, round: Ledger) {
    into.orders.extend(round.orders);
    into.placed.extend(round.placed);
    into.acknowledged.extend(round.acknowledged);
    into.cancelled.extend(round.cancelled);
    into.completed.extend(round.completed);
    into.placing.extend(round.placing);
    into.cancelling.extend(round.cancelling);
    into.completing.extend(round.completing);
    into.changing.extend(round.changing);
}

/// What a database holds, read by whichever engine keeps it, for [`check`].
pub struct Snapshot {
    /// What the engine's own consistency checks found wrong, and kept counts that disagree
    /// with the pets.
    pub damage: Vec<String>,
    /// Order id to (pet, quantity, complete).
    pub orders: HashMap<i64, (i64, i64, bool)>,
    /// Pet id to (stock, status, the sum of its audit trail's counts: [`PETS`]).
    pub pets: HashMap<i64, (i64, String, i64)>,
    /// Order id to the sum of its quantity changes' deltas in the audit trail.
    pub changes: HashMap<i64, i64>,
}

/// The kept pet counts against a real count, in SQL both engines speak: the rows that
/// differ, either way.
pub const MISCOUNTED: &str = "
    WITH kept AS (SELECT category_id, status, pets FROM pet_counts WHERE pets > 0),
         real AS (SELECT coalesce(category_id, 0) AS category_id, status, count(*) AS pets FROM pets GROUP BY 1, 2)
    SELECT (SELECT count(*) FROM (SELECT * FROM kept EXCEPT SELECT * FROM real) AS a)
         + (SELECT count(*) FROM (SELECT * FROM real EXCEPT SELECT * FROM kept) AS b)";

/// Every order that holds units (a cancelled one is kept, its units returned), in SQL both
/// engines speak.
pub const ORDERS: &str = "SELECT id, pet_id, quantity, complete FROM orders WHERE cancelled_at IS NULL";

/// Every pet's stock, status and counted units, in SQL both engines speak. The audit
/// trail also holds the changes of orders' quantities (rows naming the order), which move
/// stock between a pet and its orders and are no units counted in: only the counts and
/// adjustments (no order) add up to what was stocked.
pub const PETS: &str = "SELECT id, stock, status,
    (SELECT coalesce(sum(delta), 0) FROM inventory_adjustments a WHERE a.pet_id = pets.id AND a.order_id IS NULL)
    FROM pets";

/// Per order, the stock its quantity changes moved (the audit rows naming it).
pub const CHANGES: &str =
    "SELECT order_id, sum(delta) FROM inventory_adjustments WHERE order_id IS NOT NULL GROUP BY order_id";

/// A SQLite database file's [`Snapshot`], read-only.
pub fn sqlite_snapshot(db: &Path) -> Snapshot {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut damage = Vec::new();
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    if ok != "ok" {
        damage.push(format!("integrity_check: {ok}"));
    }
    let broken = conn.prepare("PRAGMA foreign_key_check").unwrap().query_map([], |_| Ok(())).unwrap().count();
    if broken > 0 {
        damage.push(format!("foreign_key_check: {broken} rows"));
    }
    let miscounted: i64 = conn.query_row(MISCOUNTED, [], |r| r.get(0)).unwrap();
    if miscounted > 0 {
        damage.push(format!("the kept pet counts disagree with the pets in {miscounted} rows"));
    }
    let orders = conn
        .prepare(ORDERS)
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?))))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let pets = conn
        .prepare(PETS)
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?))))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let changes = conn
        .prepare(CHANGES)
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    Snapshot { damage, orders, pets, changes }
}

/// Holds the restarted database against the ledger, then settles what the kill left
/// uncertain (from now on it is durable or never happened). `who` names the target, the
/// round and the seed in a failure's message. Answers how many orders were committed
/// although their 201 never arrived.
fn check(snapshot: &Snapshot, ledger: &mut Ledger, who: &str) -> usize {
    assert!(snapshot.damage.is_empty(), "{who}: {}", snapshot.damage.join("; "));
    let orders = &snapshot.orders;
    for (id, (pet, quantity)) in &ledger.orders {
        let uncertain = ledger.cancelling.contains(id);
        match orders.get(id) {
            None if ledger.cancelled.contains(id) || uncertain => {}
            None => panic!("{who}: acknowledged order {id} ({quantity} of pet {pet}) is lost"),
            Some(_) if ledger.cancelled.contains(id) => panic!("{who}: cancelled order {id} is back"),
            Some(&(found_pet, found_quantity, complete)) => {
                let changing = ledger.changing.get(id);
                assert!(
                    found_pet == *pet && (found_quantity == *quantity || changing == Some(&found_quantity)),
                    "{who}: order {id} is {found_quantity} of pet {found_pet}; acknowledged: {quantity} of pet {pet}{}",
                    changing
                        .map(|q| format!(", or {q} if the change in flight happened"))
                        .unwrap_or_default()
                );
                if ledger.completed.contains(id) {
                    assert!(complete, "{who}: completed order {id} is open again");
                } else {
                    assert!(
                        !complete || ledger.completing.contains(id),
                        "{who}: order {id} completed by nobody"
                    );
                }
            }
        }
    }

    // An order nobody was told about is one of the placements in flight: its pet, its
    // quantity and whether it was a counter sale, each placement once.
    let mut unknown: Vec<(i64, (i64, i64, bool))> =
        orders.iter().filter(|(id, _)| !ledger.orders.contains_key(id)).map(|(id, o)| (*id, *o)).collect();
    unknown.sort_unstable();
    let mut in_flight = std::mem::take(&mut ledger.placing);
    let sent = in_flight.clone();
    for (id, (pet, quantity, complete)) in &unknown {
        let placement = Placement { pet: *pet, quantity: *quantity, complete: *complete };
        let Some(at) = in_flight.iter().position(|p| *p == placement) else {
            panic!(
                "{who}: order {id} ({quantity} of pet {pet}, complete {complete}) was placed by nobody: it is none of \
                 the {} placements in flight {sent:?}, nor any acknowledged order; the orders nobody was told of: \
                 {unknown:?}",
                sent.len()
            );
        };
        in_flight.swap_remove(at);
    }
    // Settle: what is there now is durable; what is not never will be.
    for (id, (pet, quantity, complete)) in &unknown {
        ledger.orders.insert(*id, (*pet, *quantity));
        ledger.placed.insert(*id, *quantity);
        if *complete {
            ledger.completed.insert(*id);
        }
    }
    for id in std::mem::take(&mut ledger.cancelling) {
        if !orders.contains_key(&id) {
            ledger.cancelled.insert(id);
        }
    }
    for id in std::mem::take(&mut ledger.completing) {
        if orders.get(&id).is_some_and(|o| o.2) {
            ledger.completed.insert(id);
        }
    }
    for (id, _) in std::mem::take(&mut ledger.changing) {
        if let (Some(order), Some(found)) = (ledger.orders.get_mut(&id), orders.get(&id)) {
            order.1 = found.1;
        }
    }

    // The audit trail's quantity changes explain every order's quantity: placed less the
    // units its changes gave back.
    for (id, &(_, quantity, _)) in orders {
        let placed = ledger.placed[id];
        let moved = snapshot.changes.get(id).copied().unwrap_or(0);
        assert_eq!(
            moved,
            placed - quantity,
            "{who}: order {id} was placed for {placed} and is for {quantity}; its quantity changes in the audit trail \
             moved {moved}"
        );
    }

    for (pet, stocked) in &ledger.stocked {
        let (stock, status, audited) =
            snapshot.pets.get(pet).cloned().unwrap_or_else(|| panic!("{who}: pet {pet} is gone"));
        let mine = orders.values().filter(|o| o.0 == *pet);
        let ordered: i64 = mine.clone().map(|o| o.1).sum();
        let open = mine.filter(|o| !o.2).count();
        // Every figure of the pet in each message: which of them disagrees says who is wrong.
        let figures = format!(
            "pet {pet}: stock {stock} + ordered {ordered} = {}; the ledger stocked {stocked}; the audit trail's counts \
             total {audited}; {open} open orders, status {status}",
            stock + ordered
        );
        assert!(stock >= 0, "{who}: {figures}: negative stock");
        assert_eq!(
            stock + ordered,
            *stocked,
            "{who}: {figures}: stock and orders do not add up to what was stocked"
        );
        assert_eq!(audited, *stocked, "{who}: {figures}: the audit trail does not explain every unit");
        let expected = match (stock, open) {
            (s, _) if s > 0 => "available",
            (_, 0) => "sold",
            _ => "pending",
        };
        assert_eq!(status, expected, "{who}: {figures}: the status rules call for {expected}");
    }
    unknown.len()
}
