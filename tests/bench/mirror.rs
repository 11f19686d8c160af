//! Remote mode's figures for `make bench`, against a real Petstore server run in
//! this process on loopback over a freshly seeded SQLite database:
//!
//! - `first_sync_s`: a new mirror's first full copy of the shop, open to settled;
//! - `feed_lag_ms`: a stock change on the server (from its answer) to the change in the
//!   mirror, over `--changes` changes made one at a time: p50 and p99;
//! - `replay_s`: `--sales` counter sales taken while the server is stopped, from its start
//!   again to the last of them placed on it (and checked: exactly that many new orders).
//!
//! Usage: `mirror-bench --pets 100000 --sales 2000 --changes 200 --dir DIR`; prints one
//! JSON object.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use petstore::api::KeyRing;
use petstore::client::{Client, ClientConfig};
use petstore::domain::{InventoryFilter, NewOrder, OrderFilter, Page, PetId, PetStatus};
use petstore::engine::Seeding;
use petstore::mirror::Mirror;
use petstore::server::{Application, ServerConfig};
use petstore::{Petstore, Store};
use tokio::sync::oneshot;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const KEY: &str = "psk_mirror-bench-key-0123456789abcdef0123456789";

/// Remote mode's figures: a mirror's first copy, its feed lag, an offline outbox's replay.
#[derive(clap::Parser)]
struct Args {
    /// Pets seeded on the server, which the mirror copies.
    #[arg(long, default_value_t = 100_000)]
    pets: u64,
    /// Sales taken while the server is stopped, then replayed.
    #[arg(long, default_value_t = 2_000)]
    sales: usize,
    /// Stock changes made one at a time on the server to measure the feed lag.
    #[arg(long, default_value_t = 200)]
    changes: usize,
    /// Where the server's database and the mirror go (emptied first).
    #[arg(long, default_value = "target/bench/mirror")]
    dir: PathBuf,
}

/// The server, stoppable and started again on the same port.
struct Server {
    store: Store,
    addr: SocketAddr,
    stop: Option<(oneshot::Sender<()>, tokio::task::JoinHandle<()>)>,
}

impl Server {
    async fn up(&mut self) -> Result<(), String> {
        let config = ServerConfig::new(self.addr, KeyRing::from_secrets([KEY]));
        let app = Application::bind(petstore::Served::all_of(Arc::new(self.store.clone())), config)
            .await
            .map_err(|e| e.to_string())?;
        self.addr = app.local_addr();
        let (stop, stopped) = oneshot::channel();
        let served = tokio::spawn(app.run_until(async {
            let _ = stopped.await;
        }));
        self.stop = Some((stop, served));
        Ok(())
    }

    async fn down(&mut self) {
        if let Some((stop, served)) = self.stop.take() {
            let _ = stop.send(());
            let _ = served.await;
        }
    }

    fn client(&self) -> Client {
        let config = ClientConfig::default().connect_timeout(Duration::from_millis(500));
        Client::with_config(&format!("http://{}", self.addr), KEY, config).expect("a valid address")
    }
}

fn main() -> Result<(), String> {
    let args = <Args as clap::Parser>::parse();
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(run(args))
}

