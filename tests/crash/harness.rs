//! The crash rounds, whatever process serves the API: start it, let concurrent clients
//! place, cancel and complete orders, SIGKILL it at a random moment, start it again, and
//! hold the database file against what the clients were told.
//!
//! What was acknowledged must be there (a 201 order with its pet and quantity, a 204
//! cancellation gone, a 200 completion complete); what was in flight at the kill may or
//! may not be, but only that; and for every pet, stock plus ordered quantities must equal
//! what the test stocked, the audit trail must explain it, and the status must follow
//! the rules of docs/ARCHITECTURE.md ("Pet status and stock rules"). A round must also have
//! tested something: some placements acknowledged before the kill, and at least one request
//! cut off by it.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};
use tokio::task::JoinSet;

/// A process that serves the Petstore API over one database file and can be killed.
pub trait Target {
    fn name(&self) -> &'static str;
    /// Starts the process and waits until its API answers; returns its base URL and key.
    fn start(&mut self) -> (String, String);
    /// SIGKILL: no shutdown, no flush, no checkpoint (or worse: a power cut). Returns once
    /// the process is gone.
    fn kill(&mut self);
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
    /// Stock each pet is counted up to before each round's load.
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

/// What the clients were told, and what remains uncertain until the next check.
#[derive(Default)]
struct Ledger {
    /// Everything the test counted in, per pet.
    stocked: HashMap<i64, i64>,
    /// Orders known to exist unless cancelled: acknowledged 201s, and in-flight placements
    /// a check found committed. Id to (pet, quantity).
    orders: HashMap<i64, (i64, i64)>,
    /// The ids of the 201s among them.
    acknowledged: HashSet<i64>,
    cancelled: HashSet<i64>,
    completed: HashSet<i64>,
    /// Requests the kill cut off: they may or may not have happened.
    placing: usize,
    cancelling: HashSet<i64>,
    completing: HashSet<i64>,
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
    /// Acknowledged and not found: must stay 0.
    pub lost: usize,
    /// Requests cut off by the kill (sent, never answered), and of the placements among
    /// them, those committed.
    pub in_flight: usize,
    pub committed_unacknowledged: usize,
    /// Rounds whose kill found no request in flight.
    pub quiet_kills: usize,
    /// Placements refused with 409 (out of stock): nothing changed.
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

