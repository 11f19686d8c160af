//! A chain's rush for `make bench`: many tills following `/events` while orders
//! come in, against a running `petstore-server` on loopback (`chain.py` starts it).
//!
//! - `load`: `--followers` streams, each a bare tokio socket that scans its events for
//!   order creations (a client written to cost little, so that the two cores go to the
//!   server); orders offered open loop at `--rate` per second for `--seconds` (each timed
//!   from when it was due, so a server that falls behind shows in the latency), or closed
//!   loop by `--workers` when `--rate` is 0. Prints the orders' latency, every order's
//!   delivery to every follower (from the order's answer to its event; missing ones
//!   counted), and the server's CPU per order (from `/proc/PID/stat`).
//! - `storm`: `--tills` tills, each with `--sales` sales queued offline, reconnect at once:
//!   each opens its stream and replays its sales with Idempotency-Keys, while one online
//!   till sells at 10 a second. Then every sale is replayed again: each must answer the
//!   order it placed the first time (exactly once).
//!
//! Every loop is bounded in count and in time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

#[derive(Parser)]
struct Args {
    #[arg(long)]
    addr: String,
    #[arg(long)]
    key: String,
    /// `load` or `storm`.
    #[arg(long, default_value = "load")]
    mode: String,
    #[arg(long, default_value_t = 1000)]
    followers: usize,
    /// Orders a second offered, open loop; 0 for closed loop by `--workers`.
    #[arg(long, default_value_t = 200)]
    rate: u64,
    #[arg(long, default_value_t = 32)]
    workers: usize,
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    #[arg(long, default_value_t = 1000)]
    tills: usize,
    #[arg(long, default_value_t = 5)]
    sales: usize,
    /// The server's process, for its CPU time.
    #[arg(long)]
    server_pid: Option<u32>,
}

/// The stock pets orders are placed for.
const PETS: usize = 100;

#[tokio::main]
async fn main() {
    let args = Args::parse();
    raise_open_files();
    let http = reqwest::Client::builder().pool_max_idle_per_host(2048).build().unwrap();
    let pets = stock_pets(&http, &args).await;
    let out = match args.mode.as_str() {
        "storm" => storm(&http, &args, &pets).await,
        _ => load(&http, &args, &pets).await,
    };
    println!("{out}");
}