async fn run(args: Args) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(&args.dir);
    std::fs::create_dir_all(&args.dir).map_err(|e| e.to_string())?;
    let store = Store::open(args.dir.join("server.db")).map_err(|e| e.to_string())?;
    store.seed(args.pets, Box::new(|_| {})).await.map_err(|e| e.message)?;
    let mut server = Server { store: store.clone(), addr: SocketAddr::from(([127, 0, 0, 1], 0)), stop: None };
    server.up().await?;

    // The first copy.
    let started = Instant::now();
    let mirror = Mirror::open(&args.dir.join("mirrors"), server.client()).map_err(|e| e.message)?;
    if !mirror.settle(Duration::from_secs(300)).await {
        return Err(format!("the first copy did not end: {:?}", *mirror.status().borrow()));
    }
    let first_sync = started.elapsed();
    let copied = mirror
        .store()
        .list_pets(Default::default(), Page::new(1, 0).unwrap())
        .await
        .map_err(|e| e.message)?;
    if copied.total != args.pets {
        return Err(format!("the mirror has {} pets of {}", copied.total, args.pets));
    }

    // Feed lag: one stock change at a time on the server, until the mirror shows it.
    let pets = sellable(&store, args.sales.max(args.changes)).await?;
    let writer = server.client();
    let mut lags = Vec::new();
    let mut changes = mirror.subscribe();
    for (n, &pet) in pets.iter().take(args.changes).enumerate() {
        let delta = serde_json::from_str(&format!(r#"{{"delta": 1, "reason": "bench {n}"}}"#)).unwrap();
        let item = writer.adjust_inventory(pet, delta).await.map_err(|e| e.message)?;
        let answered = Instant::now();
        loop {
            let seen = mirror.store().get_inventory(pet).await.map_err(|e| e.message)?;
            if seen.quantity == item.quantity {
                break;
            }
            if tokio::time::timeout(Duration::from_secs(10), changes.recv()).await.is_err() {
                return Err(format!("pet {pet}'s change did not reach the mirror in 10 s"));
            }
        }
        lags.push(answered.elapsed());
    }
    lags.sort();
    let at = |q: f64| lags[((lags.len() as f64 * q).ceil() as usize).clamp(1, lags.len()) - 1];

    // Offline sales, then the server back.
    let before = count_orders(&store).await?;
    server.down().await;
    for &pet in pets.iter().take(args.sales) {
        let sale: NewOrder =
            serde_json::from_str(&format!(r#"{{"petId": {pet}, "complete": true}}"#)).unwrap();
        mirror.place_order(sale).await.map_err(|e| e.message)?;
    }
    let queued = mirror.outbox_counts().await.map_err(|e| e.message)?.pending;
    if queued as usize != args.sales {
        return Err(format!("{queued} sales queued of {}", args.sales));
    }
    let back = Instant::now();
    server.up().await?;
    let mut status = mirror.status();
    tokio::time::timeout(Duration::from_secs(300), status.wait_for(|s| s.outbox.pending == 0))
        .await
        .map_err(|_| "the outbox was not sent within 300 s".to_string())?
        .map_err(|e| e.to_string())?;
    let replay = back.elapsed();
    let placed = count_orders(&store).await? - before;
    let attention = mirror.outbox_counts().await.map_err(|e| e.message)?.attention;
    server.down().await;

    println!(
        "{}",
        serde_json::json!({
            "pets": args.pets,
            "first_sync_s": first_sync.as_secs_f64(),
            "changes": lags.len(),
            "feed_lag_p50_ms": at(0.50).as_secs_f64() * 1e3,
            "feed_lag_p99_ms": at(0.99).as_secs_f64() * 1e3,
            "sales": args.sales,
            "replay_s": replay.as_secs_f64(),
            "placed": placed,
            "attention": attention,
        })
    );
    if placed != args.sales as u64 {
        return Err(format!("{placed} orders reached the server for {} sales", args.sales));
    }
    Ok(())
}

/// `n` pets with stock to sell one of each.
async fn sellable(store: &Store, n: usize) -> Result<Vec<PetId>, String> {
    let filter = InventoryFilter { statuses: vec![PetStatus::Available], below_quantity: None };
    let mut pets = Vec::new();
    let mut offset = 0;
    while pets.len() < n {
        let page = store
            .list_inventory(filter.clone(), Page::new(100, offset).unwrap())
            .await
            .map_err(|e| e.message)?;
        if page.items.is_empty() {
            return Err(format!("only {} pets to sell of {n}", pets.len()));
        }
        pets.extend(page.items.iter().filter(|i| i.quantity >= 3).map(|i| i.pet_id));
        offset += 100;
    }
    pets.truncate(n);
    Ok(pets)
}

async fn count_orders(store: &Store) -> Result<u64, String> {
    Ok(store
        .list_orders(OrderFilter::default(), Page::new(1, 0).unwrap())
        .await
        .map_err(|e| e.message)?
        .total)
}