    let (base, key) = target.start();
    let pets: Vec<i64> = runtime.block_on(async {
        let mut pets = Vec::new();
        for i in 0..settings.pets {
            let pet = send(
                &key,
                http.post(format!("{base}/pets")).json(&json!({ "name": format!("Crash pet {i}") })),
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
    let mut base = base;
    let mut key = key;

    for round in 1..=settings.rounds {
        runtime.block_on(restock(&http, &base, &key, &pets, settings.restock, &mut ledger));
        let kill_after = settings.kill_after.0
            + Duration::from_millis(
                rng.u64(..=(settings.kill_after.1 - settings.kill_after.0).as_millis() as u64),
            );
        let round_figures =
            runtime.block_on(load(&http, &base, &key, &pets, settings, rng.u64(..), kill_after, target));
        // A round that killed nothing, or killed a process that had done nothing, proves
        // nothing: it would pass whatever the store does.
        assert!(
            round_figures.acknowledged > 0,
            "round {round} ({}): no placement was acknowledged before the kill",
            target.name()
        );
        // A kill that cut nothing off happens: the writer answers every waiting order in one
        // group, and the kill can land before the clients, just woken, have sent the next
        // ones (CI saw it in round 1, where the kill follows the first acknowledgment). Such
        // a round still checks what was acknowledged; the run as a whole must cut requests
        // off, below.
        if round_figures.in_flight == 0 {
            figures.quiet_kills += 1;
        }
        figures.acknowledged += round_figures.acknowledged;
        figures.in_flight += round_figures.in_flight;
        figures.refused += round_figures.refused;
        merge(&mut ledger, round_figures.ledger);

        let started = Instant::now();
        (base, key) = target.start();
        figures.max_restart = figures.max_restart.max(started.elapsed());
        let committed = check(&target.snapshot(), &mut ledger, round);
        target.check(round);
        figures.committed_unacknowledged += committed;
        figures.rounds = round;
        if round % 10 == 0 || round == settings.rounds {
            println!(
                "  round {round}: {} placements acknowledged so far, {} orders in the database, killed after {} ms",
                figures.acknowledged,
                ledger.orders.len() - ledger.cancelled.len(),
                kill_after.as_millis()
            );
        }
    }
    target.kill();
    let last = target.snapshot();
    check(&last, &mut ledger, settings.rounds + 1);
    target.check(settings.rounds + 1);

    figures.cancelled = ledger.acknowledged.iter().filter(|id| ledger.cancelled.contains(id)).count();
    figures.completed = ledger.completed.len();
    let present: HashSet<i64> = last.orders.keys().copied().collect();
    let kept: Vec<&i64> = ledger.acknowledged.iter().filter(|id| !ledger.cancelled.contains(id)).collect();
    figures.found = kept.iter().filter(|id| present.contains(id)).count();
    figures.lost = kept.len() - figures.found;
    assert_eq!(figures.acknowledged, ledger.acknowledged.len());
    println!(
        "crash test ({}): {} rounds survived; {} placements acknowledged, {} of them cancelled by acknowledged requests, \
         {} expected and {} found, {} lost; {} completions; {} requests cut off by a kill ({} kills cut none off), {} \
         placements among them had committed; {} refusals (409); slowest restart {} ms",
        target.name(),
        figures.rounds,
        figures.acknowledged,
        figures.cancelled,
        kept.len(),
        figures.found,
        figures.lost,
        figures.completed,
        figures.in_flight,
        figures.quiet_kills,
        figures.committed_unacknowledged,
        figures.refused,
        figures.max_restart.as_millis()
    );
    assert_eq!(figures.lost, 0);
    // Kills that never cut a request off would prove nothing: whatever the store does, a
    // server killed between requests loses nothing.
    assert!(
        figures.quiet_kills * 2 <= figures.rounds,
        "{} of {} kills cut no request off (nothing was in flight)",
        figures.quiet_kills,
        figures.rounds
    );
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

/// Counts every pet up to `level` (acknowledged, before the load: the stocked figure is
/// known exactly).
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
        let before = item["quantity"].as_i64().unwrap();
        let put = http.put(format!("{base}/store/inventory/{pet}")).json(&json!({ "quantity": level }));
        let (status, item) = send(key, put).await.unwrap();
        assert_eq!((status, item["quantity"].as_i64()), (200, Some(level)), "{item}");
        *ledger.stocked.get_mut(pet).unwrap() += level - before;
    }
}

struct Round {
    acknowledged: usize,
    in_flight: usize,
    refused: usize,
    ledger: Ledger,
}

#[allow(clippy::too_many_arguments)]
async fn load(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    pets: &[i64],
    settings: &Settings,
    seed: u64,
    kill_after: Duration,
    target: &mut dyn Target,
) -> Round {
    let shared =
        Arc::new(Mutex::new(Round { acknowledged: 0, in_flight: 0, refused: 0, ledger: Ledger::default() }));
    let mut clients = JoinSet::new();
    for client in 0..settings.clients {
        let (http, base, key, pets, shared) =
            (http.clone(), base.to_owned(), key.to_owned(), pets.to_vec(), shared.clone());
        let mut rng = fastrand::Rng::with_seed(seed ^ ((client as u64) << 32));
        clients.spawn(async move {
            // This client's open orders: only it cancels or completes them, so any refusal
            // of those is a bug, not a race.
            let mut open: Vec<i64> = Vec::new();
            loop {
                let choice = rng.u8(..10);
                if choice < 2 && !open.is_empty() {
                    let id = open.swap_remove(rng.usize(..open.len()));
                    let request = http.delete(format!("{base}/store/orders/{id}"));
                    let (status, body) = match send(&key, request).await {
                        Ok(answer) => answer,
                        Err(Unanswered::Refused) => return,
                        Err(Unanswered::CutOff) => {
                            let mut shared = shared.lock().unwrap();
                            shared.in_flight += 1;
                            shared.ledger.cancelling.insert(id);
                            return;
                        }
                    };
                    assert_eq!(status, 204, "cancel {id}: {body}");
                    shared.lock().unwrap().ledger.cancelled.insert(id);
                } else if choice < 4 && !open.is_empty() {
                    let id = open.swap_remove(rng.usize(..open.len()));
                    let request =
                        http.patch(format!("{base}/store/orders/{id}")).json(&json!({ "complete": true }));
                    let (status, body) = match send(&key, request).await {
                        Ok(answer) => answer,
                        Err(Unanswered::Refused) => return,
                        Err(Unanswered::CutOff) => {
                            let mut shared = shared.lock().unwrap();
                            shared.in_flight += 1;
                            shared.ledger.completing.insert(id);
                            return;
                        }
                    };
                    assert_eq!(status, 200, "complete {id}: {body}");
                    shared.lock().unwrap().ledger.completed.insert(id);
                } else {
                    let pet = pets[rng.usize(..pets.len())];
                    let quantity = rng.i64(1..=3);
                    let counter_sale = rng.u8(..10) == 0;
                    let body = json!({ "petId": pet, "quantity": quantity, "complete": counter_sale });
                    let request = http.post(format!("{base}/store/orders")).json(&body);
                    let (status, reply) = match send(&key, request).await {
                        Ok(answer) => answer,
                        Err(Unanswered::Refused) => return,
                        Err(Unanswered::CutOff) => {
                            let mut shared = shared.lock().unwrap();
                            shared.in_flight += 1;
                            shared.ledger.placing += 1;
                            return;
                        }
                    };
                    let mut shared = shared.lock().unwrap();
                    match status {
                        201 => {
                            let id = reply["id"].as_i64().unwrap();
                            assert_eq!(
                                (reply["petId"].as_i64(), reply["quantity"].as_i64()),
                                (Some(pet), Some(quantity))
                            );
                            shared.acknowledged += 1;
                            shared.ledger.orders.insert(id, (pet, quantity));
                            shared.ledger.acknowledged.insert(id);
                            if counter_sale {
                                shared.ledger.completed.insert(id);
                            } else {
                                open.push(id);
                            }
                        }
                        409 => {
                            let code = reply["code"].as_str().unwrap_or("");
                            assert!(code == "insufficient_stock" || code == "pet_not_available", "{reply}");
                            shared.refused += 1;
                        }
                        _ => panic!("place {body}: {status} {reply}"),
                    }
                }
            }
        });
    }
    target.load_started();
    tokio::time::sleep(kill_after).await;
    // Not before the first acknowledgment: on a slow, busy machine the first answers can
    // take longer than the shortest delay, and a round must have something to lose.
    let waiting = Instant::now();
    while shared.lock().unwrap().acknowledged == 0 && waiting.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    target.kill();
    while let Some(done) = clients.join_next().await {
        done.expect("a client saw something it must not");
    }
    Arc::into_inner(shared).unwrap().into_inner().unwrap()
}

fn merge(into: &mut Ledger, round: Ledger) {
    into.orders.extend(round.orders);
    into.acknowledged.extend(round.acknowledged);
    into.cancelled.extend(round.cancelled);
    into.completed.extend(round.completed);
    into.placing += round.placing;
    into.cancelling.extend(round.cancelling);
    into.completing.extend(round.completing);
}

/// What a database holds, read by whichever engine keeps it, for [`check`].
pub struct Snapshot {
    /// What the engine's own consistency checks found wrong, and kept counts that disagree
    /// with the pets.
    pub damage: Vec<String>,
    /// Order id to (pet, quantity, complete).
    pub orders: HashMap<i64, (i64, i64, bool)>,
    /// Pet id to (stock, status, sum of its audit trail's deltas).
    pub pets: HashMap<i64, (i64, String, i64)>,
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

/// Every pet's stock, status and audited units, in SQL both engines speak.
pub const PETS: &str = "SELECT id, stock, status,
    (SELECT coalesce(sum(delta), 0) FROM inventory_adjustments a WHERE a.pet_id = pets.id) FROM pets";

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
    Snapshot { damage, orders, pets }
}

/// Holds the restarted database against the ledger, then settles what the kill left
/// uncertain (from now on it is durable or never happened). Answers how many orders were
/// committed although their 201 never arrived.
fn check(snapshot: &Snapshot, ledger: &mut Ledger, round: usize) -> usize {
    assert!(snapshot.damage.is_empty(), "round {round}: {}", snapshot.damage.join("; "));
    let orders = &snapshot.orders;
    for (id, (pet, quantity)) in &ledger.orders {
        let uncertain = ledger.cancelling.contains(id);
        match orders.get(id) {
            None if ledger.cancelled.contains(id) || uncertain => {}
            None => panic!("round {round}: acknowledged order {id} ({quantity} of pet {pet}) is lost"),
            Some(_) if ledger.cancelled.contains(id) => panic!("round {round}: cancelled order {id} is back"),
            Some(found) => {
                assert_eq!((found.0, found.1), (*pet, *quantity), "round {round}: order {id}");
                if ledger.completed.contains(id) {
                    assert!(found.2, "round {round}: completed order {id} is open again");
                }
            }
        }
    }
    let unknown: Vec<(i64, (i64, i64, bool))> =
        orders.iter().filter(|(id, _)| !ledger.orders.contains_key(id)).map(|(id, o)| (*id, *o)).collect();
    assert!(
        unknown.len() <= ledger.placing,
        "round {round}: {} orders nobody placed ({} placements were in flight): {unknown:?}",
        unknown.len(),
        ledger.placing
    );
    // Settle: what is there now is durable; what is not never will be.
    for (id, (pet, quantity, complete)) in &unknown {
        ledger.orders.insert(*id, (*pet, *quantity));
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
    ledger.placing = 0;

    for (pet, stocked) in &ledger.stocked {
        let (stock, status, audited) =
            snapshot.pets.get(pet).cloned().unwrap_or_else(|| panic!("round {round}: pet {pet} is gone"));
        let mine = orders.values().filter(|o| o.0 == *pet);
        let ordered: i64 = mine.clone().map(|o| o.1).sum();
        let open = mine.filter(|o| !o.2).count();
        assert!(stock >= 0, "round {round}: pet {pet} stock {stock}");
        assert_eq!(stock + ordered, *stocked, "round {round}: pet {pet}: stock {stock} + ordered {ordered}");
        assert_eq!(audited, *stocked, "round {round}: pet {pet}: the audit trail explains every unit");
        let expected = match (stock, open) {
            (s, _) if s > 0 => "available",
            (_, 0) => "sold",
            _ => "pending",
        };
        assert_eq!(status, expected, "round {round}: pet {pet}, stock {stock}, {open} open orders");
    }
    unknown.len()
}
