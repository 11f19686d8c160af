//! Criterion benches of the core store, through the same [`Petstore`] trait the server's
//! handlers and the desktop app call: a real SQLite file in a temporary directory, seeded
//! once with the real seed function, durable writes (`synchronous = FULL`) as in
//! production. The directory is removed when the run ends; Criterion writes only under
//! `target/criterion/`.
//!
//! `cargo bench --bench store -- --warm-up-time 1 --measurement-time 3` (`make bench`).
//! `PETSTORE_BENCH_PETS` changes the number of pets (default 100,000).
//!
//! Every bench is in the group `store`, so its result is
//! `target/criterion/store/<name>/new/estimates.json` (nanoseconds per iteration), and its
//! `benchmark.json` holds `throughput.Elements`, the operations in one iteration:
//!
//! | name                             | one iteration                                            |
//! |----------------------------------|----------------------------------------------------------|
//! | `get_pet`                        | a pet by a random id                                     |
//! | `list_pets_by_ids`               | `GET /pets?id=` with 20 random ids                       |
//! | `page_category_status_name`      | first page of one category's available pets by name      |
//! | `page_category_status_name_deep` | 90% through the same filter (from its end, by bookmark)  |
//! | `count_category_status`          | the same filter's total, as a one-row page (see below)   |
//! | `search_name`                    | first page of a name search (`LIKE '%bella%'`)           |
//! | `list_categories`                | the categories with their pet counts                     |
//! | `inventory`                      | first page of the inventory (lowest stock first)         |
//! | `inventory_low_stock`            | first page of available pets with fewer than 5 in stock  |
//! | `place_order_1`                  | one order, one caller at a time: one durable commit each |
//! | `adjust_stock`                   | one stock adjustment, one caller at a time               |
//! | `place_order_64`                 | 64 orders placed by 64 concurrent tasks, all joined      |
//!
//! The store always counts a list's total with its page (`X-Total-Count`), so the count has
//! no call of its own: `count_category_status` is a page of one row, whose cost is the count
//! plus one index lookup. `place_order_64` is 64 operations per iteration: divide by 64 (its
//! `throughput.Elements`) for the time per order; against `place_order_1` it shows what
//! group commit buys. Orders and adjustments go to a pool of pets restocked beforehand, so
//! no write fails for want of stock however long the run; each write bench prints how many
//! writes the writer committed per group transaction (`Store::groups_committed`).

use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use petstore::Petstore;
use petstore::domain::{
    CategoryId, Delta, InventoryFilter, InventoryUpdate, Name, NewInventoryAdjustment, NewOrder, Page,
    PetFilter, PetId, PetSort, PetStatus, Quantity, Reason, StockLevel,
};
use petstore::store::{Store, seed};
use tokio::runtime::Runtime;

const DEFAULT_PETS: u64 = 100_000;
/// Pets the write benches order from and adjust, spread over the table like real traffic.
const WRITE_POOL: usize = 2_048;
/// Their stock: far more than a run takes, and room to add.
const WRITE_POOL_STOCK: i64 = 500_000;
const CONCURRENT_ORDERS: usize = 64;
const IDS_PER_LIST: usize = 20;
/// About how long a slow bench's samples may take (`--measurement-time 3`, as `make bench`).
const SAMPLE_BUDGET: Duration = Duration::from_secs(3);

/// The seeded database; the temporary directory (and the database in it) goes with it.
struct Fixture {
    store: Store,
    max_id: i64,
    dogs: CategoryId,
    _dir: tempfile::TempDir,
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a Tokio runtime");
    let pets = std::env::var("PETSTORE_BENCH_PETS")
        .ok()
        .map(|n| n.parse().expect("PETSTORE_BENCH_PETS is a number of pets"))
        .unwrap_or(DEFAULT_PETS);
    let fixture = rt.block_on(Fixture::seed(pets));

    let mut group = criterion.benchmark_group("store");
    reads(&mut group, &rt, &fixture);
    writes(&mut group, &rt, &fixture);
    group.finish();
    criterion.final_summary();
}

impl Fixture {
    async fn seed(pets: u64) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::open(dir.path().join("bench.db")).expect("the store opens");
        let started = Instant::now();
        let report = store.with_writer(move |conn| seed::seed(conn, pets, |_| {})).await.expect("seeding");
        eprintln!("seeded {} pets in {:.2} s", report.pets, started.elapsed().as_secs_f64());