fn raise_open_files() {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit read and write the one struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

fn url(args: &Args, path: &str) -> String {
    format!("http://{}{path}", args.addr)
}

/// Pets with stock enough for every order of the run.
async fn stock_pets(http: &reqwest::Client, args: &Args) -> Vec<i64> {
    let mut pets = Vec::with_capacity(PETS);
    for i in 0..PETS {
        let pet: Value = http
            .post(url(args, "/pets"))
            .bearer_auth(&args.key)
            .json(&json!({ "name": format!("Chain pet {i}") }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = pet["id"].as_i64().expect("a pet");
        let stocked = http
            .put(url(args, &format!("/store/inventory/{id}")))
            .bearer_auth(&args.key)
            .json(&json!({ "quantity": 1_000_000 }))
            .send()
            .await
            .unwrap();
        assert!(stocked.status().is_success());
        pets.push(id);
    }
    pets
}

/// What one follower saw: each order created, and when.
type Seen = Arc<Mutex<Vec<(i64, Instant)>>>;

/// A follower on a bare socket: the request written by hand, the chunked stream read as
/// lines (each chunk holds whole events, so a chunk's size line never splits one).
async fn follow(addr: String, key: String, seen: Seen, until: Instant) -> bool {
    let Ok(mut stream) = TcpStream::connect(&addr).await else { return false };
    let request = format!("GET /events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n\r\n");
    if stream.write_all(request.as_bytes()).await.is_err() {
        return false;
    }
    let mut lines = BufReader::new(stream).lines();
    let status = match tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await {
        Ok(Ok(Some(line))) => line,
        _ => return false,
    };
    if !status.contains(" 200 ") {
        eprintln!("a follower was refused: {status}");
        return false;
    }
    loop {
        let line = match tokio::time::timeout_at(until.into(), lines.next_line()).await {
            Ok(Ok(Some(line))) => line,
            _ => return true,
        };
        if let Some(data) = line.strip_prefix("data: ")
            && data.contains("\"entity\":\"order\"")
            && data.contains("\"action\":\"created\"")
            && let Some(id) = number_after(data, "\"id\":")
        {
            seen.lock().unwrap().push((id, Instant::now()));
        }
    }
}

fn number_after(text: &str, key: &str) -> Option<i64> {
    let rest = &text[text.find(key)? + key.len()..];
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

fn summary(mut ms: Vec<f64>) -> Value {
    ms.sort_by(f64::total_cmp);
    json!({ "count": ms.len(), "p50_ms": percentile(&ms, 0.50), "p99_ms": percentile(&ms, 0.99), "max_ms": ms.last() })
}

/// The server's CPU time so far, in seconds.
fn cpu_seconds(pid: Option<u32>) -> f64 {
    let Some(stat) = pid.and_then(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()) else {
        return f64::NAN;
    };
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap_or(0) + 2..].split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap_or(0.0) + fields[12].parse::<f64>().unwrap_or(0.0);
    ticks / 100.0
}

/// A counter sale a till made offline and replays from its outbox: its Idempotency-Key, and
/// when it was made (`placedAt`), as the till sends them.
#[derive(Clone, Copy)]
struct Queued<'a> {
    key: &'a str,
    placed_at: &'a str,
}

/// Places one order; answers its id and when the answer came, or the status.
async fn place(
    http: &reqwest::Client,
    args: &Args,
    pet: i64,
    queued: Option<Queued<'_>>,
) -> Result<(i64, Instant), u16> {
    let request = http.post(url(args, "/store/orders")).bearer_auth(&args.key);
    let request = match queued {
        None => request.json(&json!({ "petId": pet })),
        Some(Queued { key, placed_at }) => request
            .header("Idempotency-Key", key)
            .json(&json!({ "petId": pet, "complete": true, "placedAt": placed_at })),
    };
    let response = request.send().await.map_err(|_| 0u16)?;
    let status = response.status().as_u16();
    let done = Instant::now();
    if status != 201 && status != 200 {
        return Err(status);
    }
    let body: Value = response.json().await.map_err(|_| status)?;
    body["id"].as_i64().map(|id| (id, done)).ok_or(status)
}

async fn open_followers(
    args: &Args,
    count: usize,
    until: Instant,
) -> (Vec<Seen>, Vec<tokio::task::JoinHandle<bool>>) {
    let mut seen = Vec::with_capacity(count);
    let mut tasks = Vec::with_capacity(count);
    for _ in 0..count {
        let mine = Seen::default();
        seen.push(mine.clone());
        tasks.push(tokio::spawn(follow(args.addr.clone(), args.key.clone(), mine, until)));
    }
    (seen, tasks)
}

async fn load(http: &reqwest::Client, args: &Args, pets: &[i64]) -> Value {
    let drain = Duration::from_secs(5);
    let until = Instant::now() + Duration::from_secs(args.seconds + 30) + drain;
    let (seen, tasks) = open_followers(args, args.followers, until).await;
    // Every follower connected and listening before the load: a change from each is seen.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let cpu_before = cpu_seconds(args.server_pid);
    let started = Instant::now();
    let answered: Arc<Mutex<Vec<(i64, Instant)>>> = Arc::default();
    let latencies: Arc<Mutex<Vec<f64>>> = Arc::default();
    let refused: Arc<Mutex<HashMap<u16, u64>>> = Arc::default();
    let mut placing = Vec::new();
    let stop_at = started + Duration::from_secs(args.seconds);
    if args.rate > 0 {
        let every = Duration::from_secs_f64(1.0 / args.rate as f64);
        let total = args.rate * args.seconds;
        for n in 0..total {
            let due = started + every * n as u32;
            tokio::time::sleep_until(due.into()).await;
            let (http, answered, latencies, refused) =
                (http.clone(), answered.clone(), latencies.clone(), refused.clone());
            let pet = pets[fastrand::usize(..pets.len())];
            let args = clone_args(args);
            placing.push(tokio::spawn(async move {
                match place(&http, &args, pet, None).await {
                    Ok(placed) => {
                        latencies.lock().unwrap().push(due.elapsed().as_secs_f64() * 1000.0);
                        answered.lock().unwrap().push(placed);
                    }
                    Err(status) => *refused.lock().unwrap().entry(status).or_default() += 1,
                }
            }));
        }
    } else {
        for _ in 0..args.workers {
            let (http, answered, latencies, refused) =
                (http.clone(), answered.clone(), latencies.clone(), refused.clone());
            let (pets, args) = (pets.to_vec(), clone_args(args));
            placing.push(tokio::spawn(async move {
                while Instant::now() < stop_at {
                    let sent = Instant::now();
                    match place(&http, &args, pets[fastrand::usize(..pets.len())], None).await {
                        Ok(placed) => {
                            latencies.lock().unwrap().push(sent.elapsed().as_secs_f64() * 1000.0);
                            answered.lock().unwrap().push(placed);
                        }
                        Err(status) => *refused.lock().unwrap().entry(status).or_default() += 1,
                    }
                }
            }));
        }
    }
    for task in placing {
        let _ = tokio::time::timeout(Duration::from_secs(60), task).await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds(args.server_pid) - cpu_before;
    tokio::time::sleep(drain).await;
    let answered = answered.lock().unwrap().clone();
    let orders = answered.len();
    let mut delivery = Vec::with_capacity(orders * args.followers);
    let mut missing = 0usize;
    let mut connected = 0usize;
    for (mine, task) in seen.iter().zip(tasks) {
        task.abort();
        let mine: HashMap<i64, Instant> = mine.lock().unwrap().iter().copied().collect();
        connected += 1;
        for (id, done) in &answered {
            match mine.get(id) {
                Some(at) => delivery.push(at.saturating_duration_since(*done).as_secs_f64() * 1000.0),
                None => missing += 1,
            }
        }
    }
    json!({
        "followers": args.followers,
        "connected": connected,
        "rate": args.rate,
        "orders": orders,
        "orders_per_s": orders as f64 / elapsed,
        "refused": *refused.lock().unwrap(),
        "order": summary(latencies.lock().unwrap().clone()),
        "delivery": summary(delivery),
        "missing": missing,
        "server_cpu_s": cpu,
        "server_cpu_ms_per_order": cpu * 1000.0 / orders.max(1) as f64,
    })
}

fn clone_args(args: &Args) -> Args {
    Args {
        addr: args.addr.clone(),
        key: args.key.clone(),
        mode: args.mode.clone(),
        followers: args.followers,
        rate: args.rate,
        workers: args.workers,
        seconds: args.seconds,
        tills: args.tills,
        sales: args.sales,
        server_pid: args.server_pid,
    }
}

async fn storm(http: &reqwest::Client, args: &Args, pets: &[i64]) -> Value {
    let until = Instant::now() + Duration::from_secs(90);
    let run = fastrand::u64(..);
    // The queued sales were made while the tills were offline, five minutes ago.
    let placed_at = (chrono::Utc::now() - chrono::Duration::minutes(5)).to_rfc3339();
    // The online till: 10 sales a second for the whole storm, on its own connection, which
    // it already had open (it stayed online). It is another machine in a shop, so it runs on
    // a thread and a runtime of its own: queued behind the thousand simulated tills' tasks
    // in this process, its latency would measure this client, not the server.
    let online = {
        let (args, pets) = (clone_args(args), pets.to_vec());
        let (ready, is_ready) = tokio::sync::oneshot::channel();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let http = reqwest::Client::new();
                let _ = http.get(url(&args, "/health")).send().await;
                let _ = ready.send(());
                let started = Instant::now();
                let mut latencies = Vec::new();
                let mut failed = 0u64;
                for n in 0..600u32 {
                    let due = started + Duration::from_millis(100) * n;
                    tokio::time::sleep_until(due.into()).await;
                    match place(&http, &args, pets[fastrand::usize(..pets.len())], None).await {
                        Ok(_) => latencies.push(due.elapsed().as_secs_f64() * 1000.0),
                        Err(_) => failed += 1,
                    }
                    if STORM_DONE.load(std::sync::atomic::Ordering::Relaxed) && n >= 100 {
                        break;
                    }
                }
                (latencies, failed)
            })
        });
        let _ = is_ready.await;
        thread
    };
    let started = Instant::now();
    // Every till at once: its stream, and its queued sales one after another.
    let (_seen, streams) = open_followers(args, args.tills, until).await;
    let mut tills = Vec::with_capacity(args.tills);
    for till in 0..args.tills {
        let (http, args, pets, placed_at) =
            (http.clone(), clone_args(args), pets.to_vec(), placed_at.clone());
        tills.push(tokio::spawn(async move {
            let mut placed = Vec::new();
            for sale in 0..args.sales {
                let key = format!("storm-{run}-{till}-{sale}");
                let pet = pets[(till + sale) % pets.len()];
                // A refused or failed sale stays queued: the till tries again, as the outbox does.
                for attempt in 0..20u32 {
                    match place(&http, &args, pet, Some(Queued { key: &key, placed_at: &placed_at })).await {
                        Ok((id, _)) => {
                            placed.push((key.clone(), pet, id));
                            break;
                        }
                        Err(_) => {
                            tokio::time::sleep(Duration::from_millis(100 + 200 * u64::from(attempt))).await
                        }
                    }
                }
            }
            placed
        }));
    }
    let mut placed = Vec::new();
    for till in tills {
        if let Ok(Ok(mine)) = tokio::time::timeout(Duration::from_secs(90), till).await {
            placed.extend(mine);
        }
    }
    let all_placed = started.elapsed().as_secs_f64();
    STORM_DONE.store(true, std::sync::atomic::Ordering::Relaxed);
    let (online_latencies, online_failed) = online.join().unwrap();
    // Exactly once: the same sales again answer the same orders.
    let mut same = 0usize;
    for chunk in placed.chunks(100) {
        let answers = futures_util::future::join_all(
            chunk
                .iter()
                .map(|(key, pet, _)| place(http, args, *pet, Some(Queued { key, placed_at: &placed_at }))),
        )
        .await;
        same += chunk
            .iter()
            .zip(answers)
            .filter(|((_, _, id), again)| again.as_ref().is_ok_and(|(a, _)| a == id))
            .count();
    }
    let mut ids: Vec<i64> = placed.iter().map(|(_, _, id)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    let connected = streams.iter().filter(|s| !s.is_finished()).count();
    for stream in streams {
        stream.abort();
    }
    json!({
        "tills": args.tills,
        "sales": args.tills * args.sales,
        "placed": placed.len(),
        "distinct_orders": ids.len(),
        "replayed_same_order": same,
        "all_placed_s": all_placed,
        "streams_open_at_the_end": connected,
        "online": summary(online_latencies),
        "online_failed": online_failed,
    })
}

static STORM_DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