        let last = PetFilter { sort: PetSort::IdDesc, ..PetFilter::default() };
        let newest = store.list_pets(last, Page::new(1, 0).unwrap()).await.unwrap();
        assert_eq!(newest.total, pets, "the database holds exactly the seeded pets");
        let max_id = newest.items[0].id.get();
        let categories = store.list_categories(Page::default()).await.unwrap();
        let dogs = categories.items.iter().find(|c| c.name == "Dogs").expect("the seed's Dogs category").id;
        Self { store, max_id, dogs, _dir: dir }
    }

    fn random_pet(&self, rng: &mut fastrand::Rng) -> PetId {
        PetId::try_from(rng.i64(1..=self.max_id)).unwrap()
    }

    /// One category's available pets by name: the Pets screen with two filters set.
    fn category_status_name(&self) -> PetFilter {
        PetFilter {
            statuses: vec![PetStatus::Available],
            category_id: Some(self.dogs),
            sort: PetSort::Name,
            ..PetFilter::default()
        }
    }
}

/// Benches `op` (one call makes one iteration's future; `ops` operations per iteration)
/// as `store/<name>`. Criterion takes at least one iteration per sample, so 100 samples of
/// a one-second query are 100 s whatever the measurement time: one untimed call first
/// sizes the sample count to about [`SAMPLE_BUDGET`] (10 to 100 samples).
fn bench<F, Fut>(group: &mut BenchmarkGroup<'_, WallTime>, rt: &Runtime, name: &str, ops: u64, mut op: F)
where
    F: FnMut() -> Fut,
    Fut: Future,
{
    let started = Instant::now();
    // Inside the runtime, as Criterion calls it: an iteration may spawn tasks.
    rt.block_on(async { op().await });
    let samples = (SAMPLE_BUDGET.as_secs_f64() / started.elapsed().as_secs_f64()).clamp(10.0, 100.0);
    group.sample_size(samples as usize).throughput(Throughput::Elements(ops));
    group.bench_function(name, |b| b.to_async(rt).iter(&mut op));
}

fn reads(group: &mut BenchmarkGroup<'_, WallTime>, rt: &Runtime, fx: &Fixture) {
    let store = &fx.store;

    let mut rng = fastrand::Rng::with_seed(1);
    bench(group, rt, "get_pet", 1, || {
        let id = fx.random_pet(&mut rng);
        async move { store.get_pet(id).await.expect("get_pet") }
    });

    bench(group, rt, "list_pets_by_ids", 1, || {
        let ids = (0..IDS_PER_LIST).map(|_| fx.random_pet(&mut rng)).collect();
        async move { store.list_pets(PetFilter { ids, ..PetFilter::default() }, Page::default()).await.unwrap() }
    });

    // Check the filtered pages return what they claim before timing them, so a fast wrong
    // answer cannot pass for a fast page.
    let filter = fx.category_status_name();
    let first = rt.block_on(store.list_pets(filter.clone(), Page::default())).unwrap();
    let deep_offset = (first.total * 9 / 10 / 20 * 20) as u32;
    let deep = rt.block_on(store.list_pets(filter.clone(), Page::new(20, deep_offset).unwrap())).unwrap();
    for page in [&first, &deep] {
        assert_eq!(page.items.len(), 20, "a full page");
        assert!(
            page.items.iter().all(|p| p.category_id == Some(fx.dogs) && p.status == PetStatus::Available)
        );
        assert!(
            page.items.windows(2).all(|w| w[0].name.to_lowercase() <= w[1].name.to_lowercase()),
            "by name"
        );
    }
    eprintln!("category + status filter: {} pets; deep page at offset {deep_offset}", first.total);

    for (name, page) in [
        ("page_category_status_name", Page::default()),
        ("page_category_status_name_deep", Page::new(20, deep_offset).unwrap()),
        ("count_category_status", Page::new(1, 0).unwrap()),
    ] {
        bench(group, rt, name, 1, || {
            let filter = filter.clone();
            async move { store.list_pets(filter, page).await.unwrap() }
        });
    }

    let search = PetFilter { name_contains: Some(Name::parse("bella").unwrap()), ..PetFilter::default() };
    let found = rt.block_on(store.list_pets(search.clone(), Page::default())).unwrap();
    assert!(found.items.iter().all(|p| p.name.to_lowercase().contains("bella")) && found.items.len() == 20);
    bench(group, rt, "search_name", 1, || {
        let search = search.clone();
        async move { store.list_pets(search, Page::default()).await.unwrap() }
    });

    bench(group, rt, "list_categories", 1, || async move {
        store.list_categories(Page::default()).await.unwrap()
    });

    let low_stock = InventoryFilter { statuses: vec![PetStatus::Available], below_quantity: Some(5) };
    for (name, filter) in [("inventory", InventoryFilter::default()), ("inventory_low_stock", low_stock)] {
        bench(group, rt, name, 1, || {
            let filter = filter.clone();
            async move { store.list_inventory(filter, Page::default()).await.unwrap() }
        });
    }
}

fn writes(group: &mut BenchmarkGroup<'_, WallTime>, rt: &Runtime, fx: &Fixture) {
    let store = &fx.store;
    let pool = rt.block_on(restock_write_pool(fx));
    let mut next = 0;
    let mut next_order = || {
        next += 1;
        NewOrder {
            customer_name: None,
            customer_phone: None,
            note: None,
            placed_at: None,
            pet_id: pool[next % pool.len()],
            quantity: Quantity::default(),
            ship_date: None,
            complete: false,
        }
    };

    write_bench(group, rt, store, "place_order_1", 1, || {
        let new = next_order();
        async move { store.place_order(new).await.expect("place_order") }
    });

    let reason = Reason::parse("breakage").unwrap();
    let mut next_pet = 0;
    write_bench(group, rt, store, "adjust_stock", 1, || {
        next_pet += 1;
        let pet = pool[next_pet % pool.len()];
        let adjustment =
            NewInventoryAdjustment { delta: Delta::try_from(-1).unwrap(), reason: reason.clone() };
        async move { store.adjust_inventory(pet, adjustment).await.expect("adjust_inventory") }
    });

    write_bench(
        group,
        rt,
        store,
        &format!("place_order_{CONCURRENT_ORDERS}"),
        CONCURRENT_ORDERS as u64,
        || {
            // Each order its own task, as each request is in the server.
            let tasks: Vec<_> = (0..CONCURRENT_ORDERS)
                .map(|_| {
                    let (store, new) = (store.clone(), next_order());
                    tokio::spawn(async move { store.place_order(new).await.expect("place_order") })
                })
                .collect();
            async move {
                for task in tasks {
                    task.await.expect("an order task");
                }
            }
        },
    );
}

/// [`bench`] for a write, then reports how many writes the writer committed per group
/// transaction during it (warm-up and sizing call included): about 1 for one caller at a
/// time, more under concurrency when group commit works.
fn write_bench<F, Fut>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    rt: &Runtime,
    store: &Store,
    name: &str,
    ops: u64,
    mut op: F,
) where
    F: FnMut() -> Fut,
    Fut: Future,
{
    let (groups_before, mut calls) = (store.groups_committed(), 0);
    bench(group, rt, name, ops, || {
        calls += 1;
        op()
    });
    let groups = store.groups_committed() - groups_before;
    let writes = calls * ops;
    eprintln!(
        "{name}: {writes} writes in {groups} group commits, {:.1} per commit",
        writes as f64 / groups as f64
    );
}

/// Picks the write benches' pets at random and gives each a large stock (which also makes
/// a sold one available again), 64 at a time.
async fn restock_write_pool(fx: &Fixture) -> Vec<PetId> {
    let started = Instant::now();
    let mut ids: Vec<i64> = (1..=fx.max_id).collect();
    fastrand::Rng::with_seed(3).shuffle(&mut ids);
    let pool: Vec<PetId> = ids.into_iter().take(WRITE_POOL).map(|id| PetId::try_from(id).unwrap()).collect();
    let stock = StockLevel::try_from(WRITE_POOL_STOCK).unwrap();
    for chunk in pool.chunks(CONCURRENT_ORDERS) {
        let tasks: Vec<_> = chunk
            .iter()
            .map(|&pet| {
                let store = fx.store.clone();
                tokio::spawn(async move {
                    store.set_inventory(pet, InventoryUpdate { quantity: stock, reason: None }).await
                })
            })
            .collect();
        for task in tasks {
            let item = task.await.expect("a restock task").expect("set_inventory");
            assert_eq!((item.quantity, item.status), (WRITE_POOL_STOCK, PetStatus::Available));
        }
    }
    eprintln!(
        "restocked {} pets for the write benches in {:.2} s",
        pool.len(),
        started.elapsed().as_secs_f64()
    );
    pool
}
